// A linalg.transpose whose permutation list is not closed: MLIR 19's parser
// of the op crashed on it (SIGSEGV; the same for linalg.broadcast and
// linalg.reduce and any list that is not integers in brackets).
// hostile-inputs.test.
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%b : tensor<3x2xf32>) permutation = [1, 0
  return %t : tensor<3x2xf32>
}
