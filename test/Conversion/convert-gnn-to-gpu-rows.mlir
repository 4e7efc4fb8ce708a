// RUN: gnn-opt %s --convert-gnn-to-gpu --split-input-file | FileCheck %s
// RUN: gnn-opt %s --convert-gnn-to-gpu=row-kernels=false --split-input-file | FileCheck %s --check-prefix=LOOPS

// Layer norm: a warp per row, four warps (rows) to a block; the launch
// waits for the weight and bias checks and at least one row. Lane j sums
// elements j, j + 32, ... and five butterfly shuffles give every lane the
// row's sum: once for the mean, once for the variance; then each lane
// writes its elements.
// CHECK-LABEL: func.func @layer_norm
// CHECK:         scf.if
// CHECK:           arith.cmpi ugt
// CHECK:           scf.if
// CHECK:             %[[BLOCKS:.*]] = arith.ceildivui %{{.*}}, %c4
// CHECK:             gpu.launch blocks({{.*}}) in (%{{.*}} = %[[BLOCKS]], {{.*}}) threads(%[[LANE:.*]], %[[WARP:.*]], %{{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}} = %c4
// CHECK:               %[[FIRST:.*]] = arith.muli %{{.*}}, %c4
// CHECK:               %[[ROW:.*]] = arith.addi %[[FIRST]], %[[WARP]]
// CHECK:               arith.cmpi ult, %[[ROW]]
// CHECK:               scf.for %{{.*}} = %[[LANE]] to %{{.*}} step %c32
// CHECK-COUNT-5:       gpu.shuffle xor
// CHECK:               scf.for %{{.*}} = %[[LANE]] to %{{.*}} step %c32
// CHECK-COUNT-5:       gpu.shuffle xor
// CHECK:               math.rsqrt
// CHECK:               scf.for %{{.*}} = %[[LANE]] to %{{.*}} step %c32
// CHECK:                 memref.store
// CHECK-NOT:           gpu.shuffle
// CHECK:             gpu.terminator
// LOOPS-LABEL: func.func @layer_norm
// LOOPS-NOT:     gpu.launch
// LOOPS:         scf.parallel
func.func @layer_norm(%x: tensor<?x64xf32>, %w: tensor<64xf32>,
                      %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %y = gnn.layer_norm %x, %w, %b eps(1.0e-05)
      : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// Its gradient: four reductions (mean, variance, mean(g), mean(g * xh)),
// then both results and the addend per element.
// CHECK-LABEL: func.func @layer_norm_grad
// CHECK:         gpu.launch
// CHECK-COUNT-20:  gpu.shuffle xor
// CHECK:           scf.for
// CHECK:             memref.store
// CHECK:             memref.store
// CHECK-NOT:       gpu.shuffle
// CHECK:           gpu.terminator
func.func @layer_norm_grad(%x: tensor<?x?xf32>, %w: tensor<?xf32>,
                           %dy: tensor<?x?xf32>, %a: tensor<?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %dx, %dxh = gnn.layer_norm_grad %x, %w, %dy plus %a eps(1.0e-05)
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
      -> (tensor<?x?xf32>, tensor<?x?xf32>)
  return %dx, %dxh : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// Log-softmax: the row's maximum (maximumf over the shuffles), then the sum
// of exponentials.
// CHECK-LABEL: func.func @log_softmax
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK:             arith.maximumf
// CHECK-COUNT-5:   gpu.shuffle xor
// CHECK:           scf.for
// CHECK:             math.exp
// CHECK-COUNT-5:   gpu.shuffle xor
// CHECK:           math.log
func.func @log_softmax(%x: tensor<?x29xf32>) -> tensor<?x29xf32> {
  %y = gnn.log_softmax %x : (tensor<?x29xf32>) -> tensor<?x29xf32>
  return %y : tensor<?x29xf32>
}

// -----

// f64 rows keep the loop form (the kernel reduces f32).
// CHECK-LABEL: func.func @log_softmax_f64
// CHECK-NOT:     gpu.launch
// CHECK:         scf.parallel
func.func @log_softmax_f64(%x: tensor<?x29xf64>) -> tensor<?x29xf64> {
  %y = gnn.log_softmax %x : (tensor<?x29xf64>) -> tensor<?x29xf64>
  return %y : tensor<?x29xf64>
}

// -----

// A sum within rows (the last dim alone; on [N, 8, 64] a row per node and
// head, its indices recovered from the warp's row): the same reduction,
// lane 0 stores the total. Sums over other dims keep the loop form.
// CHECK-LABEL: func.func @row_sums
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK-COUNT-5:   gpu.shuffle xor
// CHECK:           arith.cmpi eq, %{{.*}}, %c0
// CHECK:           scf.if
// CHECK:             memref.store
// CHECK:         gpu.launch
// CHECK:           arith.remui
// CHECK:           arith.divui
// CHECK-COUNT-5:   gpu.shuffle xor
// CHECK-NOT:     gpu.launch
// CHECK:         scf.parallel
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @row_sums(%x: tensor<?x29xf32>, %y: tensor<?x8x64xf32>)
    -> (tensor<?x1xf32>, tensor<?x8x1xf32>, tensor<29xf32>) {
  %a = gnn.sum_to %x : tensor<?x29xf32> -> tensor<?x1xf32>
  %b = gnn.sum_to %y : tensor<?x8x64xf32> -> tensor<?x8x1xf32>
  %c = gnn.sum_to %x : tensor<?x29xf32> -> tensor<29xf32>
  return %a, %b, %c : tensor<?x1xf32>, tensor<?x8x1xf32>, tensor<29xf32>
}

// -----

// A column summed into one element (a loss over its tokens, then the 1x1
// into a scalar): one warp, lane j summing elements j, j + 32, ..., the
// lanes' sums added by butterfly shuffles, lane 0 storing; not the loop
// form's single iteration, which the host would run.
// CHECK-LABEL: func.func @column_totals
// CHECK:         memref.alloc() : memref<1x1xf32>
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c32,
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c32
// CHECK:             memref.load
// CHECK:             arith.addf
// CHECK-COUNT-5:   gpu.shuffle xor
// CHECK:           scf.if
// CHECK:             memref.store
// CHECK:         memref.alloc() : memref<f32>
// CHECK:         gpu.launch
// CHECK-COUNT-5:   gpu.shuffle xor
// CHECK:         return
// LOOPS-LABEL: func.func @column_totals
// LOOPS-NOT:     gpu.launch
func.func @column_totals(%x: tensor<?x1xf32>) -> tensor<f32> {
  %a = gnn.sum_to %x : tensor<?x1xf32> -> tensor<1x1xf32>
  %b = gnn.sum_to %a : tensor<1x1xf32> -> tensor<f32>
  return %b : tensor<f32>
}
