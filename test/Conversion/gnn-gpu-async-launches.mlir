// RUN: gnn-opt %s --gnn-gpu-async-launches --split-input-file | FileCheck %s

// Kernels go out back to back, allocation between them included; the host
// waits once, before it loads, and a public function returns without
// waiting (its caller outside the program, the runner, synchronizes after
// the call before it reads the results).
// CHECK-LABEL: func.func @chain
// CHECK:         %[[S0:.*]] = gpu.wait async
// CHECK-NEXT:    gpu.launch_func async [%[[S0]]] @kernels::@scale
// CHECK-NEXT:    memref.alloc
// CHECK-NEXT:    %[[S1:.*]] = gpu.wait async
// CHECK-NEXT:    gpu.launch_func async [%[[S1]]] @kernels::@scale
// CHECK-NEXT:    memref.dealloc
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    memref.store
// CHECK-NEXT:    gpu.wait async
// CHECK-NEXT:    gpu.launch_func async
// CHECK-NEXT:    return
// CHECK:       func.func private @gnn_cuda_wait_for_launches()
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func @chain(%x: memref<?xf32>, %n: index) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    %t = memref.alloc(%n) : memref<?xf32>
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%t : memref<?xf32>)
    memref.dealloc %t : memref<?xf32>
    %v = memref.load %x[%c0] : memref<?xf32>
    memref.store %v, %x[%c1] : memref<?xf32>
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return %v : f32
  }
}

// -----

// A function of the program returns without waiting, and its caller does
// not wait to call it; a dense product goes on the stream after the
// kernels; another runtime call waits, and only once.
// CHECK-LABEL: func.func private @layer
// CHECK:         gpu.launch_func async
// CHECK-NOT:     call @gnn_cuda_wait_for_launches
// CHECK:         return
// CHECK-LABEL: func.func @calls
// CHECK-NEXT:    call @layer
// CHECK-NEXT:    call @gnn_rt_linear
// CHECK-NEXT:    call @layer
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    call @gnn_rt_transpose
// CHECK-NEXT:    call @gnn_rt_transpose
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func private @gnn_rt_linear(memref<?xf32>)
  func.func private @gnn_rt_transpose(memref<?xf32>)
  func.func private @layer(%x: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
  func.func @calls(%x: memref<?xf32>, %n: index) {
    call @layer(%x, %n) : (memref<?xf32>, index) -> ()
    call @gnn_rt_linear(%x) : (memref<?xf32>) -> ()
    call @layer(%x, %n) : (memref<?xf32>, index) -> ()
    call @gnn_rt_transpose(%x) : (memref<?xf32>) -> ()
    call @gnn_rt_transpose(%x) : (memref<?xf32>) -> ()
    return
  }
}

// -----

// A loop's tape: a push queues its copy on the stream after the kernels,
// and creating, popping, asking whether the tape refused and freeing keep
// the host's bookkeeping, so none of them waits; the host waits to load
// from the popped value, which a queued copy wrote.
// CHECK-LABEL: func.func @tape
// CHECK:         call @gnn_rt_tape_create
// CHECK-NEXT:    gpu.wait async
// CHECK-NEXT:    gpu.launch_func async
// CHECK-NEXT:    call @gnn_rt_tape_push_f32
// CHECK-NEXT:    call @gnn_rt_tape_refused
// CHECK-NEXT:    gpu.wait async
// CHECK-NEXT:    gpu.launch_func async
// CHECK-NEXT:    call @gnn_rt_tape_pop_f32_r1
// CHECK-NEXT:    call @gnn_rt_tape_free
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func private @gnn_rt_tape_create(!llvm.ptr) -> !llvm.ptr
  func.func private @gnn_rt_tape_push_f32(!llvm.ptr, memref<?xf32>)
  func.func private @gnn_rt_tape_refused(!llvm.ptr) -> i32
  func.func private @gnn_rt_tape_pop_f32_r1(!llvm.ptr) -> memref<?xf32>
  func.func private @gnn_rt_tape_free(!llvm.ptr)
  func.func @tape(%ctx: !llvm.ptr, %x: memref<?xf32>, %n: index) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %t = call @gnn_rt_tape_create(%ctx) : (!llvm.ptr) -> !llvm.ptr
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    call @gnn_rt_tape_push_f32(%t, %x) : (!llvm.ptr, memref<?xf32>) -> ()
    %refused = call @gnn_rt_tape_refused(%t) : (!llvm.ptr) -> i32
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    %p = call @gnn_rt_tape_pop_f32_r1(%t) : (!llvm.ptr) -> memref<?xf32>
    call @gnn_rt_tape_free(%t) : (!llvm.ptr) -> ()
    %v = memref.load %p[%c0] : memref<?xf32>
    return %v : f32
  }
}

// -----

// A host loop that launches nothing waits once, before it; a loop that
// launches waits in its body, before each host access.
// CHECK-LABEL: func.func @loops
// CHECK:         gpu.launch_func async
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      memref.load
// CHECK-NEXT:      memref.store
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      gpu.wait async
// CHECK-NEXT:      gpu.launch_func async
// CHECK-NEXT:      call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:      memref.load
// CHECK-NEXT:    }
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func @loops(%x: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %x[%i] : memref<?xf32>
      memref.store %v, %x[%c0] : memref<?xf32>
    }
    scf.for %i = %c0 to %n step %c1 {
      gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
          threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
      %v = memref.load %x[%i] : memref<?xf32>
    }
    return
  }
}

// -----

// Without launches or dense products the program is left as it is.
// CHECK-LABEL: func.func @host
// CHECK-NOT:     gnn_cuda_wait_for_launches
module {
  func.func @host(%x: memref<?xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<?xf32>
    return %v : f32
  }
}

// -----

// The stack is the host's alone; the caller's buffer, which kernels may
// share, waits, and an error report, which reads no buffer, does not.
// CHECK-LABEL: func.func @buffers
// CHECK:         gpu.launch_func async
// CHECK-NEXT:    memref.store %{{.*}}, %[[STACK:.*]][
// CHECK-NEXT:    memref.load %[[STACK]][
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      call @gnn_rt_rows_mismatch
// CHECK-NEXT:    }
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.store %{{.*}}, %[[HEAP:.*]][
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func private @gnn_rt_rows_mismatch(i64, i64, i64)
  func.func @buffers(%x: memref<?xf32>, %n: index, %bad: i1,
                     %heap: memref<1xi64>) -> i64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1 : i64
    %stack = memref.alloca() : memref<1xi64>
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    memref.store %one, %stack[%c0] : memref<1xi64>
    %v = memref.load %stack[%c0] : memref<1xi64>
    scf.if %bad {
      func.call @gnn_rt_rows_mismatch(%v, %v, %v) : (i64, i64, i64) -> ()
    }
    memref.store %v, %heap[%c0] : memref<1xi64>
    return %v : i64
  }
}

// -----

// A loop whose only queued work is a dense product still runs its body with
// work in flight: the load after the product waits inside the loop (a
// program whose only queued work is dense products is rewritten too).
// CHECK-LABEL: func.func @product_in_loop
// CHECK:         scf.for
// CHECK-NEXT:      call @gnn_rt_gemm
// CHECK-NEXT:      call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:      memref.load
// CHECK-NEXT:    }
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func private @gnn_rt_gemm(memref<?xf32>)
  func.func @product_in_loop(%x: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {
      func.call @gnn_rt_gemm(%x) : (memref<?xf32>) -> ()
      %v = memref.load %x[%i] : memref<?xf32>
    }
    return
  }
}

// -----

// An op with regions and effects of its own (an atomic update) waits like
// any access.
// CHECK-LABEL: func.func @atomic
// CHECK:         gpu.launch_func async
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.generic_atomic_rmw
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func @atomic(%x: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    %old = memref.generic_atomic_rmw %x[%c0] : memref<?xf32> {
    ^bb0(%cur: f32):
      %one = arith.constant 1.0 : f32
      %new = arith.addf %cur, %one : f32
      memref.atomic_yield %new : f32
    }
    return
  }
}

// -----

// A buffer allocated here is the host's until something else gets it: its
// first value is stored without a wait (a bad-id slot), and read back after
// the kernel that had it only after one.
// CHECK-LABEL: func.func @fresh
// CHECK:         gpu.launch_func async
// CHECK-NEXT:    %[[SLOT:.*]] = memref.alloc
// CHECK-NEXT:    memref.store %{{.*}}, %[[SLOT]][
// CHECK-NEXT:    gpu.wait async
// CHECK-NEXT:    gpu.launch_func async
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.load %[[SLOT]][
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @flag(%x: memref<?xf32>, %s: memref<1xi64>) kernel { gpu.return }
  }
  func.func @fresh(%x: memref<?xf32>, %n: index) -> i64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %max = arith.constant 9223372036854775807 : i64
    %s0 = memref.alloc() : memref<1xi64>
    gpu.launch_func @kernels::@flag blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>, %s0 : memref<1xi64>)
    %slot = memref.alloc() : memref<1xi64>
    memref.store %max, %slot[%c0] : memref<1xi64>
    gpu.launch_func @kernels::@flag blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>, %slot : memref<1xi64>)
    %v = memref.load %slot[%c0] : memref<1xi64>
    return %v : i64
  }
}

// -----

// A private function that touches only the buffers it is passed, launches
// and calls nothing (bufferization's dealloc_helper) and gets from every
// caller buffers no kernel has had, through casts included, is the host's
// alone: neither the call, nor the function, nor the caller's reading of
// what it wrote waits for the kernels in flight.
// CHECK-LABEL: func.func @calls_leaf
// CHECK:         gpu.launch_func async
// CHECK-NOT:     gnn_cuda_wait_for_launches
// CHECK:         call @leaf(
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    return
// CHECK-LABEL: func.func private @leaf
// CHECK-NOT:     gnn_cuda_wait_for_launches
// CHECK:         return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func @calls_leaf(%x: memref<?xf32>, %n: index) -> i1 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %true = arith.constant true
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    %in = memref.alloc() : memref<2xi1>
    memref.store %true, %in[%c0] : memref<2xi1>
    %out = memref.alloc() : memref<2xi1>
    %in_cast = memref.cast %in : memref<2xi1> to memref<?xi1>
    %out_cast = memref.cast %out : memref<2xi1> to memref<?xi1>
    call @leaf(%in_cast, %out_cast) : (memref<?xi1>, memref<?xi1>) -> ()
    %r = memref.load %out[%c0] : memref<2xi1>
    return %r : i1
  }
  func.func private @leaf(%a: memref<?xi1>, %b: memref<?xi1>) {
    %c0 = arith.constant 0 : index
    %v = memref.load %a[%c0] : memref<?xi1>
    memref.store %v, %b[%c0] : memref<?xi1>
    return
  }
}

// -----

// Once one caller hands it a buffer a kernel has had, it is an ordinary
// function of the program: it waits before it touches its buffers, and so
// does a caller that reads what it wrote.
// CHECK-LABEL: func.func @shares_with_kernel
// CHECK:         gpu.launch_func async
// CHECK:         call @not_leaf(
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.load
// CHECK-LABEL: func.func private @not_leaf
// CHECK:         call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.load
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @flag(%s: memref<2xi1>) kernel { gpu.return }
  }
  func.func @shares_with_kernel(%n: index) -> i1 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %in = memref.alloc() : memref<2xi1>
    gpu.launch_func @kernels::@flag blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%in : memref<2xi1>)
    %out = memref.alloc() : memref<2xi1>
    %in_cast = memref.cast %in : memref<2xi1> to memref<?xi1>
    %out_cast = memref.cast %out : memref<2xi1> to memref<?xi1>
    call @not_leaf(%in_cast, %out_cast) : (memref<?xi1>, memref<?xi1>) -> ()
    %r = memref.load %out[%c0] : memref<2xi1>
    return %r : i1
  }
  func.func private @not_leaf(%a: memref<?xi1>, %b: memref<?xi1>) {
    %c0 = arith.constant 0 : index
    %v = memref.load %a[%c0] : memref<?xi1>
    memref.store %v, %b[%c0] : memref<?xi1>
    return
  }
}

// -----

// A function taken by address may be called with anything: not a leaf.
// CHECK-LABEL: func.func private @by_address
// CHECK:         call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.load
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func @takes_address(%x: memref<?xf32>, %n: index)
      -> ((memref<?xi1>) -> i1) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    %f = func.constant @by_address : (memref<?xi1>) -> i1
    return %f : (memref<?xi1>) -> i1
  }
  func.func private @by_address(%a: memref<?xi1>) -> i1 {
    %c0 = arith.constant 0 : index
    %v = memref.load %a[%c0] : memref<?xi1>
    return %v : i1
  }
}

// -----

// A function's copy of a constant (gnn-globals-to-buffers) goes into a
// buffer no kernel has: neither the copy nor a read of the constant waits;
// the kernel that gets the copy does not either.
// CHECK-LABEL: func.func @constant_copy
// CHECK:         gpu.launch_func async
// CHECK-NOT:     gnn_cuda_wait_for_launches
// CHECK:         memref.copy
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    gpu.wait async
// CHECK-NEXT:    gpu.launch_func async
// CHECK-NEXT:    return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
    gpu.func @use(%c: memref<4xf32>) kernel { gpu.return }
  }
  memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  func.func @constant_copy(%x: memref<?xf32>, %n: index) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    %g = memref.get_global @table : memref<4xf32>
    %copy = memref.alloc() : memref<4xf32>
    memref.copy %g, %copy : memref<4xf32> to memref<4xf32>
    %v = memref.load %g[%c0] : memref<4xf32>
    gpu.launch_func @kernels::@use blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%copy : memref<4xf32>)
    return %v : f32
  }
}

// -----

// A branch one of whose ways touches nothing (a copy taken only for odd
// buffers) waits inside the way that touches memory, not before the
// branch: the other way costs no wait, and the next load waits (a no-op
// at run time after the copy's wait). A branch whose every way touches
// memory waits once before it.
// CHECK-LABEL: func.func @rare_copy
// CHECK:         gpu.launch_func async
// CHECK-NEXT:    %[[Y:.*]] = scf.if
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      memref.alloc
// CHECK-NEXT:      func.call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:      memref.copy
// CHECK:         call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.load %[[Y]]
// CHECK-LABEL: func.func private @both_ways
// CHECK:         gpu.launch_func async
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    scf.if
// CHECK-NOT:     call @gnn_cuda_wait_for_launches
// CHECK:         return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func @rare_copy(%x: memref<?xf32>, %n: index, %odd: i1) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    %y = scf.if %odd -> (memref<?xf32>) {
      scf.yield %x : memref<?xf32>
    } else {
      %t = memref.alloc(%n) : memref<?xf32>
      memref.copy %x, %t : memref<?xf32> to memref<?xf32>
      scf.yield %t : memref<?xf32>
    }
    %v = memref.load %y[%c0] : memref<?xf32>
    return %v : f32
  }
  func.func private @both_ways(%x: memref<?xf32>, %n: index, %c: i1) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    %v = scf.if %c -> (f32) {
      %a = memref.load %x[%c0] : memref<?xf32>
      scf.yield %a : f32
    } else {
      %b = memref.load %x[%c1] : memref<?xf32>
      scf.yield %b : f32
    }
    return %v : f32
  }
}

// -----

// Buffers no kernel writes are read without a wait: a public function's
// argument the program never writes (gnn.read_only), or a view of one; a
// private function's argument that every call passes such an argument, or
// a buffer of the caller's that no kernel ever has (a layer's dropout seed,
// stored by the caller, only read by the callee). A private function's
// argument that some call passes a kernel's buffer still waits, and so
// does a public function's marked argument where the module calls it with
// one (its marking says it writes none, not that no kernel does).
// CHECK-LABEL: func.func @step
// CHECK:         gpu.launch_func async
// CHECK-NEXT:    memref.load %[[RNG:arg1]]
// CHECK-NEXT:    memref.subview %[[RNG]]
// CHECK-NEXT:    memref.load
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.load %arg2
// CHECK-LABEL: func.func private @layer
// CHECK:         gpu.launch_func async
// CHECK-NEXT:    memref.load %arg0
// CHECK-NOT:     call @gnn_cuda_wait_for_launches
// CHECK:         return
// CHECK-LABEL: func.func private @mixed
// CHECK:         gpu.launch_func async
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.load %arg0
// CHECK-LABEL: func.func @entry
// CHECK:         gpu.launch_func async
// CHECK-NEXT:    call @gnn_cuda_wait_for_launches() : () -> ()
// CHECK-NEXT:    memref.load %arg0
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel { gpu.return }
  }
  func.func @step(%x: memref<?xf32> {gnn.read_only},
                  %rng: memref<2xi64> {gnn.read_only}, %y: memref<?xf32>,
                  %n: index) -> (i64, i64, f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%y : memref<?xf32>)
    %seed = memref.load %rng[%c0] : memref<2xi64>
    %tail = memref.subview %rng[1] [1] [1]
        : memref<2xi64> to memref<1xi64, strided<[1], offset: 1>>
    %offset = memref.load %tail[%c0] : memref<1xi64, strided<[1], offset: 1>>
    %v = memref.load %y[%c0] : memref<?xf32>
    %t = memref.alloc() : memref<2xi64>
    memref.store %seed, %t[%c0] : memref<2xi64>
    %a = call @layer(%rng, %y, %n) : (memref<2xi64>, memref<?xf32>, index) -> i64
    %b = call @layer(%t, %y, %n) : (memref<2xi64>, memref<?xf32>, index) -> i64
    memref.dealloc %t : memref<2xi64>
    %c = call @mixed(%x, %n) : (memref<?xf32>, index) -> f32
    %d = call @mixed(%y, %n) : (memref<?xf32>, index) -> f32
    %e = call @entry(%y, %n) : (memref<?xf32>, index) -> f32
    return %seed, %offset, %v : i64, i64, f32
  }
  func.func private @layer(%r: memref<2xi64>, %y: memref<?xf32>,
                           %n: index) -> i64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%y : memref<?xf32>)
    %s = memref.load %r[%c0] : memref<2xi64>
    return %s : i64
  }
  func.func private @mixed(%r: memref<?xf32>, %n: index) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %y = memref.alloc(%n) : memref<?xf32>
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%y : memref<?xf32>)
    %s = memref.load %r[%c0] : memref<?xf32>
    return %s : f32
  }
  func.func @entry(%r: memref<?xf32> {gnn.read_only}, %n: index) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %y = memref.alloc(%n) : memref<?xf32>
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%y : memref<?xf32>)
    %s = memref.load %r[%c0] : memref<?xf32>
    return %s : f32
  }
}
