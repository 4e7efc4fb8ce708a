// A loop for gnn-run --grad whose iterations keep values of different
// shapes on its tape: each step maps the state through tanh(s W^T) and
// keeps all but its last row, for at most steps[0] iterations and while
// more than one row is left. loss = sum(s * s) of the final state, which is
// returned too. The weight is captured by the body, so its gradient sums
// over the iterations.
func.func @main(%x: tensor<?x3xf32>, %w: tensor<3x3xf32>, %ids: tensor<?xindex>,
                %steps: tensor<1xindex>) -> (tensor<f32>, tensor<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.extract %steps[%c0] : tensor<1xindex>
  %r:2 = scf.while (%s = %x, %i = %c0)
      : (tensor<?x3xf32>, index) -> (tensor<?x3xf32>, index) {
    %rows = tensor.dim %s, %c0 : tensor<?x3xf32>
    %left = arith.cmpi ult, %i, %n : index
    %many = arith.cmpi ugt, %rows, %c1 : index
    %more = arith.andi %left, %many : i1
    scf.condition(%more) %s, %i : tensor<?x3xf32>, index
  } do {
  ^bb0(%s: tensor<?x3xf32>, %i: index):
    %h = gnn.linear %s, %w : (tensor<?x3xf32>, tensor<3x3xf32>) -> tensor<?x3xf32>
    %t = gnn.apply_nodes(%h) {
    ^bb0(%a: f32):
      %y = math.tanh %a : f32
      gnn.yield %y : f32
    } : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %rows = tensor.dim %t, %c0 : tensor<?x3xf32>
    %keep = arith.subi %rows, %c1 : index
    %first = tensor.extract_slice %ids[0] [%keep] [1]
        : tensor<?xindex> to tensor<?xindex>
    %next = gnn.gather_rows %t[%first]
        : (tensor<?x3xf32>, tensor<?xindex>) -> tensor<?x3xf32>
    %j = arith.addi %i, %c1 : index
    scf.yield %next, %j : tensor<?x3xf32>, index
  }
  %sq = gnn.apply_nodes(%r#0) {
  ^bb0(%a: f32):
    %y = arith.mulf %a, %a : f32
    gnn.yield %y : f32
  } : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %l = gnn.sum_to %sq : tensor<?x3xf32> -> tensor<f32>
  return %l, %r#0 : tensor<f32>, tensor<?x3xf32>
}
