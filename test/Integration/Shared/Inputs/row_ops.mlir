// The ops that reduce along rows (on a GPU, a warp per row): layer norm,
// its gradient with and without an addend, log-softmax in f32 and f64, and
// sums within rows of [N, W] and [N, 3, W], on rows of any width.
func.func @main(%x: tensor<?x?xf32>, %w: tensor<?xf32>, %b: tensor<?xf32>,
                %dy: tensor<?x?xf32>, %a: tensor<?x?xf32>,
                %x64: tensor<?x?xf64>, %h: tensor<?x3x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>,
        tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf64>, tensor<?x1xf32>,
        tensor<?x3x1xf32>) {
  %n = gnn.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %dx, %dxh = gnn.layer_norm_grad %x, %w, %dy eps(1.0e-05)
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>)
      -> (tensor<?x?xf32>, tensor<?x?xf32>)
  %dxa, %dxha = gnn.layer_norm_grad %x, %w, %dy plus %a eps(1.0e-05)
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
      -> (tensor<?x?xf32>, tensor<?x?xf32>)
  %l = gnn.log_softmax %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %l64 = gnn.log_softmax %x64 : (tensor<?x?xf64>) -> tensor<?x?xf64>
  %s = gnn.sum_to %x : tensor<?x?xf32> -> tensor<?x1xf32>
  %s3 = gnn.sum_to %h : tensor<?x3x?xf32> -> tensor<?x3x1xf32>
  return %n, %dx, %dxh, %dxa, %dxha, %l, %l64, %s, %s3
      : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>,
        tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf64>, tensor<?x1xf32>,
        tensor<?x3x1xf32>
}
