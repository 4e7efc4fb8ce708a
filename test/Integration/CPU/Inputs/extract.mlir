// Reads the element of %x at the index %at[0]: nothing in the program
// checks the index, so an index past the end is an out-of-bounds read that
// only checked mode (--checked, GNNC_CHECKED=1) stops.
func.func @main(%x: tensor<?xf32>, %at: tensor<1xindex>) -> tensor<1xf32> {
  %c0 = arith.constant 0 : index
  %i = tensor.extract %at[%c0] : tensor<1xindex>
  %v = tensor.extract %x[%i] : tensor<?xf32>
  %r = tensor.from_elements %v : tensor<1xf32>
  return %r : tensor<1xf32>
}
