// RUN: gnn-opt %s -gnn-heap-large-allocas | FileCheck %s
// RUN: gnn-opt %s -gnn-heap-large-allocas=max-stack-bytes=0 | FileCheck %s --check-prefix=NONE

// Stack buffers up to 64 KiB stay; larger ones and dynamic sizes go to the
// heap with their sizes and alignment; an element of unknown size counts as
// large.
// CHECK-LABEL: func.func @buffers(
// CHECK-SAME: %[[N:.*]]: index)
// CHECK: memref.alloca() : memref<16xf32>
// CHECK: memref.alloca() : memref<16384xf32>
// CHECK: memref.alloc() : memref<16385xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1000x1000xf64>
// CHECK: memref.alloc(%[[N]]) : memref<?x4xf32>
// CHECK: memref.alloc() : memref<4xvector<4xf32>>
// CHECK: memref.alloca() : memref<8192xindex>
// CHECK-NOT: memref.alloca
// NONE-LABEL: func.func @buffers(
// NONE-NOT: memref.alloca
func.func @buffers(%n: index) {
  %a = memref.alloca() : memref<16xf32>
  %b = memref.alloca() : memref<16384xf32>
  %c = memref.alloca() : memref<16385xf32>
  %d = memref.alloca() {alignment = 64 : i64} : memref<1000x1000xf64>
  %e = memref.alloca(%n) : memref<?x4xf32>
  %f = memref.alloca() : memref<4xvector<4xf32>>
  %g = memref.alloca() : memref<8192xindex>
  %h = memref.alloca() : memref<9223372036854775807x2xf32>
  return
}
