// RUN: gnn-opt %s -split-input-file -verify-diagnostics -gnn-lower-to-cpu

// A dimension query past its operand's rank, on a loop-carried value, is an
// error: it reached upstream patterns that index the shape with it (a crash
// found by gnn-mutate).
func.func @loop_carried(%x: tensor<?xf32>, %all: tensor<?xindex>) -> tensor<?xindex> {
  %big = arith.constant 16777217 : index
  %r = scf.while (%a = %all) : (tensor<?xindex>) -> tensor<?xindex> {
    // expected-error @+1 {{'tensor.dim' op dimension index 16777217 is out of range for a rank-1 operand (0 to 0)}}
    %n = tensor.dim %a, %big : tensor<?xindex>
    %any = arith.cmpi ugt, %n, %big : index
    scf.condition(%any) %a : tensor<?xindex>
  } do {
  ^bb0(%a: tensor<?xindex>):
    %xa = gnn.gather_rows %x[%a] : (tensor<?xf32>, tensor<?xindex>) -> tensor<?xf32>
    %keep = gnn.filter_nodes(%xa) {
    ^bb0(%e: f32):
      %zero = arith.constant 0.0 : f32
      %p = arith.cmpf ogt, %e, %zero : f32
      gnn.yield %p : i1
    } : (tensor<?xf32>) -> tensor<?xindex>
    %next = gnn.gather_rows %a[%keep] : (tensor<?xindex>, tensor<?xindex>) -> tensor<?xindex>
    scf.yield %next : tensor<?xindex>
  }
  return %r : tensor<?xindex>
}

// -----

// An index that only folding makes constant is caught after folding.
func.func @folded(%all: tensor<?xindex>) -> tensor<?xindex> {
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %r = scf.while (%a = %all) : (tensor<?xindex>) -> tensor<?xindex> {
    %i = arith.addi %c3, %c4 : index
    // expected-error @+1 {{'tensor.dim' op dimension index 7 is out of range for a rank-1 operand (0 to 0)}}
    %n = tensor.dim %a, %i : tensor<?xindex>
    %any = arith.cmpi ugt, %n, %c3 : index
    scf.condition(%any) %a : tensor<?xindex>
  } do {
  ^bb0(%a: tensor<?xindex>):
    %b = gnn.gather_rows %a[%a] : (tensor<?xindex>, tensor<?xindex>) -> tensor<?xindex>
    scf.yield %b : tensor<?xindex>
  }
  return %r : tensor<?xindex>
}
