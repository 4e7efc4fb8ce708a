// RUN: gnn-opt %s -split-input-file -gnn-fuse-elementwise | FileCheck %s
// RUN: gnn-opt %s -split-input-file -gnn-fuse-elementwise=dropouts=false | FileCheck %s --check-prefix=CPU
// RUN: gnn-opt %s -split-input-file -gnn-fuse-elementwise=siblings=true | FileCheck %s --check-prefix=SIB

// Without dropouts (the CPU's form): dropouts stay ops, apply_nodes merge.
// CPU-LABEL: func @activation_dropout_residual
// CPU: gnn.apply_nodes(%arg1)
// CPU: gnn.dropout
// CPU: gnn.apply_nodes(%arg0,
// CPU-NOT: dropout_element
// CPU-LABEL: func @optimizer_update
// CPU-NEXT: %[[U:.*]]:3 = gnn.apply_nodes
// CPU-NOT: gnn.apply_nodes
// CPU: return %[[U]]#0, %[[U]]#1, %[[U]]#2

// A feed-forward layer's tail: activation, dropout and the residual sum are
// one op, dropout inside its body.
// CHECK-LABEL: func @activation_dropout_residual
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[P:.*]]: tensor<?x8xf32>, %[[SEED:.*]]: i64, %[[OFF:.*]]: i64)
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[R:.*]] = gnn.apply_nodes(%[[X]], %[[P]]) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[B]], %[[ZERO]] : f32
// CHECK-NEXT: %[[D:.*]] = gnn.dropout_element %[[M]], %[[SEED]], %[[OFF]] rate(1.000000e-01) : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[D]] : f32
// CHECK-NEXT: gnn.yield %[[S]] : f32
// CHECK-NEXT: } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @activation_dropout_residual(%x: tensor<?x8xf32>, %p: tensor<?x8xf32>, %seed: i64, %offset: i64) -> tensor<?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %h = gnn.apply_nodes(%p) {
  ^bb0(%a: f32):
    %m = arith.maximumf %a, %zero : f32
    gnn.yield %m : f32
  } : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %d = gnn.dropout %h, %seed, %offset rate(0.1) : tensor<?x8xf32>
  %r = gnn.apply_nodes(%x, %d) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    gnn.yield %s : f32
  } : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// A backward's sum of two gradients, its dropout and scaling; an input
// broadcast along the items (?x2x1) stays an input of the fused op.
// CHECK-LABEL: func @gradient_chain
// CHECK-SAME: (%[[G:.*]]: tensor<?x2x4xf32>, %[[H:.*]]: tensor<?x2x4xf32>, %[[S:.*]]: tensor<?x2x1xf32>, %[[SEED:.*]]: i64)
// CHECK: %[[R:.*]] = gnn.apply_nodes(%[[G]], %[[H]], %[[S]]) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT: arith.addf %[[A]], %[[B]]
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: gnn.dropout_element
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: gnn.yield
// CHECK-NEXT: } : (tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x1xf32>) -> tensor<?x2x4xf32>
// CHECK-NOT: gnn.
// CHECK: return %[[R]]
func.func @gradient_chain(%g: tensor<?x2x4xf32>, %h: tensor<?x2x4xf32>, %s: tensor<?x2x1xf32>, %seed: i64) -> tensor<?x2x4xf32> {
  %half = arith.constant 0.5 : f32
  %t = gnn.apply_nodes(%g, %h, %s) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %sum = arith.addf %a, %b : f32
    %m = arith.mulf %sum, %c : f32
    gnn.yield %m : f32
  } : (tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x1xf32>) -> tensor<?x2x4xf32>
  %d = gnn.dropout %t, %seed, %seed rate(0.25) : tensor<?x2x4xf32>
  %z = gnn.apply_nodes(%d) {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %half : f32
    gnn.yield %m : f32
  } : (tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  return %z : tensor<?x2x4xf32>
}

// -----

// An input the consumer reads twice, and one the producer reads as well,
// become one argument each.
// CHECK-LABEL: func @shared_inputs
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[SEED:.*]]: i64)
// CHECK: gnn.apply_nodes(%[[X]]) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = gnn.dropout_element %[[A]], %[[SEED]], %[[SEED]] rate(5.000000e-01) : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[M]], %[[A]] : f32
// CHECK-NEXT: gnn.yield %[[S]]
// CHECK-NEXT: } : (tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @shared_inputs(%x: tensor<?x4xf32>, %seed: i64) -> tensor<?x4xf32> {
  %q = gnn.dropout %x, %seed, %seed rate(0.5) : tensor<?x4xf32>
  %w = gnn.apply_nodes(%q, %q, %x) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %c : f32
    gnn.yield %s : f32
  } : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %w : tensor<?x4xf32>
}

// -----

// Dropout of a value something else reads later (a backward pass keeps the
// activation): one op yields both; a dropout with nothing element-wise
// beside it stays as it is.
// CHECK-LABEL: func @shared_producer
// CHECK: %[[N:.*]]:2 = gnn.apply_nodes(%arg0) {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.negf %[[A]] : f32
// CHECK-NEXT: %[[D:.*]] = gnn.dropout_element %[[M]], %arg2, %arg2 rate(3.000000e-01) : f32
// CHECK-NEXT: gnn.yield %[[D]], %[[M]] : f32, f32
// CHECK-NEXT: } : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK: %[[L:.*]] = gnn.dropout %arg1
// CHECK: return %[[N]]#1, %[[N]]#0, %[[L]]
func.func @shared_producer(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>, %seed: i64) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %n = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %m = arith.negf %a : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %d = gnn.dropout %n, %seed, %seed rate(0.3) : tensor<?x4xf32>
  %l = gnn.dropout %y, %seed, %seed rate(0.3) : tensor<?x4xf32>
  return %n, %d, %l : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// An optimizer's update: two moments, each returned, and the parameter
// computed from them are one op of three results that reads each input
// once.
// CHECK-LABEL: func @optimizer_update
// CHECK-SAME: (%[[P:.*]]: tensor<4x8xf32>, %[[M:.*]]: tensor<4x8xf32>, %[[V:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<4x8xf32>, %[[B1:.*]]: f32, %[[B2:.*]]: f32)
// CHECK-NEXT: %[[U:.*]]:3 = gnn.apply_nodes(%[[P]], %[[M]], %[[G]], %[[V]]) {
// CHECK-NEXT: ^bb0(%[[PE:.*]]: f32, %[[ME:.*]]: f32, %[[GE:.*]]: f32, %[[VE:.*]]: f32):
// CHECK-NEXT: %[[VS:.*]] = arith.mulf %[[VE]], %[[B2]]
// CHECK-NEXT: %[[GG:.*]] = arith.mulf %[[GE]], %[[GE]]
// CHECK-NEXT: %[[V1:.*]] = arith.addf %[[VS]], %[[GG]]
// CHECK-NEXT: %[[MS:.*]] = arith.mulf %[[ME]], %[[B1]]
// CHECK-NEXT: %[[M1:.*]] = arith.addf %[[MS]], %[[GE]]
// CHECK-NEXT: %[[R:.*]] = math.sqrt %[[V1]]
// CHECK-NEXT: %[[S:.*]] = arith.divf %[[M1]], %[[R]]
// CHECK-NEXT: %[[P1:.*]] = arith.subf %[[PE]], %[[S]]
// CHECK-NEXT: gnn.yield %[[P1]], %[[M1]], %[[V1]] : f32, f32, f32
// CHECK-NEXT: } : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: return %[[U]]#0, %[[U]]#1, %[[U]]#2
func.func @optimizer_update(%p: tensor<4x8xf32>, %m: tensor<4x8xf32>, %v: tensor<4x8xf32>, %g: tensor<4x8xf32>, %b1: f32, %b2: f32) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %m1 = gnn.apply_nodes(%m, %g) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b1 : f32
    %t = arith.addf %s, %b : f32
    gnn.yield %t : f32
  } : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %v1 = gnn.apply_nodes(%v, %g) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b2 : f32
    %q = arith.mulf %b, %b : f32
    %t = arith.addf %s, %q : f32
    gnn.yield %t : f32
  } : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %p1 = gnn.apply_nodes(%p, %m1, %v1) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = math.sqrt %c : f32
    %s = arith.divf %b, %r : f32
    %t = arith.subf %a, %s : f32
    gnn.yield %t : f32
  } : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p1, %m1, %v1 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A producer something reads before the consumer cannot be computed at the
// consumer: the two stay apart.
// CHECK-LABEL: func @read_in_between
// CHECK: %[[N:.*]] = gnn.apply_nodes
// CHECK: call @use(%[[N]])
// CHECK: gnn.apply_nodes(%[[N]])
func.func private @use(tensor<?x4xf32>)
func.func @read_in_between(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %n = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %m = arith.negf %a : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.call @use(%n) : (tensor<?x4xf32>) -> ()
  %e = gnn.apply_nodes(%n) {
  ^bb0(%a: f32):
    %m = math.exp %a : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %e : tensor<?x4xf32>
}

// -----

// Results of another element type (a mask) share the loop: the merged op
// yields an i1 and an f32 result.
// CHECK-LABEL: func @mask_and_value
// CHECK: %[[R:.*]]:2 = gnn.apply_nodes(%arg0) {
// CHECK: gnn.yield %{{.*}}, %{{.*}} : f32, i1
// CHECK-NEXT: } : (tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>)
// CHECK-NEXT: return %[[R]]#0, %[[R]]#1
func.func @mask_and_value(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xi1>) {
  %zero = arith.constant 0.0 : f32
  %k = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %c = arith.cmpf ogt, %a, %zero : f32
    gnn.yield %c : i1
  } : (tensor<?x4xf32>) -> tensor<?x4xi1>
  %r = gnn.apply_nodes(%k, %x) {
  ^bb0(%c: i1, %a: f32):
    %s = arith.select %c, %a, %zero : f32
    gnn.yield %s : f32
  } : (tensor<?x4xi1>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %r, %k : tensor<?x4xf32>, tensor<?x4xi1>
}

// -----

// A producer of another shape (a per-row value the consumer broadcasts
// over the items: its elements are not the consumer's), or of dynamic item
// dims, is not merged.
// CHECK-LABEL: func @other_shapes
// CHECK-COUNT-4: gnn.apply_nodes
// CHECK-NOT: gnn.apply_nodes
func.func @other_shapes(%x: tensor<?x1xf32>, %y: tensor<?x8xf32>, %u: tensor<?x?xf32>) -> (tensor<?x8xf32>, tensor<?x?xf32>) {
  %e = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %m = math.exp %a : f32
    gnn.yield %m : f32
  } : (tensor<?x1xf32>) -> tensor<?x1xf32>
  %r = gnn.apply_nodes(%e, %y) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    gnn.yield %m : f32
  } : (tensor<?x1xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %n = gnn.apply_nodes(%u) {
  ^bb0(%a: f32):
    %m = arith.negf %a : f32
    gnn.yield %m : f32
  } : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %t = gnn.apply_nodes(%n) {
  ^bb0(%a: f32):
    %m = math.exp %a : f32
    gnn.yield %m : f32
  } : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r, %t : tensor<?x8xf32>, tensor<?x?xf32>
}

// -----

// A producer outside the loop that reads it: merging would compute it
// every iteration.
// CHECK-LABEL: func @producer_outside_loop
// CHECK: gnn.apply_nodes
// CHECK: scf.for
// CHECK: gnn.apply_nodes
func.func @producer_outside_loop(%x: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %m = math.exp %a : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<?x4xf32> {
    %s = gnn.apply_nodes(%acc, %e) {
    ^bb0(%a: f32, %b: f32):
      %m = arith.addf %a, %b : f32
      gnn.yield %m : f32
    } : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    scf.yield %s : tensor<?x4xf32>
  }
  return %r : tensor<?x4xf32>
}

// -----

// A chain of five element-wise ops, two of them dropouts, is one op.
// CHECK-LABEL: func @long_chain
// CHECK-NEXT: gnn.apply_nodes(%arg0, %arg1) {
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[Q:.*]]: f32):
// CHECK-NEXT: %[[A:.*]] = arith.subf %[[P]], %[[Q]]
// CHECK-NEXT: %[[B:.*]] = gnn.dropout_element %[[A]], %arg2, %arg2 rate(2.000000e-01)
// CHECK-NEXT: %[[C:.*]] = math.tanh %[[B]]
// CHECK-NEXT: %[[D:.*]] = gnn.dropout_element %[[C]], %arg2, %arg2 rate(4.000000e-01)
// CHECK-NEXT: %[[E:.*]] = arith.maximumf %[[D]], %[[P]]
// CHECK-NEXT: gnn.yield %[[E]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @long_chain(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>, %seed: i64) -> tensor<?x3xf32> {
  %zero = arith.constant 0.0 : f32
  %a = gnn.apply_nodes(%x, %y) {
  ^bb0(%p: f32, %q: f32):
    %m = arith.subf %p, %q : f32
    gnn.yield %m : f32
  } : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %b = gnn.dropout %a, %seed, %seed rate(0.2) : tensor<?x3xf32>
  %c = gnn.apply_nodes(%b) {
  ^bb0(%p: f32):
    %m = math.tanh %p : f32
    gnn.yield %m : f32
  } : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %d = gnn.dropout %c, %seed, %seed rate(0.4) : tensor<?x3xf32>
  %e = gnn.apply_nodes(%d, %x) {
  ^bb0(%p: f32, %q: f32):
    %m = arith.maximumf %p, %q : f32
    gnn.yield %m : f32
  } : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %e : tensor<?x3xf32>
}

// -----

// Siblings (the GPU forms): updates of two parameters of one static shape
// are one op (after each update's own chain is merged), the earlier one's
// results yielded last; without the option they stay two.
// CHECK-LABEL: func @two_parameters
// CHECK-COUNT-2: gnn.apply_nodes
// SIB-LABEL: func @two_parameters
// SIB-SAME: (%[[P:[^:]*]]: tensor<4x8xf32>, %[[G:[^:]*]]: tensor<4x8xf32>, %[[Q:[^:]*]]: tensor<4x8xf32>, %[[H:[^:]*]]: tensor<4x8xf32>)
// SIB-NEXT: %[[U:.*]]:2 = gnn.apply_nodes(%[[Q]], %[[H]], %[[P]], %[[G]]) {
// SIB-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %[[D:.*]]: f32):
// SIB-NEXT: %[[X:.*]] = arith.subf %[[C]], %[[D]]
// SIB-NEXT: %[[Y:.*]] = arith.subf %[[A]], %[[B]]
// SIB-NEXT: gnn.yield %[[Y]], %[[X]] : f32, f32
// SIB: return %[[U]]#1, %[[U]]#0
func.func @two_parameters(%p: tensor<4x8xf32>, %g: tensor<4x8xf32>, %q: tensor<4x8xf32>, %h: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %p1 = gnn.apply_nodes(%p, %g) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %q1 = gnn.apply_nodes(%q, %h) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p1, %q1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Dynamic rows: siblings that share an input have its rows and merge (the
// three readers of %x, at the last one); siblings of unrelated inputs may
// not have as many rows and stay apart, as do siblings the later of which
// reads what the earlier one's result fed (a dependence through another
// op).
// SIB-LABEL: func @dynamic_rows
// SIB-NEXT: gnn.apply_nodes(%arg1)
// SIB: gnn.apply_nodes(%arg2)
// SIB: %[[R:.*]]:3 = gnn.apply_nodes(%arg0)
// SIB: %[[C:.*]] = call @id(%[[R]]#0)
// SIB-NEXT: %[[T:.*]] = gnn.apply_nodes(%[[C]])
// SIB: return %[[R]]#2, %[[R]]#1, %{{.*}}, %{{.*}}, %[[T]]
func.func private @id(tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @dynamic_rows(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>, %z: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %a = gnn.apply_nodes(%x) {
  ^bb0(%e: f32):
    %m = math.exp %e : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %b = gnn.apply_nodes(%x) {
  ^bb0(%e: f32):
    %m = arith.negf %e : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %c = gnn.apply_nodes(%y) {
  ^bb0(%e: f32):
    %m = arith.negf %e : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %d = gnn.apply_nodes(%z) {
  ^bb0(%e: f32):
    %m = math.exp %e : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %n = gnn.apply_nodes(%x) {
  ^bb0(%e: f32):
    %m = math.tanh %e : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %k = func.call @id(%n) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %t = gnn.apply_nodes(%k) {
  ^bb0(%e: f32):
    %m = math.exp %e : f32
    gnn.yield %m : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %a, %b, %c, %d, %t : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}
