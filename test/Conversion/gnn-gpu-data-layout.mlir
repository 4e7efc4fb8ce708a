// RUN: gnn-opt %s --pass-pipeline='builtin.module(gpu.module(gnn-gpu-data-layout))' | FileCheck %s

// Every kernel module gets nvptx64's data layout (an i64 aligned to 8
// bytes), replacing whatever it had; the host module keeps its own.
// CHECK:       module {
// CHECK:       gpu.module @kernels attributes {llvm.data_layout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"}
// CHECK:       gpu.module @more attributes {llvm.data_layout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"}
module {
  gpu.module @kernels {
    gpu.func @load(%ids: memref<?xindex>, %i: index) kernel {
      %v = memref.load %ids[%i] : memref<?xindex>
      memref.store %v, %ids[%i] : memref<?xindex>
      gpu.return
    }
  }
  gpu.module @more attributes {llvm.data_layout = "e"} {
  }
}
