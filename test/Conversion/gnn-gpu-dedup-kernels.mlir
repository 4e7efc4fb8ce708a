// RUN: gnn-opt %s --gnn-gpu-dedup-kernels --allow-unregistered-dialect | FileCheck %s

// @b computes what @a does (other names, values and locations): its launch
// goes to @a and its module is gone. @c adds another constant, @d has other
// attributes (a known block size), @e takes another type: all stay. @f is
// @a's too, but something besides a launch names its module, so it stays
// while its launch goes to @a.
// CHECK:       gpu.module @a
// CHECK-NOT:   gpu.module @b
// CHECK:       gpu.module @c
// CHECK:       gpu.module @d
// CHECK:       gpu.module @e
// CHECK:       gpu.module @f
// CHECK-LABEL: func.func @launches
// CHECK:         gpu.launch_func @a::@a {{.*}} args(%{{.*}} : memref<?xf32>)
// CHECK:         gpu.launch_func @a::@a {{.*}} args(%{{.*}} : memref<?xf32>)
// CHECK:         gpu.launch_func @c::@c
// CHECK:         gpu.launch_func @d::@d
// CHECK:         gpu.launch_func @e::@e
// CHECK:         gpu.launch_func @a::@a
// CHECK:         "test.names"() {module = @f}
module attributes {gpu.container_module} {
  gpu.module @a {
    gpu.func @a(%x: memref<?xf32>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %x[%i] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @b {
    gpu.func @b(%y: memref<?xf32>) kernel {
      %t = gpu.thread_id x loc("elsewhere":3:4)
      %v = arith.constant 1.0 : f32
      memref.store %v, %y[%t] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @c {
    gpu.func @c(%x: memref<?xf32>) kernel {
      %i = gpu.thread_id x
      %two = arith.constant 2.0 : f32
      memref.store %two, %x[%i] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @d {
    gpu.func @d(%x: memref<?xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %x[%i] : memref<?xf32>
      gpu.return
    }
  }
  gpu.module @e {
    gpu.func @e(%x: memref<?xf64>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f64
      memref.store %one, %x[%i] : memref<?xf64>
      gpu.return
    }
  }
  gpu.module @f {
    gpu.func @f(%x: memref<?xf32>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %x[%i] : memref<?xf32>
      gpu.return
    }
  }
  func.func @launches(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf64>,
                      %n: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @a::@a blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @b::@b blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%y : memref<?xf32>)
    gpu.launch_func @c::@c blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @d::@d blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @e::@e blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%z : memref<?xf64>)
    gpu.launch_func @f::@f blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%y : memref<?xf32>)
    "test.names"() {module = @f} : () -> ()
    return
  }
}
