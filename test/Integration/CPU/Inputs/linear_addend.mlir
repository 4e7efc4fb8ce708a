// Dense layers with addends: written with `plus` (@fused) and as sums that
// gnn-fuse-addends folds into the layers unless --no-fuse (@summed).
//   r = h W^T + b + x,  t = r V + h,  loss = sum(tanh(t))

func.func @fused(%x: tensor<?x24xf32>, %h: tensor<?x24xf32>,
                 %w: tensor<24x24xf32>, %b: tensor<24xf32>,
                 %v: tensor<24x24xf32>) -> (tensor<f32>, tensor<?x24xf32>) {
  %r = gnn.linear %h, %w, %b plus %x
      : (tensor<?x24xf32>, tensor<24x24xf32>, tensor<24xf32>, tensor<?x24xf32>)
      -> tensor<?x24xf32>
  %t = gnn.linear %r, %v transpose_weight plus %h
      : (tensor<?x24xf32>, tensor<24x24xf32>, tensor<?x24xf32>)
      -> tensor<?x24xf32>
  %a = gnn.apply_nodes(%t) {
  ^bb0(%e: f32):
    %y = math.tanh %e : f32
    gnn.yield %y : f32
  } : (tensor<?x24xf32>) -> tensor<?x24xf32>
  %l = gnn.sum_to %a : tensor<?x24xf32> -> tensor<f32>
  return %l, %t : tensor<f32>, tensor<?x24xf32>
}

func.func @summed(%x: tensor<?x24xf32>, %h: tensor<?x24xf32>,
                  %w: tensor<24x24xf32>, %b: tensor<24xf32>,
                  %v: tensor<24x24xf32>) -> (tensor<f32>, tensor<?x24xf32>) {
  %p = gnn.linear %h, %w, %b
      : (tensor<?x24xf32>, tensor<24x24xf32>, tensor<24xf32>) -> tensor<?x24xf32>
  %r = gnn.apply_nodes(%p, %x) {
  ^bb0(%e: f32, %f: f32):
    %s = arith.addf %e, %f : f32
    gnn.yield %s : f32
  } : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
  %q = gnn.linear %r, %v transpose_weight
      : (tensor<?x24xf32>, tensor<24x24xf32>) -> tensor<?x24xf32>
  %t = gnn.apply_nodes(%h, %q) {
  ^bb0(%e: f32, %f: f32):
    %s = arith.addf %e, %f : f32
    gnn.yield %s : f32
  } : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
  %a = gnn.apply_nodes(%t) {
  ^bb0(%e: f32):
    %y = math.tanh %e : f32
    gnn.yield %y : f32
  } : (tensor<?x24xf32>) -> tensor<?x24xf32>
  %l = gnn.sum_to %a : tensor<?x24xf32> -> tensor<f32>
  return %l, %t : tensor<f32>, tensor<?x24xf32>
}

// A layer norm on a residual path: the input's gradient is the norm's
// backward plus the residual's, which gnn-fuse-addends folds into
// gnn.layer_norm_grad (unless --no-fuse). w and v are not used (their
// gradients are zeros): the arguments are those of the other functions.
//   t = layer_norm(h; b, b) + h,  loss = sum(tanh(t) * x)
func.func @norm_residual(%x: tensor<?x24xf32>, %h: tensor<?x24xf32>,
                         %w: tensor<24x24xf32>, %b: tensor<24xf32>,
                         %v: tensor<24x24xf32>) -> tensor<f32> {
  %n = gnn.layer_norm %h, %b, %b eps(1.0e-05)
      : (tensor<?x24xf32>, tensor<24xf32>, tensor<24xf32>) -> tensor<?x24xf32>
  %t = gnn.apply_nodes(%n, %h) {
  ^bb0(%e: f32, %f: f32):
    %s = arith.addf %e, %f : f32
    gnn.yield %s : f32
  } : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
  %a = gnn.apply_nodes(%t, %x) {
  ^bb0(%e: f32, %f: f32):
    %y = math.tanh %e : f32
    %z = arith.mulf %y, %f : f32
    gnn.yield %z : f32
  } : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
  %l = gnn.sum_to %a : tensor<?x24xf32> -> tensor<f32>
  return %l : tensor<f32>
}
