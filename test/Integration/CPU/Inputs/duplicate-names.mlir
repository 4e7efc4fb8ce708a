// Entries whose arguments or results share a name (gnn-run binds and
// writes them by name, so one would be bound twice or lost).

// Two results named "y".
func.func @two_results(%x: tensor<2xf32> {gnn.name = "x"})
    -> (tensor<2xf32> {gnn.name = "y"}, tensor<2xf32> {gnn.name = "y"}) {
  return %x, %x : tensor<2xf32>, tensor<2xf32>
}

// A name that collides with the default name of an unnamed result.
func.func @default_name(%x: tensor<2xf32> {gnn.name = "x"})
    -> (tensor<2xf32> {gnn.name = "result1"}, tensor<2xf32>) {
  return %x, %x : tensor<2xf32>, tensor<2xf32>
}

// Under --grad, a result named like the gradient of x.
func.func @gradient_name(%x: tensor<2xf32> {gnn.name = "x"})
    -> (tensor<f32> {gnn.name = "loss"}, tensor<2xf32> {gnn.name = "grad.x"}) {
  %l = gnn.sum_to %x : tensor<2xf32> -> tensor<f32>
  return %l, %x : tensor<f32>, tensor<2xf32>
}

// Two arguments named "x".
func.func @two_arguments(%a: tensor<2xf32> {gnn.name = "x"},
                         %b: tensor<2xf32> {gnn.name = "x"})
    -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
