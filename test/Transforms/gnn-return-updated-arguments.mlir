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

// A private function that no call may update in place keeps its results
// (here: it has no calls).
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

// -----

// An update that a call returns as a new buffer is copied into the argument
// right after the last op that reads the argument or uses the update, so
// that it is freed there, not held to the end.
// CHECK-LABEL: func.func @early
// CHECK-SAME:    (%[[C:.*]]: memref<4xf32> {bufferization.writable = true, gnn.name = "cache"}, %[[D:.*]]: memref<4xf32> {bufferization.writable = true, gnn.name = "other"}, %[[X:.*]]: memref<4xf32>)
// CHECK-NEXT:    %[[NEW:.*]] = call @fresh(%[[C]], %[[X]])
// CHECK-NEXT:    memref.copy %[[NEW]], %[[C]]
// CHECK-NEXT:    %[[OTHER:.*]] = call @fresh(%[[D]], %[[X]])
// CHECK-NEXT:    %[[READ:.*]] = call @fresh(%[[D]], %[[OTHER]])
// CHECK-NEXT:    memref.copy %[[OTHER]], %[[D]]
// CHECK-NEXT:    return %[[READ]]
func.func private @fresh(%a: memref<4xf32>, %b: memref<4xf32>) -> memref<4xf32> {
  %n = memref.alloc() : memref<4xf32>
  return %n : memref<4xf32>
}
func.func @early(%c: memref<4xf32> {bufferization.writable = true, gnn.name = "cache"},
                 %d: memref<4xf32> {bufferization.writable = true, gnn.name = "other"},
                 %x: memref<4xf32>)
    -> (memref<4xf32> {gnn.updates = "cache"}, memref<4xf32> {gnn.updates = "other"}, memref<4xf32> {gnn.name = "read"}) {
  %new = call @fresh(%c, %x) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
  %other = call @fresh(%d, %x) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
  // Reads both the old value of %d and the update of %d.
  %read = call @fresh(%d, %other) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
  return %new, %other, %read : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

// Held to the return: an update from a call that may return its operand (a
// view of the argument could be read later), and an argument whose view is
// itself returned.
// CHECK-LABEL: func.func @late
// CHECK:         call @maybe_same
// CHECK-NEXT:    memref.subview
// CHECK-NEXT:    memref.copy
// CHECK-NEXT:    return
func.func private @maybe_same(%a: memref<4xf32>) -> memref<4xf32> {
  return %a : memref<4xf32>
}
func.func @late(%c: memref<4xf32> {bufferization.writable = true, gnn.name = "cache"})
    -> (memref<4xf32> {gnn.updates = "cache"}, memref<2xf32, strided<[1]>> {gnn.name = "view"}) {
  %new = call @maybe_same(%c) : (memref<4xf32>) -> memref<4xf32>
  %view = memref.subview %c[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  return %new, %view : memref<4xf32>, memref<2xf32, strided<[1]>>
}

// -----

// A view of the argument read after the update is made: the copy waits for
// it.
// CHECK-LABEL: func.func @view_read_later
// CHECK:         %[[NEW:.*]] = memref.alloc
// CHECK-NEXT:    memref.subview
// CHECK-NEXT:    %[[S:.*]] = memref.load
// CHECK-NEXT:    memref.copy %[[NEW]]
// CHECK-NEXT:    return %[[S]]
func.func @view_read_later(%c: memref<4xf32> {bufferization.writable = true, gnn.name = "cache"})
    -> (memref<4xf32> {gnn.updates = "cache"}, f32 {gnn.name = "s"}) {
  %i = arith.constant 1 : index
  %new = memref.alloc() : memref<4xf32>
  %view = memref.subview %c[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  %s = memref.load %view[%i] : memref<2xf32, strided<[1], offset: 1>>
  return %new, %s : memref<4xf32>, f32
}

// -----

// A private function's update is left in the buffer its callers pass where
// every call may have it there: the caller's own updated argument (no copy
// left in the caller) or a new buffer of the caller's that nothing reads
// after the call. The function copies the update into its argument after
// the argument's last read.
// CHECK-LABEL: func.func private @adam
// CHECK-SAME:    (%[[P:.*]]: memref<4xf32> {bufferization.writable = true, gnn.name = "p"}, %[[G:.*]]: memref<4xf32> {gnn.name = "g"})
// CHECK-SAME:    -> (memref<4xf32> {gnn.name = "norm"})
// CHECK-NEXT:    %[[NEW:.*]] = call @fresh2(%[[P]], %[[G]])
// CHECK-NEXT:    memref.copy %[[NEW]], %[[P]]
// CHECK-NEXT:    %[[NORM:.*]] = memref.alloc
// CHECK-NEXT:    return %[[NORM]]
// CHECK-LABEL: func.func @step
// CHECK-SAME:    (%[[SP:.*]]: memref<4xf32> {bufferization.writable = true, gnn.name = "param"}, %[[SG:.*]]: memref<4xf32> {gnn.name = "grad"})
// CHECK-SAME:    -> (memref<4xf32> {gnn.name = "n1"}, memref<4xf32> {gnn.name = "n2"})
// CHECK-NEXT:    %[[N1:.*]] = call @adam(%[[SP]], %[[SG]]) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
// CHECK-NEXT:    %[[T:.*]] = memref.alloc
// CHECK-NEXT:    %[[N2:.*]] = call @adam(%[[T]], %[[SG]])
// CHECK-NEXT:    return %[[N1]], %[[N2]]
func.func private @fresh2(%a: memref<4xf32>, %b: memref<4xf32>) -> memref<4xf32> {
  %n = memref.alloc() : memref<4xf32>
  return %n : memref<4xf32>
}
func.func private @adam(%p: memref<4xf32> {bufferization.writable = true, gnn.name = "p"}, %g: memref<4xf32> {gnn.name = "g"})
    -> (memref<4xf32> {gnn.updates = "p"}, memref<4xf32> {gnn.name = "norm"}) {
  %new = call @fresh2(%p, %g) : (memref<4xf32>, memref<4xf32>) -> memref<4xf32>
  %norm = memref.alloc() : memref<4xf32>
  return %new, %norm : memref<4xf32>, memref<4xf32>
}
func.func @step(%param: memref<4xf32> {bufferization.writable = true, gnn.name = "param"}, %grad: memref<4xf32> {gnn.name = "grad"})
    -> (memref<4xf32> {gnn.updates = "param"}, memref<4xf32> {gnn.name = "n1"}, memref<4xf32> {gnn.name = "n2"}) {
  %u:2 = call @adam(%param, %grad) : (memref<4xf32>, memref<4xf32>) -> (memref<4xf32>, memref<4xf32>)
  %t = memref.alloc() : memref<4xf32>
  %w:2 = call @adam(%t, %grad) : (memref<4xf32>, memref<4xf32>) -> (memref<4xf32>, memref<4xf32>)
  return %u#0, %u#1, %w#1 : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

// Kept as results: one call passes a buffer whose old value is read after
// it, so no call leaves the update in place; another passes an argument
// its caller does not update.
// CHECK-LABEL: func.func private @adam_kept
// CHECK-SAME:    -> (memref<4xf32> {gnn.updates = "p"})
// CHECK-NOT:     memref.copy
// CHECK-LABEL: func.func @reads_old
// CHECK:         %[[U:.*]] = call @adam_kept
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    memref.copy %[[U]]
// CHECK-LABEL: func.func @not_updated
// CHECK:         %[[U:.*]] = call @adam_kept
// CHECK-NEXT:    return %[[U]]
func.func private @adam_kept(%p: memref<4xf32> {bufferization.writable = true, gnn.name = "p"})
    -> (memref<4xf32> {gnn.updates = "p"}) {
  %new = memref.alloc() : memref<4xf32>
  return %new : memref<4xf32>
}
func.func @reads_old(%param: memref<4xf32> {bufferization.writable = true, gnn.name = "param"})
    -> (memref<4xf32> {gnn.updates = "param"}, f32 {gnn.name = "old"}) {
  %c0 = arith.constant 0 : index
  %u = call @adam_kept(%param) : (memref<4xf32>) -> memref<4xf32>
  %old = memref.load %param[%c0] : memref<4xf32>
  return %u, %old : memref<4xf32>, f32
}
func.func @not_updated(%param: memref<4xf32> {gnn.name = "param"})
    -> (memref<4xf32> {gnn.name = "next"}) {
  %u = call @adam_kept(%param) : (memref<4xf32>) -> memref<4xf32>
  return %u : memref<4xf32>
}

// -----

// A private caller's argument is not the caller's to overwrite, even where
// the caller marks an update of it: its own caller reads the old value
// after the call, so @middle keeps its result, and @inner, called with
// @middle's argument, keeps its own.
// CHECK-LABEL: func.func private @inner
// CHECK-SAME:    -> (memref<4xf32> {gnn.updates = "p"})
// CHECK-LABEL: func.func private @middle
// CHECK-SAME:    -> (memref<4xf32> {gnn.updates = "a"})
// CHECK-NEXT:    %[[U:.*]] = call @inner
// CHECK-NEXT:    return %[[U]]
// CHECK-LABEL: func.func @outer
// CHECK:         call @middle
// CHECK-NEXT:    memref.load
func.func private @inner(%p: memref<4xf32> {bufferization.writable = true, gnn.name = "p"})
    -> (memref<4xf32> {gnn.updates = "p"}) {
  %new = memref.alloc() : memref<4xf32>
  return %new : memref<4xf32>
}
func.func private @middle(%a: memref<4xf32> {bufferization.writable = true, gnn.name = "a"})
    -> (memref<4xf32> {gnn.updates = "a"}) {
  %u = call @inner(%a) : (memref<4xf32>) -> memref<4xf32>
  return %u : memref<4xf32>
}
func.func @outer(%x: memref<4xf32> {gnn.name = "x"}) -> (memref<4xf32> {gnn.name = "next"}, f32 {gnn.name = "old"}) {
  %c0 = arith.constant 0 : index
  %n = call @middle(%x) : (memref<4xf32>) -> memref<4xf32>
  %old = memref.load %x[%c0] : memref<4xf32>
  return %n, %old : memref<4xf32>, f32
}
