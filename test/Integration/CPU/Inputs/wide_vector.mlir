// Squares and sums a vector<100000xf32>: LLVM took 56 s to compile it (time
// about quadratic in the lanes); gnn-run refuses it
// (test/Integration/CPU/hostile-inputs.test).
func.func @main(%x: tensor<100000xf32>) -> tensor<1xf32> {
  %c0 = arith.constant 0 : index
  %p = arith.constant 0.0 : f32
  %v = vector.transfer_read %x[%c0], %p : tensor<100000xf32>, vector<100000xf32>
  %w = arith.mulf %v, %v : vector<100000xf32>
  %r = vector.reduction <add>, %w : vector<100000xf32> into f32
  %t = tensor.from_elements %r : tensor<1xf32>
  return %t : tensor<1xf32>
}
