// A tensor.from_elements of 2^63 - 1 elements: MLIR 19's parser reported it
// through report_fatal_error; the tools find it first
// (test/Integration/CPU/hostile-inputs.test).
func.func @f(%a: f32) -> tensor<9223372036854775807xf32> {
  %t = tensor.from_elements %a : tensor<9223372036854775807xf32>
  return %t : tensor<9223372036854775807xf32>
}
