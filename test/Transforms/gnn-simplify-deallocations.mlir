// RUN: gnn-opt %s -split-input-file -gnn-simplify-deallocations | FileCheck %s
// RUN: gnn-opt %s -split-input-file -gnn-simplify-deallocations=max-operands=1 | FileCheck %s --check-prefix=SPLIT

// A fresh allocation cannot alias an argument: both the upstream
// simplification (functions within max-operands) and the split by origin
// (the others) drop the argument from the retained list.
// CHECK-LABEL: func @fresh
// CHECK: bufferization.dealloc (%{{.*}} : memref<2xf32>) if (%{{.*}})
// CHECK-NOT: retain
// SPLIT-LABEL: func @fresh
// SPLIT: bufferization.dealloc (%{{.*}} : memref<2xf32>) if (%{{.*}})
// SPLIT-NOT: retain
func.func private @use(memref<2xf32>)
func.func @fresh(%a: memref<2xf32>, %c: i1) -> memref<2xf32> {
  %m = memref.alloc() : memref<2xf32>
  call @use(%m) : (memref<2xf32>) -> ()
  %keep = bufferization.dealloc (%m : memref<2xf32>) if (%c) retain (%a : memref<2xf32>)
  return %a : memref<2xf32>
}

// -----

// Split by origin: a callee hands over buffers it owns, so call results
// alias neither arguments, allocations, nor other calls' results; results
// of one call share a buffer only where the callee may return one twice.
// CHECK-LABEL: func @calls
// SPLIT-LABEL: func @calls
// SPLIT-SAME: (%[[A:.*]]: memref<2xf32>, %[[C:.*]]: i1)
// SPLIT: %[[X:.*]]:2 = call @two_fresh
// SPLIT: %[[Y:.*]]:2 = call @same_twice
// SPLIT: %[[M:.*]] = memref.alloc
// SPLIT-NEXT: bufferization.dealloc (%[[X]]#0 : memref<2xf32>) if (%[[C]]){{$}}
// SPLIT-NEXT: bufferization.dealloc (%[[X]]#1 : memref<2xf32>) if (%[[C]]){{$}}
// SPLIT-NEXT: bufferization.dealloc (%[[Y]]#0, %[[Y]]#1 : memref<2xf32>, memref<2xf32>) if (%[[C]], %[[C]]){{$}}
// SPLIT-NEXT: bufferization.dealloc (%[[M]] : memref<2xf32>) if (%[[C]]){{$}}
// SPLIT-NEXT: return %[[A]]
func.func private @two_fresh() -> (memref<2xf32>, memref<2xf32>) {
  %a = memref.alloc() : memref<2xf32>
  %b = memref.alloc() : memref<2xf32>
  return %a, %b : memref<2xf32>, memref<2xf32>
}
func.func private @same_twice() -> (memref<2xf32>, memref<2xf32>) {
  %a = memref.alloc() : memref<2xf32>
  return %a, %a : memref<2xf32>, memref<2xf32>
}
func.func @calls(%a: memref<2xf32>, %c: i1) -> memref<2xf32> {
  %x:2 = call @two_fresh() : () -> (memref<2xf32>, memref<2xf32>)
  %y:2 = call @same_twice() : () -> (memref<2xf32>, memref<2xf32>)
  %m = memref.alloc() : memref<2xf32>
  %keep = bufferization.dealloc (%x#0, %x#1, %y#0, %y#1, %m : memref<2xf32>, memref<2xf32>, memref<2xf32>, memref<2xf32>, memref<2xf32>) if (%c, %c, %c, %c, %c) retain (%a : memref<2xf32>)
  return %a : memref<2xf32>
}

// -----

// A value forwarded by scf.if or scf.for may be any of the buffers flowing
// into it: it stays retained by the deallocs of those (its updated
// condition their disjunction), and a loop-carried buffer is freed together
// with the allocation it may be. Views are followed to their source.
// CHECK-LABEL: func @forwarded
// SPLIT-LABEL: func @forwarded
// SPLIT-SAME: (%[[C:.*]]: i1, %[[N:.*]]: index)
// SPLIT-DAG: %[[P:.*]] = memref.alloc
// SPLIT-DAG: %[[Q:.*]] = memref.alloc
// SPLIT-DAG: %[[R:.*]] = memref.alloc
// SPLIT: %[[IF:.*]] = scf.if
// SPLIT: %[[FOR:.*]] = scf.for
// SPLIT: %[[V:.*]] = memref.subview %[[Q]]
// SPLIT: %[[K0:.*]] = bufferization.dealloc (%[[P]] : memref<4xf32>) if (%[[C]]) retain (%[[IF]] : memref<4xf32>)
// SPLIT-NEXT: %[[K1:.*]] = bufferization.dealloc (%[[V]] : memref<2xf32, strided<[1]>>) if (%[[C]]) retain (%[[IF]] : memref<4xf32>)
// SPLIT-NEXT: %[[OR:.*]] = arith.ori %[[K0]], %[[K1]]
// SPLIT-NEXT: bufferization.dealloc (%[[R]], %[[FOR]] : memref<4xf32>, memref<4xf32>) if (%[[C]], %[[C]]){{$}}
// SPLIT-NEXT: return %[[IF]], %[[OR]]
func.func @forwarded(%c: i1, %n: index) -> (memref<4xf32>, i1) {
  %p = memref.alloc() : memref<4xf32>
  %q = memref.alloc() : memref<4xf32>
  %r = memref.alloc() : memref<4xf32>
  %if = scf.if %c -> memref<4xf32> {
    scf.yield %p : memref<4xf32>
  } else {
    scf.yield %q : memref<4xf32>
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %for = scf.for %i = %c0 to %n step %c1 iter_args(%it = %r) -> memref<4xf32> {
    scf.yield %it : memref<4xf32>
  }
  %v = memref.subview %q[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  %k:1 = bufferization.dealloc (%p, %v, %r, %for : memref<4xf32>, memref<2xf32, strided<[1]>>, memref<4xf32>, memref<4xf32>) if (%c, %c, %c, %c) retain (%if : memref<4xf32>)
  return %if, %k#0 : memref<4xf32>, i1
}

// -----

// A buffer that may come from anywhere may alias every other: the dealloc
// op stays as it is.
// CHECK-LABEL: func @anywhere
// SPLIT-LABEL: func @anywhere
// SPLIT: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<2xf32>, memref<2xf32>) if (%{{.*}}, %{{.*}}) retain (%{{.*}} : memref<2xf32>)
func.func @anywhere(%a: memref<2xf32>, %c: i1) -> memref<2xf32> {
  %m = memref.alloc() : memref<2xf32>
  %u = builtin.unrealized_conversion_cast %a : memref<2xf32> to memref<2xf32>
  %keep = bufferization.dealloc (%m, %u : memref<2xf32>, memref<2xf32>) if (%c, %c) retain (%a : memref<2xf32>)
  return %a : memref<2xf32>
}
