// Upstream ops inside gnn kernels (upstream-ops.test): complex arithmetic,
// integer powers and poison, which the CPU pipeline lowers since the
// kernels' OpenMP regions crashed MLIR 19's translation on them.
func.func @complex_abs(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %two = arith.constant 2.0 : f32
    %b = arith.mulf %a, %two : f32
    %c = complex.create %a, %b : complex<f32>
    %m = complex.abs %c : complex<f32>
    gnn.yield %m : f32
  } : (tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

func.func @integer_cube(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %ten = arith.constant 10.0 : f32
    %s = arith.mulf %a, %ten : f32
    %i = arith.fptosi %s : f32 to i32
    %three = arith.constant 3 : i32
    %p = math.ipowi %i, %three : i32
    %f = arith.sitofp %p : i32 to f32
    gnn.yield %f : f32
  } : (tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// Poison is a value no result depends on here.
func.func @unused_poison(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %p = ub.poison : f32
    %z = arith.constant 0.0 : f32
    %c = arith.cmpf olt, %a, %z : f32
    %s = arith.select %c, %a, %a : f32
    gnn.yield %s : f32
  } : (tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// Elementwise arith and math on whole tensors.
func.func @tensor_tanh(%x: tensor<?xf32>) -> tensor<?xf32> {
  %s = arith.addf %x, %x : tensor<?xf32>
  %t = math.tanh %s : tensor<?xf32>
  return %t : tensor<?xf32>
}

// TOSA: |x| + x, and the sum of x * x as a [1] tensor.
func.func @tosa_ops(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<1xf32>) {
  %a = tosa.abs %x : (tensor<?xf32>) -> tensor<?xf32>
  %s = tosa.add %a, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %m = tosa.mul %x, %x {shift = 0 : i8} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %r = tosa.reduce_sum %m {axis = 0 : i32} : (tensor<?xf32>) -> tensor<1xf32>
  return %s, %r : tensor<?xf32>, tensor<1xf32>
}

// tensor.concat of x with -x.
func.func @concat(%x: tensor<?xf32>) -> tensor<?xf32> {
  %n = arith.negf %x : tensor<?xf32>
  %c = tensor.concat dim(0) %x, %n : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %c : tensor<?xf32>
}
