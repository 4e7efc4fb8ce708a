// RUN: gnn-opt %s -split-input-file -gnn-guard-runtime-values | FileCheck %s
// RUN: gnn-opt %s -split-input-file -gnn-guard-runtime-values=host-only | FileCheck %s --check-prefix=HOST

// A division by a run-time value checks for zero (and, signed, for the
// smallest value by -1), reports, and divides by 1 instead.
// CHECK-LABEL: func @divisions
// CHECK-SAME: (%[[N:.*]]: i32, %[[D:.*]]: i32)
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[D]], %c0_i32
// CHECK: scf.if %[[ZERO]] {
// CHECK:   func.call @gnn_rt_bad_value(%c0_i64,
// CHECK: %[[MIN:.*]] = arith.cmpi eq, %[[N]], %c-2147483648_i32
// CHECK: %[[NEG:.*]] = arith.cmpi eq, %[[D]], %c-1_i32
// CHECK: %[[OVER:.*]] = arith.andi %[[MIN]], %[[NEG]]
// CHECK: scf.if %[[OVER]] {
// CHECK:   func.call @gnn_rt_bad_value(%c1_i64,
// CHECK: %[[BAD:.*]] = arith.ori %[[ZERO]], %[[OVER]]
// CHECK: %[[SAFE:.*]] = arith.select %[[BAD]], %c1_i32{{.*}}, %[[D]]
// CHECK: arith.divsi %[[N]], %[[SAFE]]
// An unsigned remainder only checks for zero.
// CHECK: arith.cmpi eq, %[[D]]
// CHECK-NOT: arith.cmpi eq, %[[N]]
// CHECK: arith.remui %[[N]], %{{.*}} : i32
// A constant divisor other than 0 and -1 is left alone.
// CHECK-NEXT: arith.divsi %[[N]], %c7_i32 : i32
// CHECK: return
func.func @divisions(%n: i32, %d: i32) -> (i32, i32, i32) {
  %c7 = arith.constant 7 : i32
  %q = arith.divsi %n, %d : i32
  %r = arith.remui %n, %d : i32
  %s = arith.divsi %n, %c7 : i32
  return %q, %r, %s : i32, i32, i32
}
// The reports are declared once.
// CHECK-DAG: func.func private @gnn_rt_bad_value(i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-DAG: func.func private @gnn_rt_allocation_limit_bytes() -> i64

// -----

// Vectors of divisors: the same checks lane by lane (2-D vectors flattened
// for the reduction), a branch per kind when any lane fails, reporting the
// first failing lane's values; failing lanes divide by 1. A constant splat
// divisor other than 0 and -1 is left alone.
// CHECK-LABEL: func @vector_divisions
// CHECK-SAME: (%[[N:.*]]: vector<2x4xi32>, %[[D:.*]]: vector<2x4xi32>)
// CHECK: %[[FN:.*]] = vector.shape_cast %[[N]] : vector<2x4xi32> to vector<8xi32>
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : vector<2x4xi32>
// CHECK: %[[FZ:.*]] = vector.shape_cast %[[ZERO]] : vector<2x4xi1> to vector<8xi1>
// CHECK: %[[ANY:.*]] = vector.reduction <or>, %[[FZ]] : vector<8xi1> into i1
// CHECK: scf.if %[[ANY]] {
// CHECK:   %[[B7:.*]] = vector.extract %[[FZ]][7]
// CHECK:   %[[X7:.*]] = vector.extract %[[FN]][7]
// CHECK:   %[[B0:.*]] = vector.extract %[[FZ]][0]
// CHECK:   %[[X0:.*]] = vector.extract %[[FN]][0]
// CHECK:   %[[FIRST:.*]] = arith.select %[[B0]], %[[X0]], %{{.*}} : i32
// CHECK:   %[[W:.*]] = arith.extsi %[[FIRST]] : i32 to i64
// CHECK:   func.call @gnn_rt_bad_value(%c0_i64, %[[W]],
// CHECK: }
// CHECK: %[[MIN:.*]] = arith.cmpi eq, %[[N]], %{{.*}} : vector<2x4xi32>
// CHECK: %[[NEG:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : vector<2x4xi32>
// CHECK: %[[OVER:.*]] = arith.andi %[[MIN]], %[[NEG]] : vector<2x4xi1>
// CHECK: vector.reduction <or>
// CHECK: scf.if
// CHECK:   func.call @gnn_rt_bad_value(%c1_i64,
// CHECK: %[[BAD:.*]] = arith.ori %[[ZERO]], %[[OVER]] : vector<2x4xi1>
// CHECK: %[[SAFE:.*]] = arith.select %[[BAD]], %{{.*}}, %[[D]] : vector<2x4xi1>, vector<2x4xi32>
// CHECK: arith.divsi %[[N]], %[[SAFE]] : vector<2x4xi32>
// An unsigned remainder only checks for zero.
// CHECK: arith.cmpi eq, %[[D]]
// CHECK-NOT: arith.cmpi eq, %[[N]]
// CHECK: arith.remui %[[N]], %{{.*}} : vector<2x4xi32>
// CHECK-NEXT: arith.divsi %[[N]], %cst : vector<2x4xi32>
// CHECK: return
func.func @vector_divisions(%n: vector<2x4xi32>, %d: vector<2x4xi32>) -> (vector<2x4xi32>, vector<2x4xi32>, vector<2x4xi32>) {
  %c7 = arith.constant dense<7> : vector<2x4xi32>
  %q = arith.divsi %n, %d : vector<2x4xi32>
  %r = arith.remui %n, %d : vector<2x4xi32>
  %s = arith.divsi %n, %c7 : vector<2x4xi32>
  return %q, %r, %s : vector<2x4xi32>, vector<2x4xi32>, vector<2x4xi32>
}

// -----

// Scalable vectors have no lane count to report from: left alone.
// CHECK-LABEL: func @scalable_division
// CHECK-NEXT: arith.divsi
// CHECK-NEXT: return
func.func @scalable_division(%n: vector<[4]xi32>, %d: vector<[4]xi32>) -> vector<[4]xi32> {
  %q = arith.divsi %n, %d : vector<[4]xi32>
  return %q : vector<[4]xi32>
}

// -----

// An extract at a run-time index runs only in range; out of range, it
// reports the index, the size, the dimension and the op's place, and
// yields 0.
// CHECK-LABEL: func @extract
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[I:.*]]: index)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[N]]
// CHECK: %[[V:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK:   %[[E:.*]] = tensor.extract %[[X]][%[[I]]]
// CHECK:   scf.yield %[[E]]
// CHECK: } else {
// (The line within this split, and the column of the op's name.)
// CHECK:   %[[LINE:.*]] = arith.constant 22 : i64
// CHECK:   %[[COLUMN:.*]] = arith.constant 8 : i64
// CHECK:   func.call @gnn_rt_bad_value(%c2_i64, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LINE]], %[[COLUMN]])
// CHECK:   scf.yield %cst
// CHECK: }
// CHECK: return %[[V]]
func.func @extract(%x: tensor<?xf32>, %i: index) -> f32 {
  %v = tensor.extract %x[%i] : tensor<?xf32>
  return %v : f32
}

// -----

// Indices that are in range by construction are not checked: constants in
// a static shape, and the induction variable of a loop up to the tensor's
// own size (also through the value the loop carries, and the inserts made
// into it).
// CHECK-LABEL: func @proven
// CHECK-NOT: scf.if
// CHECK-NOT: gnn_rt_bad_value
// CHECK: return
func.func @proven(%x: tensor<?xf32>, %s: tensor<4xf32>) -> (tensor<?xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %y = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<?xf32> {
    %v = tensor.extract %x[%i] : tensor<?xf32>
    %w = arith.addf %v, %v : f32
    %next = tensor.insert %w into %acc[%i] : tensor<?xf32>
    %again = tensor.insert %v into %next[%i] : tensor<?xf32>
    scf.yield %again : tensor<?xf32>
  }
  %last = tensor.extract %s[%c3] : tensor<4xf32>
  return %y, %last : tensor<?xf32>, f32
}

// -----

// A loop past the size, a negative start, or a constant past a static
// size is checked.
// CHECK-LABEL: func @unproven
// CHECK-COUNT-3: scf.if
// CHECK: return
func.func @unproven(%x: tensor<?xf32>, %s: tensor<4xf32>, %m: index) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %a = scf.for %i = %c0 to %m step %c1 iter_args(%acc = %zero) -> f32 {
    %v = tensor.extract %x[%i] : tensor<?xf32>
    scf.yield %v : f32
  }
  %b = tensor.extract %s[%c4] : tensor<4xf32>
  %cm1 = arith.constant -1 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %c = scf.for %i = %cm1 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = tensor.extract %x[%i] : tensor<?xf32>
    scf.yield %v : f32
  }
  return %a, %b, %c : f32, f32, f32
}

// -----

// What integer range analysis proves goes unchecked: an index clamped into
// a static size, or its remainder by that size; a loop over constant
// bounds inside it; an unsigned divisor made odd; a signed divisor of at
// least 1. The same values one step short of proof are checked: a clamp to
// the size itself, a remainder by a larger size, a signed divisor made odd
// (it may be -1: only the smallest-by--1 check remains, not the zero one),
// and any index into a dynamic size.
// CHECK-LABEL: func @ranges
// CHECK-SAME: (%[[X:.*]]: tensor<10xf32>, %[[D:.*]]: tensor<?xf32>, %[[J:.*]]: index, %[[A:.*]]: i64, %[[B:.*]]: i64)
// CHECK-NOT: scf.if
// CHECK: %[[CLAMPED:.*]] = arith.minsi
// CHECK-NEXT: tensor.extract %[[X]][%[[CLAMPED]]]
// CHECK-NEXT: %[[REM:.*]] = arith.remui %[[J]], %c10
// CHECK-NEXT: tensor.extract %[[X]][%[[REM]]]
// CHECK-NEXT: scf.for
// CHECK-NEXT: tensor.extract %[[X]]
// CHECK: %[[ODD:.*]] = arith.ori %[[B]]
// CHECK-NEXT: arith.divui %[[A]], %[[ODD]]
// CHECK-NEXT: %[[POS:.*]] = arith.maxsi %[[B]]
// CHECK-NEXT: arith.divsi %[[A]], %[[POS]]
// The unproven ones, in order.
// CHECK: scf.if
// CHECK: tensor.extract %[[X]]
// CHECK: arith.remui %[[J]], %c11
// CHECK: scf.if
// CHECK: tensor.extract %[[X]]
// CHECK: scf.if
// CHECK: tensor.extract %[[D]]
// CHECK-NOT: arith.cmpi eq, %[[ODD]], %c0
// CHECK: arith.cmpi eq, %[[A]], %c-9223372036854775808
// CHECK: arith.divsi %[[A]], %{{.*}} : i64
// CHECK: return
func.func @ranges(%x: tensor<10xf32>, %d: tensor<?xf32>, %j: index, %a: i64,
                  %b: i64) -> (f32, f32, f32, i64, i64, f32, f32, f32, i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c9 = arith.constant 9 : index
  %c10 = arith.constant 10 : index
  %c11 = arith.constant 11 : index
  %one = arith.constant 1 : i64
  %zero = arith.constant 0.0 : f32
  %low = arith.maxsi %j, %c0 : index
  %clamped = arith.minsi %low, %c9 : index
  %v0 = tensor.extract %x[%clamped] : tensor<10xf32>
  %rem = arith.remui %j, %c10 : index
  %v1 = tensor.extract %x[%rem] : tensor<10xf32>
  %v2 = scf.for %i = %c3 to %c9 step %c1 iter_args(%acc = %zero) -> f32 {
    %e = tensor.extract %x[%i] : tensor<10xf32>
    %t = arith.addf %acc, %e : f32
    scf.yield %t : f32
  }
  %odd = arith.ori %b, %one : i64
  %q0 = arith.divui %a, %odd : i64
  %pos = arith.maxsi %b, %one : i64
  %q1 = arith.divsi %a, %pos : i64
  %over = arith.minsi %low, %c10 : index
  %v3 = tensor.extract %x[%over] : tensor<10xf32>
  %wide = arith.remui %j, %c11 : index
  %v4 = tensor.extract %x[%wide] : tensor<10xf32>
  %v5 = tensor.extract %d[%clamped] : tensor<?xf32>
  %q2 = arith.divsi %a, %odd : i64
  return %v0, %v1, %v2, %q0, %q1, %v3, %v4, %v5, %q2
      : f32, f32, f32, i64, i64, f32, f32, f32, i64
}

// -----

// An insert out of range leaves its destination; a store out of range is
// skipped; a load yields 0.
// CHECK-LABEL: func @insert_store_load
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[M:.*]]: memref<?xf32>, %[[I:.*]]: index, %[[J:.*]]: index
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (tensor<?x?xf32>) {
// CHECK:   tensor.insert
// CHECK: } else {
// CHECK:   func.call @gnn_rt_bad_value(%c2_i64
// CHECK:   scf.yield %[[X]]
// CHECK: scf.if %{{.*}} {
// CHECK:   memref.store
// CHECK: } else {
// CHECK:   func.call @gnn_rt_bad_value(%c2_i64
// CHECK: }
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK:   memref.load
func.func @insert_store_load(%x: tensor<?x?xf32>, %m: memref<?xf32>, %i: index, %j: index, %v: f32)
    -> (tensor<?x?xf32>, f32) {
  %r = tensor.insert %v into %x[%i, %j] : tensor<?x?xf32>
  memref.store %v, %m[%i] : memref<?xf32>
  %l = memref.load %m[%j] : memref<?xf32>
  return %r, %l : tensor<?x?xf32>, f32
}

// -----

// A slice from run-time offsets and sizes runs only if it fits; otherwise
// it is empty. An insert_slice also needs a source of the slice's sizes.
// CHECK-LABEL: func @slices
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[Y:.*]]: tensor<?xf32>, %[[O:.*]]: index, %[[N:.*]]: index)
// An extract_slice reads nothing: offset 0, size 0, stride 1 (no branch,
// which bufferization would give two layouts).
// CHECK: scf.if %{{.*}} {
// CHECK:   func.call @gnn_rt_bad_value(%c3_i64
// CHECK: }
// CHECK: %[[OFFSET:.*]] = arith.select %[[OK:.*]], %[[O]], %c0
// CHECK: %[[STRIDE:.*]] = arith.select %[[OK]], %c2{{.*}}, %c1
// CHECK: %[[SIZE:.*]] = arith.select %[[OK]], %[[N]], %c0
// CHECK: tensor.extract_slice %[[X]][%[[OFFSET]]] [%[[SIZE]]] [%[[STRIDE]]]
// CHECK: func.call @gnn_rt_bad_value(%c4_i64
// CHECK: scf.if %{{.*}} -> (tensor<?xf32>) {
// CHECK:   tensor.insert_slice
// CHECK: } else {
// CHECK:   func.call @gnn_rt_bad_value(%c3_i64
func.func @slices(%x: tensor<?xf32>, %y: tensor<?xf32>, %o: index, %n: index)
    -> (tensor<?xf32>, tensor<?xf32>) {
  %s = tensor.extract_slice %x[%o] [%n] [2] : tensor<?xf32> to tensor<?xf32>
  %t = tensor.insert_slice %y into %x[%o] [%n] [1] : tensor<?xf32> into tensor<?xf32>
  return %s, %t : tensor<?xf32>, tensor<?xf32>
}

// -----

// A static size that the source may lack reads from a new tensor of that
// size instead (selected, like the offsets).
// CHECK-LABEL: func @static_size
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[O:.*]]: index)
// CHECK: %[[OFFSET:.*]] = arith.select %[[OK:.*]], %[[O]], %c0
// CHECK: %[[NEW:.*]] = tensor.empty(%c4{{.*}}) : tensor<?xf32>
// CHECK: %[[FROM:.*]] = arith.select %[[OK]], %[[X]], %[[NEW]]
// CHECK: tensor.extract_slice %[[FROM]][%[[OFFSET]]] [4] [%{{.*}}] : tensor<?xf32> to tensor<4xf32>
func.func @static_size(%x: tensor<?xf32>, %o: index) -> tensor<4xf32> {
  %s = tensor.extract_slice %x[%o] [4] [1] : tensor<?xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Static slices that fit are left alone.
// CHECK-LABEL: func @static_slice
// CHECK-NOT: scf.if
// CHECK: tensor.extract_slice
func.func @static_slice(%x: tensor<8xf32>) -> tensor<3xf32> {
  %s = tensor.extract_slice %x[2] [3] [2] : tensor<8xf32> to tensor<3xf32>
  return %s : tensor<3xf32>
}

// -----

// A reshape to a run-time shape compares the element counts (a negative
// size or an overflowing product counts as -1).
// CHECK-LABEL: func @reshape
// CHECK: arith.muli
// CHECK: arith.cmpi eq
// CHECK: scf.if %{{.*}} -> (tensor<?x?xf32>) {
// CHECK:   tensor.reshape
// CHECK: } else {
// CHECK:   func.call @gnn_rt_bad_value(%c5_i64
// CHECK:   tensor.empty(%{{.*}}, %{{.*}}) : tensor<?x?xf32>
func.func @reshape(%x: tensor<?xf32>, %shape: tensor<2xi64>) -> tensor<?x?xf32> {
  %r = tensor.reshape %x(%shape) : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// New tensors of run-time sizes are bounded by the runtime's limit: above
// it, the call fails and the sizes become 0. The limit is asked once, at
// the function's entry.
// CHECK-LABEL: func @allocations
// CHECK-SAME: (%[[N:.*]]: index
// CHECK-NEXT: %[[LIMIT:.*]] = call @gnn_rt_allocation_limit_bytes()
// CHECK-NOT: gnn_rt_allocation_limit_bytes
// CHECK: %[[MOST:.*]] = arith.divsi %[[LIMIT]], %c4_i64
// CHECK: %[[BIG:.*]] = arith.cmpi sgt, %{{.*}}, %[[MOST]]
// CHECK: %[[BAD:.*]] = arith.ori %{{.*}}, %[[BIG]]
// CHECK: scf.if %[[BAD]] {
// CHECK:   func.call @gnn_rt_bad_value(%c6_i64
// CHECK: %[[SIZE:.*]] = arith.select %[[BAD]], %c0{{.*}}, %[[N]]
// CHECK: tensor.splat %{{.*}}[%[[SIZE]]]
// CHECK: arith.divsi %[[LIMIT]], %c1_i64
// CHECK: tensor.empty
// CHECK: arith.divsi %[[LIMIT]], %c8_i64
// CHECK: tensor.generate
// CHECK: arith.divsi %[[LIMIT]], %c8_i64
// CHECK: memref.alloc(
// Static sizes need no check.
// CHECK-NOT: gnn_rt_allocation_limit_bytes
// CHECK: return
func.func @allocations(%n: index, %v: f32) -> (tensor<?xf32>, tensor<3x?xi8>, tensor<?xindex>, memref<?xf64>, tensor<4xf32>) {
  %s = tensor.splat %v[%n] : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<3x?xi8>
  %g = tensor.generate %n {
  ^bb0(%i: index):
    tensor.yield %i : index
  } : tensor<?xindex>
  %m = memref.alloc(%n) : memref<?xf64>
  %f = tensor.empty() : tensor<4xf32>
  return %s, %e, %g, %m, %f : tensor<?xf32>, tensor<3x?xi8>, tensor<?xindex>, memref<?xf64>, tensor<4xf32>
}

// -----

// An allocation in a loop takes the limit asked at the function's entry,
// not a call per iteration.
// CHECK-LABEL: func @allocation_in_loop
// CHECK-NEXT: %[[LIMIT:.*]] = call @gnn_rt_allocation_limit_bytes()
// CHECK: scf.for
// CHECK-NOT: gnn_rt_allocation_limit_bytes
// CHECK: arith.divsi %[[LIMIT]], %c4_i64
// CHECK: tensor.empty
func.func @allocation_in_loop(%n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> index {
    %t = tensor.empty(%i) : tensor<?xf32>
    %d = tensor.dim %t, %c0 : tensor<?xf32>
    %next = arith.addi %acc, %d : index
    scf.yield %next : index
  }
  return %r : index
}

// -----

// Inside the body of a loop that becomes a GPU kernel, host-only leaves
// the ops alone (a kernel cannot call the runtime); without it, they are
// checked there too.
// CHECK-LABEL: func @kernel_bodies
// CHECK: scf.parallel
// CHECK: scf.if
// HOST-LABEL: func @kernel_bodies
// HOST: scf.parallel
// HOST-NOT: scf.if
// HOST: arith.divui
func.func @kernel_bodies(%m: memref<?xi64>, %d: i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xi64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %m[%i] : memref<?xi64>
    %q = arith.divui %v, %d : i64
    memref.store %q, %m[%i] : memref<?xi64>
    scf.reduce
  }
  return
}
