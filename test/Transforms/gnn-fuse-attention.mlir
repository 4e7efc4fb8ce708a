// RUN: gnn-opt %s -gnn-fuse-attention -split-input-file | FileCheck %s

// The tutorial's form: score, scaled_exp in a copy_e op, both sums in one
// send_and_recv, then wv / z.
// CHECK-LABEL: func @tutorial
// CHECK-SAME: (%[[G:.*]]: !gnn.graph<complete>, %[[Q:.*]]: tensor<?x8x64xf32>, %[[K:.*]]: tensor<?x8x64xf32>, %[[V:.*]]: tensor<?x8x64xf32>)
// CHECK-NEXT: %[[O:.*]] = gnn.fused_attention %[[G]], %[[Q]], %[[K]], %[[V]] scale(1.250000e-01) clamp(-5.000000e+00, 5.000000e+00) normalize : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
// CHECK-NEXT: return %[[O]]
func.func @tutorial(%g: !gnn.graph<complete>, %q: tensor<?x8x64xf32>, %k: tensor<?x8x64xf32>, %v: tensor<?x8x64xf32>) -> tensor<?x8x64xf32> {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) -> tensor<?x8x1xf32>
  %e = gnn.apply_edges %g, copy_e(%s) then [scale(0.125), clamp(-5.0, 5.0), exp] : (!gnn.graph<complete>, tensor<?x8x1xf32>) -> tensor<?x8x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x1xf32>, tensor<?x8x1xf32>) -> (tensor<?x8x64xf32>, tensor<?x8x1xf32>)
  %o = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x64xf32>
  return %o : tensor<?x8x64xf32>
}

// -----

// The merged chain; no division: wv and z stay separate results.
// CHECK-LABEL: func @merged_unnormalized
// CHECK-NEXT: %[[R:.*]]:2 = gnn.fused_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale(2.500000e-01) clamp(-1.000000e+01, 1.000000e+01) : {{.*}} -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>)
// CHECK-NEXT: return %[[R]]#0, %[[R]]#1
func.func @merged_unnormalized(%g: !gnn.graph<causal>, %q: tensor<?x2x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>) -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>) {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.25), clamp(-10.0, 10.0), exp] : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x16xf32>, tensor<?x2x1xf32>
}

// -----

// scaled_exp as a user-defined body (divide by sqrt(dk), clamp, exp); the
// sums in two ops, z through gnn.reduce.
// CHECK-LABEL: func @udf_two_ops
// CHECK-NEXT: gnn.fused_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) clamp(-5.000000e+00, 5.000000e+00) normalize
// CHECK-NEXT: return
func.func @udf_two_ops(%g: !gnn.graph<bipartite>, %q: tensor<?x4x64xf32>, %k: tensor<?x4x64xf32>, %v: tensor<?x4x64xf32>) -> tensor<?x4x64xf32> {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) : (!gnn.graph<bipartite>, tensor<?x4x64xf32>, tensor<?x4x64xf32>) -> tensor<?x4x1xf32>
  %e = gnn.apply_edges %g, (e %s) {
  ^bb0(%x: f32):
    %c8 = arith.constant 8.0 : f32
    %lo = arith.constant -5.0 : f32
    %hi = arith.constant 5.0 : f32
    %0 = arith.divf %x, %c8 : f32
    %1 = arith.maximumf %0, %lo : f32
    %2 = arith.minimumf %1, %hi : f32
    %3 = math.exp %2 : f32
    gnn.yield %3 : f32
  } : (!gnn.graph<bipartite>, tensor<?x4x1xf32>) -> tensor<?x4x1xf32>
  %wv = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum] : (!gnn.graph<bipartite>, tensor<?x4x64xf32>, tensor<?x4x1xf32>) -> tensor<?x4x64xf32>
  %z = gnn.reduce %g, sum(%e) : (!gnn.graph<bipartite>, tensor<?x4x1xf32>) -> tensor<?x4x1xf32>
  %o = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<?x4x64xf32>, tensor<?x4x1xf32>) -> tensor<?x4x64xf32>
  return %o : tensor<?x4x64xf32>
}

// -----

// Operands in the other order (v_dot_u, e_mul_u), no clamp, sums in two
// send_and_recv ops.
// CHECK-LABEL: func @swapped_no_clamp
// CHECK-SAME: (%[[G:.*]]: !gnn.graph<general>, %[[Q:.*]]: tensor<?x1x8xf32>, %[[K:.*]]: tensor<?x1x8xf32>, %[[V:.*]]: tensor<?x1x4xf32>)
// CHECK-NEXT: gnn.fused_attention %[[G]], %[[Q]], %[[K]], %[[V]] scale(1.000000e+00) normalize :
// CHECK-NEXT: return
func.func @swapped_no_clamp(%g: !gnn.graph<general>, %q: tensor<?x1x8xf32>, %k: tensor<?x1x8xf32>, %v: tensor<?x1x4xf32>) -> tensor<?x1x4xf32> {
  %e = gnn.apply_edges %g, v_dot_u(%q, %k) then [exp] : (!gnn.graph<general>, tensor<?x1x8xf32>, tensor<?x1x8xf32>) -> tensor<?x1x1xf32>
  %z = gnn.send_and_recv %g, [copy_e(%e) -> sum] : (!gnn.graph<general>, tensor<?x1x1xf32>) -> tensor<?x1x1xf32>
  %wv = gnn.send_and_recv %g, [e_mul_u(%e, %v) -> sum] : (!gnn.graph<general>, tensor<?x1x1xf32>, tensor<?x1x4xf32>) -> tensor<?x1x4xf32>
  %o = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<?x1x4xf32>, tensor<?x1x1xf32>) -> tensor<?x1x4xf32>
  return %o : tensor<?x1x4xf32>
}

// -----

// Someone keeps the attention weights: they stay, the sums are fused.
// CHECK-LABEL: func @keep_weights
// CHECK: %[[S:.*]] = gnn.apply_edges %{{.*}}, u_dot_v
// CHECK: %[[E:.*]] = gnn.apply_edges %{{.*}}, copy_e(%[[S]]) then [scale(5.000000e-01), exp]
// CHECK: %[[O:.*]] = gnn.fused_attention {{.*}} scale(5.000000e-01) normalize
// CHECK-NOT: gnn.send_and_recv
// CHECK: return %[[O]], %[[E]]
func.func @keep_weights(%g: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>) {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %e = gnn.apply_edges %g, copy_e(%s) then [scale(0.5), exp] : (!gnn.graph<complete>, tensor<?x2x1xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  %o = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<?x2x4xf32>, tensor<?x2x1xf32>) -> tensor<?x2x4xf32>
  return %o, %e : tensor<?x2x4xf32>, tensor<?x2x1xf32>
}

// -----

// An edge subset (the active edges of the Universal Transformer) carries
// over; another pair of the same send_and_recv stays.
// CHECK-LABEL: func @subset_and_other_pair
// CHECK-SAME: %[[EIDS:[^:]*]]: tensor<?xindex>
// CHECK: %[[R:.*]]:2 = gnn.fused_attention {{.*}} scale(1.250000e-01) clamp(-5.000000e+00, 5.000000e+00) edges(%[[EIDS]])
// CHECK: %[[M:.*]] = gnn.send_and_recv %{{.*}}, [copy_u(%{{.*}}) -> max] edges(%[[EIDS]])
// CHECK: return %[[R]]#0, %[[R]]#1, %[[M]]
func.func @subset_and_other_pair(%g: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>, %eids: tensor<?xindex>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x4xf32>) {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.125), clamp(-5.0, 5.0), exp] edges(%eids) : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?xindex>) -> tensor<?x2x1xf32>
  %wv, %z, %m = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum, copy_u(%v) -> max] edges(%eids) : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>, tensor<?x2x4xf32>, tensor<?xindex>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x4xf32>)
  return %wv, %z, %m : tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x4xf32>
}

// -----

// A division that is not wv / z stays; the sums are still fused.
// CHECK-LABEL: func @other_division
// CHECK: %[[R:.*]]:2 = gnn.fused_attention
// CHECK: gnn.apply_nodes(%[[R]]#1, %[[R]]#0)
func.func @other_division(%g: !gnn.graph<complete>, %q: tensor<?x1x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x1xf32>) -> tensor<?x1x1xf32> {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [exp] : (!gnn.graph<complete>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x1x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x1x1xf32>, tensor<?x1x1xf32>, tensor<?x1x1xf32>) -> (tensor<?x1x1xf32>, tensor<?x1x1xf32>)
  %o = gnn.apply_nodes(%z, %wv) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<?x1x1xf32>, tensor<?x1x1xf32>) -> tensor<?x1x1xf32>
  return %o : tensor<?x1x1xf32>
}

// -----

// Near misses, left alone.

// CHECK-LABEL: func @no_exp
// CHECK-NOT: gnn.fused_attention
// CHECK: gnn.send_and_recv
func.func @no_exp(%g: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>) {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.5)] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x4xf32>, tensor<?x2x1xf32>
}

// Keys shared by every head (broadcast in the score) and values with one
// head: the fused op's shape rule (query and key alike, value with the
// query's heads) cannot express them.
// CHECK-LABEL: func @broadcast_heads
// CHECK-NOT: gnn.fused_attention
// CHECK: gnn.send_and_recv
func.func @broadcast_heads(%g: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>) {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.5), exp] : (!gnn.graph<complete>, tensor<?x1x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x1x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x4xf32>, tensor<?x2x1xf32>
}

// Values without the query's heads (broadcast by u_mul_e).
// CHECK-LABEL: func @value_without_heads
// CHECK-NOT: gnn.fused_attention
// CHECK: gnn.send_and_recv
func.func @value_without_heads(%g: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x4xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>) {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.5), exp] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x4xf32>, tensor<?x2x1xf32>
}

// CHECK-LABEL: func @clamp_after_exp
// CHECK-NOT: gnn.fused_attention
func.func @clamp_after_exp(%g: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>) {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [exp, clamp(0.0, 5.0)] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x4xf32>, tensor<?x2x1xf32>
}

// CHECK-LABEL: func @max_normalizer
// CHECK-NOT: gnn.fused_attention
func.func @max_normalizer(%g: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>) {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [exp] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> max] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x4xf32>, tensor<?x2x1xf32>
}

// CHECK-LABEL: func @no_normalizer
// CHECK-NOT: gnn.fused_attention
func.func @no_normalizer(%g: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [exp] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %wv = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x1xf32>) -> tensor<?x2x4xf32>
  return %wv : tensor<?x2x4xf32>
}

// CHECK-LABEL: func @other_graph
// CHECK-NOT: gnn.fused_attention
func.func @other_graph(%g: !gnn.graph<complete>, %h: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>) {
  %e = gnn.apply_edges %h, u_dot_v(%k, %q) then [exp] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x4xf32>, tensor<?x2x1xf32>
}

// CHECK-LABEL: func @edge_score
// CHECK-NOT: gnn.fused_attention
func.func @edge_score(%g: !gnn.graph<complete>, %w: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>) {
  %e = gnn.apply_edges %g, u_dot_e(%k, %w) then [exp] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x4xf32>, tensor<?x2x1xf32>
}

// CHECK-LABEL: func @add_message
// CHECK-NOT: gnn.fused_attention
func.func @add_message(%g: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>) {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [exp] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_add_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x4xf32>, tensor<?x2x1xf32>
}

// CHECK-LABEL: func @different_subsets
// CHECK-NOT: gnn.fused_attention
func.func @different_subsets(%g: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>, %a: tensor<?xindex>, %b: tensor<?xindex>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>) {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [exp] edges(%a) : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?xindex>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] edges(%b) : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>, tensor<?xindex>) -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x4xf32>, tensor<?x2x1xf32>
}

// CHECK-LABEL: func @udf_variable_scale
// CHECK-NOT: gnn.fused_attention
func.func @udf_variable_scale(%g: !gnn.graph<complete>, %q: tensor<?x1x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>, %t: tensor<?x1x1xf32>) -> (tensor<?x1x4xf32>, tensor<?x1x1xf32>) {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) : (!gnn.graph<complete>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x1x1xf32>
  %e = gnn.apply_edges %g, (e %s, e %t) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = math.exp %0 : f32
    gnn.yield %1 : f32
  } : (!gnn.graph<complete>, tensor<?x1x1xf32>, tensor<?x1x1xf32>) -> tensor<?x1x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x1x4xf32>, tensor<?x1x1xf32>, tensor<?x1x1xf32>) -> (tensor<?x1x4xf32>, tensor<?x1x1xf32>)
  return %wv, %z : tensor<?x1x4xf32>, tensor<?x1x1xf32>
}

// CHECK-LABEL: func @one_sided_clamp
// CHECK-NOT: gnn.fused_attention
func.func @one_sided_clamp(%g: !gnn.graph<complete>, %q: tensor<?x1x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>) -> (tensor<?x1x4xf32>, tensor<?x1x1xf32>) {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) : (!gnn.graph<complete>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x1x1xf32>
  %e = gnn.apply_edges %g, (e %s) {
  ^bb0(%x: f32):
    %c = arith.constant 5.0 : f32
    %0 = arith.minimumf %x, %c : f32
    %1 = math.exp %0 : f32
    gnn.yield %1 : f32
  } : (!gnn.graph<complete>, tensor<?x1x1xf32>) -> tensor<?x1x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x1x4xf32>, tensor<?x1x1xf32>, tensor<?x1x1xf32>) -> (tensor<?x1x4xf32>, tensor<?x1x1xf32>)
  return %wv, %z : tensor<?x1x4xf32>, tensor<?x1x1xf32>
}

// -----

// The exact softmax: exp(score - max over the destination's in-edges), then
// wv / z. Normalized, it is the fused op without a clamp.
// CHECK-LABEL: func @exact_softmax
// CHECK-NEXT: %[[O:.*]] = gnn.fused_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale(2.500000e-01) normalize : {{.*}} -> tensor<?x4x16xf32>
// CHECK-NEXT: return %[[O]]
func.func @exact_softmax(%g: !gnn.graph<general>, %q: tensor<?x4x16xf32>, %k: tensor<?x4x16xf32>, %v: tensor<?x4x16xf32>) -> tensor<?x4x16xf32> {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.25)] : (!gnn.graph<general>, tensor<?x4x16xf32>, tensor<?x4x16xf32>) -> tensor<?x4x1xf32>
  %m = gnn.reduce %g, max(%s) : (!gnn.graph<general>, tensor<?x4x1xf32>) -> tensor<?x4x1xf32>
  %e = gnn.apply_edges %g, (e %s, v %m) {
  ^bb0(%x: f32, %y: f32):
    %d = arith.subf %x, %y : f32
    %x2 = math.exp %d : f32
    gnn.yield %x2 : f32
  } : (!gnn.graph<general>, tensor<?x4x1xf32>, tensor<?x4x1xf32>) -> tensor<?x4x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<general>, tensor<?x4x16xf32>, tensor<?x4x1xf32>, tensor<?x4x1xf32>) -> (tensor<?x4x16xf32>, tensor<?x4x1xf32>)
  %o = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.divf %a, %b : f32
    gnn.yield %r : f32
  } : (tensor<?x4x16xf32>, tensor<?x4x1xf32>) -> tensor<?x4x16xf32>
  return %o : tensor<?x4x16xf32>
}

// -----

// Shifted weights without the division: z = sum exp(score - max) is not the
// fused op's z, so nothing is fused.
// CHECK-LABEL: func @exact_softmax_unnormalized
// CHECK-NOT: gnn.fused_attention
// CHECK: gnn.reduce %{{.*}}, max
// CHECK: gnn.send_and_recv
func.func @exact_softmax_unnormalized(%g: !gnn.graph<general>, %q: tensor<?x4x16xf32>, %k: tensor<?x4x16xf32>, %v: tensor<?x4x16xf32>) -> (tensor<?x4x16xf32>, tensor<?x4x1xf32>) {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.25)] : (!gnn.graph<general>, tensor<?x4x16xf32>, tensor<?x4x16xf32>) -> tensor<?x4x1xf32>
  %m = gnn.reduce %g, max(%s) : (!gnn.graph<general>, tensor<?x4x1xf32>) -> tensor<?x4x1xf32>
  %e = gnn.apply_edges %g, (e %s, v %m) {
  ^bb0(%x: f32, %y: f32):
    %d = arith.subf %x, %y : f32
    %x2 = math.exp %d : f32
    gnn.yield %x2 : f32
  } : (!gnn.graph<general>, tensor<?x4x1xf32>, tensor<?x4x1xf32>) -> tensor<?x4x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<general>, tensor<?x4x16xf32>, tensor<?x4x1xf32>, tensor<?x4x1xf32>) -> (tensor<?x4x16xf32>, tensor<?x4x1xf32>)
  return %wv, %z : tensor<?x4x16xf32>, tensor<?x4x1xf32>
}

// -----

// The maximum of another score is not the pattern.
// CHECK-LABEL: func @exact_softmax_other_max
// CHECK-NOT: gnn.fused_attention
func.func @exact_softmax_other_max(%g: !gnn.graph<general>, %q: tensor<?x4x16xf32>, %k: tensor<?x4x16xf32>, %v: tensor<?x4x16xf32>, %t: tensor<?x4x1xf32>) -> tensor<?x4x16xf32> {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.25)] : (!gnn.graph<general>, tensor<?x4x16xf32>, tensor<?x4x16xf32>) -> tensor<?x4x1xf32>
  %m = gnn.reduce %g, max(%t) : (!gnn.graph<general>, tensor<?x4x1xf32>) -> tensor<?x4x1xf32>
  %e = gnn.apply_edges %g, (e %s, v %m) {
  ^bb0(%x: f32, %y: f32):
    %d = arith.subf %x, %y : f32
    %x2 = math.exp %d : f32
    gnn.yield %x2 : f32
  } : (!gnn.graph<general>, tensor<?x4x1xf32>, tensor<?x4x1xf32>) -> tensor<?x4x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<general>, tensor<?x4x16xf32>, tensor<?x4x1xf32>, tensor<?x4x1xf32>) -> (tensor<?x4x16xf32>, tensor<?x4x1xf32>)
  %o = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.divf %a, %b : f32
    gnn.yield %r : f32
  } : (tensor<?x4x16xf32>, tensor<?x4x1xf32>) -> tensor<?x4x16xf32>
  return %o : tensor<?x4x16xf32>
}
