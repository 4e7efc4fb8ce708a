// RUN: gnn-opt %s --pass-pipeline='builtin.module(gpu.module(gnn-gpu-mul-high))' --split-input-file | FileCheck %s

// A 32-bit extended product in a kernel: its low half a 32-bit multiply,
// its high half NVVM's mul.hi.u32.
// CHECK-LABEL: gpu.func @philox
// CHECK-NOT:     arith.mului_extended
// CHECK:         %[[LO:.*]] = arith.muli %arg0, %arg1 : i32
// CHECK:         %[[HI:.*]] = llvm.call_intrinsic "llvm.nvvm.mulhi.ui"(%arg0, %arg1) : (i32, i32) -> i32
// CHECK:         arith.xori %[[LO]], %[[HI]] : i32
gpu.module @kernels {
  gpu.func @philox(%a: i32, %b: i32, %out: memref<1xi32>) kernel {
    %lo, %hi = arith.mului_extended %a, %b : i32
    %x = arith.xori %lo, %hi : i32
    %c0 = arith.constant 0 : index
    memref.store %x, %out[%c0] : memref<1xi32>
    gpu.return
  }
}

// -----

// Other widths and vectors keep upstream's lowering.
// CHECK-LABEL: gpu.func @others
// CHECK:         arith.mului_extended {{.*}} : i64
// CHECK:         arith.mului_extended {{.*}} : vector<4xi32>
// CHECK-NOT:     llvm.call_intrinsic
gpu.module @kernels {
  gpu.func @others(%a: i64, %v: vector<4xi32>, %out: memref<1xi64>,
                   %vout: memref<4xi32>) kernel {
    %lo, %hi = arith.mului_extended %a, %a : i64
    %vlo, %vhi = arith.mului_extended %v, %v : vector<4xi32>
    %x = arith.xori %lo, %hi : i64
    %y = arith.xori %vlo, %vhi : vector<4xi32>
    %c0 = arith.constant 0 : index
    memref.store %x, %out[%c0] : memref<1xi64>
    vector.store %y, %vout[%c0] : memref<4xi32>, vector<4xi32>
    gpu.return
  }
}
