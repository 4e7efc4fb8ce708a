// RUN: gnn-opt %s -gnn-outline-kernels -split-input-file | FileCheck %s
// RUN: gnn-opt %s -gnn-outline-kernels -gnn-outline-kernels -split-input-file | FileCheck %s

// Three attention ops of one configuration share one kernel, whatever their
// operands; a different scale is a different kernel. Kernels are private,
// marked, and not to be inlined.
// CHECK-LABEL: func @layers
// CHECK-SAME: (%[[G:.*]]: !gnn.graph<general>, %[[A:.*]]: tensor<?x8x16xf32>, %[[B:.*]]: tensor<?x8x16xf32>)
// CHECK-NEXT: %[[X:.*]] = call @gnn_kernel_fused_attention(%[[G]], %[[A]], %[[B]], %[[B]])
// CHECK-NEXT: %[[Y:.*]] = call @gnn_kernel_fused_attention(%[[G]], %[[X]], %[[A]], %[[X]])
// CHECK-NEXT: %[[Z:.*]] = call @gnn_kernel_fused_attention(%[[G]], %[[Y]], %[[Y]], %[[Y]])
// CHECK-NEXT: %[[W:.*]] = call @gnn_kernel_fused_attention_0(%[[G]], %[[Z]], %[[Z]], %[[Z]])
// CHECK-NEXT: return %[[W]]
// CHECK: func.func private @gnn_kernel_fused_attention(%{{.*}}: !gnn.graph<general>, %{{.*}}: tensor<?x8x16xf32>, %{{.*}}: tensor<?x8x16xf32>, %{{.*}}: tensor<?x8x16xf32>) -> tensor<?x8x16xf32> attributes {gnn.kernel, no_inline}
// CHECK-NEXT: gnn.fused_attention {{.*}} scale(2.500000e-01) normalize
// CHECK-NEXT: return
// CHECK: func.func private @gnn_kernel_fused_attention_0(
// CHECK-NEXT: gnn.fused_attention {{.*}} scale(5.000000e-01) normalize
// CHECK-NOT: func.func
func.func @layers(%g: !gnn.graph<general>, %a: tensor<?x8x16xf32>, %b: tensor<?x8x16xf32>) -> tensor<?x8x16xf32> {
  %x = gnn.fused_attention %g, %a, %b, %b scale(0.25) normalize : (!gnn.graph<general>, tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>) -> tensor<?x8x16xf32>
  %y = gnn.fused_attention %g, %x, %a, %x scale(0.25) normalize : (!gnn.graph<general>, tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>) -> tensor<?x8x16xf32>
  %z = gnn.fused_attention %g, %y, %y, %y scale(0.25) normalize : (!gnn.graph<general>, tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>) -> tensor<?x8x16xf32>
  %w = gnn.fused_attention %g, %z, %z, %z scale(0.5) normalize : (!gnn.graph<general>, tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>) -> tensor<?x8x16xf32>
  return %w : tensor<?x8x16xf32>
}

// -----

// Bodies are compared up to the names of their values: a - b and the same
// written with other names share a kernel; b - a does not. Types count too.
// CHECK-LABEL: func @bodies
// CHECK-NEXT: call @gnn_kernel_apply_nodes(
// CHECK-NEXT: call @gnn_kernel_apply_nodes(
// CHECK-NEXT: call @gnn_kernel_apply_nodes_0(
// CHECK-NEXT: call @gnn_kernel_apply_nodes_1(
// CHECK: func.func private @gnn_kernel_apply_nodes(
// CHECK: arith.subf %[[P:.*]], %[[Q:.*]] : f32
// CHECK: func.func private @gnn_kernel_apply_nodes_0(
// CHECK: func.func private @gnn_kernel_apply_nodes_1(%{{.*}}: tensor<?x4xf32>
func.func @bodies(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>, %c: tensor<?x4xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>) {
  %0 = gnn.apply_nodes(%a, %b) {
  ^bb0(%x: f32, %y: f32):
    %d = arith.subf %x, %y : f32
    gnn.yield %d : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %1 = gnn.apply_nodes(%b, %a) {
  ^bb0(%p: f32, %q: f32):
    %e = arith.subf %p, %q : f32
    gnn.yield %e : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %2 = gnn.apply_nodes(%a, %b) {
  ^bb0(%x: f32, %y: f32):
    %d = arith.subf %y, %x : f32
    gnn.yield %d : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %3 = gnn.apply_nodes(%c, %c) {
  ^bb0(%x: f32, %y: f32):
    %d = arith.subf %x, %y : f32
    gnn.yield %d : f32
  } : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0, %1, %2, %3 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>
}

// -----

// Scalars a body uses from outside are the kernel's arguments after the
// op's operands; constants are cloned into the kernel and are part of its
// body: the same body over another scalar shares the kernel, another
// constant or another shape does not.
// CHECK-LABEL: func @captured
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>, %[[C:.*]]: tensor<4xf32>, %[[S:.*]]: f32, %[[T:.*]]: f32, %[[F:.*]]: i1)
// CHECK: call @gnn_kernel_apply_nodes(%[[A]], %[[S]], %[[F]]) : (tensor<8xf32>, f32, i1) -> tensor<8xf32>
// CHECK-NEXT: call @gnn_kernel_apply_nodes(%[[B]], %[[T]], %[[F]])
// CHECK-NEXT: call @gnn_kernel_apply_nodes_0(%[[C]], %[[T]], %[[F]])
// CHECK-NEXT: call @gnn_kernel_apply_nodes_1(%[[B]], %[[T]], %[[F]])
// CHECK: func.func private @gnn_kernel_apply_nodes(%[[X:.*]]: tensor<8xf32>, %[[Y:.*]]: f32, %[[P:.*]]: i1) -> tensor<8xf32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: gnn.apply_nodes(%[[X]])
// CHECK-NEXT: ^bb0(%[[E:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[E]], %[[Y]] : f32
// CHECK-NEXT: arith.select %[[P]], %[[M]], %[[ZERO]] : f32
// CHECK: func.func private @gnn_kernel_apply_nodes_0(%{{.*}}: tensor<4xf32>
// CHECK: func.func private @gnn_kernel_apply_nodes_1(
// CHECK-NEXT: arith.constant 2.000000e+00 : f32
// CHECK-NOT: func.func
func.func @captured(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<4xf32>, %s: f32, %t: f32, %f: i1) -> (tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %0 = gnn.apply_nodes(%a) {
  ^bb0(%x: f32):
    %m = arith.mulf %x, %s : f32
    %r = arith.select %f, %m, %zero : f32
    gnn.yield %r : f32
  } : (tensor<8xf32>) -> tensor<8xf32>
  %1 = gnn.apply_nodes(%b) {
  ^bb0(%x: f32):
    %m = arith.mulf %x, %t : f32
    %r = arith.select %f, %m, %zero : f32
    gnn.yield %r : f32
  } : (tensor<8xf32>) -> tensor<8xf32>
  %2 = gnn.apply_nodes(%c) {
  ^bb0(%x: f32):
    %m = arith.mulf %x, %t : f32
    %r = arith.select %f, %m, %zero : f32
    gnn.yield %r : f32
  } : (tensor<4xf32>) -> tensor<4xf32>
  %3 = gnn.apply_nodes(%b) {
  ^bb0(%x: f32):
    %m = arith.mulf %x, %t : f32
    %r = arith.select %f, %m, %two : f32
    gnn.yield %r : f32
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0, %1, %2, %3 : tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>
}

// -----

// Tensors a body reads from outside (an optimizer's objective) are the
// kernel's arguments too, unless one is a slice.
// CHECK-LABEL: func @captured_tensor
// CHECK-SAME: (%[[A:.*]]: tensor<?x8xf32>, %[[T:.*]]: tensor<4xf32>, %[[BIG:.*]]: tensor<?x2x8xf32>)
// CHECK: call @gnn_kernel_apply_nodes(%[[A]], %[[T]]) : (tensor<?x8xf32>, tensor<4xf32>) -> tensor<?x8xf32>
// CHECK: tensor.extract_slice
// CHECK: gnn.apply_nodes
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<?x8xf32>
// CHECK: func.func private @gnn_kernel_apply_nodes(%[[X:.*]]: tensor<?x8xf32>, %[[Y:.*]]: tensor<4xf32>) -> tensor<?x8xf32>
// CHECK: gnn.apply_nodes(%[[X]])
// CHECK: tensor.extract %[[Y]][%{{.*}}] : tensor<4xf32>
// CHECK-NOT: func.func
func.func @captured_tensor(%a: tensor<?x8xf32>, %t: tensor<4xf32>, %big: tensor<?x2x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %0 = gnn.apply_nodes(%a) {
  ^bb0(%x: f32):
    %c1 = arith.constant 1 : index
    %s = tensor.extract %t[%c1] : tensor<4xf32>
    %m = arith.mulf %x, %s : f32
    gnn.yield %m : f32
  } : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %big, %c0 : tensor<?x2x8xf32>
  %slice = tensor.extract_slice %big[0, 1, 0] [%n, 1, 8] [1, 1, 1] : tensor<?x2x8xf32> to tensor<?x8xf32>
  %1 = gnn.apply_nodes(%a) {
  ^bb0(%x: f32):
    %c1 = arith.constant 1 : index
    %s = tensor.extract %slice[%c1, %c1] : tensor<?x8xf32>
    %m = arith.mulf %x, %s : f32
    gnn.yield %m : f32
  } : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0, %1 : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Left in place: an op reading a slice (a kernel takes identity-layout
// buffers; the slice would be copied), also through a reshape or an update
// written into it.
// CHECK-LABEL: func @kept
// CHECK: tensor.extract_slice
// CHECK-NEXT: gnn.layer_norm
// CHECK: gnn.scatter_rows
// CHECK-NEXT: gnn.layer_norm
// CHECK-NOT: call
// CHECK-NOT: func.func private
func.func @kept(%a: tensor<?x8xf32>, %big: tensor<?x2x8xf32>, %w: tensor<8xf32>, %ids: tensor<?xindex>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %big, %c0 : tensor<?x2x8xf32>
  %slice = tensor.extract_slice %big[0, 1, 0] [%n, 1, 8] [1, 1, 1] : tensor<?x2x8xf32> to tensor<?x8xf32>
  %1 = gnn.layer_norm %slice, %w, %w eps(1.0e-05) : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %updated = gnn.scatter_rows %a into %slice[%ids] : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?xindex>) -> tensor<?x8xf32>
  %2 = gnn.layer_norm %updated, %w, %w eps(1.0e-05) : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %1, %2 : tensor<?x8xf32>, tensor<?x8xf32>
}
