// RUN: gnn-opt %s -gnn-lower-to-buffers | FileCheck %s

// What bufferization copies, and what it must not copy.

// Weights are read where they are: no copy before the dense call.
// CHECK-LABEL: func.func @dense
// CHECK-NOT:     memref.copy
// CHECK:         call @gnn_rt_linear
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func @dense(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %y = gnn.linear %x, %w, %b : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// One step of a per-step k cache (the Universal Transformer's decoder; a
// node's row holds its k of every step): the new rows are scattered into
// the step's slice (every 4th row of 2x4), which is stored back and read by
// attention. The cache is writable and its update a result marked
// `gnn.updates`: only the new rows are copied, nothing else. The scatter
// writes the cache in place (no copy of the slice onto itself), attention
// reads a view of it (any row stride: no copy for the read), and the update
// stays in the caller's buffer (no result, no copy into a fresh one).
// CHECK-LABEL: func.func @cache_step
// CHECK-SAME:    %[[CACHE:[^:]*]]: memref<?x4x2x4xf32>
// CHECK-SAME:    -> (memref<?x2x4xf32> {gnn.name = "out"})
// CHECK-NOT:     memref.copy {{.*}}x2x4xf32
// CHECK:         %[[STEP:.*]] = memref.subview %[[CACHE]]
// CHECK-NOT:     memref.copy {{.*}}x2x4xf32
// CHECK:         memref.copy {{.*}} : memref<1x2x4xf32, {{.*}}> to memref<1x2x4xf32, strided<[32, 4, 1]
// CHECK-NOT:     memref.copy {{.*}}x2x4xf32
// CHECK:         vector.load %[[STEP]]
// CHECK-NOT:     memref.copy {{.*}}x2x4xf32
// CHECK:         return %{{[^,]*}} : memref<?x2x4xf32>
func.func @cache_step(%g: !gnn.graph<general>, %q: tensor<?x2x4xf32>,
                      %cache: tensor<?x4x2x4xf32> {bufferization.writable = true, gnn.name = "cache"},
                      %new: tensor<?x2x4xf32>,
                      %slots: tensor<?xindex>, %step: index)
    -> (tensor<?x2x4xf32> {gnn.name = "out"}, tensor<?x4x2x4xf32> {gnn.updates = "cache"}) {
  %c0 = arith.constant 0 : index
  %rows = tensor.dim %cache, %c0 : tensor<?x4x2x4xf32>
  %slice = tensor.extract_slice %cache[0, %step, 0, 0] [%rows, 1, 2, 4] [1, 1, 1, 1] : tensor<?x4x2x4xf32> to tensor<?x2x4xf32>
  %all = gnn.scatter_rows %new into %slice[%slots] : (tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?xindex>) -> tensor<?x2x4xf32>
  %stored = tensor.insert_slice %all into %cache[0, %step, 0, 0] [%rows, 1, 2, 4] [1, 1, 1, 1] : tensor<?x2x4xf32> into tensor<?x4x2x4xf32>
  %o = gnn.fused_attention %g, %q, %all, %all scale(0.5) normalize : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  return %o, %stored : tensor<?x2x4xf32>, tensor<?x4x2x4xf32>
}

// A private function nothing calls (a loop body that differentiation
// replaced by its forward and tape forms) is not compiled; one that is
// called stays.
// CHECK-NOT:   @unused_body
// CHECK-LABEL: func.func private @used_body(
// CHECK-LABEL: func.func @entry(
// CHECK:         call @used_body(
// CHECK-NOT:   @unused_body
func.func private @unused_body(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    gnn.yield %e : f32
  } : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
func.func private @used_body(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %e = math.tanh %a : f32
    gnn.yield %e : f32
  } : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
func.func @entry(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = func.call @used_body(%x) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
