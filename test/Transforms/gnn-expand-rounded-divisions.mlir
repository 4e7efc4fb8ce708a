// RUN: gnn-opt %s -split-input-file -gnn-expand-rounded-divisions | FileCheck %s

// The floor and the ceiling from the truncating quotient: moved by one
// where the remainder is not zero and its sign against the divisor's says
// the truncation went the other way (floor: signs differ; ceiling: alike).
// CHECK-LABEL: func @scalars
// CHECK-SAME: (%[[N:.*]]: i64, %[[M:.*]]: i64)
// CHECK: %[[Z:.*]] = arith.constant 0 : i64
// CHECK: %[[Q:.*]] = arith.divsi %[[N]], %[[M]] : i64
// CHECK: %[[R:.*]] = arith.remsi %[[N]], %[[M]] : i64
// CHECK: %[[INEXACT:.*]] = arith.cmpi ne, %[[R]], %[[Z]] : i64
// CHECK: %[[RNEG:.*]] = arith.cmpi slt, %[[R]], %[[Z]] : i64
// CHECK: %[[MNEG:.*]] = arith.cmpi slt, %[[M]], %[[Z]] : i64
// CHECK: %[[DIFFER:.*]] = arith.cmpi ne, %[[RNEG]], %[[MNEG]] : i1
// CHECK: %[[DOWN:.*]] = arith.andi %[[INEXACT]], %[[DIFFER]] : i1
// CHECK: %[[MINUS:.*]] = arith.constant -1 : i64
// CHECK: %[[BELOW:.*]] = arith.addi %[[Q]], %[[MINUS]] : i64
// CHECK: %[[FLOOR:.*]] = arith.select %[[DOWN]], %[[BELOW]], %[[Q]] : i64
// CHECK: arith.divsi %[[N]], %[[M]] : i64
// CHECK: arith.remsi %[[N]], %[[M]] : i64
// CHECK: %[[ALIKE:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i1
// CHECK: %[[UP:.*]] = arith.andi %{{.*}}, %[[ALIKE]] : i1
// CHECK: %[[PLUS:.*]] = arith.constant 1 : i64
// CHECK: %[[ABOVE:.*]] = arith.addi %{{.*}}, %[[PLUS]] : i64
// CHECK: %[[CEIL:.*]] = arith.select %[[UP]], %[[ABOVE]], %{{.*}} : i64
// CHECK-NOT: floordivsi
// CHECK-NOT: ceildivsi
// CHECK: return %[[FLOOR]], %[[CEIL]]
func.func @scalars(%n: i64, %m: i64) -> (i64, i64) {
  %f = arith.floordivsi %n, %m : i64
  %c = arith.ceildivsi %n, %m : i64
  return %f, %c : i64, i64
}

// -----

// Vectors and indices alike; other divisions are left alone.
// CHECK-LABEL: func @vectors_and_indices
// CHECK: arith.constant dense<0> : vector<4xi32>
// CHECK: arith.divsi %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: arith.remsi %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: arith.constant dense<1> : vector<4xi32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi1>, vector<4xi32>
// CHECK: arith.divsi %{{.*}}, %{{.*}} : index
// CHECK: arith.constant -1 : index
// CHECK: arith.ceildivui
// CHECK-NOT: floordivsi
// CHECK-NOT: ceildivsi
func.func @vectors_and_indices(%a: vector<4xi32>, %b: vector<4xi32>, %i: index, %j: index) -> (vector<4xi32>, index, index) {
  %c = arith.ceildivsi %a, %b : vector<4xi32>
  %f = arith.floordivsi %i, %j : index
  %u = arith.ceildivui %i, %j : index
  return %c, %f, %u : vector<4xi32>, index, index
}
