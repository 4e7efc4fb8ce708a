// The fused attention backward alone, for the NVVM pipeline.
func.func @main(%g: !gnn.graph<general>, %q: tensor<?x8x16xf32>, %k: tensor<?x8x16xf32>, %v: tensor<?x8x16xf32>, %d: tensor<?x8x16xf32>) -> (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>) {
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %d scale(0.25) clamp(-5.0, 5.0) normalize
      : (!gnn.graph<general>, tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>) -> (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>)
  return %dq, %dk, %dv : tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>
}
