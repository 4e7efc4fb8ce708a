// RUN: gnn-opt %s -split-input-file -verify-diagnostics -gnn-return-updated-arguments | FileCheck %s

// An update computed in the argument's own buffer (returned as it is, or
// through casts) is dropped from the results; other results stay.
// CHECK-LABEL: func.func @in_place
// CHECK-SAME:    (%[[C:.*]]: memref<?x4xf32> {gnn.name = "cache"}, %[[X:.*]]: memref<4xf32>)
// CHECK-SAME:    -> (memref<4xf32> {gnn.name = "x"})
// CHECK-NOT:     memref.copy
// CHECK:         return %[[X]] : memref<4xf32>
func.func @in_place(%c: memref<?x4xf32> {gnn.name = "cache"}, %x: memref<4xf32>)
    -> (memref<?x4xf32> {gnn.updates = "cache"}, memref<4xf32> {gnn.name = "x"}) {
  %cast = memref.cast %c : memref<?x4xf32> to memref<?x4xf32, strided<[?, 1], offset: ?>>
  %back = memref.cast %cast : memref<?x4xf32, strided<[?, 1], offset: ?>> to memref<?x4xf32>
  return %back, %x : memref<?x4xf32>, memref<4xf32>
}

// -----

// An update computed elsewhere is copied into the argument first.
// CHECK-LABEL: func.func @elsewhere
// CHECK-SAME:    (%[[C:.*]]: memref<?x4xf32> {bufferization.writable = true, gnn.name = "cache"})
// CHECK-NOT:     ->
// CHECK:         %[[NEW:.*]] = memref.alloc
// CHECK:         memref.copy %[[NEW]], %[[C]]
// CHECK-NEXT:    return{{$}}
func.func @elsewhere(%c: memref<?x4xf32> {bufferization.writable = true, gnn.name = "cache"})
    -> (memref<?x4xf32> {gnn.updates = "cache"}) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %c, %c0 : memref<?x4xf32>
  %new = memref.alloc(%n) : memref<?x4xf32>
  return %new : memref<?x4xf32>
}

// -----

// Private functions keep their results.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME:    -> (memref<?x4xf32> {gnn.updates = "cache"})
func.func private @helper(%c: memref<?x4xf32> {gnn.name = "cache"})
    -> (memref<?x4xf32> {gnn.updates = "cache"}) {
  return %c : memref<?x4xf32>
}

// -----

// (A result that updates no argument's gnn.name is rejected by the dialect's
// verifier: test/Dialect/GNN/invalid.mlir.)

// expected-error @below {{result #0 updates argument "cache", which is not a writable buffer of its shape}}
func.func @read_only(%c: memref<?x4xf32> {bufferization.writable = false, gnn.name = "cache"})
    -> (memref<?x4xf32> {gnn.updates = "cache"}) {
  return %c : memref<?x4xf32>
}

// -----

// expected-error @below {{result #0 updates argument "cache", which is not a writable buffer of its shape}}
func.func @other_shape(%c: memref<?x8xf32> {gnn.name = "cache"})
    -> (memref<?x4xf32> {gnn.updates = "cache"}) {
  %v = memref.reinterpret_cast %c to offset: [0], sizes: [2, 4], strides: [4, 1] : memref<?x8xf32> to memref<2x4xf32>
  %w = memref.cast %v : memref<2x4xf32> to memref<?x4xf32>
  return %w : memref<?x4xf32>
}
