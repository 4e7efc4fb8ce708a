// RUN: gnn-opt %s -split-input-file -gnn-fuse-addends | FileCheck %s

// A residual connection: the layer adds the skipped value itself, whichever
// side of the sum the layer is on and in whichever order the body adds.
// CHECK-LABEL: func @residual
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[H:.*]]: tensor<?x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[R1:.*]] = gnn.linear %[[H]], %[[W]], %[[B]] plus %[[X]] : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[R2:.*]] = gnn.linear %[[H]], %[[W]] plus %[[R1]] : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: return %[[R2]]
func.func @residual(%x: tensor<?x8xf32>, %h: tensor<?x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %p = gnn.linear %h, %w, %b : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %r = gnn.apply_nodes(%x, %p) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    gnn.yield %s : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %q = gnn.linear %h, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %r2 = gnn.apply_nodes(%q, %r) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %c, %a : f32
    gnn.yield %s : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r2 : tensor<?x8xf32>
}

// -----

// The gradient of an input read by three layers: dy1 W1 + dy2 W2 + dy3 W3
// becomes a chain of products, each adding into the previous one's rows.
// CHECK-LABEL: func @gradient_sum
// CHECK: %[[D1:.*]] = gnn.linear %{{.*}}, %{{.*}} transpose_weight : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[D2:.*]] = gnn.linear %{{.*}}, %{{.*}} transpose_weight plus %[[D1]]
// CHECK-NEXT: %[[D3:.*]] = gnn.linear %{{.*}}, %{{.*}} transpose_weight plus %[[D2]]
// CHECK-NEXT: return %[[D3]]
func.func @gradient_sum(%dy1: tensor<?x4xf32>, %dy2: tensor<?x4xf32>, %dy3: tensor<?x4xf32>, %w1: tensor<4x8xf32>, %w2: tensor<4x8xf32>, %w3: tensor<4x8xf32>) -> tensor<?x8xf32> {
  %d1 = gnn.linear %dy1, %w1 transpose_weight : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  %d2 = gnn.linear %dy2, %w2 transpose_weight : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  %s1 = gnn.apply_nodes(%d1, %d2) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    gnn.yield %s : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %d3 = gnn.linear %dy3, %w3 transpose_weight : (tensor<?x4xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  %s2 = gnn.apply_nodes(%s1, %d3) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    gnn.yield %s : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %s2 : tensor<?x8xf32>
}

// -----

// Left alone: a layer whose result is also used elsewhere, a body that is
// not a plain sum of its two inputs, an input of another shape (a
// broadcast row), sums of three inputs, and a sum in a loop of a layer
// outside it (folded, the product would run every iteration).
// CHECK-LABEL: func @not_fused
// CHECK-NOT: plus
// CHECK-COUNT-5: gnn.apply_nodes
// CHECK-NOT: plus
func.func @not_fused(%x: tensor<?x8xf32>, %h: tensor<?x8xf32>, %w: tensor<8x8xf32>, %one: tensor<?x1xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %p = gnn.linear %h, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %shared = gnn.apply_nodes(%x, %p) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    gnn.yield %s : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %q = gnn.linear %h, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %diff = gnn.apply_nodes(%x, %q) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.subf %a, %c : f32
    gnn.yield %s : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = gnn.linear %h, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %row = gnn.apply_nodes(%r, %one) {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    gnn.yield %s : f32
  } : (tensor<?x8xf32>, tensor<?x1xf32>) -> tensor<?x8xf32>
  %t = gnn.linear %h, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %three = gnn.apply_nodes(%x, %t, %x) {
  ^bb0(%a: f32, %c: f32, %d: f32):
    %s = arith.addf %a, %c : f32
    %u = arith.addf %s, %d : f32
    gnn.yield %u : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %u = gnn.linear %h, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %loop = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> tensor<?x8xf32> {
    %next = gnn.apply_nodes(%acc, %u) {
    ^bb0(%a: f32, %c: f32):
      %s = arith.addf %a, %c : f32
      gnn.yield %s : f32
    } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    scf.yield %next : tensor<?x8xf32>
  }
  return %shared, %p, %diff, %row, %three, %loop : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// A layer norm's input gradient plus the residual path's: the backward adds
// it; the normalized gradient (the weight's) is still taken from the new op.
// An input gradient used twice is left alone.
// CHECK-LABEL: func @norm_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[W:.*]]: tensor<8xf32>, %[[DY:.*]]: tensor<?x8xf32>, %[[R:.*]]: tensor<?x8xf32>)
// CHECK-NEXT: %[[DX:.*]], %[[DXH:.*]] = gnn.layer_norm_grad %[[X]], %[[W]], %[[DY]] plus %[[R]] eps(1.000000e-05)
// CHECK-NEXT: %[[DX2:.*]], %{{.*}} = gnn.layer_norm_grad %[[X]], %[[W]], %[[DY]] eps(1.000000e-05)
// CHECK-NEXT: gnn.apply_nodes(%[[R]], %[[DX2]])
// CHECK: return %[[DX]], %[[DXH]], %{{.*}}, %[[DX2]]
func.func @norm_gradient(%x: tensor<?x8xf32>, %w: tensor<8xf32>, %dy: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %dx, %dxh = gnn.layer_norm_grad %x, %w, %dy eps(1.0e-05) : (tensor<?x8xf32>, tensor<8xf32>, tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
  %s = gnn.apply_nodes(%r, %dx) {
  ^bb0(%a: f32, %c: f32):
    %t = arith.addf %a, %c : f32
    gnn.yield %t : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %dx2, %dxh2 = gnn.layer_norm_grad %x, %w, %dy eps(1.0e-05) : (tensor<?x8xf32>, tensor<8xf32>, tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
  %s2 = gnn.apply_nodes(%r, %dx2) {
  ^bb0(%a: f32, %c: f32):
    %t = arith.addf %a, %c : f32
    gnn.yield %t : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %s, %dxh, %s2, %dx2 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
