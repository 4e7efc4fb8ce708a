// Attention in DGL form with a loss: with fusion, gnn-run --grad fuses it
// and differentiates gnn.fused_attention with gnn.fused_attention_grad;
// with --no-fuse it differentiates the unfused ops.

// The tutorial's clamped scores.
func.func @clamped(%g: !gnn.graph<general>, %q: tensor<?x2x8xf32>,
                   %k: tensor<?x2x8xf32>, %v: tensor<?x2x8xf32>,
                   %w: tensor<?x2x8xf32>) -> tensor<f32> {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q)
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x1xf32>
  %e = gnn.apply_edges %g, copy_e(%s) then [scale(0.35), clamp(-1.0, 1.0), exp]
      : (!gnn.graph<general>, tensor<?x2x1xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum]
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>)
      -> (tensor<?x2x8xf32>, tensor<?x2x1xf32>)
  %o = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x1xf32>) -> tensor<?x2x8xf32>
  %t = gnn.apply_nodes(%o, %w) {
  ^bb0(%a: f32, %b: f32):
    %h = math.tanh %a : f32
    %m = arith.mulf %h, %b : f32
    gnn.yield %m : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %l = gnn.sum_to %t : tensor<?x2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// The exact softmax: scores shifted by the destination's maximum.
func.func @exact(%g: !gnn.graph<general>, %q: tensor<?x2x8xf32>,
                 %k: tensor<?x2x8xf32>, %v: tensor<?x2x8xf32>,
                 %w: tensor<?x2x8xf32>) -> tensor<f32> {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.35)]
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x1xf32>
  %m = gnn.reduce %g, max(%s) : (!gnn.graph<general>, tensor<?x2x1xf32>) -> tensor<?x2x1xf32>
  %e = gnn.apply_edges %g, (e %s, v %m) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %x = math.exp %d : f32
    gnn.yield %x : f32
  } : (!gnn.graph<general>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum]
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>)
      -> (tensor<?x2x8xf32>, tensor<?x2x1xf32>)
  %o = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x1xf32>) -> tensor<?x2x8xf32>
  %t = gnn.apply_nodes(%o, %w) {
  ^bb0(%a: f32, %b: f32):
    %h = math.tanh %a : f32
    %m2 = arith.mulf %h, %b : f32
    gnn.yield %m2 : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %l = gnn.sum_to %t : tensor<?x2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// Unnormalized sums: the gradients of wv and z both flow.
func.func @sums(%g: !gnn.graph<general>, %q: tensor<?x2x8xf32>,
                %k: tensor<?x2x8xf32>, %v: tensor<?x2x8xf32>,
                %w: tensor<?x2x8xf32>) -> tensor<f32> {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.35), clamp(-1.0, 1.0), exp]
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum]
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>)
      -> (tensor<?x2x8xf32>, tensor<?x2x1xf32>)
  %t = gnn.apply_nodes(%wv, %z, %w) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %h = math.tanh %a : f32
    %m = arith.mulf %h, %c : f32
    %s = math.sin %b : f32
    %r = arith.addf %m, %s : f32
    gnn.yield %r : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %l = gnn.sum_to %t : tensor<?x2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// Unnormalized sums with a loss linear in z (well conditioned where many
// edges make z large, as in the block-structured batches).
func.func @linear_sums(%g: !gnn.graph<general>, %q: tensor<?x2x8xf32>,
                       %k: tensor<?x2x8xf32>, %v: tensor<?x2x8xf32>,
                       %w: tensor<?x2x8xf32>) -> tensor<f32> {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.35), clamp(-1.0, 1.0), exp]
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum]
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>)
      -> (tensor<?x2x8xf32>, tensor<?x2x1xf32>)
  %t = gnn.apply_nodes(%wv, %z, %w) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.mulf %b, %c : f32
    %r = arith.addf %m, %s : f32
    gnn.yield %r : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %l = gnn.sum_to %t : tensor<?x2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// A normalized attention whose log-sum-exp the loss uses too (8 feature
// size: static, the fused backward; dynamic, its unfused form).
func.func @lse_clamped_static(%g: !gnn.graph<general>, %q: tensor<?x2x8xf32>,
                 %k: tensor<?x2x8xf32>, %v: tensor<?x2x8xf32>,
                 %w: tensor<?x2x8xf32>) -> tensor<f32> {
  %o, %lse = gnn.fused_attention %g, %q, %k, %v scale(0.35) clamp(-1.0, 1.0) normalize
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>)
      -> (tensor<?x2x8xf32>, tensor<?x2x1xf32>)
  %os = tensor.cast %o : tensor<?x2x8xf32> to tensor<?x2x8xf32>
  %t = gnn.apply_nodes(%os, %lse, %w) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %h = math.tanh %a : f32
    %m = arith.mulf %h, %c : f32
    %s = math.tanh %b : f32
    %r = arith.addf %m, %s : f32
    gnn.yield %r : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %l = gnn.sum_to %t : tensor<?x2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// A normalized attention whose log-sum-exp the loss uses too (8 feature
// size: static, the fused backward; dynamic, its unfused form).
func.func @lse_clamped_dynamic(%g: !gnn.graph<general>, %q: tensor<?x2x?xf32>,
                 %k: tensor<?x2x?xf32>, %v: tensor<?x2x?xf32>,
                 %w: tensor<?x2x8xf32>) -> tensor<f32> {
  %o, %lse = gnn.fused_attention %g, %q, %k, %v scale(0.35) clamp(-1.0, 1.0) normalize
      : (!gnn.graph<general>, tensor<?x2x?xf32>, tensor<?x2x?xf32>, tensor<?x2x?xf32>)
      -> (tensor<?x2x?xf32>, tensor<?x2x1xf32>)
  %os = tensor.cast %o : tensor<?x2x?xf32> to tensor<?x2x8xf32>
  %t = gnn.apply_nodes(%os, %lse, %w) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %h = math.tanh %a : f32
    %m = arith.mulf %h, %c : f32
    %s = math.tanh %b : f32
    %r = arith.addf %m, %s : f32
    gnn.yield %r : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %l = gnn.sum_to %t : tensor<?x2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// A normalized attention whose log-sum-exp the loss uses too (8 feature
// size: static, the fused backward; dynamic, its unfused form).
func.func @lse_exact_static(%g: !gnn.graph<general>, %q: tensor<?x2x8xf32>,
                 %k: tensor<?x2x8xf32>, %v: tensor<?x2x8xf32>,
                 %w: tensor<?x2x8xf32>) -> tensor<f32> {
  %o, %lse = gnn.fused_attention %g, %q, %k, %v scale(0.35) normalize
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>)
      -> (tensor<?x2x8xf32>, tensor<?x2x1xf32>)
  %os = tensor.cast %o : tensor<?x2x8xf32> to tensor<?x2x8xf32>
  %t = gnn.apply_nodes(%os, %lse, %w) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %h = math.tanh %a : f32
    %m = arith.mulf %h, %c : f32
    %s = math.tanh %b : f32
    %r = arith.addf %m, %s : f32
    gnn.yield %r : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %l = gnn.sum_to %t : tensor<?x2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// A normalized attention whose log-sum-exp the loss uses too (8 feature
// size: static, the fused backward; dynamic, its unfused form).
func.func @lse_exact_dynamic(%g: !gnn.graph<general>, %q: tensor<?x2x?xf32>,
                 %k: tensor<?x2x?xf32>, %v: tensor<?x2x?xf32>,
                 %w: tensor<?x2x8xf32>) -> tensor<f32> {
  %o, %lse = gnn.fused_attention %g, %q, %k, %v scale(0.35) normalize
      : (!gnn.graph<general>, tensor<?x2x?xf32>, tensor<?x2x?xf32>, tensor<?x2x?xf32>)
      -> (tensor<?x2x?xf32>, tensor<?x2x1xf32>)
  %os = tensor.cast %o : tensor<?x2x?xf32> to tensor<?x2x8xf32>
  %t = gnn.apply_nodes(%os, %lse, %w) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %h = math.tanh %a : f32
    %m = arith.mulf %h, %c : f32
    %s = math.tanh %b : f32
    %r = arith.addf %m, %s : f32
    gnn.yield %r : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %l = gnn.sum_to %t : tensor<?x2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// One head whose keys and values differ in width: 24 and 40 (the one-pass
// backward transposes a block's keys and values once for all its tiles)
// and 160 and 136 (too wide for that: each tile's product transposes its
// own); static, the fused backward; dynamic, its unfused form.
func.func @lse_mixed_static(%g: !gnn.graph<general>, %q: tensor<?x1x24xf32>,
                 %k: tensor<?x1x24xf32>, %v: tensor<?x1x40xf32>,
                 %w: tensor<?x1x40xf32>) -> tensor<f32> {
  %o, %lse = gnn.fused_attention %g, %q, %k, %v scale(0.35) clamp(-1.0, 1.0) normalize
      : (!gnn.graph<general>, tensor<?x1x24xf32>, tensor<?x1x24xf32>, tensor<?x1x40xf32>)
      -> (tensor<?x1x40xf32>, tensor<?x1x1xf32>)
  %os = tensor.cast %o : tensor<?x1x40xf32> to tensor<?x1x40xf32>
  %t = gnn.apply_nodes(%os, %lse, %w) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %h = math.tanh %a : f32
    %m = arith.mulf %h, %c : f32
    %s = math.tanh %b : f32
    %r = arith.addf %m, %s : f32
    gnn.yield %r : f32
  } : (tensor<?x1x40xf32>, tensor<?x1x1xf32>, tensor<?x1x40xf32>) -> tensor<?x1x40xf32>
  %l = gnn.sum_to %t : tensor<?x1x40xf32> -> tensor<f32>
  return %l : tensor<f32>
}

func.func @lse_mixed_dynamic(%g: !gnn.graph<general>, %q: tensor<?x1x?xf32>,
                 %k: tensor<?x1x?xf32>, %v: tensor<?x1x?xf32>,
                 %w: tensor<?x1x40xf32>) -> tensor<f32> {
  %o, %lse = gnn.fused_attention %g, %q, %k, %v scale(0.35) clamp(-1.0, 1.0) normalize
      : (!gnn.graph<general>, tensor<?x1x?xf32>, tensor<?x1x?xf32>, tensor<?x1x?xf32>)
      -> (tensor<?x1x?xf32>, tensor<?x1x1xf32>)
  %os = tensor.cast %o : tensor<?x1x?xf32> to tensor<?x1x40xf32>
  %t = gnn.apply_nodes(%os, %lse, %w) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %h = math.tanh %a : f32
    %m = arith.mulf %h, %c : f32
    %s = math.tanh %b : f32
    %r = arith.addf %m, %s : f32
    gnn.yield %r : f32
  } : (tensor<?x1x40xf32>, tensor<?x1x1xf32>, tensor<?x1x40xf32>) -> tensor<?x1x40xf32>
  %l = gnn.sum_to %t : tensor<?x1x40xf32> -> tensor<f32>
  return %l : tensor<f32>
}

func.func @lse_wide_static(%g: !gnn.graph<general>, %q: tensor<?x1x160xf32>,
                 %k: tensor<?x1x160xf32>, %v: tensor<?x1x136xf32>,
                 %w: tensor<?x1x136xf32>) -> tensor<f32> {
  %o, %lse = gnn.fused_attention %g, %q, %k, %v scale(0.35) clamp(-1.0, 1.0) normalize
      : (!gnn.graph<general>, tensor<?x1x160xf32>, tensor<?x1x160xf32>, tensor<?x1x136xf32>)
      -> (tensor<?x1x136xf32>, tensor<?x1x1xf32>)
  %os = tensor.cast %o : tensor<?x1x136xf32> to tensor<?x1x136xf32>
  %t = gnn.apply_nodes(%os, %lse, %w) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %h = math.tanh %a : f32
    %m = arith.mulf %h, %c : f32
    %s = math.tanh %b : f32
    %r = arith.addf %m, %s : f32
    gnn.yield %r : f32
  } : (tensor<?x1x136xf32>, tensor<?x1x1xf32>, tensor<?x1x136xf32>) -> tensor<?x1x136xf32>
  %l = gnn.sum_to %t : tensor<?x1x136xf32> -> tensor<f32>
  return %l : tensor<f32>
}

func.func @lse_wide_dynamic(%g: !gnn.graph<general>, %q: tensor<?x1x?xf32>,
                 %k: tensor<?x1x?xf32>, %v: tensor<?x1x?xf32>,
                 %w: tensor<?x1x136xf32>) -> tensor<f32> {
  %o, %lse = gnn.fused_attention %g, %q, %k, %v scale(0.35) clamp(-1.0, 1.0) normalize
      : (!gnn.graph<general>, tensor<?x1x?xf32>, tensor<?x1x?xf32>, tensor<?x1x?xf32>)
      -> (tensor<?x1x?xf32>, tensor<?x1x1xf32>)
  %os = tensor.cast %o : tensor<?x1x?xf32> to tensor<?x1x136xf32>
  %t = gnn.apply_nodes(%os, %lse, %w) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %h = math.tanh %a : f32
    %m = arith.mulf %h, %c : f32
    %s = math.tanh %b : f32
    %r = arith.addf %m, %s : f32
    gnn.yield %r : f32
  } : (tensor<?x1x136xf32>, tensor<?x1x1xf32>, tensor<?x1x136xf32>) -> tensor<?x1x136xf32>
  %l = gnn.sum_to %t : tensor<?x1x136xf32> -> tensor<f32>
  return %l : tensor<f32>
}
