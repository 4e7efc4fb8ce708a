// Reads the element of %x at the index %at[0] through a view: the guards
// of the default mode check tensor indices and slices, not views of
// buffers, so an index past the end is an out-of-bounds read that only
// checked mode (--checked, GNNC_CHECKED=1) stops.
func.func @main(%x: tensor<?xf32>, %at: tensor<1xindex>) -> tensor<1xf32> {
  %c0 = arith.constant 0 : index
  %i = tensor.extract %at[%c0] : tensor<1xindex>
  %m = bufferization.to_memref %x : memref<?xf32>
  %v = memref.subview %m[%i] [1] [1] : memref<?xf32> to memref<1xf32, strided<[1], offset: ?>>
  %e = memref.load %v[%c0] : memref<1xf32, strided<[1], offset: ?>>
  %r = tensor.from_elements %e : tensor<1xf32>
  return %r : tensor<1xf32>
}
