// A program that reaches into the process that compiles it: it calls libc's
// puts with a null pointer (gnn-run crashed with SIGSEGV) and writes into
// libc's stdout (a crash at exit). hostile-inputs.test.
func.func private @puts(i32) -> i32
memref.global @stdout : memref<4xf32>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 0 : i32
  %r = func.call @puts(%c) : (i32) -> i32
  %g = memref.get_global @stdout : memref<4xf32>
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  memref.store %v, %g[%c0] : memref<4xf32>
  return %x : tensor<4xf32>
}
