// Node-wise tanh of an input whose rows come from the input file.
func.func @main(%x: tensor<?x?xf32> {gnn.name = "x"}) -> tensor<?x?xf32> {
  %y = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %t = math.tanh %a : f32
    gnn.yield %t : f32
  } : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
