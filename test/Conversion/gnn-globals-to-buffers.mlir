// RUN: gnn-opt %s --gnn-globals-to-buffers --split-input-file | FileCheck %s

// Each global is copied once, at the function's entry, into a buffer that
// replaces every read of it: in loops, in parallel loops that may become
// kernels, and as a call's operand.
// CHECK-LABEL: func.func @reads
// CHECK-SAME:    (%[[X:.*]]: memref<?x3xf32>, %[[N:.*]]: index)
// CHECK-DAG:     %[[G1:.*]] = memref.get_global @one : memref<f32>
// CHECK-DAG:     %[[ONE:.*]] = memref.alloc() : memref<f32>
// CHECK-DAG:     memref.copy %[[G1]], %[[ONE]] : memref<f32> to memref<f32>
// CHECK-DAG:     %[[G2:.*]] = memref.get_global @table : memref<4xf32>
// CHECK-DAG:     %[[TABLE:.*]] = memref.alloc() : memref<4xf32>
// CHECK-DAG:     memref.copy %[[G2]], %[[TABLE]] : memref<4xf32> to memref<4xf32>
// CHECK-NOT:     memref.get_global
// CHECK:         call @kernel(%[[ONE]], %[[X]])
// CHECK:         scf.for
// CHECK:           memref.load %[[TABLE]]
// CHECK:         scf.parallel
// CHECK:           memref.load %[[ONE]][]
// CHECK:           memref.load %[[TABLE]]
memref.global "private" constant @one : memref<f32> = dense<1.0>
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func private @kernel(memref<f32>, memref<?x3xf32>) -> memref<?x3xf32>
func.func @reads(%x: memref<?x3xf32>, %n: index) -> memref<?x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = memref.get_global @one : memref<f32>
  %r = call @kernel(%one, %x) : (memref<f32>, memref<?x3xf32>) -> memref<?x3xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %t = memref.get_global @table : memref<4xf32>
    %v = memref.load %t[%i] : memref<4xf32>
    memref.store %v, %r[%c0, %c0] : memref<?x3xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %o = memref.get_global @one : memref<f32>
    %t = memref.get_global @table : memref<4xf32>
    %a = memref.load %o[] : memref<f32>
    %b = memref.load %t[%c1] : memref<4xf32>
    %s = arith.addf %a, %b : f32
    memref.store %s, %r[%i, %c1] : memref<?x3xf32>
    scf.reduce
  }
  return %r : memref<?x3xf32>
}

// -----

// A global with a strided layout is read as it is; a function that reads
// none is unchanged.
// CHECK-LABEL: func.func @strided
// CHECK-NEXT:    %[[G:.*]] = memref.get_global @spaced
// CHECK-NEXT:    return %[[G]]
// CHECK-LABEL: func.func @none
// CHECK-NEXT:    return
memref.global "private" constant @spaced : memref<2xf32, strided<[2]>> = dense<[1.0, 2.0]>
func.func @strided() -> memref<2xf32, strided<[2]>> {
  %g = memref.get_global @spaced : memref<2xf32, strided<[2]>>
  return %g : memref<2xf32, strided<[2]>>
}
func.func @none() {
  return
}

// -----

// Reads that open the function (where the copies go) are replaced too.
// CHECK-LABEL: func.func @first
// CHECK-NEXT:    %[[G:.*]] = memref.get_global @two
// CHECK-NEXT:    %[[TWO:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT:    memref.copy %[[G]], %[[TWO]]
// CHECK-NEXT:    return %[[TWO]], %[[TWO]]
memref.global "private" constant @two : memref<f32> = dense<2.0>
func.func @first() -> (memref<f32>, memref<f32>) {
  %a = memref.get_global @two : memref<f32>
  %b = memref.get_global @two : memref<f32>
  return %a, %b : memref<f32>, memref<f32>
}
