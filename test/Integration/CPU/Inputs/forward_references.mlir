// Values used before a region defines them, then an error in that region:
// MLIR 19's parser writes into the region's freed operations while it
// cleans up (hostile-inputs.test). Chunks for --split-input-file: the
// second and fourth fail to parse, the first and third are fine.
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %s = arith.addf %a, %a : f32
    gnn.yield %s : f32
  } : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @second(%x: tensor<4xf32>) -> tensor<4xf32> {
  %u0 = arith.addf %v0, %v0 : f32
  %u1 = arith.addf %v1, %v1 : f32
  %u2 = arith.addf %v2, %v2 : f32
  %u3 = arith.addf %v3, %v3 : f32
  %u4 = arith.addf %v4, %v4 : f32
  %u5 = arith.addf %v5, %v5 : f32
  %u6 = arith.addf %v6, %v6 : f32
  %u7 = arith.addf %v7, %v7 : f32
  %u8 = arith.addf %v8, %v8 : f32
  %u9 = arith.addf %v9, %v9 : f32
  %u10 = arith.addf %v10, %v10 : f32
  %u11 = arith.addf %v11, %v11 : f32
  %u12 = arith.addf %v12, %v12 : f32
  %u13 = arith.addf %v13, %v13 : f32
  %u14 = arith.addf %v14, %v14 : f32
  %u15 = arith.addf %v15, %v15 : f32
  %u16 = arith.addf %v16, %v16 : f32
  %u17 = arith.addf %v17, %v17 : f32
  %u18 = arith.addf %v18, %v18 : f32
  %u19 = arith.addf %v19, %v19 : f32
  %r = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %v0 = arith.addf %a, %a : f32
    %v1 = arith.addf %a, %a : f32
    %v2 = arith.addf %a, %a : f32
    %v3 = arith.addf %a, %a : f32
    %v4 = arith.addf %a, %a : f32
    %v5 = arith.addf %a, %a : f32
    %v6 = arith.addf %a, %a : f32
    %v7 = arith.addf %a, %a : f32
    %v8 = arith.addf %a, %a : f32
    %v9 = arith.addf %a, %a : f32
    %v10 = arith.addf %a, %a : f32
    %v11 = arith.addf %a, %a : f32
    %v12 = arith.addf %a, %a : f32
    %v13 = arith.addf %a, %a : f32
    %v14 = arith.addf %a, %a : f32
    %v15 = arith.addf %a, %a : f32
    %v16 = arith.addf %a, %a : f32
    %v17 = arith.addf %a, %a : f32
    %v18 = arith.addf %a, %a : f32
    %v19 = arith.addf %a, %a : f32
    %v0 = arith.addf %a, %a : f32
    gnn.yield %a : f32
  } : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @third(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %s = arith.addf %a, %a : f32
    gnn.yield %s : f32
  } : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @fourth(%x: tensor<4xf32>) -> tensor<4xf32> {
  %u0 = arith.addf %v0, %v0 : f32
  %u1 = arith.addf %v1, %v1 : f32
  %u2 = arith.addf %v2, %v2 : f32
  %u3 = arith.addf %v3, %v3 : f32
  %u4 = arith.addf %v4, %v4 : f32
  %u5 = arith.addf %v5, %v5 : f32
  %u6 = arith.addf %v6, %v6 : f32
  %u7 = arith.addf %v7, %v7 : f32
  %u8 = arith.addf %v8, %v8 : f32
  %u9 = arith.addf %v9, %v9 : f32
  %u10 = arith.addf %v10, %v10 : f32
  %u11 = arith.addf %v11, %v11 : f32
  %u12 = arith.addf %v12, %v12 : f32
  %u13 = arith.addf %v13, %v13 : f32
  %u14 = arith.addf %v14, %v14 : f32
  %u15 = arith.addf %v15, %v15 : f32
  %u16 = arith.addf %v16, %v16 : f32
  %u17 = arith.addf %v17, %v17 : f32
  %u18 = arith.addf %v18, %v18 : f32
  %u19 = arith.addf %v19, %v19 : f32
  %r = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %v0 = arith.addf %a, %a : f32
    %v1 = arith.addf %a, %a : f32
    %v2 = arith.addf %a, %a : f32
    %v3 = arith.addf %a, %a : f32
    %v4 = arith.addf %a, %a : f32
    %v5 = arith.addf %a, %a : f32
    %v6 = arith.addf %a, %a : f32
    %v7 = arith.addf %a, %a : f32
    %v8 = arith.addf %a, %a : f32
    %v9 = arith.addf %a, %a : f32
    %v10 = arith.addf %a, %a : f32
    %v11 = arith.addf %a, %a : f32
    %v12 = arith.addf %a, %a : f32
    %v13 = arith.addf %a, %a : f32
    %v14 = arith.addf %a, %a : f32
    %v15 = arith.addf %a, %a : f32
    %v16 = arith.addf %a, %a : f32
    %v17 = arith.addf %a, %a : f32
    %v18 = arith.addf %a, %a : f32
    %v19 = arith.addf %a, %a : f32
    %v0 = arith.addf %a, %a : f32
    gnn.yield %a : f32
  } : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
