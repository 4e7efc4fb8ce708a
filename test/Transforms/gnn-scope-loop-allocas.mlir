// RUN: gnn-opt %s -split-input-file -gnn-scope-loop-allocas | FileCheck %s
// RUN: gnn-opt %s -split-input-file -gnn-scope-loop-allocas -finalize-memref-to-llvm -convert-scf-to-cf | FileCheck %s --check-prefix=LOWERED

// A loop body that allocates on the stack saves the stack pointer first and
// restores it before its terminator; the yielded value still comes from the
// body.
// CHECK-LABEL: func @for_loop
// CHECK: scf.for {{.*}} iter_args
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT: memref.alloca() : memref<64x128xf32>
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK-NEXT: llvm.intr.stackrestore %[[SP]] : !llvm.ptr
// CHECK-NEXT: scf.yield %[[SUM]] : f32
// The save and restore stay inside the loop once it is branches.
// LOWERED-LABEL: func @for_loop
// LOWERED: ^bb1(
// LOWERED: cf.cond_br
// LOWERED: ^bb2:
// LOWERED-NEXT: llvm.intr.stacksave
// LOWERED: llvm.alloca
// LOWERED: llvm.intr.stackrestore
// LOWERED-NEXT: arith.addi
// LOWERED-NEXT: cf.br ^bb1
func.func @for_loop(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> f32 {
    %tile = memref.alloca() : memref<64x128xf32>
    memref.store %acc, %tile[%c0, %c0] : memref<64x128xf32>
    %y = memref.load %tile[%c0, %c0] : memref<64x128xf32>
    %s = arith.addf %y, %acc : f32
    scf.yield %s : f32
  }
  return %r : f32
}

// -----

// scf.parallel (a serial program's parallel loops) likewise. The body of a
// loop that allocates only inside a nested loop or a nested alloca_scope
// gets no save of its own: the nested loop's body is scoped, and the
// alloca_scope (which memref-to-llvm would lower into blocks that an scf
// region cannot hold) becomes its body between a save and a restore.
// CHECK-LABEL: func @parallel_loops
// CHECK: scf.parallel
// CHECK-NEXT: llvm.intr.stacksave
// CHECK-NEXT: memref.alloca() : memref<64xf32>
// CHECK: llvm.intr.stackrestore
// CHECK-NEXT: scf.reduce
// CHECK: scf.parallel
// CHECK-NOT: llvm.intr.stacksave
// CHECK: scf.for
// CHECK-NEXT: llvm.intr.stacksave
// CHECK-NEXT: memref.alloca() : memref<16xf32>
// CHECK: llvm.intr.stackrestore
// CHECK-NEXT: }
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave
// CHECK-NEXT: memref.alloca() : memref<8xf32>
// CHECK-NEXT: memref.store
// CHECK-NEXT: llvm.intr.stackrestore %[[SP]]
// CHECK-NEXT: scf.reduce
// CHECK-NOT: alloca_scope
func.func @parallel_loops(%n: index, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %tile = memref.alloca() : memref<64xf32>
    memref.store %f, %tile[%c0] : memref<64xf32>
    %y = memref.load %tile[%c0] : memref<64xf32>
    memref.store %y, %out[%i] : memref<?xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %n step %c1 {
      %inner = memref.alloca() : memref<16xf32>
      memref.store %f, %inner[%c0] : memref<16xf32>
    }
    memref.alloca_scope {
      %scoped = memref.alloca() : memref<8xf32>
      memref.store %f, %scoped[%c0] : memref<8xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Loops without stack buffers, and allocas outside loops (the function's
// own scope), are left alone.
// CHECK-LABEL: func @nothing_to_scope
// CHECK-NOT: llvm.intr.stacksave
// CHECK: memref.alloca() : memref<4xf32>
// CHECK-NOT: llvm.intr.stacksave
// CHECK: return
func.func @nothing_to_scope(%n: index, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  %once = memref.alloca() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %f, %out[%i] : memref<?xf32>
  }
  %y = memref.load %once[%c0] : memref<4xf32>
  memref.store %y, %out[%c0] : memref<?xf32>
  return
}

// -----

// The regions of an scf.while are scoped too, and so are calls that the
// memref lowering gives stack descriptors: a cast to an unranked memref (a
// tape push's argument) and a call passing memrefs. A call of scalars
// alone is not.
// CHECK-LABEL: func @while_loop
// CHECK: scf.while
// CHECK-NEXT: %[[SP:.*]] = llvm.intr.stacksave
// CHECK: llvm.intr.stackrestore %[[SP]]
// CHECK-NEXT: scf.condition
// CHECK: ^bb0(
// CHECK-NEXT: %[[SP2:.*]] = llvm.intr.stacksave
// CHECK: memref.cast %{{.*}} : memref<?xf32> to memref<*xf32>
// CHECK: call @push
// CHECK: llvm.intr.stackrestore %[[SP2]]
// CHECK-NEXT: scf.yield
// CHECK-LABEL: func @scalar_calls
// CHECK-NOT: llvm.intr.stacksave
func.func private @push(memref<*xf32>)
func.func private @linear(memref<?xf32>) -> index
func.func private @count(index) -> index
func.func @while_loop(%m: memref<?xf32>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.while (%i = %c0) : (index) -> index {
    %k = func.call @linear(%m) : (memref<?xf32>) -> index
    %more = arith.cmpi ult, %i, %k : index
    scf.condition(%more) %i : index
  } do {
  ^bb0(%i: index):
    %u = memref.cast %m : memref<?xf32> to memref<*xf32>
    func.call @push(%u) : (memref<*xf32>) -> ()
    %j = arith.addi %i, %c1 : index
    scf.yield %j : index
  }
  return %r : index
}
func.func @scalar_calls(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %c0) -> index {
    %k = func.call @count(%a) : (index) -> index
    scf.yield %k : index
  }
  return %r : index
}
