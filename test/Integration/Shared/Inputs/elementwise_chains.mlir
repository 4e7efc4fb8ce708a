// Element-wise chains the GPU forms merge into one op each
// (gnn-fuse-elementwise): an activation, dropout and residual sum; a sum of
// gradients with a per-head factor broadcast over the items, its dropout
// and scaling; a dropout read twice by one op; a dropout of a value that
// is also returned (one op of two results); and an optimizer-like update
// whose two moments are returned as well (one op of three results). Seed
// and first offset at run time.
func.func @main(%x: tensor<?x24xf32>, %p: tensor<?x24xf32>,
                %g: tensor<?x2x12xf32>, %h: tensor<?x2x12xf32>,
                %s: tensor<?x2x1xf32>, %rng: tensor<2xi64>)
    -> (tensor<?x24xf32>, tensor<?x2x12xf32>, tensor<?x24xf32>,
        tensor<?x24xf32>, tensor<?x24xf32>, tensor<?x24xf32>,
        tensor<?x24xf32>, tensor<?x24xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %seed = tensor.extract %rng[%c0] : tensor<2xi64>
  %offset = tensor.extract %rng[%c1] : tensor<2xi64>
  %n = tensor.dim %x, %c0 : tensor<?x24xf32>
  %rows = arith.index_cast %n : index to i64
  %c24 = arith.constant 24 : i64
  %size = arith.muli %rows, %c24 : i64
  %off2 = arith.addi %offset, %size : i64
  %off3 = arith.addi %off2, %size : i64
  %off4 = arith.addi %off3, %size : i64

  %r = gnn.apply_nodes(%p) {
  ^bb0(%a: f32):
    %m = arith.maximumf %a, %zero : f32
    gnn.yield %m : f32
  } : (tensor<?x24xf32>) -> tensor<?x24xf32>
  %d = gnn.dropout %r, %seed, %offset rate(0.1) : tensor<?x24xf32>
  %y = gnn.apply_nodes(%x, %d) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.addf %a, %b : f32
    gnn.yield %m : f32
  } : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>

  %t = gnn.apply_nodes(%g, %h, %s) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %sum = arith.addf %a, %b : f32
    %m = arith.mulf %sum, %c : f32
    gnn.yield %m : f32
  } : (tensor<?x2x12xf32>, tensor<?x2x12xf32>, tensor<?x2x1xf32>)
      -> tensor<?x2x12xf32>
  %e = gnn.dropout %t, %seed, %off2 rate(0.25) : tensor<?x2x12xf32>
  %z = gnn.apply_nodes(%e) {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %half : f32
    gnn.yield %m : f32
  } : (tensor<?x2x12xf32>) -> tensor<?x2x12xf32>

  %q = gnn.dropout %p, %seed, %off3 rate(0.5) : tensor<?x24xf32>
  %w = gnn.apply_nodes(%q, %q, %x) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %sum = arith.addf %m, %c : f32
    gnn.yield %sum : f32
  } : (tensor<?x24xf32>, tensor<?x24xf32>, tensor<?x24xf32>)
      -> tensor<?x24xf32>

  %k = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %m = arith.negf %a : f32
    gnn.yield %m : f32
  } : (tensor<?x24xf32>) -> tensor<?x24xf32>
  %kd = gnn.dropout %k, %seed, %off4 rate(0.3) : tensor<?x24xf32>

  %m1 = gnn.apply_nodes(%x, %p) {
  ^bb0(%a: f32, %b: f32):
    %b1 = arith.constant 0.9 : f32
    %b2 = arith.constant 0.1 : f32
    %u = arith.mulf %a, %b1 : f32
    %v = arith.mulf %b, %b2 : f32
    %m = arith.addf %u, %v : f32
    gnn.yield %m : f32
  } : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
  %v1 = gnn.apply_nodes(%x, %p) {
  ^bb0(%a: f32, %b: f32):
    %aa = arith.mulf %a, %a : f32
    %u = arith.mulf %aa, %half : f32
    %bb = arith.mulf %b, %b : f32
    %v = arith.addf %u, %bb : f32
    gnn.yield %v : f32
  } : (tensor<?x24xf32>, tensor<?x24xf32>) -> tensor<?x24xf32>
  %p1 = gnn.apply_nodes(%p, %m1, %v1) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %one = arith.constant 1.0 : f32
    %lr = arith.constant 0.01 : f32
    %sq = math.sqrt %c : f32
    %e1 = arith.addf %sq, %one : f32
    %q1 = arith.divf %b, %e1 : f32
    %st = arith.mulf %lr, %q1 : f32
    %np = arith.subf %a, %st : f32
    gnn.yield %np : f32
  } : (tensor<?x24xf32>, tensor<?x24xf32>, tensor<?x24xf32>)
      -> tensor<?x24xf32>
  return %y, %z, %w, %k, %kd, %p1, %m1, %v1
      : tensor<?x24xf32>, tensor<?x2x12xf32>, tensor<?x24xf32>,
        tensor<?x24xf32>, tensor<?x24xf32>, tensor<?x24xf32>,
        tensor<?x24xf32>, tensor<?x24xf32>
}
