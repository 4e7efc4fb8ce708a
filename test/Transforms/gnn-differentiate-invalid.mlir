// RUN: gnn-opt %s -gnn-differentiate -split-input-file -verify-diagnostics

func.func private @helper(tensor<?x4xf32>) -> tensor<?x4xf32>

func.func @no_rule(%x: tensor<?x4xf32> {gnn.differentiable}) -> tensor<f32> {
  // expected-error @+1 {{'func.call' op calls 'helper', which has no body of one block to differentiate}}
  %y = func.call @helper(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %l = gnn.sum_to %y : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @slices(%x: tensor<?x4xf32> {gnn.differentiable}, %y: tensor<?x4xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'tensor.insert_slice' op has no adjoint: gnn-differentiate cannot take gradients through it}}
  %r = tensor.insert_slice %x into %y[%c0, 0] [%c1, 4] [1, 1]
      : tensor<?x4xf32> into tensor<?x4xf32>
  %l = gnn.sum_to %r : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @no_derivative(%x: tensor<?x4xf32> {gnn.differentiable}) -> tensor<f32> {
  %y = gnn.apply_nodes(%x) {
  ^bb0(%e: f32):
    // expected-error @+1 {{'math.cbrt' op has no derivative (in an element body that gnn-differentiate differentiates)}}
    %t = math.cbrt %e : f32
    gnn.yield %t : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %l = gnn.sum_to %y : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{'func.func' op cannot be differentiated: its first result must be the loss, a float tensor of one element}}
func.func @not_scalar(%x: tensor<?x4xf32> {gnn.differentiable}) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{'func.func' op cannot be differentiated into 'taken_grad': the module already has that symbol}}
func.func @taken(%x: tensor<?x4xf32> {gnn.differentiable}) -> tensor<f32> {
  %l = gnn.sum_to %x : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
func.func private @taken_grad()

// -----

func.func @recursive(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'func.call' op is a recursive call of 'recursive', which gnn-differentiate cannot take}}
  %y = func.call @recursive(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

func.func @calls_recursive(%x: tensor<?x4xf32> {gnn.differentiable}) -> tensor<f32> {
  %y = func.call @recursive(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %l = gnn.sum_to %y : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Gradients flow through gnn ops, which take rows of at most 2^24 elements.
// expected-error @+1 {{'func.func' op cannot be differentiated with respect to argument #0 ('tensor<1x16777217xf32>'): its rows have more than 16777216 elements, more than the gnn ops that compute gradients take}}
func.func @wide(%w: tensor<1x16777217xf32> {gnn.differentiable}) -> tensor<f32> {
  %c = tensor.collapse_shape %w [[0, 1]] : tensor<1x16777217xf32> into tensor<16777217xf32>
  %l = gnn.sum_to %c : tensor<16777217xf32> -> tensor<f32>
  return %l : tensor<f32>
}
