// RUN: gnn-opt %s -gnn-read-only-arguments | FileCheck %s

// Tensor arguments of public functions become read-only; other arguments,
// existing markings, private functions and declarations are left alone.
// CHECK-LABEL: func @main
// CHECK-SAME: %{{.*}}: tensor<?x4xf32> {bufferization.writable = false}
// CHECK-SAME: %{{.*}}: index,
// CHECK-SAME: %{{.*}}: tensor<4xf32> {bufferization.writable = true}
func.func @main(%x: tensor<?x4xf32>, %n: index,
                %y: tensor<4xf32> {bufferization.writable = true}) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// CHECK-LABEL: func private @helper
// CHECK-NOT: writable
func.func private @helper(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}
