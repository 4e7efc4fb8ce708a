// RUN: gnn-opt %s -gnn-differentiate -split-input-file | FileCheck %s

// Attention in DGL form. The gradient function returns the loss, then one
// gradient per marked argument, named after it. Source features get their
// gradient over the reversed graph, as a send_and_recv sum that stores no
// per-edge product; the edge weight's gradient is a dot product.
// CHECK-LABEL: func @attention(
// CHECK-LABEL: func @attention_grad(
// CHECK-SAME: %[[G:[^:]*]]: !gnn.graph<general>, %[[Q:[^:]*]]: tensor<?x2x4xf32> {gnn.differentiable, gnn.name = "q"}, %[[K:[^:]*]]: tensor<?x2x4xf32> {gnn.differentiable, gnn.name = "k"}, %[[V:[^:]*]]: tensor<?x2x4xf32> {gnn.name = "v"}
// CHECK-SAME: -> (tensor<f32>, tensor<?x2x4xf32> {gnn.name = "grad.q"}, tensor<?x2x4xf32> {gnn.name = "grad.k"})
// CHECK: %[[SRC:.*]], %[[DST:.*]] = gnn.edge_endpoints %[[G]]
// CHECK: %[[NS:.*]] = gnn.num_src_nodes %[[G]]
// CHECK: %[[ND:.*]] = gnn.num_dst_nodes %[[G]]
// CHECK: %[[R:.*]] = gnn.graph_from_coo %[[DST]], %[[SRC]], %[[ND]], %[[NS]]
// CHECK: %[[E:.*]] = gnn.apply_edges %[[G]], u_dot_v(%[[K]], %[[Q]]) then
// CHECK: gnn.send_and_recv %[[G]], [u_mul_e(%[[V]], %[[E]]) -> sum, copy_e(%[[E]]) -> sum]
// CHECK: %[[DE:.*]] = gnn.apply_edges %[[G]], u_dot_v(%[[V]], %{{.*}})
// CHECK: %[[S:.*]] = gnn.apply_edges %[[G]], u_dot_v(%[[K]], %[[Q]]) :
// CHECK: %[[DS:.*]] = gnn.apply_edges %[[G]], (e %[[S]], e %{{.*}}) {
// CHECK: arith.cmpf ole
// CHECK: arith.cmpf oge
// CHECK: %[[DK:.*]] = gnn.send_and_recv %[[R]], [u_mul_e(%[[Q]], %[[DS]]) -> sum]
// CHECK: %[[DQ:.*]] = gnn.send_and_recv %[[G]], [u_mul_e(%[[K]], %[[DS]]) -> sum]
// CHECK: return %{{.*}}, %[[DQ]], %[[DK]]
func.func @attention(%g: !gnn.graph<general>,
                     %q: tensor<?x2x4xf32> {gnn.differentiable, gnn.name = "q"},
                     %k: tensor<?x2x4xf32> {gnn.differentiable, gnn.name = "k"},
                     %v: tensor<?x2x4xf32> {gnn.name = "v"}) -> tensor<f32> {
  %e = gnn.apply_edges %g, u_dot_v(%k, %q) then [scale(0.5), clamp(-5.0, 5.0), exp]
      : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum]
      : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>)
      -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  %o = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<?x2x4xf32>, tensor<?x2x1xf32>) -> tensor<?x2x4xf32>
  %l = gnn.sum_to %o : tensor<?x2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A marked argument the loss does not depend on gets zeros; nothing is
// computed for it. Results after the loss are returned unchanged.
// CHECK-LABEL: func @unused_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x3xf32> {gnn.differentiable}, %[[Y:[^:]*]]: tensor<?x3xf32> {gnn.differentiable})
// CHECK-SAME: -> (tensor<1xf32>, tensor<?x3xf32>, tensor<?x3xf32> {gnn.name = "grad.arg0"}, tensor<?x3xf32> {gnn.name = "grad.arg1"})
// CHECK-DAG: %[[SEED:.*]] = arith.constant dense<1.000000e+00> : tensor<1xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[L:.*]] = gnn.sum_to %[[X]] : tensor<?x3xf32> -> tensor<1xf32>
// CHECK: %[[DX:.*]] = gnn.broadcast %[[SEED]] like %[[X]]
// CHECK: %[[DY:.*]] = gnn.broadcast %[[ZERO]] like %[[Y]]
// CHECK-NEXT: return %[[L]], %[[Y]], %[[DX]], %[[DY]]
func.func @unused(%x: tensor<?x3xf32> {gnn.differentiable}, %y: tensor<?x3xf32> {gnn.differentiable}) -> (tensor<1xf32>, tensor<?x3xf32>) {
  %l = gnn.sum_to %x : tensor<?x3xf32> -> tensor<1xf32>
  return %l, %y : tensor<1xf32>, tensor<?x3xf32>
}

// -----

// Fused attention is differentiated by gnn.fused_attention_grad over the
// graph, given the gradients of wv and z (zeros for z, which the loss does
// not use). No reversed graph is built: the op's lowering turns the graph
// around only where it needs to.
// CHECK-LABEL: func @fused_grad(
// CHECK-SAME: %[[G:[^:]*]]: !gnn.graph<general>, %[[Q:[^:]*]]: tensor<?x2x4xf32> {gnn.differentiable}, %[[K:[^:]*]]: tensor<?x2x4xf32> {gnn.differentiable}, %[[V:[^:]*]]: tensor<?x2x4xf32> {gnn.differentiable}, %[[E:[^:]*]]: tensor<?xindex>)
// CHECK-NOT: gnn.graph_from_coo
// CHECK: %[[WV:.*]]:2 = gnn.fused_attention %[[G]], %[[Q]], %[[K]], %[[V]] scale(5.000000e-01) clamp(-2.000000e+00, 2.000000e+00) edges(%[[E]])
// CHECK: %[[DWV:.*]] = gnn.broadcast %{{.*}} like %[[WV]]#0
// CHECK: %[[DZ:.*]] = gnn.broadcast %{{.*}} like %[[WV]]#1
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = gnn.fused_attention_grad %[[G]], %[[Q]], %[[K]], %[[V]], %[[DWV]], %[[DZ]] scale(5.000000e-01) clamp(-2.000000e+00, 2.000000e+00) edges(%[[E]])
// CHECK-NOT: gnn.graph_from_coo
// CHECK: return %{{.*}}, %[[DQ]], %[[DK]], %[[DV]]
func.func @fused(%g: !gnn.graph<general>, %q: tensor<?x2x4xf32> {gnn.differentiable},
                 %k: tensor<?x2x4xf32> {gnn.differentiable},
                 %v: tensor<?x2x4xf32> {gnn.differentiable},
                 %eids: tensor<?xindex>) -> tensor<f32> {
  %wv, %z = gnn.fused_attention %g, %q, %k, %v scale(0.5) clamp(-2.0, 2.0) edges(%eids)
      : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?xindex>)
      -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  %l = gnn.sum_to %wv : tensor<?x2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Calls go through one backward function per callee, however often it is
// called: @layer_vjp_tape takes @layer's arguments and its results'
// gradients and returns the gradients of its float arguments. Its backward
// reads nothing of its forward but the arguments, so the calls of @layer
// stay as they are.
// CHECK-LABEL: func.func private @layer_vjp_tape(
// CHECK-SAME: %{{[^:]*}}: tensor<?x4xf32>, %{{[^:]*}}: tensor<?x4xf32>, %{{[^:]*}}: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK-SAME: no_inline
// CHECK-NOT: func.func private @layer_
// CHECK-LABEL: func @model_grad(
// CHECK: %[[H:.*]] = call @layer(
// CHECK: %[[Y:.*]] = call @layer(%[[H]]
// CHECK: %[[B2:.*]]:2 = call @layer_vjp_tape(%[[H]]
// CHECK: %[[B1:.*]]:2 = call @layer_vjp_tape(
// CHECK-NOT: call @layer
func.func private @layer(%x: tensor<?x4xf32>, %w: tensor<?x4xf32>) -> tensor<?x4xf32> attributes {no_inline} {
  %y = gnn.apply_nodes(%x, %w) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    %t = math.tanh %m : f32
    gnn.yield %t : f32
  } : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
func.func @model(%x: tensor<?x4xf32> {gnn.differentiable}, %w1: tensor<?x4xf32> {gnn.differentiable}, %w2: tensor<?x4xf32> {gnn.differentiable}) -> tensor<f32> {
  %h = call @layer(%x, %w1) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %y = call @layer(%h, %w2) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %l = gnn.sum_to %y : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A callee whose backward reads a tensor its forward computed (the product's
// factors) is called as @layer_fwd, which also returns that residual, and
// differentiated by @layer_vjp_tape reading it: the forward runs once.
// CHECK-LABEL: func.func private @layer_vjp_tape(
// CHECK-SAME: %{{[^:]*}}: tensor<?x4xf32>, %{{[^:]*}}: tensor<4x4xf32>, %[[DY:[^:]*]]: tensor<?x4xf32>, %[[H:[^:]*]]: tensor<?x4xf32>)
// CHECK-NOT: gnn.linear %{{.*}}, %{{[^ ]*}} :
// CHECK: return
// CHECK-LABEL: func.func private @layer_fwd(
// CHECK-SAME: -> (tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK: %[[FH:.*]] = gnn.linear
// CHECK: return %{{.*}}, %[[FH]]
// CHECK-LABEL: func @model_grad(
// CHECK: %[[F:.*]]:2 = call @layer_fwd(
// CHECK-NOT: call @layer(
// CHECK: call @layer_vjp_tape(%{{.*}}, %{{.*}}, %{{.*}}, %[[F]]#1)
func.func private @layer(%x: tensor<?x4xf32>, %w: tensor<4x4xf32>) -> tensor<?x4xf32> attributes {no_inline} {
  %h = gnn.linear %x, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %y = gnn.apply_nodes(%h, %h) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
func.func @model(%x: tensor<?x4xf32> {gnn.differentiable}, %w: tensor<4x4xf32> {gnn.differentiable}) -> tensor<f32> {
  %y = call @layer(%x, %w) : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %l = gnn.sum_to %y : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Reshapes are recomputed in the backward from what they reshape (views
// once bufferized) rather than kept as residuals of their own: @layer_fwd
// returns %h and %s, not also %h's heads or %s's rows.
// CHECK-LABEL: func.func private @layer_vjp_tape(
// CHECK-SAME: %{{[^:]*}}: tensor<?x8xf32>, %{{[^:]*}}: tensor<8x8xf32>, %{{[^:]*}}: tensor<?x8xf32>, %[[H:[^:]*]]: tensor<?x8xf32>, %[[S:[^:]*]]: tensor<?x2x4xf32>)
// CHECK-DAG: tensor.expand_shape %[[H]]
// CHECK-DAG: tensor.collapse_shape %[[S]]
// CHECK-LABEL: func.func private @layer_fwd(
// CHECK-SAME: -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x2x4xf32>)
func.func private @layer(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> attributes {no_inline} {
  %h = gnn.linear %x, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %h, %c0 : tensor<?x8xf32>
  %h3 = tensor.expand_shape %h [[0], [1, 2]] output_shape [%n, 2, 4] : tensor<?x8xf32> into tensor<?x2x4xf32>
  %s = gnn.apply_nodes(%h3, %h3) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    gnn.yield %m : f32
  } : (tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  %s2 = tensor.collapse_shape %s [[0], [1, 2]] : tensor<?x2x4xf32> into tensor<?x8xf32>
  %y = gnn.apply_nodes(%s2, %h) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    gnn.yield %m : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
func.func @model(%x: tensor<?x8xf32> {gnn.differentiable}, %w: tensor<8x8xf32> {gnn.differentiable}) -> tensor<f32> {
  %y = call @layer(%x, %w) : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %l = gnn.sum_to %y : tensor<?x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// scf.if: both branches are outlined and differentiated; the backward is an
// scf.if on the same condition that calls the taken branch's backward.
// CHECK-LABEL: func @branch_grad(
// CHECK: %[[F:.*]] = scf.if %[[C:[^ ]*]] -> (tensor<?x4xf32>)
// CHECK: %[[B:.*]] = scf.if %[[C]] -> (tensor<?x4xf32>) {
// CHECK-NEXT: %[[T:.*]] = func.call @branch_grad_if_then_vjp(
// CHECK-NEXT: scf.yield %[[T]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[E:.*]] = func.call @branch_grad_if_else_vjp(
// CHECK-NEXT: scf.yield %[[E]]
// CHECK: return %{{.*}}, %{{.*}} : tensor<f32>, tensor<?x4xf32>
func.func @branch(%x: tensor<?x4xf32> {gnn.differentiable}, %c: i1) -> tensor<f32> {
  %r = scf.if %c -> tensor<?x4xf32> {
    %b = gnn.apply_nodes(%x) {
    ^bb0(%e: f32):
      %t = math.tanh %e : f32
      gnn.yield %t : f32
    } : (tensor<?x4xf32>) -> tensor<?x4xf32>
    scf.yield %b : tensor<?x4xf32>
  } else {
    scf.yield %x : tensor<?x4xf32>
  }
  %l = gnn.sum_to %r : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// scf.while keeps a tape: each iteration of the forward pushes the state
// entering it (a scalar as a 0-d tensor), the forwarded values its
// condition computes (none here: it passes the state on, so the forward's
// condition is a copy that computes only the flag, and the state is passed
// once) and its body's residuals, and counts itself; the backward pops
// them in reverse, as many iterations as the forward ran, and frees the
// tape. No iteration is unrolled or recomputed. The forward stops once the
// tape has refused a value (past the run's budget: the call fails).
// CHECK-LABEL: func @counted_grad(
// CHECK: %[[TAPE:.*]] = gnn.tape_create : !gnn.tape
// CHECK: %[[W:.*]]:3 = scf.while (%[[S:[^ ]*]] = %arg0, %[[I:[^ ]*]] = %c0, %[[N:[^ ]*]] = %c0
// CHECK: %[[C:.*]] = func.call @counted_grad_loop_cond_computed(%[[S]], %[[I]], {{.*}}) : ({{.*}}) -> i1
// CHECK-NEXT: %[[FULL:.*]] = gnn.tape_refused %[[TAPE]]
// CHECK-NEXT: %[[ROOM:.*]] = arith.xori %[[FULL]], %true : i1
// CHECK-NEXT: %[[GO:.*]] = arith.andi %[[C]], %[[ROOM]] : i1
// CHECK: scf.condition(%[[GO]]) %[[S]], %[[I]], %[[N]] : tensor<?x4xf32>, index, index
// CHECK: ^bb0(%[[SS:[^:]*]]: tensor<?x4xf32>, %[[SI:[^:]*]]: index, %[[SN:[^:]*]]: index):
// CHECK-NEXT: gnn.tape_push %[[TAPE]], %[[SS]] : tensor<?x4xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.from_elements %[[SI]] : tensor<index>
// CHECK-NEXT: gnn.tape_push %[[TAPE]], %[[E]] : tensor<index>
// CHECK-NEXT: %[[B:.*]]:3 = func.call @counted_grad_loop_body_fwd(%[[SS]], %[[SI]],
// CHECK-NEXT: gnn.tape_push %[[TAPE]], %[[B]]#2 : tensor<?x4xf32>
// CHECK: arith.addi %[[SN]],
// CHECK: gnn.sum_to %[[W]]#0
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[W]]#2
// CHECK-NEXT: %[[R:.*]] = gnn.tape_pop %[[TAPE]] : tensor<?x4xf32>
// CHECK-NEXT: %[[PI:.*]] = gnn.tape_pop %[[TAPE]] : tensor<index>
// CHECK-NEXT: %[[X:.*]] = tensor.extract %[[PI]][] : tensor<index>
// CHECK-NEXT: %[[PS:.*]] = gnn.tape_pop %[[TAPE]] : tensor<?x4xf32>
// CHECK-NEXT: %[[D:.*]] = func.call @counted_grad_loop_body_vjp_tape(%[[PS]], %[[X]], {{.*}}, %[[R]])
// CHECK-NEXT: func.call @counted_grad_loop_cond_vjp(%[[PS]], %[[X]], {{.*}}, %[[D]])
// CHECK: gnn.tape_free %[[TAPE]]
// CHECK-NOT: scf.while
// CHECK-LABEL: func.func private @counted_grad_loop_body_vjp_tape(
// CHECK-LABEL: func.func private @counted_grad_loop_body_fwd(
// CHECK-SAME: -> (tensor<?x4xf32>, index, tensor<?x4xf32>)
// CHECK-LABEL: func.func private @counted_grad_loop_cond_computed(
// CHECK-SAME: -> i1
func.func @counted(%x: tensor<?x4xf32> {gnn.differentiable}, %n: index) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.while (%s = %x, %i = %c0) : (tensor<?x4xf32>, index) -> (tensor<?x4xf32>, index) {
    %more = arith.cmpi ult, %i, %n : index
    scf.condition(%more) %s, %i : tensor<?x4xf32>, index
  } do {
  ^bb0(%s: tensor<?x4xf32>, %i: index):
    %t = gnn.apply_nodes(%s) {
    ^bb0(%e: f32):
      %h = math.tanh %e : f32
      gnn.yield %h : f32
    } : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %u = gnn.apply_nodes(%t, %t) {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      gnn.yield %m : f32
    } : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %j = arith.addi %i, %c1 : index
    scf.yield %u, %j : tensor<?x4xf32>, index
  }
  %l = gnn.sum_to %r#0 : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// layer_norm's backward is one gnn.layer_norm_grad (no per-term tensors):
// its first result is the input's gradient, the sum over rows of its second
// the weight's; the bias's is the sum of the upstream gradient.
// CHECK-LABEL: func @norm_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x8xf32> {gnn.differentiable}, %[[W:[^:]*]]: tensor<8xf32> {gnn.differentiable}, %[[B:[^:]*]]: tensor<8xf32> {gnn.differentiable}
// CHECK: %[[DY:.*]] = gnn.broadcast
// CHECK: %[[DX:.*]], %[[DXH:.*]] = gnn.layer_norm_grad %[[X]], %[[W]], %[[DY]] eps(1.000000e-05)
// CHECK-NOT: gnn.layer_norm %
// CHECK-DAG: %[[DW:.*]] = gnn.sum_to %[[DXH]] : tensor<?x8xf32> -> tensor<8xf32>
// CHECK-DAG: %[[DB:.*]] = gnn.sum_to %[[DY]] : tensor<?x8xf32> -> tensor<8xf32>
// CHECK: return %{{.*}}, %[[DX]], %[[DW]], %[[DB]]
func.func @norm(%x: tensor<?x8xf32> {gnn.differentiable}, %w: tensor<8xf32> {gnn.differentiable}, %b: tensor<8xf32> {gnn.differentiable}) -> tensor<f32> {
  %n = gnn.layer_norm %x, %w, %b eps(1.0e-05) : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %l = gnn.sum_to %n : tensor<?x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The adjoint of a sum passes the upstream gradient to each term as it is:
// no element-wise copy of it.
// CHECK-LABEL: func @sum_grad(
// CHECK: %[[DY:.*]] = gnn.broadcast
// CHECK-NOT: gnn.apply_nodes
// CHECK: return %{{.*}}, %[[DY]], %[[DY]]
func.func @sum(%x: tensor<?x8xf32> {gnn.differentiable}, %y: tensor<?x8xf32> {gnn.differentiable}) -> tensor<f32> {
  %s = gnn.apply_nodes(%x, %y) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    gnn.yield %t : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %l = gnn.sum_to %s : tensor<?x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A tape keeps tensors and scalars, not graphs: a loop that carries a graph
// is reversed by running it again to count its iterations and recomputing
// the state entering each one from the initial values.
// CHECK-LABEL: func @graph_state_grad(
// CHECK-NOT: gnn.tape_create
// CHECK: scf.while
// CHECK: scf.while
// CHECK: scf.for
// CHECK: scf.for
// CHECK: func.call @graph_state_grad_loop_body_vjp_tape(
// CHECK-NOT: gnn.tape
// CHECK: return
func.func @graph_state(%g: !gnn.graph<general>, %x: tensor<?x4xf32> {gnn.differentiable}, %n: index) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:3 = scf.while (%h = %g, %s = %x, %i = %c0) : (!gnn.graph<general>, tensor<?x4xf32>, index) -> (!gnn.graph<general>, tensor<?x4xf32>, index) {
    %more = arith.cmpi ult, %i, %n : index
    scf.condition(%more) %h, %s, %i : !gnn.graph<general>, tensor<?x4xf32>, index
  } do {
  ^bb0(%h: !gnn.graph<general>, %s: tensor<?x4xf32>, %i: index):
    %t = gnn.apply_nodes(%s) {
    ^bb0(%e: f32):
      %y = math.tanh %e : f32
      gnn.yield %y : f32
    } : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %j = arith.addi %i, %c1 : index
    scf.yield %h, %t, %j : !gnn.graph<general>, tensor<?x4xf32>, index
  }
  %l = gnn.sum_to %r#1 : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A layer with an addend: the addend's gradient is the result's, cast where
// the addend's static sizes differ from the result's.
// CHECK-LABEL: func.func @residual_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<5x4xf32> {gnn.differentiable}, %[[W:[^:]*]]: tensor<4x4xf32>
// CHECK: %[[Y:.*]] = gnn.linear %[[X]], %[[W]] plus %[[X]]
// CHECK: %[[DY:.*]] = gnn.broadcast
// CHECK-DAG: %[[DXL:.*]] = gnn.linear %[[DY]], %[[W]] transpose_weight : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<5x4xf32>
// CHECK-DAG: %[[DA:.*]] = tensor.cast %[[DY]] : tensor<?x4xf32> to tensor<5x4xf32>
// CHECK-DAG: gnn.outer_sum %[[DY]], %[[X]]
// CHECK: gnn.apply_nodes(%[[DXL]], %[[DA]])
func.func @residual(%x: tensor<5x4xf32> {gnn.differentiable}, %w: tensor<4x4xf32> {gnn.differentiable}) -> tensor<f32> {
  %y = gnn.linear %x, %w plus %x : (tensor<5x4xf32>, tensor<4x4xf32>, tensor<5x4xf32>) -> tensor<?x4xf32>
  %l = gnn.sum_to %y : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The adjoint of a node-wise product reads the other factor and the
// result's gradient only: the seed's broadcast ones become a constant of the
// body, which folds away, and the body that is left passes the other factor
// through. Nothing of the forward's product is read again.
// CHECK-LABEL: func @product_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x4xf32> {gnn.differentiable}, %[[W:[^:]*]]: tensor<?x4xf32>)
// CHECK: %[[P:.*]] = gnn.apply_nodes(%[[X]], %[[W]])
// CHECK: %[[L:.*]] = gnn.sum_to %[[P]]
// CHECK-NOT: gnn.broadcast
// CHECK-NOT: gnn.apply_nodes
// CHECK: return %[[L]], %[[W]]
func.func @product(%x: tensor<?x4xf32> {gnn.differentiable}, %w: tensor<?x4xf32>) -> tensor<f32> {
  %p = gnn.apply_nodes(%x, %w) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %l = gnn.sum_to %p : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An argument the loss does not read gets a zero gradient; one whose rows
// are wider than gnn ops take (2^24 elements) gets it from tensor.splat,
// not from a gnn.broadcast that would not verify.
// CHECK-LABEL: func @unused_wide_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x4xf32> {gnn.differentiable}, %[[W:[^:]*]]: tensor<?x16777217xf32> {gnn.differentiable})
// CHECK-NOT: gnn.broadcast {{.*}} -> tensor<?x16777217xf32>
// CHECK: %[[N:.*]] = tensor.dim %[[W]], %{{.*}} : tensor<?x16777217xf32>
// CHECK: %[[Z:.*]] = tensor.splat %{{.*}}[%[[N]]] : tensor<?x16777217xf32>
// CHECK: return %{{.*}}, %{{.*}}, %[[Z]] :
func.func @unused_wide(%x: tensor<?x4xf32> {gnn.differentiable}, %w: tensor<?x16777217xf32> {gnn.differentiable}) -> tensor<f32> {
  %l = gnn.sum_to %x : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An apply_nodes of two results: each result the loss reads adds its own
// term to the input's gradient (d/dx of exp(x) * -x: (-x) exp(x) through s,
// -exp(x) through c), summed.
// CHECK-LABEL: func @two_results_grad(
// CHECK: %[[F:.*]]:2 = gnn.apply_nodes(%[[X:[^)]*]]) {
// CHECK: %[[TS:.*]] = gnn.apply_nodes(%[[X]], %[[F]]#1) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = math.exp %[[A]]
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[B]], %[[E]]
// CHECK-NEXT: gnn.yield %[[M]]
// CHECK: %[[TC:.*]] = gnn.apply_nodes(%[[F]]#0) {
// CHECK-NEXT: ^bb0(%[[C:.*]]: f32):
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[C]]
// CHECK-NEXT: gnn.yield %[[N]]
// CHECK: %[[D:.*]] = gnn.apply_nodes(%[[TS]], %[[TC]]) {
// CHECK: arith.addf
// CHECK: return %{{.*}}, %[[D]]
func.func @two_results(%x: tensor<?x4xf32> {gnn.differentiable, gnn.name = "x"}) -> tensor<f32> {
  %s, %c = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    %n = arith.negf %a : f32
    gnn.yield %e, %n : f32, f32
  } : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
  %p = gnn.apply_nodes(%s, %c) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %l = gnn.sum_to %p : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
