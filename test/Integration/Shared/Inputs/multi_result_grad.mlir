// Gradients through a gnn.apply_nodes of two results (for gnn-run --grad):
// s = sin(x) * w and c = x * x from one body; each result adds its own term
// to the inputs' gradients.
// @main: loss = sum(s * c + c), both results returned as well.
func.func @main(%x: tensor<?x5xf32>, %w: tensor<?x5xf32>)
    -> (tensor<f32>, tensor<?x5xf32>, tensor<?x5xf32>) {
  %s, %c = gnn.apply_nodes(%x, %w) {
  ^bb0(%a: f32, %b: f32):
    %sin = math.sin %a : f32
    %sw = arith.mulf %sin, %b : f32
    %sq = arith.mulf %a, %a : f32
    gnn.yield %sw, %sq : f32, f32
  } : (tensor<?x5xf32>, tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x5xf32>)
  %p = gnn.apply_nodes(%s, %c) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %m, %b : f32
    gnn.yield %t : f32
  } : (tensor<?x5xf32>, tensor<?x5xf32>) -> tensor<?x5xf32>
  %l = gnn.sum_to %p : tensor<?x5xf32> -> tensor<f32>
  return %l, %s, %c : tensor<f32>, tensor<?x5xf32>, tensor<?x5xf32>
}

// @one_term: loss = sum(s); c, returned, takes no part in it.
func.func @one_term(%x: tensor<?x5xf32>, %w: tensor<?x5xf32>)
    -> (tensor<f32>, tensor<?x5xf32>) {
  %s, %c = gnn.apply_nodes(%x, %w) {
  ^bb0(%a: f32, %b: f32):
    %sin = math.sin %a : f32
    %sw = arith.mulf %sin, %b : f32
    %sq = arith.mulf %a, %a : f32
    gnn.yield %sw, %sq : f32, f32
  } : (tensor<?x5xf32>, tensor<?x5xf32>) -> (tensor<?x5xf32>, tensor<?x5xf32>)
  %l = gnn.sum_to %s : tensor<?x5xf32> -> tensor<f32>
  return %l, %c : tensor<f32>, tensor<?x5xf32>
}
