// A loss over message passing for gnn-run --grad: m = sum over in-edges of
// x[u] * y[v], loss = sum(tanh(m)); m is returned too. %ids carries no
// gradient.
func.func @main(%g: !gnn.graph<general>, %x: tensor<?x3xf32>,
                %y: tensor<?x3xf32>, %ids: tensor<?xindex>)
    -> (tensor<f32>, tensor<?x3xf32>) {
  %m = gnn.send_and_recv %g, [u_mul_v(%x, %y) -> sum]
      : (!gnn.graph<general>, tensor<?x3xf32>, tensor<?x3xf32>)
      -> tensor<?x3xf32>
  %t = gnn.apply_nodes(%m) {
  ^bb0(%a: f32):
    %h = math.tanh %a : f32
    gnn.yield %h : f32
  } : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %l = gnn.sum_to %t : tensor<?x3xf32> -> tensor<f32>
  return %l, %m : tensor<f32>, tensor<?x3xf32>
}

// The first result is not a loss.
func.func @not_a_loss(%g: !gnn.graph<general>, %x: tensor<?x3xf32>)
    -> tensor<?x3xf32> {
  return %x : tensor<?x3xf32>
}

// An op without a derivative.
func.func @no_adjoint(%g: !gnn.graph<general>, %x: tensor<?x3xf32>)
    -> tensor<f32> {
  %y = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %c = math.cbrt %a : f32
    gnn.yield %c : f32
  } : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %l = gnn.sum_to %y : tensor<?x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
