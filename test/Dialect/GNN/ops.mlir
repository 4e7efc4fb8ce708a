// RUN: gnn-opt %s | gnn-opt | FileCheck %s
// RUN: gnn-opt %s --mlir-print-op-generic | gnn-opt | FileCheck %s

// CHECK-LABEL: func @graph_types
// CHECK-SAME: !gnn.graph<general>
// CHECK-SAME: !gnn.graph<complete, src = 4, dst = 4, edges = 16>
// CHECK-SAME: !gnn.graph<bipartite, edges = 12>
// CHECK-SAME: !gnn.graph<causal, src = 3, dst = 3>
func.func @graph_types(%a: !gnn.graph<general>,
                       %b: !gnn.graph<complete, src = 4, dst = 4, edges = 16>,
                       %c: !gnn.graph<bipartite, edges = 12>,
                       %d: !gnn.graph<causal, src = 3, dst = 3>) {
  return
}

// CHECK-LABEL: func @graph_queries
// CHECK: %[[G:.*]] = gnn.graph_from_coo %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
// CHECK: gnn.num_src_nodes %[[G]] : !gnn.graph<general>
// CHECK: gnn.num_dst_nodes %[[G]] : !gnn.graph<general>
// CHECK: gnn.num_edges %[[G]] : !gnn.graph<general>
// CHECK: gnn.edge_endpoints %[[G]] : !gnn.graph<general> -> tensor<?xindex>, tensor<?xindex>
func.func @graph_queries(%src: tensor<?xindex>, %dst: tensor<?xindex>,
                         %ns: index, %nd: index) -> (index, index, index, tensor<?xindex>) {
  %g = gnn.graph_from_coo %src, %dst, %ns, %nd : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
  %0 = gnn.num_src_nodes %g : !gnn.graph<general>
  %1 = gnn.num_dst_nodes %g : !gnn.graph<general>
  %2 = gnn.num_edges %g : !gnn.graph<general>
  %s, %d = gnn.edge_endpoints %g : !gnn.graph<general> -> tensor<?xindex>, tensor<?xindex>
  return %0, %1, %2, %s : index, index, index, tensor<?xindex>
}

// CHECK-LABEL: func @builtin_messages
// CHECK: gnn.apply_edges %{{.*}}, u_dot_v(%{{.*}}, %{{.*}}) : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) -> tensor<?x8x1xf32>
// CHECK: gnn.apply_edges %{{.*}}, u_mul_e(%{{.*}}, %{{.*}}) : {{.*}} -> tensor<?x8x64xf32>
// CHECK: gnn.apply_edges %{{.*}}, u_add_v(%{{.*}}, %{{.*}}) : {{.*}} -> tensor<?x8x64xf32>
// CHECK: gnn.apply_edges %{{.*}}, copy_u(%{{.*}}) : {{.*}} -> tensor<?x8x64xf32>
// CHECK: gnn.apply_edges %{{.*}}, e_div_v(%{{.*}}, %{{.*}}) : {{.*}} -> tensor<?x8x1xf32>
// CHECK: gnn.apply_edges %{{.*}}, v_sub_e(%{{.*}}, %{{.*}}) : {{.*}} -> tensor<?x8x64xf32>
// CHECK: gnn.apply_edges %{{.*}}, copy_e(%{{.*}}) then [scale(1.250000e-01), clamp(-5.000000e+00, 5.000000e+00), exp] : {{.*}} -> tensor<?x8x1xf32>
// CHECK: gnn.apply_edges %{{.*}}, copy_e(%{{.*}}) then [relu, neg] edges(%{{.*}}) : (!gnn.graph<complete>, tensor<?x8x1xf32>, tensor<?xindex>) -> tensor<?x8x1xf32>
func.func @builtin_messages(%g: !gnn.graph<complete>, %q: tensor<?x8x64xf32>,
                            %k: tensor<?x8x64xf32>, %v: tensor<?x8x64xf32>,
                            %zdst: tensor<?x8x1xf32>, %eids: tensor<?xindex>) {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) -> tensor<?x8x1xf32>
  %m = gnn.apply_edges %g, u_mul_e(%v, %s) : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x64xf32>
  %a = gnn.apply_edges %g, u_add_v(%k, %q) : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
  %c = gnn.apply_edges %g, copy_u(%v) : (!gnn.graph<complete>, tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
  %d = gnn.apply_edges %g, e_div_v(%s, %zdst) : (!gnn.graph<complete>, tensor<?x8x1xf32>, tensor<?x8x1xf32>) -> tensor<?x8x1xf32>
  %b = gnn.apply_edges %g, v_sub_e(%q, %s) : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x64xf32>
  %e = gnn.apply_edges %g, copy_e(%s) then [scale(0.125), clamp(-5.0, 5.0), exp] : (!gnn.graph<complete>, tensor<?x8x1xf32>) -> tensor<?x8x1xf32>
  %r = gnn.apply_edges %g, copy_e(%s) then [relu, neg] edges(%eids) : (!gnn.graph<complete>, tensor<?x8x1xf32>, tensor<?xindex>) -> tensor<?x8x1xf32>
  return
}

// CHECK-LABEL: func @udf_edges
// CHECK: gnn.apply_edges %{{.*}}, (u %{{.*}}, v %{{.*}}, e %{{.*}}) {
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: gnn.yield %{{.*}} : f32
// CHECK: } : (!gnn.graph<general, src = 3, dst = 5, edges = 7>, tensor<3x4xf32>, tensor<5x1xf32>, tensor<7x4xf32>) -> tensor<7x4xf32>
func.func @udf_edges(%g: !gnn.graph<general, src = 3, dst = 5, edges = 7>,
                     %a: tensor<3x4xf32>, %b: tensor<5x1xf32>,
                     %c: tensor<7x4xf32>) -> tensor<7x4xf32> {
  %r = gnn.apply_edges %g, (u %a, v %b, e %c) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %0, %z : f32
    gnn.yield %1 : f32
  } : (!gnn.graph<general, src = 3, dst = 5, edges = 7>, tensor<3x4xf32>, tensor<5x1xf32>, tensor<7x4xf32>) -> tensor<7x4xf32>
  return %r : tensor<7x4xf32>
}

// CHECK-LABEL: func @send_and_recv
// CHECK: gnn.send_and_recv %{{.*}}, [u_mul_e(%{{.*}}, %[[E:.*]]) -> sum, copy_e(%[[E]]) -> sum] : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>)
// CHECK: gnn.send_and_recv %{{.*}}, [copy_u(%{{.*}}) -> max, u_mul_v(%{{.*}}, %{{.*}}) -> mean, copy_e(%{{.*}}) -> min] edges(%{{.*}}) :
func.func @send_and_recv(%g: !gnn.graph<causal>, %v: tensor<?x2x16xf32>,
                         %e: tensor<?x2x1xf32>, %q: tensor<?x2x16xf32>,
                         %eids: tensor<?xindex>) {
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>)
  %0:3 = gnn.send_and_recv %g, [copy_u(%v) -> max, u_mul_v(%v, %q) -> mean, copy_e(%e) -> min] edges(%eids) : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x1xf32>, tensor<?xindex>) -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x1xf32>)
  return
}

// CHECK-LABEL: func @reduce
// CHECK: gnn.reduce %{{.*}}, sum(%{{.*}}) : (!gnn.graph<bipartite>, tensor<?x4x1xf32>) -> tensor<?x4x1xf32>
// CHECK: gnn.reduce %{{.*}}, max(%{{.*}}) edges(%{{.*}}) : (!gnn.graph<bipartite>, tensor<?x4x1xf32>, tensor<?xindex>) -> tensor<?x4x1xf32>
func.func @reduce(%g: !gnn.graph<bipartite>, %e: tensor<?x4x1xf32>,
                  %eids: tensor<?xindex>) {
  %0 = gnn.reduce %g, sum(%e) : (!gnn.graph<bipartite>, tensor<?x4x1xf32>) -> tensor<?x4x1xf32>
  %1 = gnn.reduce %g, max(%e) edges(%eids) : (!gnn.graph<bipartite>, tensor<?x4x1xf32>, tensor<?xindex>) -> tensor<?x4x1xf32>
  return
}

// CHECK-LABEL: func @apply_nodes
// CHECK: gnn.apply_nodes(%{{.*}}, %{{.*}}) {
// CHECK: arith.divf
// CHECK: } : (tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x64xf32>
func.func @apply_nodes(%wv: tensor<?x8x64xf32>, %z: tensor<?x8x1xf32>) -> tensor<?x8x64xf32> {
  %o = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x64xf32>
  return %o : tensor<?x8x64xf32>
}

// CHECK-LABEL: func @apply_nodes_results
// CHECK: %{{.*}}:2 = gnn.apply_nodes(%{{.*}}, %{{.*}}) {
// CHECK: gnn.yield %{{.*}}, %{{.*}} : f32, i1
// CHECK: } : (tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>)
func.func @apply_nodes_results(%m: tensor<?x4xf32>, %g: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>) {
  %s, %c = gnn.apply_nodes(%m, %g) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    %k = arith.cmpf ogt, %t, %a : f32
    gnn.yield %t, %k : f32, i1
  } : (tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>)
  return %s, %c : tensor<?x4xf32>, tensor<?x4xi1>
}

// CHECK-LABEL: func @filters
// CHECK: %[[N:.*]] = gnn.filter_nodes(%{{.*}}) from %{{.*}} {
// CHECK: } : (tensor<?xi1>, tensor<?xindex>) -> tensor<?xindex>
// CHECK: %[[E:.*]] = gnn.filter_edges %{{.*}}, (v %{{.*}}) {
// CHECK: } : (!gnn.graph<complete>, tensor<?xi1>) -> tensor<?xindex>
// CHECK: gnn.filter_edges %{{.*}}, (u %{{.*}}, e %{{.*}}) from %[[E]] {
// CHECK: arith.cmpf
// CHECK: gnn.send_and_recv {{.*}} edges(%[[E]])
func.func @filters(%g: !gnn.graph<complete>, %mask: tensor<?xi1>,
                   %enc: tensor<?xindex>, %p: tensor<?x1xf32>,
                   %w: tensor<?xf32>, %e: tensor<?x1x1xf32>) {
  %nodes = gnn.filter_nodes(%mask) from %enc {
  ^bb0(%m: i1):
    gnn.yield %m : i1
  } : (tensor<?xi1>, tensor<?xindex>) -> tensor<?xindex>
  %live = gnn.filter_edges %g, (v %mask) {
  ^bb0(%m: i1):
    gnn.yield %m : i1
  } : (!gnn.graph<complete>, tensor<?xi1>) -> tensor<?xindex>
  %heavy = gnn.filter_edges %g, (u %p, e %w) from %live {
  ^bb0(%a: f32, %b: f32):
    %c = arith.cmpf olt, %a, %b : f32
    gnn.yield %c : i1
  } : (!gnn.graph<complete>, tensor<?x1xf32>, tensor<?xf32>, tensor<?xindex>) -> tensor<?xindex>
  %z = gnn.send_and_recv %g, [copy_e(%e) -> sum] edges(%live) : (!gnn.graph<complete>, tensor<?x1x1xf32>, tensor<?xindex>) -> tensor<?x1x1xf32>
  return
}

// CHECK-LABEL: func @rows
// CHECK: gnn.gather_rows %{{.*}}[%{{.*}}] : (tensor<?x128xf32>, tensor<?xindex>) -> tensor<?x128xf32>
// CHECK: gnn.scatter_rows %{{.*}} into %{{.*}}[%{{.*}}] : (tensor<?x128xf32>, tensor<?x128xf32>, tensor<?xindex>) -> tensor<?x128xf32>
func.func @rows(%x: tensor<?x128xf32>, %ids: tensor<?xindex>) -> tensor<?x128xf32> {
  %a = gnn.gather_rows %x[%ids] : (tensor<?x128xf32>, tensor<?xindex>) -> tensor<?x128xf32>
  %b = gnn.scatter_rows %a into %x[%ids] : (tensor<?x128xf32>, tensor<?x128xf32>, tensor<?xindex>) -> tensor<?x128xf32>
  return %b : tensor<?x128xf32>
}

// CHECK-LABEL: func @attributes
// CHECK-SAME: #gnn.fn<u_dot_v>
// CHECK-SAME: #gnn.fn<copy_e>
// CHECK-SAME: #gnn.unary<clamp(-1.000000e+00, 2.000000e+00)>
func.func @attributes() attributes {a = #gnn.fn<u_dot_v>, b = #gnn.fn<copy_e>, c = #gnn.unary<clamp(-1.0, 2.0)>} {
  return
}

// CHECK-LABEL: func @fused_attention
// CHECK: gnn.fused_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) clamp(-5.000000e+00, 5.000000e+00) normalize : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
// CHECK: gnn.fused_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) normalize : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x32xf32>) -> (tensor<?x8x32xf32>, tensor<?x8x1xf32>)
// CHECK: gnn.fused_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale(1.000000e+00) edges(%{{.*}}) : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x32xf32>, tensor<?xindex>) -> (tensor<?x8x32xf32>, tensor<?x8x1xf32>)
func.func @fused_attention(%g: !gnn.graph<complete>, %q: tensor<?x8x64xf32>, %k: tensor<?x8x64xf32>, %v: tensor<?x8x64xf32>, %w: tensor<?x8x32xf32>, %eids: tensor<?xindex>) {
  %o = gnn.fused_attention %g, %q, %k, %v scale(0.125) clamp(-5.0, 5.0) normalize : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
  %o2, %lse = gnn.fused_attention %g, %q, %k, %w scale(0.125) normalize : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x32xf32>) -> (tensor<?x8x32xf32>, tensor<?x8x1xf32>)
  %wv, %z = gnn.fused_attention %g, %q, %k, %w scale(1.0) edges(%eids) : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x32xf32>, tensor<?xindex>) -> (tensor<?x8x32xf32>, tensor<?x8x1xf32>)
  return
}

// Dense node-wise layers.
// CHECK-LABEL: func @dense_layers
// CHECK: gnn.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: gnn.linear %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>
// CHECK: gnn.layer_norm %{{.*}}, %{{.*}}, %{{.*}} eps(1.000000e-05) : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// CHECK: gnn.log_softmax %{{.*}} : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: gnn.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}} eps(1.000000e-05) : (tensor<?x4xf32>, tensor<4xf32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
func.func @dense_layers(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>, %w2: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x?xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %y = gnn.linear %x, %w, %b : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %z = gnn.linear %y, %w2 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>
  %n = gnn.layer_norm %y, %b, %b eps(1.0e-05) : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %l = gnn.log_softmax %n : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %dy, %dyxh = gnn.layer_norm_grad %y, %b, %l eps(1.0e-05) : (tensor<?x4xf32>, tensor<4xf32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return %l, %z, %dy, %dyxh : tensor<?x4xf32>, tensor<?x?xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// CHECK-LABEL: func @in_subgraph
// CHECK: %[[S:.*]], %[[E:.*]] = gnn.in_subgraph %{{.*}}, %{{.*}} : (!gnn.graph<complete>, tensor<?xindex>) -> (!gnn.graph<general>, tensor<?xindex>)
// CHECK: gnn.fused_attention %[[S]]
func.func @in_subgraph(%g: !gnn.graph<complete>, %active: tensor<?xindex>,
                       %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>,
                       %v: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %sub, %eids = gnn.in_subgraph %g, %active
      : (!gnn.graph<complete>, tensor<?xindex>)
      -> (!gnn.graph<general>, tensor<?xindex>)
  %a = gnn.fused_attention %sub, %q, %k, %v scale(5.000000e-01) normalize
      : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  return %a : tensor<?x2x4xf32>
}

// CHECK-LABEL: func @dropout
// CHECK: gnn.dropout %{{.*}}, %{{.*}}, %{{.*}} rate(1.000000e-01) : tensor<?x2x4xf32>
func.func @dropout(%x: tensor<?x2x4xf32>, %seed: i64, %offset: i64) -> tensor<?x2x4xf32> {
  %y = gnn.dropout %x, %seed, %offset rate(0.1) : tensor<?x2x4xf32>
  return %y : tensor<?x2x4xf32>
}

// CHECK-LABEL: func @dropout_element
// CHECK: gnn.apply_nodes
// CHECK: gnn.dropout_element %{{.*}}, %{{.*}}, %{{.*}} rate(2.500000e-01) : f32
func.func @dropout_element(%x: tensor<?x2x4xf32>, %seed: i64, %offset: i64) -> tensor<?x2x4xf32> {
  %y = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %d = gnn.dropout_element %a, %seed, %offset rate(0.25) : f32
    gnn.yield %d : f32
  } : (tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  return %y : tensor<?x2x4xf32>
}

// CHECK-LABEL: func @scatter_add
// CHECK: gnn.scatter_rows %{{.*}} into %{{.*}}[%{{.*}}] add : (tensor<?x4xf32>, tensor<7x4xf32>, tensor<?xindex>) -> tensor<7x4xf32>
func.func @scatter_add(%d: tensor<?x4xf32>, %lut: tensor<7x4xf32>, %ids: tensor<?xindex>) -> tensor<7x4xf32> {
  %g = gnn.scatter_rows %d into %lut[%ids] add : (tensor<?x4xf32>, tensor<7x4xf32>, tensor<?xindex>) -> tensor<7x4xf32>
  return %g : tensor<7x4xf32>
}

// CHECK-LABEL: func @sum_to
// CHECK: gnn.sum_to %{{.*}} : tensor<?x8x64xf32> -> tensor<?x8x1xf32>
// CHECK: gnn.sum_to %{{.*}} : tensor<?x8x64xf32> -> tensor<64xf32>
// CHECK: gnn.sum_to %{{.*}} : tensor<?x8x64xf32> -> tensor<f32>
func.func @sum_to(%g: tensor<?x8x64xf32>) -> (tensor<?x8x1xf32>, tensor<64xf32>, tensor<f32>) {
  %a = gnn.sum_to %g : tensor<?x8x64xf32> -> tensor<?x8x1xf32>
  %b = gnn.sum_to %g : tensor<?x8x64xf32> -> tensor<64xf32>
  %c = gnn.sum_to %g : tensor<?x8x64xf32> -> tensor<f32>
  return %a, %b, %c : tensor<?x8x1xf32>, tensor<64xf32>, tensor<f32>
}

// CHECK-LABEL: func @broadcast
// CHECK: gnn.broadcast %{{.*}} like %{{.*}} : tensor<f32>, tensor<?x8x64xf32> -> tensor<?x8x64xf32>
// CHECK: gnn.broadcast %{{.*}} like %{{.*}} : tensor<?x8x1xf32>, tensor<?x8x64xi1> -> tensor<?x8x64xf32>
func.func @broadcast(%s: tensor<f32>, %c: tensor<?x8x1xf32>, %x: tensor<?x8x64xf32>, %m: tensor<?x8x64xi1>) -> (tensor<?x8x64xf32>, tensor<?x8x64xf32>) {
  %a = gnn.broadcast %s like %x : tensor<f32>, tensor<?x8x64xf32> -> tensor<?x8x64xf32>
  %b = gnn.broadcast %c like %m : tensor<?x8x1xf32>, tensor<?x8x64xi1> -> tensor<?x8x64xf32>
  return %a, %b : tensor<?x8x64xf32>, tensor<?x8x64xf32>
}

// CHECK-LABEL: func @linear_gradients
// CHECK: gnn.linear %{{.*}}, %{{.*}} transpose_weight : (tensor<?x6xf32>, tensor<6x4xf32>) -> tensor<?x4xf32>
// CHECK: gnn.outer_sum %{{.*}}, %{{.*}} : (tensor<?x6xf32>, tensor<?x4xf32>) -> tensor<6x4xf32>
func.func @linear_gradients(%dy: tensor<?x6xf32>, %w: tensor<6x4xf32>, %x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<6x4xf32>) {
  %dx = gnn.linear %dy, %w transpose_weight : (tensor<?x6xf32>, tensor<6x4xf32>) -> tensor<?x4xf32>
  %dw = gnn.outer_sum %dy, %x : (tensor<?x6xf32>, tensor<?x4xf32>) -> tensor<6x4xf32>
  return %dx, %dw : tensor<?x4xf32>, tensor<6x4xf32>
}

// CHECK-LABEL: func @linear_addends
// CHECK: gnn.linear %{{.*}}, %{{.*}}, %{{.*}} plus %{{.*}} : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: gnn.linear %{{.*}}, %{{.*}} transpose_weight plus %{{.*}} : (tensor<?x4xf32>, tensor<4x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK: gnn.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}} plus %{{.*}} eps(1.000000e-05) : (tensor<?x4xf32>, tensor<4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
func.func @linear_addends(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>, %r: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x8xf32>, tensor<?x4xf32>) {
  %y = gnn.linear %x, %w, %b plus %r : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %dx = gnn.linear %y, %w transpose_weight plus %x : (tensor<?x4xf32>, tensor<4x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %dn, %dnxh = gnn.layer_norm_grad %y, %b, %r plus %r eps(1.0e-05) : (tensor<?x4xf32>, tensor<4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  return %y, %dx, %dn : tensor<?x4xf32>, tensor<?x8xf32>, tensor<?x4xf32>
}

// CHECK-LABEL: func @fused_attention_grad
// CHECK: gnn.fused_attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[DO:.*]], %[[DL:.*]] scale(2.500000e-01) normalize saved(%[[L:.*]]) :
// CHECK: gnn.fused_attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) normalize
// CHECK: gnn.fused_attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} scale(1.000000e+00) clamp(-5.000000e+00, 5.000000e+00) edges(%{{.*}})
func.func @fused_attention_grad(%g: !gnn.graph<causal>, %q: tensor<?x2x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %dout: tensor<?x2x16xf32>, %dz: tensor<?x2x1xf32>, %eids: tensor<?xindex>) -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>) {
  %o, %lse = gnn.fused_attention %g, %q, %k, %v scale(0.25) normalize
      : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>)
  %dq3, %dk3, %dv3 = gnn.fused_attention_grad %g, %q, %k, %v, %dout, %dz scale(0.25) normalize saved(%lse)
      : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>)
      -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %dout scale(0.125) normalize
      : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
      -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  %dq2, %dk2, %dv2 = gnn.fused_attention_grad %g, %q, %k, %v, %dout, %dz scale(1.0) clamp(-5.0, 5.0) edges(%eids)
      : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x1xf32>, tensor<?xindex>)
      -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  return %dq, %dk2 : tensor<?x2x16xf32>, tensor<?x2x16xf32>
}

// CHECK-LABEL: func @tape
// CHECK: %[[T:.*]] = gnn.tape_create : !gnn.tape
// CHECK: gnn.tape_push %[[T]], %{{.*}} : tensor<?x128xf32>
// CHECK: gnn.tape_push %[[T]], %{{.*}} : tensor<index>
// CHECK: %{{.*}} = gnn.tape_refused %[[T]]
// CHECK: gnn.tape_pop %[[T]] : tensor<index>
// CHECK: gnn.tape_pop %[[T]] : tensor<?x128xf32>
// CHECK: gnn.tape_free %[[T]]
func.func @tape(%h: tensor<?x128xf32>, %i: tensor<index>) -> tensor<?x128xf32> {
  %t = gnn.tape_create : !gnn.tape
  gnn.tape_push %t, %h : tensor<?x128xf32>
  gnn.tape_push %t, %i : tensor<index>
  %full = gnn.tape_refused %t
  %j = gnn.tape_pop %t : tensor<index>
  %g = gnn.tape_pop %t : tensor<?x128xf32>
  gnn.tape_free %t
  return %g : tensor<?x128xf32>
}

// CHECK-LABEL: func @result_ready
// CHECK: gnn.result_ready %{{.*}}, 1 : tensor<?x128xf32>
// CHECK: gnn.result_ready %{{.*}}, 0 : tensor<i64>
func.func @result_ready(%h: tensor<?x128xf32>, %i: tensor<i64>) -> (tensor<i64>, tensor<?x128xf32>) {
  gnn.result_ready %h, 1 : tensor<?x128xf32>
  gnn.result_ready %i, 0 : tensor<i64>
  return %i, %h : tensor<i64>, tensor<?x128xf32>
}
