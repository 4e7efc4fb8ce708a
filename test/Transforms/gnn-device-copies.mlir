// RUN: gnn-opt %s --pass-pipeline='builtin.module(func.func(gnn-device-copies))' --split-input-file | FileCheck %s

// A copy in host code, also in a loop: a parallel loop over its elements'
// flat index, split into each dim's index (the last dim fastest); loads
// and stores go through each side's own layout.
// CHECK-LABEL: func.func @rows
// CHECK-SAME:    (%[[A:.*]]: memref<?x8xf32>, %[[B:.*]]: memref<?x8xf32, strided<[16, 1], offset: ?>>
// CHECK-DAG:     %[[N:.*]] = memref.dim %[[A]], %c0
// CHECK-DAG:     %[[C8:.*]] = arith.constant 8 : index
// CHECK:         %[[COUNT:.*]] = arith.muli %[[N]], %[[C8]]
// CHECK:         scf.parallel (%[[F:.*]]) = (%{{.*}}) to (%[[COUNT]])
// CHECK-NEXT:      %[[I:.*]] = arith.remui %[[F]], %[[C8]]
// CHECK-NEXT:      %[[R:.*]] = arith.divui %[[F]], %[[C8]]
// CHECK-NEXT:      %[[X:.*]] = memref.load %[[A]][%[[R]], %[[I]]] : memref<?x8xf32>
// CHECK-NEXT:      memref.store %[[X]], %[[B]][%[[R]], %[[I]]] : memref<?x8xf32, strided<[16, 1], offset: ?>>
// CHECK:         scf.for
// CHECK:           scf.parallel
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func @rows(%a: memref<?x8xf32>, %b: memref<?x8xf32, strided<[16, 1], offset: ?>>, %n: index) {
  memref.copy %a, %b : memref<?x8xf32> to memref<?x8xf32, strided<[16, 1], offset: ?>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    memref.copy %a, %b : memref<?x8xf32> to memref<?x8xf32, strided<[16, 1], offset: ?>>
  }
  return
}

// -----

// A 0-d copy is one iteration; a 3-d one splits its index twice.
// CHECK-LABEL: func.func @ranks
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}})
// CHECK-NEXT:      memref.load %{{.*}}[] : memref<f32>
// CHECK-NEXT:      memref.store %{{.*}}[] : memref<f32>
// CHECK:         scf.parallel
// CHECK-COUNT-2:   arith.remui
// CHECK:           memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x2x4xi64>
// CHECK-NOT:     memref.copy
func.func @ranks(%a: memref<f32>, %b: memref<f32>, %c: memref<?x2x4xi64>, %d: memref<?x2x4xi64>) {
  memref.copy %a, %b : memref<f32> to memref<f32>
  memref.copy %c, %d : memref<?x2x4xi64> to memref<?x2x4xi64>
  return
}

// -----

// Left to the host: copies from or to its stack and its data, which a
// kernel cannot address, and copies inside a parallel loop (an element
// form, a kernel itself).
// CHECK-LABEL: func.func @kept
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<4xf32> to memref<4xf32>
// CHECK:         memref.copy %{{.*}}, %{{.*}} : memref<4xf32> to memref<4xf32>
// CHECK:         scf.parallel
// CHECK-NEXT:      memref.subview
// CHECK-NEXT:      memref.subview
// CHECK-NEXT:      memref.copy
// CHECK-NOT:       scf.parallel
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @kept(%a: memref<4xf32>, %rows: memref<?x4xf32>, %out: memref<?x4xf32>, %n: index) {
  %stack = memref.alloca() : memref<4xf32>
  memref.copy %a, %stack : memref<4xf32> to memref<4xf32>
  %t = memref.get_global @table : memref<4xf32>
  memref.copy %t, %a : memref<4xf32> to memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%r) = (%c0) to (%n) step (%c1) {
    %s = memref.subview %rows[%r, 0] [1, 4] [1, 1] : memref<?x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    %d = memref.subview %out[%r, 0] [1, 4] [1, 1] : memref<?x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    memref.copy %s, %d : memref<4xf32, strided<[1], offset: ?>> to memref<4xf32, strided<[1], offset: ?>>
    scf.reduce
  }
  return
}
