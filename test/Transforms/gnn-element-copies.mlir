// RUN: gnn-opt %s -split-input-file -gnn-element-copies | FileCheck %s

// A copy between buffers of one element (what bufferization makes of an
// scf.forall that inserts single elements, inside a GPU kernel) is a load
// and a store: lowered as memref.copy it would be a memcpy of unknown
// alignment, a byte at a time.
// CHECK-LABEL: func @one_element
// CHECK-SAME: (%[[A:.*]]: memref<1x1x1xf32, strided<[128, 16, 1], offset: ?>>, %[[B:.*]]: memref<1x1x1xf32, strided<[128, 16, 1], offset: ?>>)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[X:.*]] = memref.load %[[A]][%[[C0]], %[[C0]], %[[C0]]]
// CHECK: memref.store %[[X]], %[[B]][%[[C0]], %[[C0]], %[[C0]]]
// CHECK-NOT: memref.copy
func.func @one_element(%a: memref<1x1x1xf32, strided<[128, 16, 1], offset: ?>>,
                       %b: memref<1x1x1xf32, strided<[128, 16, 1], offset: ?>>) {
  memref.copy %a, %b : memref<1x1x1xf32, strided<[128, 16, 1], offset: ?>>
                    to memref<1x1x1xf32, strided<[128, 16, 1], offset: ?>>
  return
}

// -----

// Scalars (rank 0) too; copies of more than one element, or of a dynamic
// size, stay copies.
// CHECK-LABEL: func @others
// CHECK: memref.load %{{.*}}[] : memref<f32>
// CHECK: memref.store %{{.*}}, %{{.*}}[] : memref<f32>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<1x2xf32> to memref<1x2xf32>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<?xf32> to memref<?xf32>
func.func @others(%a: memref<f32>, %b: memref<f32>, %c: memref<1x2xf32>,
                  %d: memref<1x2xf32>, %e: memref<?xf32>, %f: memref<?xf32>) {
  memref.copy %a, %b : memref<f32> to memref<f32>
  memref.copy %c, %d : memref<1x2xf32> to memref<1x2xf32>
  memref.copy %e, %f : memref<?xf32> to memref<?xf32>
  return
}
