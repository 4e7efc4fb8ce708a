// RUN: gnn-opt %s -split-input-file -verify-diagnostics -gnn-check-dim-indices | FileCheck %s

// Indices within the rank, dynamic indices and unranked operands pass.
// CHECK-LABEL: func @in_range
// CHECK-COUNT-3: tensor.dim
// CHECK: memref.dim
func.func @in_range(%x: tensor<?x4xf32>, %u: tensor<*xf32>, %m: memref<?xf32>,
                    %i: index) -> (index, index, index, index) {
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %a = tensor.dim %x, %c1 : tensor<?x4xf32>
  %b = tensor.dim %x, %i : tensor<?x4xf32>
  %c = tensor.dim %u, %c7 : tensor<*xf32>
  %c0 = arith.constant 0 : index
  %d = memref.dim %m, %c0 : memref<?xf32>
  return %a, %b, %c, %d : index, index, index, index
}

// -----

// Every out-of-range query is reported, in any region; so are negative
// indices. (The verifiers reject rank-0 operands.)
func.func @out_of_range(%x: tensor<?xindex>, %m: memref<?x?xf32>)
    -> (index, index) {
  %big = arith.constant 16777217 : index
  %r = scf.while (%a = %x) : (tensor<?xindex>) -> tensor<?xindex> {
    // expected-error @+1 {{'tensor.dim' op dimension index 16777217 is out of range for a rank-1 operand (0 to 0)}}
    %n = tensor.dim %a, %big : tensor<?xindex>
    %go = arith.cmpi ugt, %n, %big : index
    scf.condition(%go) %a : tensor<?xindex>
  } do {
  ^bb0(%a: tensor<?xindex>):
    scf.yield %a : tensor<?xindex>
  }
  %c2 = arith.constant 2 : index
  // expected-error @+1 {{'memref.dim' op dimension index 2 is out of range for a rank-2 operand (0 to 1)}}
  %p = memref.dim %m, %c2 : memref<?x?xf32>
  %neg = arith.constant -1 : index
  // expected-error @+1 {{'memref.dim' op dimension index -1 is out of range for a rank-2 operand (0 to 1)}}
  %q = memref.dim %m, %neg : memref<?x?xf32>
  return %p, %q : index, index
}
