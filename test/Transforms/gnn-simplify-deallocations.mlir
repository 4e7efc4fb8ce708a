// RUN: gnn-opt %s -gnn-simplify-deallocations | FileCheck %s
// RUN: gnn-opt %s -gnn-simplify-deallocations=max-operands=1 | FileCheck %s --check-prefix=SKIPPED

// A fresh allocation cannot alias an argument: the simplification drops the
// argument from the retained list (no run-time alias check is left). A
// function whose dealloc ops name more memrefs than max-operands keeps its
// dealloc ops as they are.
// CHECK-LABEL: func @fresh
// CHECK: bufferization.dealloc (%{{.*}} : memref<2xf32>) if (%{{.*}})
// CHECK-NOT: retain
// SKIPPED-LABEL: func @fresh
// SKIPPED: bufferization.dealloc (%{{.*}} : memref<2xf32>) if (%{{.*}}) retain (%{{.*}} : memref<2xf32>)
func.func private @use(memref<2xf32>)
func.func @fresh(%a: memref<2xf32>, %c: i1) -> memref<2xf32> {
  %m = memref.alloc() : memref<2xf32>
  call @use(%m) : (memref<2xf32>) -> ()
  %keep = bufferization.dealloc (%m : memref<2xf32>) if (%c) retain (%a : memref<2xf32>)
  return %a : memref<2xf32>
}
