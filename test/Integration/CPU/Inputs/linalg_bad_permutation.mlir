// A linalg.transpose in generic form whose permutation is no permutation:
// MLIR 19's verifier of the op read the input's shape at entry 4294967296
// (SIGSEGV). hostile-inputs.test.
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %t = "linalg.transpose"(%a, %b) <{permutation = array<i64: 1, 4294967296>}> ({
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}
