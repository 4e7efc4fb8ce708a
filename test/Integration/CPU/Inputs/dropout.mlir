// Dropout of one tensor at rate 0.3 and, from the next offsets, of a
// second one at rate 0.75, a third (rows wider than two windows of 32
// elements) at 0.1 and a vector (an element at a time, as in GPU kernels)
// at 0.5, with the seed and first offset given at run time.
func.func @main(%x: tensor<?x3x5xf32>, %w: tensor<?x7xf32>,
                %u: tensor<?x70xf32>, %s: tensor<?xf32>, %rng: tensor<2xi64>)
    -> (tensor<?x3x5xf32>, tensor<?x7xf32>, tensor<?x70xf32>, tensor<?xf32>) {
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
  %c7 = arith.constant 7 : i64
  %usedW = arith.muli %size, %c7 : i64
  %third = arith.addi %next, %usedW : i64
  %c = gnn.dropout %u, %seed, %third rate(0.1) : tensor<?x70xf32>
  %c70 = arith.constant 70 : i64
  %usedU = arith.muli %size, %c70 : i64
  %fourth = arith.addi %third, %usedU : i64
  %d = gnn.dropout %s, %seed, %fourth rate(0.5) : tensor<?xf32>
  return %a, %b, %c, %d
      : tensor<?x3x5xf32>, tensor<?x7xf32>, tensor<?x70xf32>, tensor<?xf32>
}
