// RUN: gnn-opt %s -split-input-file -verify-diagnostics -gnn-read-only-arguments | FileCheck %s

// Tensor arguments of public functions become read-only (also as
// gnn.read_only, which bufferization keeps); other arguments, existing
// markings, private functions and declarations are left alone.
// CHECK-LABEL: func @main
// CHECK-SAME: %{{.*}}: tensor<?x4xf32> {bufferization.writable = false, gnn.read_only}
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

// -----

// A result that updates an argument must name a writable tensor argument of
// its type (the program writes the caller's buffer only there).
// CHECK-LABEL: func @updates
// CHECK-SAME: {bufferization.writable = true, gnn.name = "cache"}
func.func @updates(%c: tensor<?x4xf32> {bufferization.writable = true, gnn.name = "cache"})
    -> (tensor<?x4xf32> {gnn.updates = "cache"}) {
  return %c : tensor<?x4xf32>
}

// -----

// expected-error @below {{result #0 updates argument "cache", which is not a writable tensor of its type}}
func.func @updates_read_only(%c: tensor<?x4xf32> {gnn.name = "cache"})
    -> (tensor<?x4xf32> {gnn.updates = "cache"}) {
  return %c : tensor<?x4xf32>
}

// -----

// expected-error @below {{result #0 updates argument "cache", which is not a writable tensor of its type}}
func.func @updates_other_type(%c: tensor<?x8xf32> {bufferization.writable = true, gnn.name = "cache"})
    -> (tensor<?x4xf32> {gnn.updates = "cache"}) {
  %e = tensor.empty() : tensor<2x4xf32>
  %d = tensor.cast %e : tensor<2x4xf32> to tensor<?x4xf32>
  return %d : tensor<?x4xf32>
}
