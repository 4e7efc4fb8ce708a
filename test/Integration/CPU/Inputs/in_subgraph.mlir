// Attention into listed destination nodes only, over the in-edges that
// gnn.in_subgraph extracts, written the DGL way (fused by default).
func.func @main(%g: !gnn.graph<general>, %nodes: tensor<?xindex>,
                %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>,
                %v: tensor<?x2x4xf32>)
    -> (tensor<?x2x4xf32>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>) {
  %sub, %eids = gnn.in_subgraph %g, %nodes
      : (!gnn.graph<general>, tensor<?xindex>)
      -> (!gnn.graph<general>, tensor<?xindex>)
  %qa = gnn.gather_rows %q[%nodes]
      : (tensor<?x2x4xf32>, tensor<?xindex>) -> tensor<?x2x4xf32>
  %e = gnn.apply_edges %sub, u_dot_v(%k, %qa) then [scale(0.5), clamp(-5.0, 5.0), exp]
      : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %sub, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum]
      : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>)
      -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  %a = gnn.apply_nodes(%wv, %z) {
  ^bb0(%x: f32, %y: f32):
    %d = arith.divf %x, %y : f32
    gnn.yield %d : f32
  } : (tensor<?x2x4xf32>, tensor<?x2x1xf32>) -> tensor<?x2x4xf32>
  %src, %dst = gnn.edge_endpoints %sub
      : !gnn.graph<general> -> tensor<?xindex>, tensor<?xindex>
  return %a, %eids, %src, %dst
      : tensor<?x2x4xf32>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>
}
