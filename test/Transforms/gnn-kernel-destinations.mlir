// RUN: gnn-opt %s -split-input-file -gnn-kernel-destinations | FileCheck %s

// An optimizer's update: each kernel reads the buffer it then overwrites
// element by element, so each writes in place, through the argument it
// reads (the `_into_arg<k>` variant: one buffer to the kernel's code); the
// third reads the first two's targets, which then hold their results. Each
// kernel gets one variant, the originals go when nothing calls them.
// CHECK-LABEL: func.func @update
// CHECK-SAME:    (%[[P:.*]]: memref<512xf32>, %[[M:.*]]: memref<512xf32>, %[[G:.*]]: memref<512xf32>)
// CHECK-NEXT:    call @decay_into_arg0(%[[M]], %[[G]]) : (memref<512xf32>, memref<512xf32>) -> ()
// CHECK-NEXT:    call @step_into_arg0(%[[P]], %[[M]])
// CHECK-NEXT:    call @decay_into_arg0(%[[G]], %[[P]])
// CHECK-NEXT:    return
// CHECK-NOT:   memref.copy
// CHECK-NOT:   func.func private @step(
// CHECK:       func.func private @decay(
// CHECK:       func.func private @decay_into_arg0(%[[A:.*]]: memref<512xf32>, %[[B:.*]]: memref<512xf32>) attributes {gnn.kernel, no_inline} {
// CHECK-NOT:     memref.alloc
// CHECK:         scf.parallel (%[[I:.*]]) =
// CHECK:           memref.load %[[A]][%[[I]]]
// CHECK:           memref.store %{{.*}}, %[[A]][%[[I]]]
// CHECK:         return{{$}}
func.func @update(%p: memref<512xf32>, %m: memref<512xf32>, %g: memref<512xf32>) {
  %0 = call @decay(%m, %g) : (memref<512xf32>, memref<512xf32>) -> memref<512xf32>
  %1 = call @step(%p, %0) : (memref<512xf32>, memref<512xf32>) -> memref<512xf32>
  memref.copy %0, %m : memref<512xf32> to memref<512xf32>
  memref.copy %1, %p : memref<512xf32> to memref<512xf32>
  %2 = call @decay(%g, %p) : (memref<512xf32>, memref<512xf32>) -> memref<512xf32>
  memref.copy %2, %g : memref<512xf32> to memref<512xf32>
  return
}
func.func @keeps_original(%m: memref<512xf32>, %g: memref<512xf32>) -> memref<512xf32> {
  %0 = call @decay(%m, %g) : (memref<512xf32>, memref<512xf32>) -> memref<512xf32>
  return %0 : memref<512xf32>
}
func.func private @decay(%a: memref<512xf32>, %b: memref<512xf32>) -> memref<512xf32>
    attributes {gnn.kernel, no_inline} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %out = memref.alloc() : memref<512xf32>
  scf.parallel (%i) = (%c0) to (%c512) step (%c1) {
    %x = memref.load %a[%i] : memref<512xf32>
    %y = memref.load %b[%i] : memref<512xf32>
    %d = arith.subf %y, %x : f32
    memref.store %d, %out[%i] : memref<512xf32>
    scf.reduce
  }
  return %out : memref<512xf32>
}
func.func private @step(%a: memref<512xf32>, %b: memref<512xf32>) -> memref<512xf32>
    attributes {gnn.kernel, no_inline} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %out = memref.alloc() : memref<512xf32>
  scf.parallel (%i) = (%c0) to (%c512) step (%c1) {
    %x = memref.load %a[%i] : memref<512xf32>
    %y = memref.load %b[%i] : memref<512xf32>
    %d = arith.addf %y, %x : f32
    memref.store %d, %out[%i] : memref<512xf32>
    scf.reduce
  }
  return %out : memref<512xf32>
}

// -----

// Rows by items: a parallel loop over rows and a serial one over items,
// the target of static size and the kernel's result dynamic (a cast). A
// kernel that does not read the target may fill its result any way (here a
// runtime call).
// CHECK-LABEL: func.func @rows
// CHECK-SAME:    (%[[X:.*]]: memref<6x4xf32>, %[[Y:.*]]: memref<6x4xf32>)
// CHECK:         %[[CX:.*]] = memref.cast %[[X]] : memref<6x4xf32> to memref<?x4xf32>
// CHECK:         call @scale_into_arg0(%[[CX]]) : (memref<?x4xf32>) -> ()
// CHECK:         %[[CY:.*]] = memref.cast %[[Y]] : memref<6x4xf32> to memref<?x4xf32>
// CHECK:         call @fill_into(%[[CX]], %[[CY]])
// CHECK-NOT:     memref.copy
func.func @rows(%x: memref<6x4xf32>, %y: memref<6x4xf32>) {
  %cx = memref.cast %x : memref<6x4xf32> to memref<?x4xf32>
  %0 = call @scale(%cx) : (memref<?x4xf32>) -> memref<?x4xf32>
  memref.copy %0, %x : memref<?x4xf32> to memref<6x4xf32>
  %1 = call @fill(%cx) : (memref<?x4xf32>) -> memref<?x4xf32>
  memref.copy %1, %y : memref<?x4xf32> to memref<6x4xf32>
  return
}
// The result read before the copy, as the kernel's own type: the argument
// the kernel writes through (the cast) stands for it, not the target.
// CHECK-LABEL: func.func @result_passed_on
// CHECK-SAME:    (%[[X:.*]]: memref<6x4xf32>)
// CHECK-NEXT:    %[[CX:.*]] = memref.cast %[[X]] : memref<6x4xf32> to memref<?x4xf32>
// CHECK-NEXT:    call @scale_into_arg0(%[[CX]]) : (memref<?x4xf32>) -> ()
// CHECK-NEXT:    %[[R:.*]] = call @scale(%[[CX]]) : (memref<?x4xf32>) -> memref<?x4xf32>
// CHECK-NEXT:    return %[[R]]
func.func @result_passed_on(%x: memref<6x4xf32>) -> memref<?x4xf32> {
  %cx = memref.cast %x : memref<6x4xf32> to memref<?x4xf32>
  %0 = call @scale(%cx) : (memref<?x4xf32>) -> memref<?x4xf32>
  %1 = call @scale(%0) : (memref<?x4xf32>) -> memref<?x4xf32>
  memref.copy %0, %x : memref<?x4xf32> to memref<6x4xf32>
  return %1 : memref<?x4xf32>
}
func.func private @scale(%a: memref<?x4xf32>) -> memref<?x4xf32>
    attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %a, %c0 : memref<?x4xf32>
  %out = memref.alloc(%n) : memref<?x4xf32>
  scf.parallel (%r) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %c4 step %c1 {
      %x = memref.load %a[%r, %j] : memref<?x4xf32>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %out[%r, %j] : memref<?x4xf32>
    }
    scf.reduce
  }
  return %out : memref<?x4xf32>
}
func.func private @fill(%a: memref<?x4xf32>) -> memref<?x4xf32>
    attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?x4xf32>
  %out = memref.alloc(%n) : memref<?x4xf32>
  call @runtime_fill(%a, %out) : (memref<?x4xf32>, memref<?x4xf32>) -> ()
  return %out : memref<?x4xf32>
}
func.func private @runtime_fill(memref<?x4xf32>, memref<?x4xf32>)

// -----

// Left alone: the target is read between the call and the copy (through a
// view), written there, or defined after the call; the result is read
// after the copy; the callee is not a kernel.
// CHECK-LABEL: func.func @read_between
// CHECK:         call @neg(
// CHECK:         memref.copy
// CHECK-LABEL: func.func @written_between
// CHECK:         call @neg(
// CHECK:         memref.copy
// CHECK-LABEL: func.func @target_after_call
// CHECK:         call @neg(
// CHECK:         memref.copy
// CHECK-LABEL: func.func @result_after_copy
// CHECK:         call @neg(
// CHECK:         memref.copy
// CHECK-LABEL: func.func @not_a_kernel
// CHECK:         call @plain(
// CHECK:         memref.copy
// CHECK-LABEL: func.func @read_through_call
// CHECK:         call @neg(
// CHECK:         memref.copy
// CHECK-LABEL: func.func @target_from_call
// CHECK:         call @neg(
// CHECK:         memref.copy
// CHECK-NOT:   _into
func.func @read_between(%m: memref<8xf32>, %g: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %0 = call @neg(%g) : (memref<8xf32>) -> memref<8xf32>
  %view = memref.subview %m[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %x = memref.load %view[%c0] : memref<4xf32, strided<[1]>>
  memref.copy %0, %m : memref<8xf32> to memref<8xf32>
  return %x : f32
}
func.func @written_between(%m: memref<8xf32>, %g: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %0 = call @neg(%g) : (memref<8xf32>) -> memref<8xf32>
  scf.execute_region {
    memref.store %one, %m[%c0] : memref<8xf32>
    scf.yield
  }
  memref.copy %0, %m : memref<8xf32> to memref<8xf32>
  return
}
func.func @target_after_call(%g: memref<8xf32>) -> memref<8xf32> {
  %0 = call @neg(%g) : (memref<8xf32>) -> memref<8xf32>
  %m = memref.alloc() : memref<8xf32>
  memref.copy %0, %m : memref<8xf32> to memref<8xf32>
  return %m : memref<8xf32>
}
func.func @result_after_copy(%m: memref<8xf32>, %g: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %0 = call @neg(%g) : (memref<8xf32>) -> memref<8xf32>
  memref.copy %0, %m : memref<8xf32> to memref<8xf32>
  %x = memref.load %0[%c0] : memref<8xf32>
  return %x : f32
}
func.func @not_a_kernel(%m: memref<8xf32>, %g: memref<8xf32>) {
  %0 = call @plain(%g) : (memref<8xf32>) -> memref<8xf32>
  memref.copy %0, %m : memref<8xf32> to memref<8xf32>
  return
}
// The target may come back from a call (not a kernel's new buffer) that
// takes it; a read of that is a read of the target.
func.func @read_through_call(%m: memref<8xf32>, %g: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %same = call @identity(%m) : (memref<8xf32>) -> memref<8xf32>
  %0 = call @neg(%g) : (memref<8xf32>) -> memref<8xf32>
  %x = memref.load %same[%c0] : memref<8xf32>
  memref.copy %0, %m : memref<8xf32> to memref<8xf32>
  return %x : f32
}
// A target whose memory is not known to be its own.
func.func @target_from_call(%m: memref<8xf32>, %g: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %t = call @identity(%m) : (memref<8xf32>) -> memref<8xf32>
  %0 = call @neg(%g) : (memref<8xf32>) -> memref<8xf32>
  %x = memref.load %m[%c0] : memref<8xf32>
  memref.copy %0, %t : memref<8xf32> to memref<8xf32>
  return %x : f32
}
func.func private @identity(%a: memref<8xf32>) -> memref<8xf32> {
  return %a : memref<8xf32>
}
func.func private @neg(%a: memref<8xf32>) -> memref<8xf32> attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = arith.negf %x : f32
    memref.store %y, %out[%i] : memref<8xf32>
    scf.reduce
  }
  return %out : memref<8xf32>
}
func.func private @plain(%a: memref<8xf32>) -> memref<8xf32> {
  %out = memref.alloc() : memref<8xf32>
  memref.copy %a, %out : memref<8xf32> to memref<8xf32>
  return %out : memref<8xf32>
}

// -----

// Left alone: kernels that read the target other than element by element,
// where writing in place would read elements already overwritten: another
// element (reversed), through a view of another type, after the store, in
// an outer loop that comes back to each element, or with two stores.
// CHECK-LABEL: func.func @unsafe
// CHECK-COUNT-5: memref.copy
// CHECK-NOT:   _into
func.func @unsafe(%m: memref<8xf32>) {
  %0 = call @reverse(%m) : (memref<8xf32>) -> memref<8xf32>
  memref.copy %0, %m : memref<8xf32> to memref<8xf32>
  %dyn = memref.cast %m : memref<8xf32> to memref<?xf32>
  %1 = call @dynamic(%dyn) : (memref<?xf32>) -> memref<8xf32>
  memref.copy %1, %m : memref<8xf32> to memref<8xf32>
  %2 = call @late_read(%m) : (memref<8xf32>) -> memref<8xf32>
  memref.copy %2, %m : memref<8xf32> to memref<8xf32>
  %3 = call @twice(%m) : (memref<8xf32>) -> memref<8xf32>
  memref.copy %3, %m : memref<8xf32> to memref<8xf32>
  %4 = call @two_stores(%m) : (memref<8xf32>) -> memref<8xf32>
  memref.copy %4, %m : memref<8xf32> to memref<8xf32>
  return
}
func.func private @reverse(%a: memref<8xf32>) -> memref<8xf32> attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %j = arith.subi %c7, %i : index
    %x = memref.load %a[%j] : memref<8xf32>
    memref.store %x, %out[%i] : memref<8xf32>
    scf.reduce
  }
  return %out : memref<8xf32>
}
func.func private @dynamic(%a: memref<?xf32>) -> memref<8xf32> attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %out[%i] : memref<8xf32>
    scf.reduce
  }
  return %out : memref<8xf32>
}
func.func private @late_read(%a: memref<8xf32>) -> memref<8xf32> attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloca() : memref<f32>
  %out = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %zero, %out[%i] : memref<8xf32>
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %sum[] : memref<f32>
  }
  return %out : memref<8xf32>
}
func.func private @twice(%a: memref<8xf32>) -> memref<8xf32> attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<8xf32>
  scf.for %t = %c0 to %c2 step %c1 {
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %x = memref.load %a[%i] : memref<8xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %out[%i] : memref<8xf32>
      scf.reduce
    }
  }
  return %out : memref<8xf32>
}
func.func private @two_stores(%a: memref<8xf32>) -> memref<8xf32> attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() : memref<8xf32>
  memref.store %zero, %out[%c0] : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %out[%i] : memref<8xf32>
    scf.reduce
  }
  return %out : memref<8xf32>
}

// -----

// The GPU form of an element-wise kernel: one parallel iteration per
// element, its indices the digits of the iteration's number (row, head,
// column). Each element is still read and written by one iteration: in
// place. Digits whose quotient divides by another divisor, or a load at
// other digits, are left alone.
// CHECK-LABEL: func.func @digits
// CHECK-NEXT:    call @scale_flat_into_arg0(%[[M:.*]]) :
// CHECK-NEXT:    %[[R:.*]] = call @skewed(
// CHECK-NEXT:    memref.copy %[[R]]
// CHECK-NEXT:    %[[S:.*]] = call @shifted(
// CHECK-NEXT:    memref.copy %[[S]]
// CHECK-NEXT:    return
// CHECK:       func.func private @scale_flat_into_arg0(%[[OUT:.*]]: memref<4x3x5xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         memref.store %{{.*}}, %[[OUT]]
func.func @digits(%m: memref<4x3x5xf32>) {
  %0 = call @scale_flat(%m) : (memref<4x3x5xf32>) -> memref<4x3x5xf32>
  memref.copy %0, %m : memref<4x3x5xf32> to memref<4x3x5xf32>
  %1 = call @skewed(%m) : (memref<4x3x5xf32>) -> memref<4x3x5xf32>
  memref.copy %1, %m : memref<4x3x5xf32> to memref<4x3x5xf32>
  %2 = call @shifted(%m) : (memref<4x3x5xf32>) -> memref<4x3x5xf32>
  memref.copy %2, %m : memref<4x3x5xf32> to memref<4x3x5xf32>
  return
}
func.func private @scale_flat(%a: memref<4x3x5xf32>) -> memref<4x3x5xf32>
    attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c60 = arith.constant 60 : index
  %two = arith.constant 2.0 : f32
  %out = memref.alloc() : memref<4x3x5xf32>
  scf.parallel (%i) = (%c0) to (%c60) step (%c1) {
    %col = arith.remui %i, %c5 : index
    %q = arith.divui %i, %c5 : index
    %head = arith.remui %q, %c3 : index
    %row = arith.divui %q, %c3 : index
    %x = memref.load %a[%row, %head, %col] : memref<4x3x5xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %out[%row, %head, %col] : memref<4x3x5xf32>
    scf.reduce
  }
  return %out : memref<4x3x5xf32>
}
// The row is the quotient by 5, not by 3: rows 0-11 for 60 iterations,
// which then share elements.
func.func private @skewed(%a: memref<4x3x5xf32>) -> memref<4x3x5xf32>
    attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c60 = arith.constant 60 : index
  %out = memref.alloc() : memref<4x3x5xf32>
  scf.parallel (%i) = (%c0) to (%c60) step (%c1) {
    %col = arith.remui %i, %c5 : index
    %q = arith.divui %i, %c5 : index
    %head = arith.remui %q, %c3 : index
    %row = arith.divui %q, %c5 : index
    %x = memref.load %a[%row, %head, %col] : memref<4x3x5xf32>
    memref.store %x, %out[%row, %head, %col] : memref<4x3x5xf32>
    scf.reduce
  }
  return %out : memref<4x3x5xf32>
}
// Reads another element (the column to the right).
func.func private @shifted(%a: memref<4x3x5xf32>) -> memref<4x3x5xf32>
    attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c60 = arith.constant 60 : index
  %out = memref.alloc() : memref<4x3x5xf32>
  scf.parallel (%i) = (%c0) to (%c60) step (%c1) {
    %col = arith.remui %i, %c5 : index
    %q = arith.divui %i, %c5 : index
    %head = arith.remui %q, %c3 : index
    %row = arith.divui %q, %c3 : index
    %next = arith.addi %col, %c1 : index
    %right = arith.minui %next, %c4 : index
    %x = memref.load %a[%row, %head, %right] : memref<4x3x5xf32>
    memref.store %x, %out[%row, %head, %col] : memref<4x3x5xf32>
    scf.reduce
  }
  return %out : memref<4x3x5xf32>
}

// -----

// The target read through two arguments: the kernel writes into a buffer
// passed last (`_into`), which its code cannot tell from either input.
// CHECK-LABEL: func.func @read_twice
// CHECK-SAME:    (%[[M:.*]]: memref<8xf32>)
// CHECK-NEXT:    call @double_into(%[[M]], %[[M]], %[[M]]) : (memref<8xf32>, memref<8xf32>, memref<8xf32>) -> ()
// CHECK-NEXT:    return
// CHECK:       func.func private @double_into(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>)
// CHECK:         memref.store %{{.*}}, %[[OUT]]
func.func @read_twice(%m: memref<8xf32>) {
  %0 = call @double(%m, %m) : (memref<8xf32>, memref<8xf32>) -> memref<8xf32>
  memref.copy %0, %m : memref<8xf32> to memref<8xf32>
  return
}
func.func private @double(%a: memref<8xf32>, %b: memref<8xf32>) -> memref<8xf32>
    attributes {gnn.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = memref.load %b[%i] : memref<8xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %out[%i] : memref<8xf32>
    scf.reduce
  }
  return %out : memref<8xf32>
}

// -----

// A kernel of two results (a moment and the parameter it updates), each
// copied into the argument it reads: both written in place, one result at a
// time (a variant per result); a third result that is read afterwards stays
// a result of the final variant.
// CHECK-LABEL: func.func @two_updates
// CHECK-SAME:    (%[[P:.*]]: memref<64xf32>, %[[M:.*]]: memref<64xf32>, %[[G:.*]]: memref<64xf32>)
// CHECK-NEXT:    %[[S:.*]] = call @[[K:adam_into_arg1_0]](%[[P]], %[[M]], %[[G]]) : (memref<64xf32>, memref<64xf32>, memref<64xf32>) -> memref<64xf32>
// CHECK-NEXT:    return %[[S]]
// CHECK-NOT:   func.func private @adam(
// CHECK-NOT:   func.func private @adam_into_arg1(
// CHECK:       func.func private @[[K]](%[[A:.*]]: memref<64xf32>, %[[B:.*]]: memref<64xf32>, %{{.*}}: memref<64xf32>) -> memref<64xf32>
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<64xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         scf.parallel (%[[I:.*]]) =
// CHECK:           memref.store %{{.*}}, %[[A]][%[[I]]]
// CHECK-NEXT:      memref.store %{{.*}}, %[[B]][%[[I]]]
// CHECK-NEXT:      memref.store %{{.*}}, %[[OUT]][%[[I]]]
// CHECK:         return %[[OUT]] : memref<64xf32>
func.func @two_updates(%p: memref<64xf32>, %m: memref<64xf32>, %g: memref<64xf32>) -> memref<64xf32> {
  %0:3 = call @adam(%p, %m, %g) : (memref<64xf32>, memref<64xf32>, memref<64xf32>) -> (memref<64xf32>, memref<64xf32>, memref<64xf32>)
  memref.copy %0#1, %m : memref<64xf32> to memref<64xf32>
  memref.copy %0#0, %p : memref<64xf32> to memref<64xf32>
  return %0#2 : memref<64xf32>
}
func.func private @adam(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<64xf32>) -> (memref<64xf32>, memref<64xf32>, memref<64xf32>)
    attributes {gnn.kernel, no_inline} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %p = memref.alloc() : memref<64xf32>
  %m = memref.alloc() : memref<64xf32>
  %s = memref.alloc() : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = memref.load %b[%i] : memref<64xf32>
    %z = memref.load %c[%i] : memref<64xf32>
    %n = arith.addf %y, %z : f32
    %q = arith.subf %x, %n : f32
    %r = arith.mulf %q, %n : f32
    memref.store %q, %p[%i] : memref<64xf32>
    memref.store %n, %m[%i] : memref<64xf32>
    memref.store %r, %s[%i] : memref<64xf32>
    scf.reduce
  }
  return %p, %m, %s : memref<64xf32>, memref<64xf32>, memref<64xf32>
}

// -----

// Two results copied into the same buffer: the first is written in place;
// the second cannot be (the kernel now writes that buffer itself), so its
// copy stays.
// CHECK-LABEL: func.func @same_target
// CHECK-NEXT:    %[[R:.*]] = call @pair_into_arg0(%arg0, %arg1) : (memref<64xf32>, memref<64xf32>) -> memref<64xf32>
// CHECK-NEXT:    memref.copy %[[R]], %arg0
// CHECK-NEXT:    return
func.func @same_target(%x: memref<64xf32>, %y: memref<64xf32>) {
  %0:2 = call @pair(%x, %y) : (memref<64xf32>, memref<64xf32>) -> (memref<64xf32>, memref<64xf32>)
  memref.copy %0#0, %x : memref<64xf32> to memref<64xf32>
  memref.copy %0#1, %x : memref<64xf32> to memref<64xf32>
  return
}
func.func private @pair(%a: memref<64xf32>, %b: memref<64xf32>) -> (memref<64xf32>, memref<64xf32>)
    attributes {gnn.kernel, no_inline} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %p = memref.alloc() : memref<64xf32>
  %q = memref.alloc() : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    %y = memref.load %b[%i] : memref<64xf32>
    %s = arith.addf %x, %y : f32
    %d = arith.subf %x, %y : f32
    memref.store %s, %p[%i] : memref<64xf32>
    memref.store %d, %q[%i] : memref<64xf32>
    scf.reduce
  }
  return %p, %q : memref<64xf32>, memref<64xf32>
}
