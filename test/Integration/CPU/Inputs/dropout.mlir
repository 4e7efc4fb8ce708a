// Dropout of one tensor at rate 0.3 and, from the next offsets, of a
// second one at rate 0.75, with the seed and first offset given at run time.
func.func @main(%x: tensor<?x3x5xf32>, %w: tensor<?x7xf32>, %rng: tensor<2xi64>)
    -> (tensor<?x3x5xf32>, tensor<?x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %seed = tensor.extract %rng[%c0] : tensor<2xi64>
  %offset = tensor.extract %rng[%c1] : tensor<2xi64>
  %a = gnn.dropout %x, %seed, %offset rate(0.3) : tensor<?x3x5xf32>
  %n = tensor.dim %x, %c0 : tensor<?x3x5xf32>
  %size = arith.index_cast %n : index to i64
  %c15 = arith.constant 15 : i64
  %used = arith.muli %size, %c15 : i64
  %next = arith.addi %offset, %used : i64
  %b = gnn.dropout %w, %seed, %next rate(0.75) : tensor<?x7xf32>
  return %a, %b : tensor<?x3x5xf32>, tensor<?x7xf32>
}
