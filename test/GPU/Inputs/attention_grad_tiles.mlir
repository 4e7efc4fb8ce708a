// The fused attention backward over graphs that promise ranges (warp
// tiles): a lane per node of 16-wide heads, four lanes per node of 64-wide
// heads with the forward's log-sum-exp, and the sources in two kernels.

func.func @complete(%g: !gnn.graph<complete>, %q: tensor<?x8x16xf32>,
                    %k: tensor<?x8x16xf32>, %v: tensor<?x8x16xf32>,
                    %d: tensor<?x8x16xf32>)
    -> (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>) {
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %d scale(0.25)
      clamp(-5.0, 5.0) normalize
      : (!gnn.graph<complete>, tensor<?x8x16xf32>, tensor<?x8x16xf32>,
         tensor<?x8x16xf32>, tensor<?x8x16xf32>)
      -> (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>)
  return %dq, %dk, %dv : tensor<?x8x16xf32>, tensor<?x8x16xf32>,
                         tensor<?x8x16xf32>
}

func.func @wide(%g: !gnn.graph<causal>, %q: tensor<?x8x64xf32>,
                %k: tensor<?x8x64xf32>, %v: tensor<?x8x64xf32>,
                %d: tensor<?x8x64xf32>, %lse: tensor<?x8x1xf32>)
    -> (tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) {
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %d scale(0.125)
      normalize saved(%lse)
      : (!gnn.graph<causal>, tensor<?x8x64xf32>, tensor<?x8x64xf32>,
         tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x1xf32>)
      -> (tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x64xf32>)
  return %dq, %dk, %dv : tensor<?x8x64xf32>, tensor<?x8x64xf32>,
                         tensor<?x8x64xf32>
}

func.func @split_sources(%g: !gnn.graph<bipartite>, %q: tensor<?x2x16xf32>,
                         %k: tensor<?x2x16xf32>, %v: tensor<?x2x32xf32>,
                         %dwv: tensor<?x2x32xf32>, %dz: tensor<?x2x1xf32>)
    -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x32xf32>) {
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %dwv, %dz
      scale(0.25)
      : (!gnn.graph<bipartite>, tensor<?x2x16xf32>, tensor<?x2x16xf32>,
         tensor<?x2x32xf32>, tensor<?x2x32xf32>, tensor<?x2x1xf32>)
      -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x32xf32>)
  return %dq, %dk, %dv : tensor<?x2x16xf32>, tensor<?x2x16xf32>,
                         tensor<?x2x32xf32>
}
