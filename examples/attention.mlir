// The tutorial's propagate_attention, written in the gnn dialect.
//
// One attention layer over a batched graph (many sequences as one
// block-diagonal graph): 8 heads of 64 features, q/k/v computed per node.
//
//   g.apply_edges(src_dot_dst('k', 'q', 'score'), eids)
//   g.apply_edges(scaled_exp('score', np.sqrt(self.d_k)))
//   g.send_and_recv(eids,
//                   [fn.u_mul_e('v', 'score', 'v'), fn.copy_e('score', 'score')],
//                   [fn.sum('v', 'wv'), fn.sum('score', 'z')])
//   wv / z
//
// Run it:  gnn-opt examples/attention.mlir
func.func @propagate_attention(%g: !gnn.graph<complete>,
                               %q: tensor<?x8x64xf32>,
                               %k: tensor<?x8x64xf32>,
                               %v: tensor<?x8x64xf32>) -> tensor<?x8x64xf32> {
  // score = k_src . q_dst, one per edge and head.
  %score = gnn.apply_edges %g, u_dot_v(%k, %q) : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) -> tensor<?x8x1xf32>
  // scaled_exp: exp(clamp(score / sqrt(dk), -5, 5)), sqrt(64) = 8.
  %e = gnn.apply_edges %g, copy_e(%score) then [scale(1.250000e-01), clamp(-5.000000e+00, 5.000000e+00), exp] : (!gnn.graph<complete>, tensor<?x8x1xf32>) -> tensor<?x8x1xf32>
  // wv = sum over in-edges of e * v_src; z = sum over in-edges of e.
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x1xf32>, tensor<?x8x1xf32>) -> (tensor<?x8x64xf32>, tensor<?x8x1xf32>)
  // The attention output, wv / z.
  %out = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x64xf32>
  return %out : tensor<?x8x64xf32>
}
