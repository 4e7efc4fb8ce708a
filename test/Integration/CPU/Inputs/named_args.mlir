// Arguments bound by their gnn.name attributes, which differ from their
// SSA names; the loss sum(x * w) and, differentiated, grad.x = w and
// grad.w = x.
func.func @main(%a: tensor<?x4xf32> {gnn.name = "x"},
                %b: tensor<?x4xf32> {gnn.name = "w"}) -> tensor<f32> {
  %p = gnn.apply_nodes(%a, %b) {
  ^bb0(%u: f32, %v: f32):
    %m = arith.mulf %u, %v : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %l = gnn.sum_to %p : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
