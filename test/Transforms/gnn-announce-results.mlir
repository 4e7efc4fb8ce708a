// RUN: gnn-opt %s -split-input-file -verify-diagnostics -gnn-announce-results="functions=grad" | FileCheck %s

// Each tensor result is announced right after the op that computes it (an
// op's results in their order), an argument at the entry; scalars are not.
// CHECK-LABEL: func @grad
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<2x3xi64>)
// CHECK-NEXT: gnn.result_ready %[[Y]], 2 : tensor<2x3xi64>
// CHECK-NEXT: %[[A:.*]] = call @last_layer(%[[X]])
// CHECK-NEXT: gnn.result_ready %[[A]], 1 : tensor<4xf32>
// CHECK-NEXT: %[[B:.*]]:2 = call @first_layer(%[[A]])
// CHECK-NEXT: gnn.result_ready %[[B]]#0, 0 : tensor<4xf32>
// CHECK-NEXT: gnn.result_ready %[[B]]#1, 3 : tensor<2xf32>
// CHECK-NEXT: arith.constant
// CHECK-NEXT: return
// CHECK-LABEL: func @other
// CHECK-NOT: gnn.result_ready
func.func private @last_layer(tensor<4xf32>) -> tensor<4xf32>
func.func private @first_layer(tensor<4xf32>) -> (tensor<4xf32>, tensor<2xf32>)
func.func @grad(%x: tensor<4xf32>, %y: tensor<2x3xi64>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<2x3xi64>, tensor<2xf32>, f32) {
  %a = call @last_layer(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b:2 = call @first_layer(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<2xf32>)
  %c = arith.constant 1.0 : f32
  return %b#0, %a, %y, %b#1, %c
      : tensor<4xf32>, tensor<4xf32>, tensor<2x3xi64>, tensor<2xf32>, f32
}
func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = call @last_layer(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// A value returned twice is announced under both numbers; a result computed
// in a loop after the loop; results announced already are not announced
// again (their announcements stay where they are).
// CHECK-LABEL: func @grad
// CHECK: %[[L:.*]] = scf.for
// CHECK: }
// CHECK-NEXT: gnn.result_ready %[[L]], 1 : tensor<4xf32>
// CHECK-NEXT: gnn.result_ready %[[L]], 0 : tensor<4xf32>
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: gnn.result_ready %{{.*}}, 2 : tensor<4xf32>
// CHECK-NEXT: return
func.func @grad(%x: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%t = %x) -> tensor<4xf32> {
    %u = arith.addf %t, %t : tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  }
  gnn.result_ready %l, 0 : tensor<4xf32>
  %m = arith.mulf %l, %l : tensor<4xf32>
  gnn.result_ready %m, 2 : tensor<4xf32>
  return %l, %l, %m : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A function of several blocks is left alone.
// CHECK-LABEL: func @grad
// CHECK-NOT: gnn.result_ready
func.func @grad(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  cf.cond_br %c, ^a, ^b
^a:
  return %x : tensor<4xf32>
^b:
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{gnn-announce-results: no function 'grad' with a body}}
module {
  func.func private @grad(tensor<4xf32>) -> tensor<4xf32>
}
