// Elementwise gnn ops over items of several elements, for the CPU form (a
// row per iteration, its items in a loop) and the GPU form (an iteration
// per row and item): apply_nodes with an item of broadcast width 1,
// apply_edges with a region body and with a built-in message and its post
// chain, and a broadcast over the rows.
func.func @main(%g: !gnn.graph<general>, %x: tensor<?x3x5xf32>,
                %w: tensor<?x3x1xf32>, %y: tensor<?x3x5xf32>,
                %r: tensor<3x5xf32>)
    -> (tensor<?x3x5xf32>, tensor<?x3x5xf32>, tensor<?x3x5xf32>,
        tensor<?x3x5xf32>) {
  %n = gnn.apply_nodes(%x, %w) {
  ^bb0(%a: f32, %b: f32):
    %p = arith.mulf %a, %b : f32
    %e = math.exp %a : f32
    %s = arith.addf %p, %e : f32
    gnn.yield %s : f32
  } : (tensor<?x3x5xf32>, tensor<?x3x1xf32>) -> tensor<?x3x5xf32>
  %u = gnn.apply_edges %g, (u %x, v %y) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %t = math.tanh %d : f32
    gnn.yield %t : f32
  } : (!gnn.graph<general>, tensor<?x3x5xf32>, tensor<?x3x5xf32>)
      -> tensor<?x3x5xf32>
  %m = gnn.apply_edges %g, u_mul_v(%x, %y) then [scale(2.0), relu]
      : (!gnn.graph<general>, tensor<?x3x5xf32>, tensor<?x3x5xf32>)
      -> tensor<?x3x5xf32>
  %b = gnn.broadcast %r like %y : tensor<3x5xf32>, tensor<?x3x5xf32> -> tensor<?x3x5xf32>
  return %n, %u, %m, %b
      : tensor<?x3x5xf32>, tensor<?x3x5xf32>, tensor<?x3x5xf32>,
        tensor<?x3x5xf32>
}
