// RUN: gnn-opt %s --gnn-gpu-place-buffers --split-input-file | FileCheck %s

// A buffer that only kernels touch is a block of device memory viewed as
// its type (16 bytes a row of four floats, times the dynamic rows); its
// deallocation stays. One the host loads from after a kernel wrote it
// stays unified, as does one the host stores into before a kernel reads
// it; one only the host touches is a block of host memory.
// CHECK-LABEL: func.func @kernels_only
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK:         %[[BYTES:.*]] = arith.muli %[[C16]], %[[N:.*]] : index
// CHECK:         %[[SIZE:.*]] = arith.index_cast %[[BYTES]] : index to i64
// CHECK:         %[[BLOCK:.*]] = call @gnn_cuda_alloc_device(%[[SIZE]]) : (i64) -> memref<?xi8>
// CHECK:         %[[T:.*]] = memref.view %[[BLOCK]][%{{.*}}][%[[N]]] : memref<?xi8> to memref<?x4xf32>
// CHECK:         gpu.launch_func @kernels::@fill {{.*}} args(%[[T]] : memref<?x4xf32>)
// CHECK:         memref.dealloc %[[T]]
// CHECK:         %[[R:.*]] = memref.alloc(%[[N]]) : memref<?x4xf32>
// CHECK:         memref.load %[[R]]
// CHECK:         %[[S:.*]] = memref.alloc() : memref<1xi64>
// CHECK:         memref.store %{{.*}}, %[[S]]
// CHECK:         %[[HB:.*]] = call @gnn_cuda_alloc_host(%{{.*}}) : (i64) -> memref<?xi8>
// CHECK:         %[[H:.*]] = memref.view %[[HB]][%{{.*}}][] : memref<?xi8> to memref<3xindex>
// CHECK:         memref.store %{{.*}}, %[[H]]
// CHECK:       func.func private @gnn_cuda_alloc_device(i64) -> memref<?xi8> attributes {llvm.emit_c_interface}
// CHECK:       func.func private @gnn_cuda_alloc_host(i64) -> memref<?xi8> attributes {llvm.emit_c_interface}
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%x: memref<?x4xf32>) kernel { gpu.return }
    gpu.func @slot(%x: memref<1xi64>) kernel { gpu.return }
  }
  func.func @kernels_only(%n: index) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = memref.alloc(%n) : memref<?x4xf32>
    gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%t : memref<?x4xf32>)
    memref.dealloc %t : memref<?x4xf32>
    %r = memref.alloc(%n) : memref<?x4xf32>
    gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%r : memref<?x4xf32>)
    %v = memref.load %r[%c0, %c0] : memref<?x4xf32>
    memref.dealloc %r : memref<?x4xf32>
    %s = memref.alloc() : memref<1xi64>
    %big = arith.constant 9 : i64
    memref.store %big, %s[%c0] : memref<1xi64>
    gpu.launch_func @kernels::@slot blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%s : memref<1xi64>)
    memref.dealloc %s : memref<1xi64>
    %h = memref.alloc() : memref<3xindex>
    memref.store %c1, %h[%c0] : memref<3xindex>
    %w = memref.load %h[%c0] : memref<3xindex>
    memref.dealloc %h : memref<3xindex>
    return %v : f32
  }
}

// -----

// Through views and calls: a subview the host reads makes its buffer the
// host's (and where a kernel writes it too, unified); a private function
// that launches a kernel on its argument keeps its caller's buffer on the
// device, one that loads from it on the host; what a private function
// allocates and returns is placed by what its caller does with it; a
// public function's results go to the host's caller (unified).
// CHECK-LABEL: func.func private @launches
// CHECK-LABEL: func.func private @loads
// CHECK-LABEL: func.func private @makes
// CHECK:         call @gnn_cuda_alloc_device
// CHECK-LABEL: func.func private @makes_read
// CHECK:         call @gnn_cuda_alloc_host
// CHECK-LABEL: func.func @caller
// CHECK:         call @gnn_cuda_alloc_host
// CHECK:         memref.subview
// CHECK:         %[[A:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         memref.subview %[[A]]
// CHECK:         call @launches(%[[A]]
// CHECK:         call @gnn_cuda_alloc_device
// CHECK:         call @launches
// CHECK:         call @gnn_cuda_alloc_host
// CHECK:         call @loads
// CHECK:         %[[P:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         return {{.*}}, %[[P]] :
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func private @launches(%x: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
  func.func private @loads(%x: memref<?xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<?xf32>
    return %v : f32
  }
  func.func private @makes(%n: index) -> memref<?xf32> {
    %m = memref.alloc(%n) : memref<?xf32>
    call @launches(%m, %n) : (memref<?xf32>, index) -> ()
    return %m : memref<?xf32>
  }
  func.func private @makes_read(%n: index) -> memref<?xf32> {
    %m = memref.alloc(%n) : memref<?xf32>
    return %m : memref<?xf32>
  }
  func.func @caller(%n: index) -> (f32, f32, memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %a = memref.alloc(%n) : memref<?xf32>
    %sub = memref.subview %a[1] [1] [1]
        : memref<?xf32> to memref<1xf32, strided<[1], offset: 1>>
    %x = memref.load %sub[%c0] : memref<1xf32, strided<[1], offset: 1>>
    memref.dealloc %a : memref<?xf32>
    %a2 = memref.alloc(%n) : memref<?xf32>
    %sub2 = memref.subview %a2[1] [1] [1]
        : memref<?xf32> to memref<1xf32, strided<[1], offset: 1>>
    %x2 = memref.load %sub2[%c0] : memref<1xf32, strided<[1], offset: 1>>
    call @launches(%a2, %n) : (memref<?xf32>, index) -> ()
    memref.dealloc %a2 : memref<?xf32>
    %b = memref.alloc(%n) : memref<?xf32>
    call @launches(%b, %n) : (memref<?xf32>, index) -> ()
    memref.dealloc %b : memref<?xf32>
    %c = memref.alloc(%n) : memref<?xf32>
    %y = call @loads(%c) : (memref<?xf32>) -> f32
    memref.dealloc %c : memref<?xf32>
    %d = call @makes(%n) : (index) -> memref<?xf32>
    call @launches(%d, %n) : (memref<?xf32>, index) -> ()
    memref.dealloc %d : memref<?xf32>
    %e = call @makes_read(%n) : (index) -> memref<?xf32>
    %z = memref.load %e[%c0] : memref<?xf32>
    memref.dealloc %e : memref<?xf32>
    %p = memref.alloc(%n) : memref<?xf32>
    return %x, %y, %p : f32, f32, memref<?xf32>
  }
}

// -----

// Loops and selects: a buffer carried by a loop of kernels whose result the
// host reads is unified; one carried by a loop that only kernels touch is
// the device's; either side of a select that only the host reads is the
// host's, and where a kernel writes the select's result, both are unified.
// CHECK-LABEL: func.func @loops
// CHECK:         %[[A:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[A]])
// CHECK:         call @gnn_cuda_alloc_device
// CHECK:         memref.view
// CHECK:         scf.for
// CHECK:         %[[S1:.*]] = memref.view
// CHECK:         %[[S2:.*]] = memref.view
// CHECK:         arith.select %{{.*}}, %[[S1]], %[[S2]]
// CHECK:         %[[T1:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         %[[T2:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         arith.select %{{.*}}, %[[T1]], %[[T2]]
// Place by place: of two buffers a loop carries, the one whose result the
// host reads is unified, the other the device's (in a while loop too).
// CHECK:         %[[U:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         %[[DB:.*]] = call @gnn_cuda_alloc_device
// CHECK:         %[[D:.*]] = memref.view %[[DB]]
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %[[U]], %{{.*}} = %[[D]])
// CHECK:         %[[WU:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         %[[WDB:.*]] = call @gnn_cuda_alloc_device
// CHECK:         %[[WD:.*]] = memref.view %[[WDB]]
// CHECK:         scf.while (%{{.*}} = %[[WU]], %{{.*}} = %[[WD]])
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func @loops(%n: index, %flag: i1) -> (f32, f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %a = memref.alloc(%n) : memref<?xf32>
    %ra = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %a) -> memref<?xf32> {
      gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
          threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
      scf.yield %x : memref<?xf32>
    }
    %v = memref.load %ra[%c0] : memref<?xf32>
    memref.dealloc %ra : memref<?xf32>
    %b = memref.alloc(%n) : memref<?xf32>
    %rb = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %b) -> memref<?xf32> {
      gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
          threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
      scf.yield %x : memref<?xf32>
    }
    memref.dealloc %rb : memref<?xf32>
    %s1 = memref.alloc(%n) : memref<?xf32>
    %s2 = memref.alloc(%n) : memref<?xf32>
    %s = arith.select %flag, %s1, %s2 : memref<?xf32>
    %w = memref.load %s[%c0] : memref<?xf32>
    memref.dealloc %s1 : memref<?xf32>
    memref.dealloc %s2 : memref<?xf32>
    %t1 = memref.alloc(%n) : memref<?xf32>
    %t2 = memref.alloc(%n) : memref<?xf32>
    %t = arith.select %flag, %t1, %t2 : memref<?xf32>
    %u = memref.load %t[%c0] : memref<?xf32>
    gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%t : memref<?xf32>)
    memref.dealloc %t1 : memref<?xf32>
    memref.dealloc %t2 : memref<?xf32>
    %p = memref.alloc(%n) : memref<?xf32>
    %q = memref.alloc(%n) : memref<?xf32>
    %rp:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %p, %y = %q)
        -> (memref<?xf32>, memref<?xf32>) {
      gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
          threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
      gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
          threads in (%c1, %c1, %c1) args(%y : memref<?xf32>)
      scf.yield %x, %y : memref<?xf32>, memref<?xf32>
    }
    %pv = memref.load %rp#0[%c0] : memref<?xf32>
    memref.dealloc %p : memref<?xf32>
    memref.dealloc %q : memref<?xf32>
    %wp = memref.alloc(%n) : memref<?xf32>
    %wq = memref.alloc(%n) : memref<?xf32>
    %wr:2 = scf.while (%x = %wp, %y = %wq)
        : (memref<?xf32>, memref<?xf32>) -> (memref<?xf32>, memref<?xf32>) {
      scf.condition(%flag) %x, %y : memref<?xf32>, memref<?xf32>
    } do {
    ^bb0(%x: memref<?xf32>, %y: memref<?xf32>):
      gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
          threads in (%c1, %c1, %c1) args(%y : memref<?xf32>)
      scf.yield %x, %y : memref<?xf32>, memref<?xf32>
    }
    %wv = memref.load %wr#0[%c0] : memref<?xf32>
    gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%wr#0 : memref<?xf32>)
    memref.dealloc %wp : memref<?xf32>
    memref.dealloc %wq : memref<?xf32>
    return %v, %w : f32, f32
  }
}

// -----

// The runtime's dense products and a tape's pushes of dense buffers touch
// memory on the device (cuBLAS, the driver's copies); any other function
// of the runtime, or a push of a strided view (whose elements the host
// gathers), touches it on the host. An op this pass does not know may be
// either's. Types a view of bytes cannot take (vectors) and alignments
// beyond 256 bytes stay unified.
// CHECK-LABEL: func.func @runtime_calls
// CHECK:         call @gnn_cuda_alloc_device
// CHECK:         call @gnn_rt_gemm
// CHECK:         call @gnn_cuda_alloc_device
// CHECK:         call @gnn_rt_tape_push_f32
// CHECK:         call @gnn_cuda_alloc_host
// CHECK:         memref.subview
// CHECK:         call @gnn_rt_tape_push_f32
// CHECK:         call @gnn_cuda_alloc_host
// CHECK:         call @gnn_rt_transpose
// CHECK:         memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK:         memref.transpose
// CHECK:         memref.alloc(%{{.*}}) : memref<?xvector<4xf32>>
// CHECK:         memref.alloc(%{{.*}}) {alignment = 512 : i64} : memref<?xf32>
// CHECK:         call @gnn_cuda_alloc_device
// CHECK-NOT:     memref.alloc(
// CHECK:         return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%x: memref<?xf32>) kernel { gpu.return }
    gpu.func @fillv(%x: memref<?xvector<4xf32>>) kernel { gpu.return }
  }
  func.func private @gnn_rt_gemm(!llvm.ptr, memref<?x8xf32>, memref<?x8xf32>,
      memref<?x8xf32>, i32, f32, f32) attributes {llvm.emit_c_interface}
  func.func private @gnn_rt_tape_push_f32(!llvm.ptr, memref<*xf32>, i64)
  func.func private @gnn_rt_transpose(memref<?xf32>)
  func.func @runtime_calls(%ctx: !llvm.ptr, %tape: !llvm.ptr, %n: index) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : i64
    %t = arith.constant 0 : i32
    %one = arith.constant 1.0 : f32
    %a = memref.alloc(%n) : memref<?x8xf32>
    call @gnn_rt_gemm(%ctx, %a, %a, %a, %t, %one, %one)
        : (!llvm.ptr, memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>, i32,
           f32, f32) -> ()
    memref.dealloc %a : memref<?x8xf32>
    %b = memref.alloc(%n) : memref<?x8xf32>
    %bu = memref.cast %b : memref<?x8xf32> to memref<*xf32>
    call @gnn_rt_tape_push_f32(%tape, %bu, %c4)
        : (!llvm.ptr, memref<*xf32>, i64) -> ()
    memref.dealloc %b : memref<?x8xf32>
    %c = memref.alloc(%n) : memref<?x8xf32>
    %cs = memref.subview %c[0, 0] [%n, 4] [1, 1]
        : memref<?x8xf32> to memref<?x4xf32, strided<[8, 1]>>
    %cu = memref.cast %cs : memref<?x4xf32, strided<[8, 1]>> to memref<*xf32>
    call @gnn_rt_tape_push_f32(%tape, %cu, %c4)
        : (!llvm.ptr, memref<*xf32>, i64) -> ()
    memref.dealloc %c : memref<?x8xf32>
    %d = memref.alloc(%n) : memref<?xf32>
    call @gnn_rt_transpose(%d) : (memref<?xf32>) -> ()
    memref.dealloc %d : memref<?xf32>
    %d2 = memref.alloc(%n) : memref<?xf32>
    %d2t = memref.transpose %d2 (i) -> (i)
        : memref<?xf32> to memref<?xf32, strided<[1]>>
    memref.dealloc %d2 : memref<?xf32>
    %e = memref.alloc(%n) : memref<?xvector<4xf32>>
    gpu.launch_func @kernels::@fillv blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%e : memref<?xvector<4xf32>>)
    memref.dealloc %e : memref<?xvector<4xf32>>
    %f = memref.alloc(%n) {alignment = 512 : i64} : memref<?xf32>
    gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%f : memref<?xf32>)
    memref.dealloc %f : memref<?xf32>
    %g = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
    gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%g : memref<?xf32>)
    memref.dealloc %g : memref<?xf32>
    return
  }
}

// -----

// A kernel still inline in the host code (not outlined): its loads are the
// device's, so its buffer stays unified rather than taken for the host's.
// CHECK-LABEL: func.func @inline_kernel
// CHECK:         memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK-NOT:     gnn_cuda_alloc
module attributes {gpu.container_module} {
  func.func @inline_kernel(%n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %a = memref.alloc(%n) : memref<?xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %a[%c0] : memref<?xf32>
      memref.store %v, %a[%c0] : memref<?xf32>
      gpu.terminator
    }
    memref.dealloc %a : memref<?xf32>
    return
  }
}
