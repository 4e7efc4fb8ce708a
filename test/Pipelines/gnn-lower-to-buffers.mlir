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

// One step of a per-step k cache (the Universal Transformer's decoder): the
// new rows are scattered into the step's slice, which is stored back and
// read by attention. With a cache that may be written (as the ACT loop's
// carried cache may), only the new rows are copied before attention: the
// scatter writes the cache in place (no copy of the slice onto itself) and
// attention reads a view of it (no copy for the read). Returning the cache
// copies it (results are owned by the caller), which this does not check.
// CHECK-LABEL: func.func @cache_step
// CHECK-SAME:    %[[CACHE:[^:]*]]: memref<4x?x2x4xf32>
// CHECK-NOT:     memref.copy {{.*}}<?x2x4xf32
// CHECK:         %[[STEP:.*]] = memref.subview %[[CACHE]]
// CHECK-NOT:     memref.copy {{.*}}<?x2x4xf32
// CHECK:         memref.copy {{.*}} : memref<1x2x4xf32, {{.*}}> to memref<1x2x4xf32,
// CHECK-NOT:     memref.copy {{.*}}<?x2x4xf32
// CHECK:         vector.load %[[STEP]]
// CHECK-NOT:     memref.copy {{.*}}<?x2x4xf32
// CHECK:         return
func.func @cache_step(%g: !gnn.graph<general>, %q: tensor<?x2x4xf32>,
                      %cache: tensor<4x?x2x4xf32> {bufferization.writable = true},
                      %new: tensor<?x2x4xf32>,
                      %slots: tensor<?xindex>, %step: index)
    -> (tensor<?x2x4xf32>, tensor<4x?x2x4xf32>) {
  %c1 = arith.constant 1 : index
  %rows = tensor.dim %cache, %c1 : tensor<4x?x2x4xf32>
  %slice = tensor.extract_slice %cache[%step, 0, 0, 0] [1, %rows, 2, 4] [1, 1, 1, 1] : tensor<4x?x2x4xf32> to tensor<?x2x4xf32>
  %all = gnn.scatter_rows %new into %slice[%slots] : (tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?xindex>) -> tensor<?x2x4xf32>
  %stored = tensor.insert_slice %all into %cache[%step, 0, 0, 0] [1, %rows, 2, 4] [1, 1, 1, 1] : tensor<?x2x4xf32> into tensor<4x?x2x4xf32>
  %o = gnn.fused_attention %g, %q, %all, %all scale(0.5) normalize : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  return %o, %stored : tensor<?x2x4xf32>, tensor<4x?x2x4xf32>
}
