// RUN: gnn-opt %s -split-input-file -verify-diagnostics -gnn-check-self-contained | FileCheck %s

// A program that defines all it calls and uses passes: functions with
// bodies, initialized or private globals, names of its own.
// CHECK-LABEL: func.func @main
// CHECK: func.func private @helper
// CHECK: memref.global "private" @scratch
// CHECK: memref.global @table
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
memref.global "private" @scratch : memref<4xf32>
memref.global @table : memref<2xf32> = dense<[1.0, 2.0]>

// -----

// expected-error @below {{'func.func' op @puts is declared without a body; a program may call only functions it defines}}
func.func private @puts(i32) -> i32

// -----

// expected-error @below {{'llvm.func' op is in the llvm dialect, which a program may not use}}
llvm.func @system(!llvm.ptr) -> i32

// -----

// expected-error @below {{'memref.global' op @stdout is an external global; a program may use only globals it defines}}
memref.global @stdout : memref<4xf32>

// -----

// expected-error @below {{'llvm.mlir.global' op is in the llvm dialect}}
llvm.mlir.global external @environ() : !llvm.ptr

// -----

// Reported once per llvm op outside others, with its function's body
// unchecked below it.
// expected-error @below {{'llvm.func' op is in the llvm dialect}}
llvm.func @twice(%a: f32) -> f32 {
  %s = llvm.fadd %a, %a : f32
  llvm.return %s : f32
}
func.func @poke(%x: i64) {
  // expected-error @below {{'llvm.inttoptr' op is in the llvm dialect}}
  %p = llvm.inttoptr %x : i64 to !llvm.ptr
  %c = arith.constant 1 : i32
  // expected-error @below {{'llvm.store' op is in the llvm dialect}}
  llvm.store %c, %p : i32, !llvm.ptr
  // expected-error @below {{'llvm.inline_asm' op is in the llvm dialect}}
  llvm.inline_asm has_side_effects "ud2", "" : () -> ()
  return
}

// -----

// Every offender is reported, names the lowering reserves and names of
// C library functions that compiled code calls included.
// expected-error @below {{'func.func' op @gnn_rt_gemm has a name the lowering reserves for its own functions ('gnn_rt_...')}}
func.func @gnn_rt_gemm() {
  return
}
// expected-error @below {{'func.func' op @gnn_kernel_apply_nodes has a name the lowering reserves}}
func.func @gnn_kernel_apply_nodes() {
  return
}
// expected-error @below {{'func.func' op @__kmpc_fork_call has a name the lowering reserves}}
func.func @__kmpc_fork_call() {
  return
}
// expected-error @below {{'func.func' op @tanhf has the name of a C library function that compiled code calls}}
func.func @tanhf(%x: f32) -> f32 {
  return %x : f32
}
// expected-error @below {{'func.func' op @memcpy has the name of a C library function}}
func.func @memcpy() {
  return
}
// A name that only starts like one is the program's.
func.func @expensive() {
  return
}
