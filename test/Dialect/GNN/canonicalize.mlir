// RUN: gnn-opt %s -canonicalize -split-input-file | FileCheck %s

// The tutorial's two apply_edges become one edge pass; scale(1) disappears
// and adjacent scales multiply.
// CHECK-LABEL: func @merge_scaled_exp
// CHECK: %[[E:.*]] = gnn.apply_edges %{{.*}}, u_dot_v(%{{.*}}, %{{.*}}) then [scale(2.500000e-01), clamp(-5.000000e+00, 5.000000e+00), exp]
// CHECK-NOT: gnn.apply_edges
// CHECK: gnn.send_and_recv {{.*}}[u_mul_e(%{{.*}}, %[[E]]) -> sum, copy_e(%[[E]]) -> sum]
func.func @merge_scaled_exp(%g: !gnn.graph<complete>, %q: tensor<?x2x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>) -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>) {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.5)] : (!gnn.graph<complete>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x2x1xf32>
  %e = gnn.apply_edges %g, copy_e(%s) then [scale(1.0), scale(0.5), clamp(-5.0, 5.0), exp] : (!gnn.graph<complete>, tensor<?x2x1xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<complete>, tensor<?x2x16xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x16xf32>, tensor<?x2x1xf32>
}

// -----

// A score that someone else keeps is not merged away.
// CHECK-LABEL: func @keep_shared_score
// CHECK: %[[S:.*]] = gnn.apply_edges %{{.*}}, u_dot_v
// CHECK: %[[E:.*]] = gnn.apply_edges %{{.*}}, copy_e(%[[S]]) then [exp]
// CHECK: return %[[S]], %[[E]]
func.func @keep_shared_score(%g: !gnn.graph<complete>, %q: tensor<?x2x16xf32>, %k: tensor<?x2x16xf32>) -> (tensor<?x2x1xf32>, tensor<?x2x1xf32>) {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) : (!gnn.graph<complete>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x2x1xf32>
  %e = gnn.apply_edges %g, copy_e(%s) then [exp] : (!gnn.graph<complete>, tensor<?x2x1xf32>) -> tensor<?x2x1xf32>
  return %s, %e : tensor<?x2x1xf32>, tensor<?x2x1xf32>
}

// -----

// An edge subset stops the merge: the producer computes all edges.
// CHECK-LABEL: func @no_merge_with_subset
// CHECK: gnn.apply_edges %{{.*}}, u_dot_v
// CHECK: gnn.apply_edges %{{.*}}, copy_e(%{{.*}}) then [exp] edges(
func.func @no_merge_with_subset(%g: !gnn.graph<complete>, %q: tensor<?x2x16xf32>, %eids: tensor<?xindex>) -> tensor<?x2x1xf32> {
  %s = gnn.apply_edges %g, u_dot_v(%q, %q) : (!gnn.graph<complete>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x2x1xf32>
  %e = gnn.apply_edges %g, copy_e(%s) then [exp] edges(%eids) : (!gnn.graph<complete>, tensor<?x2x1xf32>, tensor<?xindex>) -> tensor<?x2x1xf32>
  return %e : tensor<?x2x1xf32>
}

// -----

// copy_e of a whole edge feature folds away; scales that multiply to 1 vanish
// with the chain; overlapping clamps intersect; disjoint clamps stay.
// CHECK-LABEL: func @chains
// CHECK-SAME: (%{{.*}}: !gnn.graph<general>, %[[A:.*]]: tensor<?x1xf32>)
// CHECK: %[[C:.*]] = gnn.apply_edges %{{.*}}, copy_e(%[[A]]) then [clamp(-1.000000e+00, 2.000000e+00)]
// CHECK: %[[D:.*]] = gnn.apply_edges %{{.*}}, copy_e(%[[A]]) then [clamp(0.000000e+00, 1.000000e+00), clamp(2.000000e+00, 3.000000e+00)]
// CHECK: return %[[A]], %[[A]], %[[C]], %[[D]]
func.func @chains(%g: !gnn.graph<general>, %a: tensor<?x1xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>) {
  %0 = gnn.apply_edges %g, copy_e(%a) : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf32>
  %1 = gnn.apply_edges %g, copy_e(%a) then [scale(4.0), scale(0.25)] : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf32>
  %2 = gnn.apply_edges %g, copy_e(%a) then [clamp(-3.0, 2.0), clamp(-1.0, 5.0)] : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf32>
  %3 = gnn.apply_edges %g, copy_e(%a) then [clamp(0.0, 1.0), clamp(2.0, 3.0)] : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return %0, %1, %2, %3 : tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>
}

// -----

// Unused and repeated message/reduce pairs are dropped.
// CHECK-LABEL: func @prune_messages
// CHECK: %[[R:.*]]:2 = gnn.send_and_recv %{{.*}}, [u_mul_e(%{{.*}}, %{{.*}}) -> sum, copy_e(%{{.*}}) -> max] :
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#0
func.func @prune_messages(%g: !gnn.graph<general>, %v: tensor<?x4xf32>, %e: tensor<?x1xf32>) -> (tensor<?x4xf32>, tensor<?x1xf32>, tensor<?x4xf32>) {
  %0:4 = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum, copy_e(%e) -> max, u_mul_e(%v, %e) -> sum] : (!gnn.graph<general>, tensor<?x4xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x4xf32>, tensor<?x1xf32>) -> (tensor<?x4xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x4xf32>)
  return %0#0, %0#2, %0#3 : tensor<?x4xf32>, tensor<?x1xf32>, tensor<?x4xf32>
}

// -----

// Counts known from the graph type fold to constants.
// CHECK-LABEL: func @counts
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG: %[[D:.*]] = gnn.num_dst_nodes
// CHECK: return %[[C3]], %[[D]], %[[C12]]
func.func @counts(%g: !gnn.graph<bipartite, src = 3, edges = 12>) -> (index, index, index) {
  %0 = gnn.num_src_nodes %g : !gnn.graph<bipartite, src = 3, edges = 12>
  %1 = gnn.num_dst_nodes %g : !gnn.graph<bipartite, src = 3, edges = 12>
  %2 = gnn.num_edges %g : !gnn.graph<bipartite, src = 3, edges = 12>
  return %0, %1, %2 : index, index, index
}

// -----

// Dropout at rate 0 is the identity.
// CHECK-LABEL: func @dropout_rate_zero
// CHECK-NOT: gnn.dropout
// CHECK: return %arg0
func.func @dropout_rate_zero(%x: tensor<?x4xf32>, %s: i64) -> tensor<?x4xf32> {
  %y = gnn.dropout %x, %s, %s rate(0.0) : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// sum_to to the input's own type sums nothing.
// CHECK-LABEL: func @sum_to_same
// CHECK-NOT: gnn.sum_to
// CHECK: return %arg0
func.func @sum_to_same(%x: tensor<?x4x1xf32>) -> tensor<?x4x1xf32> {
  %y = gnn.sum_to %x : tensor<?x4x1xf32> -> tensor<?x4x1xf32>
  return %y : tensor<?x4x1xf32>
}

// -----

// CHECK-LABEL: func @sum_to_rows
// CHECK: gnn.sum_to
func.func @sum_to_rows(%x: tensor<?x4xf32>) -> tensor<1x4xf32> {
  %y = gnn.sum_to %x : tensor<?x4xf32> -> tensor<1x4xf32>
  return %y : tensor<1x4xf32>
}

// -----

// CHECK-LABEL: func @broadcast_same
// CHECK-NOT: gnn.broadcast
// CHECK: return %arg0
func.func @broadcast_same(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %b = gnn.broadcast %x like %y : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  return %b : tensor<?x4xf32>
}

// -----

// A node-wise body reads a splat constant input, or a broadcast of one, as a
// scalar constant (which the folder hoists out of the body, as it does the
// body's own); inputs it does not read, and repeats, are dropped.
// CHECK-LABEL: func @apply_nodes_constant_inputs
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4xf32>, %[[S:[^:]*]]: tensor<f32>)
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[THREE:.*]] = arith.constant 3.000000e+00 : f32
// CHECK-NOT: gnn.broadcast
// CHECK: gnn.apply_nodes(%[[X]]) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[A]], %[[A]]
// CHECK: %[[N:.*]] = arith.mulf %[[M]], %[[TWO]]
// CHECK: arith.addf %[[N]], %[[THREE]]
// CHECK: } : (tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @apply_nodes_constant_inputs(%x: tensor<?x4xf32>, %s: tensor<f32>) -> tensor<?x4xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %c = gnn.broadcast %two like %x : tensor<f32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %three = arith.constant dense<3.0> : tensor<4x4xf32>
  %u = gnn.broadcast %s like %x : tensor<f32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %r = gnn.apply_nodes(%x, %c, %x, %u) {
  ^bb0(%a: f32, %b: f32, %a2: f32, %unused: f32):
    %m = arith.mulf %a, %a2 : f32
    %n = arith.mulf %m, %b : f32
    %t = arith.constant 3.0 : f32
    %o = arith.addf %n, %t : f32
    gnn.yield %o : f32
  } : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// An unread input that gives the result its per-row shape stays.
// CHECK-LABEL: func @apply_nodes_keeps_shape
// CHECK-SAME: (%[[Z:[^:]*]]: tensor<?x2x1xf32>, %[[V:[^:]*]]: tensor<?x2x8xf32>)
// CHECK: gnn.apply_nodes(%[[Z]], %[[V]])
// CHECK: } : (tensor<?x2x1xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
func.func @apply_nodes_keeps_shape(%z: tensor<?x2x1xf32>, %v: tensor<?x2x8xf32>) -> tensor<?x2x8xf32> {
  %r = gnn.apply_nodes(%z, %v) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    gnn.yield %e : f32
  } : (tensor<?x2x1xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  return %r : tensor<?x2x8xf32>
}

// -----

// A body that passes an element through is its input where the types
// agree, and not where the op broadcasts it.
// CHECK-LABEL: func @apply_nodes_pass_through
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4xf32>, %[[Z:[^:]*]]: tensor<?x1xf32>)
// CHECK: %[[B:.*]] = gnn.apply_nodes(%[[Z]], %[[X]])
// CHECK: return %[[X]], %[[B]]
func.func @apply_nodes_pass_through(%x: tensor<?x4xf32>, %z: tensor<?x1xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %same = gnn.apply_nodes(%z, %x) {
  ^bb0(%a: f32, %b: f32):
    gnn.yield %b : f32
  } : (tensor<?x1xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %wide = gnn.apply_nodes(%z, %x) {
  ^bb0(%a: f32, %b: f32):
    gnn.yield %a : f32
  } : (tensor<?x1xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %same, %wide : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// With several results: a result that passes an input through is that
// input, and results nothing reads are dropped (the op stays while one is
// read).
// CHECK-LABEL: func @apply_nodes_results
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x4xf32>, %[[Y:[^:]*]]: tensor<?x4xf32>)
// CHECK: %[[R:.*]] = gnn.apply_nodes(%[[X]], %[[Y]]) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.subf %[[A]], %[[B]]
// CHECK-NEXT: gnn.yield %[[S]] : f32
// CHECK-NEXT: } : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: return %[[Y]], %[[R]]
func.func @apply_nodes_results(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %p, %q, %r = gnn.apply_nodes(%x, %y) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    %d = arith.subf %a, %b : f32
    gnn.yield %b, %s, %d : f32, f32, f32
  } : (tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
  return %p, %r : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// So is dropout of an element at rate 0.
// CHECK-LABEL: func @dropout_element_rate_zero
// CHECK-NOT: gnn.dropout_element
// CHECK: arith.negf
func.func @dropout_element_rate_zero(%x: tensor<?x4xf32>, %s: i64) -> tensor<?x4xf32> {
  %y = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %d = gnn.dropout_element %a, %s, %s rate(0.0) : f32
    %n = arith.negf %d : f32
    gnn.yield %n : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
