// RUN: gnn-opt %s -convert-gnn-to-loops -gnn-pass-runtime-context | FileCheck %s
// RUN: gnn-opt %s -convert-gnn-to-loops -gnn-pass-runtime-context -gnn-pass-runtime-context | FileCheck %s
// RUN: gnn-opt %s -gnn-lower-to-cpu | FileCheck %s --check-prefix=LLVM

// Error reports take the caller's context first.
// CHECK-DAG: func.func private @gnn_rt_id_out_of_range(!llvm.ptr, i64, i64, i64)
// CHECK-DAG: func.func private @gnn_rt_rows_mismatch(!llvm.ptr, i64, i64, i64)
// CHECK-DAG: func.func private @gnn_rt_edge_out_of_range(!llvm.ptr, i64, i64, i64, i64)
// So do the dense products, which report sizes that do not fit.
// CHECK-DAG: func.func private @gnn_rt_linear_nobias(!llvm.ptr, memref<
// A tape is created with the context its pops report into.
// CHECK-DAG: func.func private @gnn_rt_tape_create(!llvm.ptr) -> !llvm.ptr

// Every function with a body receives the context and passes it on.
// CHECK-LABEL: func.func private @pick
// CHECK-SAME: (%[[RT:.*]]: !llvm.ptr {gnn.runtime_context}, %{{.*}}: tensor<?x4xf32>, %{{.*}}: tensor<?xindex>)
// CHECK: func.call @gnn_rt_id_out_of_range(%[[RT]], %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i64, i64) -> ()
func.func private @pick(%x: tensor<?x4xf32>, %ids: tensor<?xindex>) -> tensor<?x4xf32> {
  %r = gnn.gather_rows %x[%ids] : (tensor<?x4xf32>, tensor<?xindex>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[MAIN:.*]]: !llvm.ptr {gnn.runtime_context}, %{{.*}}: tensor<?x4xf32> {gnn.name = "x"}, %{{.*}}: tensor<?xindex>, %{{.*}}: tensor<4x4xf32>)
// CHECK: call @pick(%[[MAIN]], %{{.*}}, %{{.*}}) : (!llvm.ptr, tensor<?x4xf32>, tensor<?xindex>) -> tensor<?x4xf32>
// CHECK: call @gnn_rt_linear_nobias(%[[MAIN]], %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}})
// The C wrapper of an entry point takes the context right after the result
// pointer.
// LLVM-LABEL: llvm.func @pick(%{{.*}}: !llvm.ptr {gnn.runtime_context},
// LLVM-LABEL: llvm.func @_mlir_ciface_main(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {gnn.runtime_context}, %{{.*}}: !llvm.ptr {gnn.name = "x", gnn.read_only},
func.func @main(%x: tensor<?x4xf32> {gnn.name = "x"}, %ids: tensor<?xindex>, %w: tensor<4x4xf32>) -> tensor<?x4xf32> {
  %p = func.call @pick(%x, %ids) : (tensor<?x4xf32>, tensor<?xindex>) -> tensor<?x4xf32>
  %y = gnn.linear %p, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// CHECK-LABEL: func.func private @keep
// CHECK-SAME: (%[[KEEP:.*]]: !llvm.ptr {gnn.runtime_context},
// CHECK: call @gnn_rt_tape_create(%[[KEEP]]) : (!llvm.ptr) -> !llvm.ptr
func.func private @keep(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %t = gnn.tape_create : !gnn.tape
  gnn.tape_push %t, %x : tensor<?x4xf32>
  %y = gnn.tape_pop %t : tensor<?x4xf32>
  gnn.tape_free %t
  return %y : tensor<?x4xf32>
}
