// Checked mode: every memref access of the lowered program is verified at
// run time (a failed check prints the op and calls abort); without it,
// none is.
// RUN: gnn-opt %gnn_src_root/examples/attention.mlir --gnn-lower-to-cpu="checked=true" | FileCheck %s
// RUN: gnn-opt %gnn_src_root/examples/attention.mlir --gnn-lower-to-cpu | FileCheck %s --check-prefix=UNCHECKED
// CHECK: llvm.mlir.global private constant @assert_msg
// CHECK: llvm.call @abort
// UNCHECKED-NOT: @abort
// UNCHECKED-NOT: assert_msg
