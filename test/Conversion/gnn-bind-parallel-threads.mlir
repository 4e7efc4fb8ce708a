// RUN: gnn-opt %s -split-input-file -gnn-bind-parallel-threads | FileCheck %s
// RUN: gnn-opt %s -split-input-file -gnn-bind-parallel-threads -gnn-bind-parallel-threads | FileCheck %s
// RUN: gnn-opt %s -split-input-file -gnn-bind-parallel-threads -convert-func-to-llvm -convert-scf-to-cf -convert-cf-to-llvm -convert-arith-to-llvm -finalize-memref-to-llvm -convert-openmp-to-llvm -reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// Each OpenMP region of a function that takes the runtime context binds its
// thread to the context on entry and restores the thread's binding before
// its terminator; the nested region too. The bind is declared once.
// CHECK: func.func private @gnn_rt_context_bind(!llvm.ptr) -> !llvm.ptr
// CHECK-NOT: func.func private @gnn_rt_context_bind
// CHECK-LABEL: func.func @fill
// CHECK-SAME: (%[[RT:.*]]: !llvm.ptr {gnn.runtime_context}
// CHECK: omp.parallel {
// CHECK-NEXT: %[[BEFORE:.*]] = func.call @gnn_rt_context_bind(%[[RT]]) : (!llvm.ptr) -> !llvm.ptr
// CHECK: omp.wsloop
// CHECK: omp.parallel {
// CHECK-NEXT: %[[INNER:.*]] = func.call @gnn_rt_context_bind(%[[RT]])
// CHECK: func.call @gnn_rt_context_bind(%[[INNER]])
// CHECK-NEXT: omp.terminator
// CHECK: func.call @gnn_rt_context_bind(%[[BEFORE]])
// CHECK-NEXT: omp.terminator
// CHECK-NOT: gnn_rt_context_bind
// CHECK: return
// LLVM: llvm.func @gnn_rt_context_bind(!llvm.ptr) -> !llvm.ptr
// LLVM: llvm.call @gnn_rt_context_bind
func.func @fill(%rt: !llvm.ptr {gnn.runtime_context}, %m: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %one, %m[%i] : memref<?xf32>
        omp.yield
      }
      omp.terminator
    }
    omp.parallel {
      omp.terminator
    }
    omp.terminator
  }
  return
}

// -----

// Functions without the context keep their regions as they are, and no
// bind is declared.
// CHECK-NOT: gnn_rt_context_bind
// CHECK-LABEL: func.func @plain
// CHECK: omp.parallel {
// CHECK-NEXT: omp.terminator
func.func @plain() {
  omp.parallel {
    omp.terminator
  }
  return
}
