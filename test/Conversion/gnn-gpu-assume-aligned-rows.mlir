// RUN: gnn-opt %s --pass-pipeline='builtin.module(gpu.module(gnn-gpu-assume-aligned-rows))' --split-input-file | FileCheck %s

// A marked row load of a kernel argument: at the kernel's entry, the
// argument's aligned pointer is a multiple of 16 bytes, its offset and its
// row stride multiples of 4 elements (the last stride, 1, is not asked);
// once per argument, however many loads; the marks go. An unmarked load
// states nothing for its argument.
// CHECK-LABEL: gpu.func @rows
// CHECK-SAME:    (%[[X:[^:]*]]: memref<?x64xf32, strided<[?, 1], offset: ?>>, %[[Y:[^:]*]]: memref
// CHECK:         %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:         %[[PL:.*]] = arith.andi %[[P]], %c15
// CHECK:         %[[PA:.*]] = arith.cmpi eq, %[[PL]], %c0
// CHECK:         %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[X]]
// CHECK:         %[[OL:.*]] = arith.andi %[[OFF]], %c3
// CHECK:         %[[OA:.*]] = arith.cmpi eq, %[[OL]], %c0
// CHECK:         %[[SL:.*]] = arith.andi %[[STRIDES]]#0, %c3
// CHECK:         %[[SA:.*]] = arith.cmpi eq, %[[SL]], %c0
// CHECK-NEXT:    "llvm.intr.assume"(%[[PA]])
// CHECK-NEXT:    "llvm.intr.assume"(%[[OA]])
// CHECK-NEXT:    "llvm.intr.assume"(%[[SA]])
// CHECK-NOT:     llvm.intr.assume
// CHECK-NOT:     gnn.aligned_rows
// CHECK:         gpu.return
gpu.module @kernels {
  gpu.func @rows(%x: memref<?x64xf32, strided<[?, 1], offset: ?>>,
                 %y: memref<?x64xf32, strided<[?, 1], offset: ?>>,
                 %r: index, %out: memref<3xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %a = vector.load %x[%r, %c0] {gnn.aligned_rows}
        : memref<?x64xf32, strided<[?, 1], offset: ?>>, vector<64xf32>
    %b = vector.load %x[%c0, %c0] {gnn.aligned_rows}
        : memref<?x64xf32, strided<[?, 1], offset: ?>>, vector<64xf32>
    %c = vector.load %y[%r, %c0]
        : memref<?x64xf32, strided<[?, 1], offset: ?>>, vector<64xf32>
    %sa = vector.reduction <add>, %a : vector<64xf32> into f32
    %sb = vector.reduction <add>, %b : vector<64xf32> into f32
    %sc = vector.reduction <add>, %c : vector<64xf32> into f32
    memref.store %sa, %out[%c0] : memref<3xf32>
    memref.store %sb, %out[%c1] : memref<3xf32>
    memref.store %sc, %out[%c2] : memref<3xf32>
    gpu.return
  }
}

// -----

// Through a cast to the argument; a kernel without marks is left alone.
// CHECK-LABEL: gpu.func @cast
// CHECK-SAME:    (%[[X:[^:]*]]: memref<?x8xf32>
// CHECK:         memref.extract_aligned_pointer_as_index %[[X]]
// CHECK-COUNT-3: "llvm.intr.assume"
// CHECK-LABEL: gpu.func @unmarked
// CHECK-NOT:     llvm.intr.assume
gpu.module @kernels {
  gpu.func @cast(%x: memref<?x8xf32>, %out: memref<8xf32>) kernel {
    %c0 = arith.constant 0 : index
    %y = memref.cast %x : memref<?x8xf32> to memref<?x8xf32, strided<[?, 1], offset: ?>>
    %a = vector.load %y[%c0, %c0] {gnn.aligned_rows}
        : memref<?x8xf32, strided<[?, 1], offset: ?>>, vector<8xf32>
    vector.store %a, %out[%c0] : memref<8xf32>, vector<8xf32>
    gpu.return
  }
  gpu.func @unmarked(%x: memref<?x8xf32>, %out: memref<8xf32>) kernel {
    %c0 = arith.constant 0 : index
    %a = vector.load %x[%c0, %c0] : memref<?x8xf32>, vector<8xf32>
    vector.store %a, %out[%c0] : memref<8xf32>, vector<8xf32>
    gpu.return
  }
}
