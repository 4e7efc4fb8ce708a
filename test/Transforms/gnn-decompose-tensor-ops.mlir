// RUN: gnn-opt %s -gnn-decompose-tensor-ops | FileCheck %s

// tensor.concat, which one-shot bufferization has no rule for, becomes an
// empty tensor of the summed size with each operand inserted in turn.
// CHECK-LABEL: func @concat
// CHECK-NOT: tensor.concat
// CHECK: tensor.empty
// CHECK: tensor.insert_slice %arg0
// CHECK: tensor.insert_slice %arg1
func.func @concat(%a: tensor<?x4xf32>, %b: tensor<3x4xf32>) -> tensor<?x4xf32> {
  %c = tensor.concat dim(0) %a, %b
      : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  return %c : tensor<?x4xf32>
}

// Other tensor ops stay as they are.
// CHECK-LABEL: func @others
// CHECK: tensor.extract_slice
func.func @others(%a: tensor<?xf32>) -> tensor<2xf32> {
  %s = tensor.extract_slice %a[0] [2] [1] : tensor<?xf32> to tensor<2xf32>
  return %s : tensor<2xf32>
}
