// gnn.broadcast from a 0-d value, a row vector (over the rows), a [N,3,1]
// feature and a [1,3,1] one to the shape of x (an integer tensor: only its
// shape is read).
func.func @main(%s: tensor<f32>, %r: tensor<4xf32>, %c: tensor<?x3x1xf32>,
                %o: tensor<1x3x1xf32>, %x: tensor<?x3x4xi32>)
    -> (tensor<?x3x4xf32>, tensor<?x3x4xf32>, tensor<?x3x4xf32>,
        tensor<?x3x4xf32>) {
  %a = gnn.broadcast %s like %x : tensor<f32>, tensor<?x3x4xi32> -> tensor<?x3x4xf32>
  %b = gnn.broadcast %r like %x : tensor<4xf32>, tensor<?x3x4xi32> -> tensor<?x3x4xf32>
  %d = gnn.broadcast %c like %x : tensor<?x3x1xf32>, tensor<?x3x4xi32> -> tensor<?x3x4xf32>
  %e = gnn.broadcast %o like %x : tensor<1x3x1xf32>, tensor<?x3x4xi32> -> tensor<?x3x4xf32>
  return %a, %b, %d, %e
      : tensor<?x3x4xf32>, tensor<?x3x4xf32>, tensor<?x3x4xf32>,
        tensor<?x3x4xf32>
}

// The rows of %c must be those of %x.
func.func @rows(%c: tensor<?x3x1xf32>, %x: tensor<?x3x4xi32>) -> tensor<?x3x4xf32> {
  %d = gnn.broadcast %c like %x : tensor<?x3x1xf32>, tensor<?x3x4xi32> -> tensor<?x3x4xf32>
  return %d : tensor<?x3x4xf32>
}
