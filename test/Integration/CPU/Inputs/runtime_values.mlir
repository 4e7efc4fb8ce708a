// Ops that are valid only for some run-time values, each fed from the
// inputs (runtime-values.test).

// Quotients and remainders of a[i] by b[i], signed and unsigned.
func.func @divide(%a: tensor<?xi64>, %b: tensor<?xi64>) -> tensor<?x6xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %a, %c0 : tensor<?xi64>
  %init = tensor.empty(%n) : tensor<?x6xi64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<?x6xi64> {
    %x = tensor.extract %a[%i] : tensor<?xi64>
    %y = tensor.extract %b[%i] : tensor<?xi64>
    %q = arith.divsi %x, %y : i64
    %m = arith.remsi %x, %y : i64
    %f = arith.floordivsi %x, %y : i64
    %c = arith.ceildivsi %x, %y : i64
    %u = arith.divui %x, %y : i64
    %v = arith.remui %x, %y : i64
    %row = tensor.from_elements %q, %m, %f, %c, %u, %v : tensor<6xi64>
    %next = tensor.insert_slice %row into %acc[%i, 0] [1, 6] [1, 1] : tensor<6xi64> into tensor<?x6xi64>
    scf.yield %next : tensor<?x6xi64>
  }
  return %r : tensor<?x6xi64>
}

// x gathered at the indices `at` (any values).
func.func @gather(%x: tensor<?xf32>, %at: tensor<?xindex>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %at, %c0 : tensor<?xindex>
  %init = tensor.empty(%n) : tensor<?xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<?xf32> {
    %j = tensor.extract %at[%i] : tensor<?xindex>
    %v = tensor.extract %x[%j] : tensor<?xf32>
    %next = tensor.insert %v into %acc[%i] : tensor<?xf32>
    scf.yield %next : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}

// x with v written at index at[0].
func.func @scatter(%x: tensor<?xf32>, %at: tensor<1xindex>, %v: tensor<1xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %j = tensor.extract %at[%c0] : tensor<1xindex>
  %e = tensor.extract %v[%c0] : tensor<1xf32>
  %r = tensor.insert %e into %x[%j] : tensor<?xf32>
  return %r : tensor<?xf32>
}

// The rows of a 2-d x from p[0] with p[1] rows and stride p[2]; and x with
// the rows of y written there.
func.func @slice(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>, %p: tensor<3xindex>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %o = tensor.extract %p[%c0] : tensor<3xindex>
  %n = tensor.extract %p[%c1] : tensor<3xindex>
  %s = tensor.extract %p[%c2] : tensor<3xindex>
  %cols = tensor.dim %x, %c1 : tensor<?x?xf32>
  %rows = tensor.extract_slice %x[%o, 0] [%n, %cols] [%s, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %put = tensor.insert_slice %y into %x[%o, 0] [%n, %cols] [%s, 1] : tensor<?x?xf32> into tensor<?x?xf32>
  return %rows, %put : tensor<?x?xf32>, tensor<?x?xf32>
}

// x reshaped to the shape given.
func.func @reshape(%x: tensor<?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  %r = tensor.reshape %x(%shape) : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// n[0] copies of 1.5, and an n[0] x n[1] matrix of zeros.
func.func @fill(%n: tensor<2xindex>) -> (tensor<?xf32>, tensor<?x?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.extract %n[%c0] : tensor<2xindex>
  %b = tensor.extract %n[%c1] : tensor<2xindex>
  %v = arith.constant 1.5 : f32
  %s = tensor.splat %v[%a] : tensor<?xf32>
  %z = arith.constant 0.0 : f64
  %e = tensor.empty(%a, %b) : tensor<?x?xf64>
  %m = linalg.fill ins(%z : f64) outs(%e : tensor<?x?xf64>) -> tensor<?x?xf64>
  return %s, %m : tensor<?xf32>, tensor<?x?xf64>
}

// The size of x in dimension d[0].
func.func @size(%x: tensor<?x?xf32>, %d: tensor<1xindex>) -> tensor<1xindex> {
  %c0 = arith.constant 0 : index
  %i = tensor.extract %d[%c0] : tensor<1xindex>
  %n = tensor.dim %x, %i : tensor<?x?xf32>
  %r = tensor.from_elements %n : tensor<1xindex>
  return %r : tensor<1xindex>
}

// The same six on vectors of 8 lanes (a[i] by b[i] lane by lane), the
// signed remainder on a 2x4 vector.
func.func @vdivide(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<6x8xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %pad = arith.constant 0 : i32
  %x = vector.transfer_read %a[%c0], %pad : tensor<8xi32>, vector<8xi32>
  %y = vector.transfer_read %b[%c0], %pad : tensor<8xi32>, vector<8xi32>
  %q = arith.divsi %x, %y : vector<8xi32>
  %x2 = vector.shape_cast %x : vector<8xi32> to vector<2x4xi32>
  %y2 = vector.shape_cast %y : vector<8xi32> to vector<2x4xi32>
  %m2 = arith.remsi %x2, %y2 : vector<2x4xi32>
  %m = vector.shape_cast %m2 : vector<2x4xi32> to vector<8xi32>
  %f = arith.floordivsi %x, %y : vector<8xi32>
  %c = arith.ceildivsi %x, %y : vector<8xi32>
  %u = arith.divui %x, %y : vector<8xi32>
  %v = arith.remui %x, %y : vector<8xi32>
  %init = tensor.empty() : tensor<6x8xi32>
  %r0 = vector.transfer_write %q, %init[%c0, %c0] : vector<8xi32>, tensor<6x8xi32>
  %r1 = vector.transfer_write %m, %r0[%c1, %c0] : vector<8xi32>, tensor<6x8xi32>
  %r2 = vector.transfer_write %f, %r1[%c2, %c0] : vector<8xi32>, tensor<6x8xi32>
  %r3 = vector.transfer_write %c, %r2[%c3, %c0] : vector<8xi32>, tensor<6x8xi32>
  %r4 = vector.transfer_write %u, %r3[%c4, %c0] : vector<8xi32>, tensor<6x8xi32>
  %r5 = vector.transfer_write %v, %r4[%c5, %c0] : vector<8xi32>, tensor<6x8xi32>
  return %r5 : tensor<6x8xi32>
}

// Values in range by their own arithmetic, which gnn-guard-runtime-values
// leaves unchecked (integer range analysis): per entry of `at`, x at `at`
// clamped into [0, 9] and at `at` mod 10 (unsigned), and a / (b | 1)
// unsigned and a / max(b, 1) signed. Any input is valid.
func.func @proven(%x: tensor<10xf32>, %at: tensor<?xindex>, %a: tensor<?xi64>,
                  %b: tensor<?xi64>) -> (tensor<?x2xf32>, tensor<?x2xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %c10 = arith.constant 10 : index
  %one = arith.constant 1 : i64
  %n = tensor.dim %at, %c0 : tensor<?xindex>
  %reads = tensor.empty(%n) : tensor<?x2xf32>
  %quotients = tensor.empty(%n) : tensor<?x2xi64>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%f = %reads, %q = %quotients)
      -> (tensor<?x2xf32>, tensor<?x2xi64>) {
    %j = tensor.extract %at[%i] : tensor<?xindex>
    %low = arith.maxsi %j, %c0 : index
    %clamped = arith.minsi %low, %c9 : index
    %v0 = tensor.extract %x[%clamped] : tensor<10xf32>
    %rem = arith.remui %j, %c10 : index
    %v1 = tensor.extract %x[%rem] : tensor<10xf32>
    %f0 = tensor.insert %v0 into %f[%i, %c0] : tensor<?x2xf32>
    %f1 = tensor.insert %v1 into %f0[%i, %c1] : tensor<?x2xf32>
    %p = tensor.extract %a[%i] : tensor<?xi64>
    %d = tensor.extract %b[%i] : tensor<?xi64>
    %odd = arith.ori %d, %one : i64
    %pos = arith.maxsi %d, %one : i64
    %u = arith.divui %p, %odd : i64
    %s = arith.divsi %p, %pos : i64
    %q0 = tensor.insert %u into %q[%i, %c0] : tensor<?x2xi64>
    %q1 = tensor.insert %s into %q0[%i, %c1] : tensor<?x2xi64>
    scf.yield %f1, %q1 : tensor<?x2xf32>, tensor<?x2xi64>
  }
  return %r#0, %r#1 : tensor<?x2xf32>, tensor<?x2xi64>
}
