// Fills a 16 MB stack buffer and sums it: gnn-run crashed (SIGSEGV, a
// stack overflow) before gnn-heap-large-allocas moved it to the heap
// (test/Integration/CPU/hostile-inputs.test).
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %a = memref.alloca() : memref<4000000xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %n = arith.constant 4000000 : index
  %v = tensor.extract %x[%c0] : tensor<8xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %v, %a[%i] : memref<4000000xf32>
  }
  %z = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> f32 {
    %w = memref.load %a[%i] : memref<4000000xf32>
    %r = arith.addf %acc, %w : f32
    scf.yield %r : f32
  }
  %t = tensor.insert %s into %x[%c5] : tensor<8xf32>
  return %t : tensor<8xf32>
}
