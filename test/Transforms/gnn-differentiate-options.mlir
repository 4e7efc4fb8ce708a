// RUN: gnn-opt %s -gnn-differentiate="functions=plain all-float-arguments suffix=_d" | FileCheck %s --check-prefix=OPTIONS
// RUN: not gnn-opt %s -gnn-differentiate="functions=missing" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not gnn-opt %s -gnn-differentiate="functions=plain" 2>&1 | FileCheck %s --check-prefix=UNMARKED

// Options: only the listed function, every float argument, another suffix;
// ids and graphs are not differentiated.
// OPTIONS-LABEL: func @plain_d(
// OPTIONS-SAME: -> (tensor<f32>, tensor<?x3xf32> {gnn.name = "grad.arg1"})
// OPTIONS: gnn.scatter_rows %{{.*}} into %{{.*}}[%{{.*}}] add
// OPTIONS-NOT: func @other_d
func.func @plain(%ids: tensor<?xindex>, %x: tensor<?x3xf32>) -> tensor<f32> {
  %r = gnn.gather_rows %x[%ids] : (tensor<?x3xf32>, tensor<?xindex>) -> tensor<?x3xf32>
  %l = gnn.sum_to %r : tensor<?x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func @other(%x: tensor<?x3xf32> {gnn.differentiable}) -> tensor<f32> {
  %l = gnn.sum_to %x : tensor<?x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// MISSING: error: gnn-differentiate: no function 'missing'
// UNMARKED: error: 'func.func' op has no differentiable argument (mark one gnn.differentiable or use all-float-arguments)
