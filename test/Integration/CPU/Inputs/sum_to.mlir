// gnn.sum_to down to every kind of shape: summed item dims, the rows
// summed (a bias's gradient), leading dims dropped, a 0-d total.
func.func @main(%x: tensor<?x3x4xf32>)
    -> (tensor<?x3x1xf32>, tensor<?x1x4xf32>, tensor<3x4xf32>,
        tensor<1x3x1xf32>, tensor<4xf32>, tensor<f32>) {
  %a = gnn.sum_to %x : tensor<?x3x4xf32> -> tensor<?x3x1xf32>
  %b = gnn.sum_to %x : tensor<?x3x4xf32> -> tensor<?x1x4xf32>
  %c = gnn.sum_to %x : tensor<?x3x4xf32> -> tensor<3x4xf32>
  %d = gnn.sum_to %x : tensor<?x3x4xf32> -> tensor<1x3x1xf32>
  %e = gnn.sum_to %x : tensor<?x3x4xf32> -> tensor<4xf32>
  %f = gnn.sum_to %x : tensor<?x3x4xf32> -> tensor<f32>
  return %a, %b, %c, %d, %e, %f
      : tensor<?x3x1xf32>, tensor<?x1x4xf32>, tensor<3x4xf32>,
        tensor<1x3x1xf32>, tensor<4xf32>, tensor<f32>
}

// The same on rows of 5 x 19 (--entry wide).
func.func @wide(%x: tensor<?x5x19xf32>)
    -> (tensor<?x5x1xf32>, tensor<?x1x19xf32>, tensor<5x19xf32>,
        tensor<1x5x1xf32>, tensor<19xf32>, tensor<f32>) {
  %a = gnn.sum_to %x : tensor<?x5x19xf32> -> tensor<?x5x1xf32>
  %b = gnn.sum_to %x : tensor<?x5x19xf32> -> tensor<?x1x19xf32>
  %c = gnn.sum_to %x : tensor<?x5x19xf32> -> tensor<5x19xf32>
  %d = gnn.sum_to %x : tensor<?x5x19xf32> -> tensor<1x5x1xf32>
  %e = gnn.sum_to %x : tensor<?x5x19xf32> -> tensor<19xf32>
  %f = gnn.sum_to %x : tensor<?x5x19xf32> -> tensor<f32>
  return %a, %b, %c, %d, %e, %f
      : tensor<?x5x1xf32>, tensor<?x1x19xf32>, tensor<5x19xf32>,
        tensor<1x5x1xf32>, tensor<19xf32>, tensor<f32>
}
