// RUN: gnn-opt %s -gnn-approximate-vector-math | FileCheck %s

// A vector exp becomes a polynomial on vectors; the scalar exp stays a
// libm call.
// CHECK-LABEL: func @exp
// CHECK-SAME: (%[[V:.*]]: vector<8xf32>, %[[S:.*]]: f32)
// CHECK-NOT: math.exp {{.*}} : vector
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK: arith.shli {{.*}} : vector<8xi32>
// CHECK: %[[E:.*]] = math.exp %[[S]] : f32
// CHECK-NOT: math.exp
// CHECK: return %{{.*}}, %[[E]] : vector<8xf32>, f32
func.func @exp(%v: vector<8xf32>, %s: f32) -> (vector<8xf32>, f32) {
  %0 = math.exp %v : vector<8xf32>
  %1 = math.exp %s : f32
  return %0, %1 : vector<8xf32>, f32
}

// Other functions on vectors too; code without vector math is untouched.
// CHECK-LABEL: func @tanh_and_log
// CHECK-NOT: math.tanh
// CHECK-NOT: math.log
// CHECK: return
func.func @tanh_and_log(%v: vector<4xf32>) -> vector<4xf32> {
  %0 = math.tanh %v : vector<4xf32>
  %1 = math.log %0 : vector<4xf32>
  return %1 : vector<4xf32>
}

// CHECK-LABEL: func @scalar_only
// CHECK-NEXT: math.exp %{{.*}} : f32
// CHECK-NEXT: return
func.func @scalar_only(%s: f32) -> f32 {
  %0 = math.exp %s : f32
  return %0 : f32
}
