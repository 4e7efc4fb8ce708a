// Elementwise gnn ops over items of several elements, for the CPU form (a
// row per iteration, its items in a loop) and the GPU form (an iteration
// per row and item): apply_nodes with an item of broadcast width 1,
// apply_edges with a region body and with a built-in message and its post
// chain, a broadcast over the rows, a gather of rows by id and its adjoint,
// an adding scatter (on a GPU an iteration per item element, adding the
// rows in list order). A bad id is an error; a GPU names the first bad
// entry.
func.func @main(%g: !gnn.graph<general>, %x: tensor<?x3x12xf32>,
                %w: tensor<?x3x1xf32>, %y: tensor<?x3x12xf32>,
                %r: tensor<3x12xf32>, %ids: tensor<?xindex>)
    -> (tensor<?x3x12xf32>, tensor<?x3x12xf32>, tensor<?x3x12xf32>,
        tensor<?x3x12xf32>, tensor<?x3x12xf32>, tensor<?x3x12xf32>) {
  %n = gnn.apply_nodes(%x, %w) {
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %b : f32
    %e = math.exp %a : f32
    %s = arith.addf %p, %e : f32
    gnn.yield %s : f32
  } : (tensor<?x3x12xf32>, tensor<?x3x1xf32>) -> tensor<?x3x12xf32>
  %u = gnn.apply_edges %g, (u %x, v %y) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %t = math.tanh %d : f32
    gnn.yield %t : f32
  } : (!gnn.graph<general>, tensor<?x3x12xf32>, tensor<?x3x12xf32>)
      -> tensor<?x3x12xf32>
  %m = gnn.apply_edges %g, u_mul_v(%x, %y) then [scale(2.0), relu]
      : (!gnn.graph<general>, tensor<?x3x12xf32>, tensor<?x3x12xf32>)
      -> tensor<?x3x12xf32>
  %b = gnn.broadcast %r like %y : tensor<3x12xf32>, tensor<?x3x12xf32> -> tensor<?x3x12xf32>
  %k = gnn.gather_rows %y[%ids] : (tensor<?x3x12xf32>, tensor<?xindex>) -> tensor<?x3x12xf32>
  %s = gnn.scatter_rows %k into %y[%ids] add : (tensor<?x3x12xf32>, tensor<?x3x12xf32>, tensor<?xindex>) -> tensor<?x3x12xf32>
  return %n, %u, %m, %b, %k, %s
      : tensor<?x3x12xf32>, tensor<?x3x12xf32>, tensor<?x3x12xf32>,
        tensor<?x3x12xf32>, tensor<?x3x12xf32>, tensor<?x3x12xf32>
}
