// Features that are slices of a larger tensor: @within_rows takes q, k and
// v from inside each row of x ([n, 2, 25]: items 1-8, 9-16 and 17-24, so
// that their items are not row-major in x's buffer and are read from a
// copy), @rank_reduced from one index of qkv's second dim ([n, 3, 2, 8]:
// row-major items, read in place), @separate as inputs of their own. Each
// returns the fused attention and an element-wise product of k and v,
// the ops reading the slices themselves.

func.func @within_rows(%g: !gnn.graph<complete>, %x: tensor<?x2x25xf32>)
    -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x2x25xf32>
  %q = tensor.extract_slice %x[0, 0, 1] [%n, 2, 8] [1, 1, 1]
      : tensor<?x2x25xf32> to tensor<?x2x8xf32>
  %k = tensor.extract_slice %x[0, 0, 9] [%n, 2, 8] [1, 1, 1]
      : tensor<?x2x25xf32> to tensor<?x2x8xf32>
  %v = tensor.extract_slice %x[0, 0, 17] [%n, 2, 8] [1, 1, 1]
      : tensor<?x2x25xf32> to tensor<?x2x8xf32>
  %a = gnn.fused_attention %g, %q, %k, %v scale(3.535534e-01) normalize
      : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>,
         tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %p = gnn.apply_nodes(%k, %v) {
  ^bb0(%a0: f32, %b0: f32):
    %m = arith.mulf %a0, %b0 : f32
    gnn.yield %m : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  return %a, %p : tensor<?x2x8xf32>, tensor<?x2x8xf32>
}

func.func @rank_reduced(%g: !gnn.graph<complete>, %qkv: tensor<?x3x2x8xf32>)
    -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %qkv, %c0 : tensor<?x3x2x8xf32>
  %q = tensor.extract_slice %qkv[0, 0, 0, 0] [%n, 1, 2, 8] [1, 1, 1, 1]
      : tensor<?x3x2x8xf32> to tensor<?x2x8xf32>
  %k = tensor.extract_slice %qkv[0, 1, 0, 0] [%n, 1, 2, 8] [1, 1, 1, 1]
      : tensor<?x3x2x8xf32> to tensor<?x2x8xf32>
  %v = tensor.extract_slice %qkv[0, 2, 0, 0] [%n, 1, 2, 8] [1, 1, 1, 1]
      : tensor<?x3x2x8xf32> to tensor<?x2x8xf32>
  %a = gnn.fused_attention %g, %q, %k, %v scale(3.535534e-01) normalize
      : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>,
         tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %p = gnn.apply_nodes(%k, %v) {
  ^bb0(%a0: f32, %b0: f32):
    %m = arith.mulf %a0, %b0 : f32
    gnn.yield %m : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  return %a, %p : tensor<?x2x8xf32>, tensor<?x2x8xf32>
}

func.func @separate(%g: !gnn.graph<complete>, %q: tensor<?x2x8xf32>,
                    %k: tensor<?x2x8xf32>, %v: tensor<?x2x8xf32>)
    -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>) {
  %a = gnn.fused_attention %g, %q, %k, %v scale(3.535534e-01) normalize
      : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>,
         tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %p = gnn.apply_nodes(%k, %v) {
  ^bb0(%a0: f32, %b0: f32):
    %m = arith.mulf %a0, %b0 : f32
    gnn.yield %m : f32
  } : (tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  return %a, %p : tensor<?x2x8xf32>, tensor<?x2x8xf32>
}
