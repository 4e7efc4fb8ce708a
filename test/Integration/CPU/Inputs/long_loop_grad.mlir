// A loop for gnn-run --grad whose trip count comes from the inputs: each
// iteration maps the state through tanh and keeps it on the backward's
// tape (16 KiB for a 64 x 64 state). loss = sum(s * s) of the final state.
func.func @main(%x: tensor<?x64xf32>, %steps: tensor<1xindex>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.extract %steps[%c0] : tensor<1xindex>
  %r:2 = scf.while (%s = %x, %i = %c0)
      : (tensor<?x64xf32>, index) -> (tensor<?x64xf32>, index) {
    %more = arith.cmpi ult, %i, %n : index
    scf.condition(%more) %s, %i : tensor<?x64xf32>, index
  } do {
  ^bb0(%s: tensor<?x64xf32>, %i: index):
    %t = gnn.apply_nodes(%s) {
    ^bb0(%a: f32):
      %y = math.tanh %a : f32
      gnn.yield %y : f32
    } : (tensor<?x64xf32>) -> tensor<?x64xf32>
    %j = arith.addi %i, %c1 : index
    scf.yield %t, %j : tensor<?x64xf32>, index
  }
  %sq = gnn.apply_nodes(%r#0) {
  ^bb0(%a: f32):
    %y = arith.mulf %a, %a : f32
    gnn.yield %y : f32
  } : (tensor<?x64xf32>) -> tensor<?x64xf32>
  %l = gnn.sum_to %sq : tensor<?x64xf32> -> tensor<f32>
  return %l : tensor<f32>
}
