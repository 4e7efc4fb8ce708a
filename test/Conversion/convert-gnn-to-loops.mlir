// RUN: gnn-opt %s -convert-gnn-to-loops -split-input-file | FileCheck %s
// RUN: gnn-opt %s -convert-gnn-to-loops=parallel-dense -split-input-file | FileCheck %s --check-prefix=DENSE
// RUN: gnn-opt %s -convert-gnn-to-loops=attention-blocks=false -split-input-file | FileCheck %s --check-prefix=NOBLOCKS
// RUN: gnn-opt %s -gnn-lower-to-cpu -split-input-file | FileCheck %s --check-prefix=LLVM
// RUN: gnn-opt %s -gnn-lower-to-cpu=fuse=false -split-input-file | FileCheck %s --check-prefix=LLVM
// RUN: gnn-opt %s -convert-gnn-to-gpu -split-input-file | FileCheck %s --check-prefix=GPUK

// A graph argument becomes its index arrays; edge-wise ops loop over edges
// in parallel, reading the endpoints of each edge.
// CHECK-LABEL: func @score
// CHECK-SAME: (%[[NS:.*]]: index, %[[SRC:.*]]: tensor<?xindex>, %[[DST:.*]]: tensor<?xindex>, %{{.*}}: tensor<?xindex>, %{{.*}}: tensor<?xindex>, %{{.*}}: tensor<?xindex>, %{{.*}}: tensor<?x2x4xf32>, %{{.*}}: tensor<?x2x4xf32>) -> tensor<?x2x1xf32> attributes {llvm.emit_c_interface}
// CHECK: %[[S:.*]] = bufferization.to_memref %[[SRC]]
// CHECK: %[[E:.*]] = memref.dim %[[S]]
// CHECK: %[[OUT:.*]] = memref.alloc(%[[E]]) : memref<?x2x1xf32>
// CHECK: scf.parallel (%[[EDGE:.*]]) = (%{{.*}}) to (%[[E]])
// CHECK: memref.load %[[S]][%[[EDGE]]]
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: math.exp
// CHECK: memref.store {{.*}}, %[[OUT]][%[[EDGE]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT: gnn.
// LLVM-LABEL: llvm.func @score
// LLVM-NOT: {{(= |^ *)gnn\.}}
// LLVM-LABEL: llvm.func @_mlir_ciface_score
func.func @score(%g: !gnn.graph<complete>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>) -> tensor<?x2x1xf32> {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q) then [exp] : (!gnn.graph<complete>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  return %s : tensor<?x2x1xf32>
}

// -----

// Receiving ops loop over destinations and their CSR in-edges; one walk
// updates every message/reduce pair.
// CHECK-LABEL: func @receive
// CHECK: scf.parallel
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<?xindex>
// CHECK: scf.for %[[SLOT:.*]] = {{.*}} iter_args(%[[COUNT:.*]] = %{{.*}}) -> (index)
// CHECK: arith.maximumf
// CHECK: arith.addf
// CHECK: arith.select
// LLVM-LABEL: llvm.func @receive
// LLVM: omp.parallel
func.func @receive(%g: !gnn.graph<general>, %x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
  %m, %s = gnn.send_and_recv %g, [copy_u(%x) -> max, copy_u(%x) -> sum] : (!gnn.graph<general>, tensor<?x3xf32>, tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>)
  return %m, %s : tensor<?x3xf32>, tensor<?x3xf32>
}

// -----

// The fused attention keeps a running maximum without a clamp and never
// stores a per-edge value. With static feature sizes, destinations go in
// tiles of 64 (stack buffers per tile): each row's CSR row is checked for one
// range of sources in order, runs of rows with the same first source take
// scores of the run against 128 sources at a time through the runtime's
// GEMM, a masked online softmax over vectors of 16 scores (one AVX-512
// register), and a second GEMM into the weighted sums.
// CHECK: func.func private @gnn_rt_gemm(memref<?x?xf32, strided<[?, 1], offset: ?>>, memref<?x?xf32, strided<[?, 1], offset: ?>>, memref<?x?xf32, strided<[?, 1], offset: ?>>, i32, f32, f32) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func @fused
// CHECK: %[[TILES:.*]] = arith.ceildivui %{{.*}}, %c64
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TILES]])
// CHECK: memref.alloca_scope
// CHECK: memref.alloca() : memref<64x128xf32>
// CHECK: memref.alloca() : memref<64x8xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %true{{.*}}) -> (i1)
// CHECK: scf.while
// CHECK: scf.while
// CHECK: scf.if
// CHECK: scf.for {{.*}} step %c128
// CHECK: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i32,
// CHECK: scf.for {{.*}} step %c16{{.*}} -> (vector<16xf32>)
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: vector.reduction <maximumf>
// CHECK: math.exp %{{.*}} : vector<16xf32>
// CHECK: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c0_i32,
// Rows outside such runs go one by one (the chunked loop below), in groups
// of 32.
// CHECK: scf.for {{.*}} step %c32
// CHECK: scf.for {{.*}} step %c8{{.*}} -> (f32, f32, vector<8xf32>)
//
// Without attention-blocks: destinations in tiles of 32 (heads outside),
// q and the weighted sum in vector registers, in-edges in chunks of 8: one
// vector of scores, one max and one rescale per chunk, slots past the last
// edge scored -inf.
// NOBLOCKS-LABEL: func @fused
// NOBLOCKS-NOT: gnn_rt_gemm
// NOBLOCKS: %[[TILES:.*]] = arith.ceildivui %{{.*}}, %c32
// NOBLOCKS: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TILES]])
// NOBLOCKS: scf.for
// NOBLOCKS: scf.for
// NOBLOCKS: %[[QROW:.*]] = vector.load %{{.*}} : memref<?x2x4xf32, strided<[?, 4, 1], offset: ?>>, vector<4xf32>
// NOBLOCKS: scf.for {{.*}} step %c8{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32, vector<8xf32>)
// NOBLOCKS-COUNT-8: vector.reduction <add>
// NOBLOCKS: vector.reduction <maximumf>, %{{.*}} : vector<8xf32> into f32
// NOBLOCKS: math.exp %{{.*}} : f32
// NOBLOCKS: math.exp %{{.*}} : vector<8xf32>
// NOBLOCKS-COUNT-8: vector.fma
// NOBLOCKS: vector.reduction <add>, %{{.*}} : vector<8xf32> into f32
// NOBLOCKS: arith.cmpf ogt
// NOBLOCKS: vector.store
// NOBLOCKS-NOT: memref.alloc({{.*}}) : memref<?x2x1xf32>
func.func @fused(%g: !gnn.graph<general>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x8xf32>) -> tensor<?x2x8xf32> {
  %o = gnn.fused_attention %g, %q, %k, %v scale(0.5) normalize : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  return %o : tensor<?x2x8xf32>
}

// -----

// Clamped scores are bounded, so a run's weights are exp(score) unshifted:
// one sweep per tile row scales, clamps, exponentiates and masks each
// vector of 16 scores and sums the weights, with no running maximum.
// CHECK-LABEL: func @fused_clamped
// CHECK: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i32,
// CHECK-NOT: vector.reduction <maximumf>
// CHECK: scf.for {{.*}} step %c16{{.*}} -> (vector<16xf32>)
// CHECK: arith.minimumf %{{.*}} : vector<16xf32>
// CHECK: math.exp %{{.*}} : vector<16xf32>
// CHECK: arith.select %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: vector.store
// CHECK: arith.addf %{{.*}} : vector<16xf32>
// CHECK-NEXT: scf.yield
// CHECK-NOT: vector.reduction <maximumf>
// CHECK: vector.reduction <add>
// CHECK: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c0_i32,
func.func @fused_clamped(%g: !gnn.graph<general>, %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x8xf32>) -> tensor<?x2x8xf32> {
  %o = gnn.fused_attention %g, %q, %k, %v scale(0.5) clamp(-5.0, 5.0) normalize : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  return %o : tensor<?x2x8xf32>
}

// -----

// With d a multiple of 8, a chunk's 8 dot products are lane-wise FMAs of
// 8-wide pieces of q and k (d / 8 per edge), summed by one transposing tree
// of shuffles (4 + 2 + 1 adds), with no horizontal sum per edge.
// NOBLOCKS-LABEL: func @fused_chunk_dots
// NOBLOCKS: scf.for {{.*}} step %c8{{.*}} -> (f32, f32, vector<8xf32>)
// NOBLOCKS: vector.create_mask
// NOBLOCKS-NOT: vector.reduction <add>
// NOBLOCKS-COUNT-8: vector.fma {{.*}} : vector<8xf32>
// NOBLOCKS-COUNT-8: vector.fma {{.*}} : vector<8xf32>
// NOBLOCKS-NOT: vector.reduction <add>
// NOBLOCKS: vector.shuffle {{.*}} [0, 8, 2, 10, 4, 12, 6, 14]
// NOBLOCKS: vector.shuffle {{.*}} [1, 9, 3, 11, 5, 13, 7, 15]
// NOBLOCKS: vector.shuffle {{.*}} [0, 1, 8, 9, 4, 5, 12, 13]
// NOBLOCKS: vector.shuffle {{.*}} [2, 3, 10, 11, 6, 7, 14, 15]
// NOBLOCKS: vector.shuffle {{.*}} [0, 1, 2, 3, 8, 9, 10, 11]
// NOBLOCKS: vector.shuffle {{.*}} [4, 5, 6, 7, 12, 13, 14, 15]
// NOBLOCKS: vector.reduction <maximumf>
func.func @fused_chunk_dots(%g: !gnn.graph<general>, %q: tensor<?x2x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x8xf32>) -> tensor<?x2x8xf32> {
  %o = gnn.fused_attention %g, %q, %k, %v scale(0.25) normalize : (!gnn.graph<general>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  return %o : tensor<?x2x8xf32>
}

// -----

// Dynamic feature sizes take the scalar loops.
// CHECK-LABEL: func @fused_dynamic
// NOBLOCKS-LABEL: func @fused_dynamic
// CHECK-NOT: vector.
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32)
// CHECK: math.exp
func.func @fused_dynamic(%g: !gnn.graph<general>, %q: tensor<?x2x?xf32>, %k: tensor<?x2x?xf32>, %v: tensor<?x2x?xf32>) -> (tensor<?x2x?xf32>, tensor<?x2x1xf32>) {
  %o, %z = gnn.fused_attention %g, %q, %k, %v scale(0.5) clamp(-5.0, 5.0) : (!gnn.graph<general>, tensor<?x2x?xf32>, tensor<?x2x?xf32>, tensor<?x2x?xf32>) -> (tensor<?x2x?xf32>, tensor<?x2x1xf32>)
  return %o, %z : tensor<?x2x?xf32>, tensor<?x2x1xf32>
}

// -----

// Edge subsets become a per-edge mask (receiving) or a loop over the listed
// ids with the other rows zeroed (edge-wise).
// CHECK-LABEL: func @subset
// CHECK: memref.alloc(%{{.*}}) : memref<?xi8>
// CHECK: arith.cmpi ult
// CHECK: scf.if
func.func @subset(%g: !gnn.graph<general>, %e: tensor<?x1xf32>, %eids: tensor<?xindex>) -> tensor<?x1xf32> {
  %z = gnn.reduce %g, mean(%e) edges(%eids) : (!gnn.graph<general>, tensor<?x1xf32>, tensor<?xindex>) -> tensor<?x1xf32>
  return %z : tensor<?x1xf32>
}

// -----

// Graph counts come from the index arrays.
// CHECK-LABEL: func @counts
// CHECK-SAME: (%[[NS:[^:]*]]: index
// CHECK: %[[P:.*]] = bufferization.to_memref
// CHECK: %[[DIM:.*]] = memref.dim
// CHECK: return %[[NS]]
func.func @counts(%g: !gnn.graph<general>) -> (index, index, index) {
  %0 = gnn.num_src_nodes %g : !gnn.graph<general>
  %1 = gnn.num_dst_nodes %g : !gnn.graph<general>
  %2 = gnn.num_edges %g : !gnn.graph<general>
  return %0, %1, %2 : index, index, index
}

// -----

// Filters count in one pass and fill in a second.
// CHECK-LABEL: func @filters
// CHECK: %[[N:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (index)
// CHECK: arith.cmpf ogt
// CHECK: %[[IDS:.*]] = memref.alloc(%[[N]]) : memref<?xindex>
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[IDS]]
func.func @filters(%g: !gnn.graph<general>, %x: tensor<?xf32>) -> (tensor<?xindex>, tensor<?xindex>) {
  %n = gnn.filter_nodes(%x) {
  ^bb0(%a: f32):
    %zero = arith.constant 0.0 : f32
    %p = arith.cmpf ogt, %a, %zero : f32
    gnn.yield %p : i1
  } : (tensor<?xf32>) -> tensor<?xindex>
  %e = gnn.filter_edges %g, (u %x) from %n {
  ^bb0(%a: f32):
    %zero = arith.constant 0.0 : f32
    %p = arith.cmpf olt, %a, %zero : f32
    gnn.yield %p : i1
  } : (!gnn.graph<general>, tensor<?xf32>, tensor<?xindex>) -> tensor<?xindex>
  return %n, %e : tensor<?xindex>, tensor<?xindex>
}

// -----

// in_subgraph: a sequential prefix sum of the listed nodes' in-degrees (bad
// ids reported, given no edges), then a parallel copy of their CSR rows; the
// fused attention walks only those rows. The ACT loop carries tensors
// through scf.while.
// CHECK-LABEL: func @in_subgraph
// CHECK: %[[E:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (index)
// CHECK: func.call @gnn_rt_id_out_of_range
// CHECK: memref.alloc(%[[E]]) : memref<?xindex>
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: scf.parallel
// LLVM-LABEL: llvm.func @in_subgraph
func.func @in_subgraph(%g: !gnn.graph<general>, %active: tensor<?xindex>,
                       %q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>,
                       %v: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %sub, %eids = gnn.in_subgraph %g, %active
      : (!gnn.graph<general>, tensor<?xindex>) -> (!gnn.graph<general>, tensor<?xindex>)
  %a = gnn.fused_attention %sub, %q, %k, %v scale(5.000000e-01) normalize
      : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  return %a : tensor<?x2x4xf32>
}

// -----

// A loop whose carried id list changes size every iteration (as the ACT
// loop's active set does) bufferizes: fresh buffers per iteration.
// CHECK-LABEL: func @shrinking
// CHECK: scf.while
// LLVM-LABEL: llvm.func @shrinking
func.func @shrinking(%x: tensor<?xf32>, %all: tensor<?xindex>) -> tensor<?xindex> {
  %c0 = arith.constant 0 : index
  %r = scf.while (%a = %all) : (tensor<?xindex>) -> tensor<?xindex> {
    %n = tensor.dim %a, %c0 : tensor<?xindex>
    %any = arith.cmpi ugt, %n, %c0 : index
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

// A dense layer is one call of the runtime's BLAS-backed layer through its C
// interface (row-major views: any row stride and offset); layer_norm and
// log_softmax are parallel loops over rows. With parallel-dense (the CPU
// pipeline), the rows go in one call per OpenMP thread, at least 16 rows and
// at least one call per layer.
// CHECK-LABEL: func.func private @gnn_rt_linear(memref<?x?xf32, strided<[?, 1], offset: ?>>, memref<?x?xf32, strided<[?, 1], offset: ?>>, memref<?xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func @dense
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK-NOT: omp_get_max_threads
// CHECK: call @gnn_rt_linear(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<?x?xf32, strided<[?, 1], offset: ?>>, memref<?x?xf32, strided<[?, 1], offset: ?>>, memref<?xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>) -> ()
// CHECK: scf.parallel
// CHECK: math.rsqrt
// CHECK: scf.parallel
// CHECK: math.log
// DENSE-LABEL: func.func private @omp_get_max_threads() -> i32
// DENSE-LABEL: func @dense
// DENSE: %[[ROWS:.*]] = memref.dim %[[X:.*]], %c0
// DENSE: %[[OUT:.*]] = memref.alloc(%[[ROWS]]) : memref<?x4xf32>
// DENSE: %[[T:.*]] = call @omp_get_max_threads() : () -> i32
// DENSE: %[[TI:.*]] = arith.index_cast %[[T]] : i32 to index
// DENSE: %[[T1:.*]] = arith.maxui %[[TI]], %c1
// DENSE: %[[SHARE:.*]] = arith.ceildivui %[[ROWS]], %[[T1]]
// DENSE: %[[PER:.*]] = arith.maxui %[[SHARE]], %c16
// DENSE: %[[N:.*]] = arith.ceildivui %[[ROWS]], %[[PER]]
// DENSE: %[[CALLS:.*]] = arith.maxui %[[N]], %c1
// DENSE: scf.parallel (%[[I:.*]]) = (%c0{{.*}}) to (%[[CALLS]])
// DENSE: %[[LO:.*]] = arith.muli %[[I]], %[[PER]]
// DENSE: %[[LEFT:.*]] = arith.subi %[[ROWS]], %[[LO]]
// DENSE: %[[LEN:.*]] = arith.minui %[[PER]], %[[LEFT]]
// DENSE: memref.subview %[[OUT]][%[[LO]], 0] [%[[LEN]], %{{.*}}] [1, 1]
// DENSE: memref.subview %[[X]][%[[LO]], 0] [%[[LEN]], %{{.*}}] [1, 1]
// DENSE: call @gnn_rt_linear(
// DENSE: scf.reduce
// LLVM: llvm.func private @gnn_rt_linear(
// LLVM: llvm.call @_mlir_ciface_gnn_rt_linear({{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// LLVM-LABEL: llvm.func @dense
// LLVM: llvm.call @omp_get_max_threads()
// LLVM: omp.parallel
// LLVM: llvm.call @gnn_rt_linear(
func.func @dense(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %y = gnn.linear %x, %w, %b : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %n = gnn.layer_norm %y, %b, %b eps(1.0e-05) : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %l = gnn.log_softmax %n : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %l : tensor<?x4xf32>
}

// -----

// A dense layer with an addend (gnn-fuse-linear-addends): with
// parallel-dense, each thread's block of rows first holds addend + bias
// (8-wide pieces) and the product adds into it (the runtime's gemm: a
// layer's product, weight transposed, beta 1); the transposed layer the
// same without a bias. Otherwise the product comes first and a parallel
// loop adds the addend. An addend of other rows or width is reported.
// CHECK-LABEL: func @dense_addend
// CHECK: call @gnn_rt_linear(
// CHECK: scf.if
// CHECK: scf.parallel
// CHECK: %[[A:.*]] = vector.load %{{.*}} : memref<?x16xf32>, vector<8xf32>
// CHECK: %[[P:.*]] = vector.load %{{.*}} : memref<?x16xf32>, vector<8xf32>
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[P]] : vector<8xf32>
// CHECK: vector.store %[[S]]
// DENSE-LABEL: func @dense_addend
// DENSE: scf.if
// DENSE: scf.parallel
// DENSE: scf.for
// DENSE: scf.for {{.*}} step %c8
// DENSE: %[[A:.*]] = vector.load %{{.*}} : memref<?x16xf32>, vector<8xf32>
// DENSE: %[[B:.*]] = vector.load %{{.*}} : memref<?xf32>, vector<8xf32>
// DENSE: %[[S:.*]] = arith.addf %[[A]], %[[B]] : vector<8xf32>
// DENSE: vector.store %[[S]]
// DENSE: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c5_i32, %cst{{.*}}, %cst{{.*}})
// DENSE-NOT: gnn_rt_linear(
// DENSE: scf.parallel
// DENSE: scf.for
// DENSE: vector.load
// DENSE-NOT: vector.load
// DENSE: vector.store
// DENSE: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c4_i32, %cst{{.*}}, %cst{{.*}})
func.func @dense_addend(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>, %r: tensor<?x16xf32>, %s: tensor<?x8xf32>) -> (tensor<?x16xf32>, tensor<?x8xf32>) {
  %y = gnn.linear %x, %w, %b plus %r : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %z = gnn.linear %y, %w transpose_weight plus %s : (tensor<?x16xf32>, tensor<16x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y, %z : tensor<?x16xf32>, tensor<?x8xf32>
}

// -----

// Rows of a static width: layer_norm and log_softmax take 8-wide pieces up
// to the last whole one (sums and maxima lane-wise, one horizontal
// reduction each), then the rest element by element.
// CHECK-LABEL: func @rows_in_pieces
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} = %c0{{.*}} to %c16{{.*}} step %c8{{.*}} -> (vector<8xf32>)
// CHECK: vector.load {{.*}} : memref<?x20xf32>, vector<8xf32>
// CHECK: vector.reduction <add>
// CHECK: scf.for {{.*}} = %c16{{.*}} to %{{.*}} step %c1{{.*}} -> (f32)
// CHECK: math.rsqrt
// CHECK: scf.for {{.*}} = %c0{{.*}} to %c16{{.*}} step %c8
// CHECK: vector.load {{.*}} : memref<20xf32>, vector<8xf32>
// CHECK: vector.store {{.*}} : memref<?x20xf32>, vector<8xf32>
// CHECK: scf.for {{.*}} = %c16{{.*}} to %{{.*}} step %c1
// CHECK: memref.store
// CHECK: scf.parallel
// CHECK: vector.reduction <maximumf>
// CHECK: math.exp {{.*}} : vector<8xf32>
// CHECK: vector.reduction <add>
// CHECK: math.log
func.func @rows_in_pieces(%y: tensor<?x20xf32>, %g: tensor<20xf32>) -> tensor<?x20xf32> {
  %n = gnn.layer_norm %y, %g, %g eps(1.0e-05) : (tensor<?x20xf32>, tensor<20xf32>, tensor<20xf32>) -> tensor<?x20xf32>
  %l = gnn.log_softmax %n : (tensor<?x20xf32>) -> tensor<?x20xf32>
  return %l : tensor<?x20xf32>
}

// -----

// Rows of a static shape are scattered as slice inserts into the
// destination tensor itself, so bufferization can update it in place; rows
// of a dynamic shape are copied element by element into a fresh buffer.
// CHECK-LABEL: func @scatter
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<?x8x16xf32>)
// CHECK: func.call @gnn_rt_id_out_of_range
// CHECK: tensor.extract_slice {{.*}} [1, 8, 16] [1, 1, 1]
// CHECK: tensor.insert_slice {{.*}} [1, 8, 16] [1, 1, 1]
// CHECK: memref.alloc
// CHECK: memref.copy
// CHECK: scf.parallel
// LLVM-LABEL: llvm.func @scatter
// LLVM-NOT: {{(= |^ *)gnn\.}}
func.func @scatter(%s: tensor<?x8x16xf32>, %x: tensor<?x8x16xf32>, %ids: tensor<?xindex>,
                   %t: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> (tensor<?x8x16xf32>, tensor<?x?xf32>) {
  %a = gnn.scatter_rows %s into %x[%ids] : (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?xindex>) -> tensor<?x8x16xf32>
  %b = gnn.scatter_rows %t into %y[%ids] : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xindex>) -> tensor<?x?xf32>
  return %a, %b : tensor<?x8x16xf32>, tensor<?x?xf32>
}

// -----

// The fused attention backward stores no per-edge value: its buffers are
// dq, dk, dv and three per-destination, per-head statistics (the weights'
// shift and norm, and D); one parallel loop over destinations, one over sources (the
// reversed graph's destinations: its index is the only other buffer).
// Runs of block-structured nodes go in tiles through the runtime's GEMM,
// per-edge values only in per-thread stack tiles: per chunk of sources, the
// destination pass computes S = Q K^T and dP = dOut V^T (two GEMMs), turns
// them into dS and adds dS K to dq; per chunk of destinations, the source
// pass computes S^T and dP^T and adds dS^T Q to dk and P^T dOut to dv.
// CHECK-LABEL: func @fused_attention_grad
// CHECK-COUNT-3: memref.alloc({{.*}}) : memref<?x2x8xf32>
// CHECK-COUNT-3: memref.alloc({{.*}}) : memref<?x2x1xf32>
// CHECK-NOT: memref.alloc(
// CHECK: scf.parallel
// CHECK-COUNT-2: memref.alloca() : memref<64x128xf32>
// CHECK: scf.for {{.*}} step %c128
// CHECK: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i32{{(_[0-9]+)?}},
// CHECK: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i32{{(_[0-9]+)?}},
// CHECK: math.exp %{{.*}} : vector<16xf32>
// CHECK: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c0_i32{{(_[0-9]+)?}},
// The source pass walks the graph turned around, which the lowering builds
// for it: an in-edge index (in_ptr, in_src, in_eid, the chunks' counts),
// counted, summed and placed by parallel loops.
// CHECK-COUNT-4: memref.alloc({{.*}}) : memref<?xindex>
// CHECK: call @gnn_rt_bad_coo
// CHECK-COUNT-3: scf.parallel
// CHECK: scf.parallel
// CHECK-COUNT-2: memref.alloca() : memref<64x128xf32>
// CHECK: scf.for {{.*}} step %c128
// CHECK: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i32{{(_[0-9]+)?}},
// CHECK: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i32{{(_[0-9]+)?}},
// CHECK: math.exp %{{.*}} : vector<16xf32>
// CHECK: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c0_i32{{(_[0-9]+)?}},
// CHECK: call @gnn_rt_gemm(%{{.*}}, %{{.*}}, %{{.*}}, %c0_i32{{(_[0-9]+)?}},
// CHECK-NOT: memref.alloc(
// CHECK: return
// Without attention-blocks: the per-node loops alone, a node's edges in
// chunks of 8 (dot products summed by the shuffle tree, one vector exp).
// NOBLOCKS-LABEL: func @fused_attention_grad
// NOBLOCKS-NOT: gnn_rt_gemm
// NOBLOCKS: scf.parallel
// NOBLOCKS: scf.for {{.*}} step %c8
// NOBLOCKS: vector.shuffle
// NOBLOCKS: math.exp %{{.*}} : vector<8xf32>
// NOBLOCKS: call @gnn_rt_bad_coo
// NOBLOCKS-COUNT-3: scf.parallel
// NOBLOCKS: scf.parallel
// NOBLOCKS: scf.for {{.*}} step %c8
// NOBLOCKS: vector.shuffle
// NOBLOCKS: math.exp %{{.*}} : vector<8xf32>
// NOBLOCKS: return
// For GPU kernels: each pass is one parallel loop over nodes x heads (a
// thread per node and head), and the reversal counts and places its edges
// in up to 4096 chunks (a thread per chunk), as long as the counts take at
// most 4 slots per edge.
// GPUK-LABEL: func @fused_attention_grad
// GPUK: %[[ITEMS:.*]] = arith.muli %{{.*}}, %c2 : index
// GPUK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[ITEMS]])
// GPUK-NEXT: arith.remui %[[I]], %c2 : index
// GPUK-NEXT: arith.divui %[[I]], %c2 : index
// GPUK: %[[SLOTS:.*]] = arith.muli %{{.*}}, %c4 : index
// GPUK: %[[PER:.*]] = arith.divui %[[SLOTS]], %{{.*}} : index
// GPUK: %[[MOST:.*]] = arith.constant 4096 : index
// GPUK: arith.minui %[[MOST]], %[[PER]] : index
// GPUK: call @gnn_rt_bad_coo
// GPUK: %[[SOURCES:.*]] = arith.muli %{{.*}}, %c2 : index
// GPUK: scf.parallel (%[[J:.*]]) = (%{{.*}}) to (%[[SOURCES]])
// GPUK-NEXT: arith.remui %[[J]], %c2 : index
// GPUK-NEXT: arith.divui %[[J]], %c2 : index
// GPUK: return
func.func @fused_attention_grad(%g: !gnn.graph<general>, %q: tensor<?x2x8xf32>, %k: tensor<?x2x8xf32>, %v: tensor<?x2x8xf32>, %d: tensor<?x2x8xf32>) -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) {
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %d scale(0.5) normalize
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>)
  return %dq, %dk, %dv : tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>
}

// -----

// With the forward's log-sum-exp saved, the backward does not recompute the
// forward: the forward stores the log-sum-exp beside its output, the
// backward allocates only the weights' norm and D per destination and head,
// formed from the same tiles as the score gradients.
// CHECK-LABEL: func @fused_attention_grad_saved
// CHECK: %[[O:.*]] = memref.alloc({{.*}}) : memref<?x2x8xf32>
// CHECK: %[[LSE:.*]] = memref.alloc({{.*}}) : memref<?x2x1xf32>
// CHECK: math.log
// CHECK: memref.store %{{.*}}, %[[LSE]]
// CHECK-COUNT-3: memref.alloc({{.*}}) : memref<?x2x8xf32>
// CHECK-COUNT-2: memref.alloc({{.*}}) : memref<?x2x1xf32>
// CHECK-NOT: memref.alloc({{.*}}f32>
// Whether the graph splits into blocks: every row's source range in
// parallel, then one sweep that finds the blocks (first rows, first and
// last sources) and checks them.
// CHECK-COUNT-2: memref.alloc({{.*}}) : memref<?xindex>
// CHECK: scf.parallel
// CHECK-COUNT-3: memref.alloc({{.*}}) : memref<?xindex>
// CHECK-NOT: memref.alloc(
// CHECK: scf.if
// If so, one pass with a thread per block and head. A block of more than
// one tile (64 destinations) has its sources' dK and dV rows zeroed and its
// keys and values transposed once; then per tile of its destinations S and
// dP (flag 0 on the transposed copies, else flag 1: the products transpose
// K and V themselves), D from them, then dQ and, through the GEMM with a
// transposed left operand (flag 2), dK and dV (beta 1 over several tiles,
// else 0): five GEMMs.
// CHECK: scf.parallel
// CHECK: memref.alloca() : memref<64x256xf32>
// CHECK-NEXT: memref.alloca() : memref<64x256xf32>
// CHECK: %[[KT:.*]] = memref.alloca() : memref<8x256xf32>
// CHECK-NEXT: %[[VT:.*]] = memref.alloca() : memref<8x256xf32>
// CHECK: %[[TILED:.*]] = arith.cmpi ugt, %{{.*}}, %c64
// CHECK: %[[BETA:.*]] = arith.select %[[TILED]], %{{.*}}, %{{.*}} : f32
// CHECK: scf.if %[[TILED]] {
// CHECK: vector.store
// CHECK: vector.store
// CHECK: memref.subview %[[KT]]
// CHECK: call @gnn_rt_transpose
// CHECK: memref.subview %[[VT]]
// CHECK: call @gnn_rt_transpose
// CHECK: }
// CHECK: scf.for
// CHECK: %[[FLAGS:.*]] = arith.select %[[TILED]], %c0_i32, %c1_i32 : i32
// CHECK: memref.subview %[[KT]]
// CHECK: %[[KOP:.*]] = arith.select %[[TILED]]
// CHECK: call @gnn_rt_gemm({{.*}}, %[[KOP]], %{{.*}}, %[[FLAGS]],
// CHECK: memref.subview %[[VT]]
// CHECK: %[[VOP:.*]] = arith.select %[[TILED]]
// CHECK: call @gnn_rt_gemm({{.*}}, %[[VOP]], %{{.*}}, %[[FLAGS]],
// One exponential per edge: P and D in one sweep that keeps P, then dS
// from the kept P.
// CHECK: math.exp
// CHECK: vector.store {{.*}} : memref<256xf32>, vector<{{[0-9]+}}xf32>
// CHECK: vector.fma
// CHECK: vector.reduction <add>
// CHECK-NOT: math.exp
// CHECK: vector.load {{.*}} : memref<256xf32>, vector<{{[0-9]+}}xf32>
// CHECK-NOT: math.exp
// CHECK: call @gnn_rt_gemm({{.*}}, %c0_i32
// CHECK-COUNT-2: call @gnn_rt_gemm({{.*}}, %c2_i32{{(_[0-9]+)?}}, %{{.*}}, %[[BETA]])
// No reversed graph is built for it.
// CHECK-NOT: call @gnn_rt_gemm
// CHECK-NOT: call @gnn_rt_bad_coo
// CHECK: } else {
// Else the two passes.
// CHECK: scf.parallel
// The destination pass's tiles hold the S and dP of 256 sources.
// CHECK: memref.alloca() : memref<64x256xf32>
// CHECK-NEXT: memref.alloca() : memref<64x256xf32>
// Runs whose sources span several chunks: D = sum P dP in a first sweep.
// CHECK: scf.if
// CHECK-COUNT-2: call @gnn_rt_gemm
// CHECK: vector.fma
// Then per chunk S and dP unless the first sweep kept them, D from them
// when one chunk holds every source, and dQ: three GEMMs, no softmax
// recomputed.
// CHECK: scf.if
// CHECK-COUNT-2: call @gnn_rt_gemm
// CHECK-NEXT: }
// CHECK-NEXT: scf.if
// CHECK: vector.fma
// CHECK: call @gnn_rt_gemm
// CHECK-NOT: call @gnn_rt_gemm
// The reversed graph, then the source pass, which recomputes its tiles
// chunk by chunk.
// CHECK: call @gnn_rt_bad_coo
// CHECK-COUNT-3: scf.parallel
// CHECK: scf.parallel
// CHECK: memref.alloca() : memref<64x128xf32>
// CHECK-COUNT-4: call @gnn_rt_gemm
// CHECK: return
func.func @fused_attention_grad_saved(%g: !gnn.graph<general>, %q: tensor<?x2x8xf32>, %k: tensor<?x2x8xf32>, %v: tensor<?x2x8xf32>, %d: tensor<?x2x8xf32>) -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) {
  %o, %lse = gnn.fused_attention %g, %q, %k, %v scale(0.5) normalize
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> (tensor<?x2x8xf32>, tensor<?x2x1xf32>)
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %d scale(0.5) normalize saved(%lse)
      : (!gnn.graph<general>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x1xf32>) -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>)
  return %dq, %dk, %dv : tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>
}

// -----

// A weight's gradient, lhs^T rhs: one runtime GEMM, or with parallel-dense
// one per thread over a block of the result's rows, each taking that block
// of lhs's columns (no sum crosses blocks).
// CHECK-LABEL: func @outer_sum
// CHECK-NOT: scf.parallel
// CHECK: call @gnn_rt_gemm_at(
// CHECK-NOT: call @gnn_rt_gemm_at(
// DENSE-LABEL: func @outer_sum
// DENSE: %[[OUT:.*]] = memref.alloc() : memref<8x4xf32>
// DENSE: call @omp_get_max_threads()
// DENSE: scf.parallel (%[[I:.*]]) =
// DENSE: %[[LO:.*]] = arith.muli %[[I]]
// DENSE: %[[LEN:.*]] = arith.minui
// DENSE: memref.subview %[[OUT]][%[[LO]], 0] [%[[LEN]], %{{.*}}] [1, 1]
// DENSE: memref.subview %{{.*}}[0, %[[LO]]] [%{{.*}}, %[[LEN]]] [1, 1]
// DENSE: call @gnn_rt_gemm_at(
// DENSE: scf.reduce
func.func @outer_sum(%x: tensor<?x8xf32>, %dy: tensor<?x4xf32>) -> tensor<8x4xf32> {
  %dw = gnn.outer_sum %x, %dy : (tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<8x4xf32>
  return %dw : tensor<8x4xf32>
}

// -----

// sum_to in vectors of 8. Over rows: blocks of 128 rows summed in parallel
// into partial sums, four vectors of neighbouring columns at a time (each
// lane sums its column in row order, the last vectors masked), then the
// blocks' sums added up in block order. Within rows: lane-wise partial sums
// reduced once per result element.
// CHECK-LABEL: func @sum_to
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %{{.*}}, %c128
// CHECK: %[[PARTIAL:.*]] = memref.alloc(%[[BLOCKS]]) : memref<?x29xf32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[BLOCKS]])
// CHECK: scf.for {{.*}} step %c32
// CHECK-COUNT-4: vector.create_mask
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK-COUNT-4: vector.maskedload
// CHECK-COUNT-4: vector.maskedstore %[[PARTIAL]]
// CHECK: scf.parallel
// CHECK: vector.maskedload %[[PARTIAL]]
// CHECK: vector.maskedstore
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} step %c8{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<8xf32>)
// CHECK: vector.maskedload
// CHECK: vector.reduction <add>
// CHECK: memref.store
func.func @sum_to(%x: tensor<?x29xf32>) -> (tensor<29xf32>, tensor<?x1xf32>) {
  %c = gnn.sum_to %x : tensor<?x29xf32> -> tensor<29xf32>
  %r = gnn.sum_to %x : tensor<?x29xf32> -> tensor<?x1xf32>
  return %c, %r : tensor<29xf32>, tensor<?x1xf32>
}

// -----

// layer_norm_grad: one parallel loop over rows, each row's statistics
// recomputed (mean, variance, the two means of its gradient terms: four
// lane-wise sums) and both results stored in 8-wide pieces.
// CHECK-LABEL: func @layer_norm_grad
// CHECK: %[[DX:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// CHECK: %[[DXH:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// CHECK: scf.parallel
// CHECK-COUNT-2: vector.reduction <add>
// CHECK: math.rsqrt
// CHECK-COUNT-2: vector.reduction <add>
// CHECK: vector.store %{{.*}}, %[[DX]]
// CHECK: vector.store %{{.*}}, %[[DXH]]
func.func @layer_norm_grad(%x: tensor<?x16xf32>, %w: tensor<16xf32>, %dy: tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>) {
  %dx, %dxh = gnn.layer_norm_grad %x, %w, %dy eps(1.0e-05) : (tensor<?x16xf32>, tensor<16xf32>, tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>)
  return %dx, %dxh : tensor<?x16xf32>, tensor<?x16xf32>
}

// -----

// With an addend, each piece of the input gradient adds the addend's piece
// before it is stored.
// CHECK-LABEL: func @layer_norm_grad_addend
// CHECK: %[[R:.*]] = bufferization.to_memref %arg3
// CHECK: %[[DX:.*]] = memref.alloc(%{{.*}}) : memref<?x16xf32>
// CHECK: scf.parallel
// CHECK: math.rsqrt
// CHECK: %[[A:.*]] = vector.load %[[R]][{{.*}}] : memref<?x16xf32>, vector<8xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %{{.*}}, %[[A]] : vector<8xf32>
// CHECK-NEXT: vector.store %[[S]], %[[DX]]
func.func @layer_norm_grad_addend(%x: tensor<?x16xf32>, %w: tensor<16xf32>, %dy: tensor<?x16xf32>, %r: tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>) {
  %dx, %dxh = gnn.layer_norm_grad %x, %w, %dy plus %r eps(1.0e-05) : (tensor<?x16xf32>, tensor<16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<?x16xf32>)
  return %dx, %dxh : tensor<?x16xf32>, tensor<?x16xf32>
}

// -----

// gnn.dropout on the CPU: Philox-4x32-10 on vectors of 8 counters (ten
// rounds of 32x32->64-bit products), the row's end masked.
// CHECK-LABEL: func @dropout
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} step %c8
// CHECK-COUNT-20: arith.mului_extended {{.*}} : vector<8xi32>
// CHECK: vector.create_mask
// CHECK: vector.maskedload
// CHECK: arith.select {{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: vector.maskedstore
func.func @dropout(%x: tensor<?x19xf32>, %seed: i64, %offset: i64) -> tensor<?x19xf32> {
  %y = gnn.dropout %x, %seed, %offset rate(1.000000e-01) : tensor<?x19xf32>
  return %y : tensor<?x19xf32>
}

// -----

// Tapes are the runtime's gnn_rt_tape: a push passes the value's buffer as
// an unranked memref of its element type (and the element's size), a pop
// gets a buffer of the popped rank through the C interface, cast to the
// value's static sizes; it passes the type's sizes (-1 where dynamic),
// written once at the function's entry, which the runtime checks.
// CHECK-DAG: func.func private @gnn_rt_tape_create() -> !llvm.ptr
// CHECK-DAG: func.func private @gnn_rt_tape_push_f32(!llvm.ptr, memref<*xf32>, i64)
// CHECK-DAG: func.func private @gnn_rt_tape_push_index(!llvm.ptr, memref<*xindex>, i64)
// CHECK-DAG: func.func private @gnn_rt_tape_pop_f32_r2(!llvm.ptr, i64, i64, memref<8xi64>) -> memref<?x?xf32> attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @gnn_rt_tape_pop_index_r0(!llvm.ptr, i64, i64, memref<8xi64>) -> memref<index> attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @gnn_rt_tape_free(!llvm.ptr)
// CHECK-DAG: func.func private @gnn_rt_tape_refused(!llvm.ptr) -> i32
// CHECK-LABEL: func @tape(
// CHECK-NEXT: %[[SHAPE:.*]] = memref.alloca() : memref<8xi64>
// CHECK: %[[DYN:.*]] = arith.constant -1 : i64
// CHECK: memref.store %[[DYN]], %[[SHAPE]][%{{.*}}] : memref<8xi64>
// CHECK: %[[W:.*]] = arith.constant 128 : i64
// CHECK: memref.store %[[W]], %[[SHAPE]][%{{.*}}] : memref<8xi64>
// CHECK-NEXT: %[[SCALAR:.*]] = memref.alloca() : memref<8xi64>
// CHECK-NEXT: %[[T:.*]] = call @gnn_rt_tape_create() : () -> !llvm.ptr
// CHECK: %[[H:.*]] = bufferization.to_memref %arg0 read_only : memref<?x128xf32>
// CHECK: %[[U:.*]] = memref.cast %[[H]] : memref<?x128xf32> to memref<*xf32>
// CHECK: %[[C4:.*]] = arith.constant 4 : i64
// CHECK: call @gnn_rt_tape_push_f32(%[[T]], %[[U]], %[[C4]])
// CHECK: call @gnn_rt_tape_push_index(%[[T]],
// CHECK: %[[R:.*]] = call @gnn_rt_tape_refused(%[[T]]) : (!llvm.ptr) -> i32
// CHECK: %[[FULL:.*]] = arith.cmpi ne, %[[R]], %{{.*}} : i32
// CHECK: call @gnn_rt_tape_pop_index_r0(%[[T]], %{{.*}}, %{{.*}}, %[[SCALAR]])
// CHECK: %[[P:.*]] = call @gnn_rt_tape_pop_f32_r2(%[[T]], %{{.*}}, %{{.*}}, %[[SHAPE]]) : (!llvm.ptr, i64, i64, memref<8xi64>) -> memref<?x?xf32>
// CHECK: %[[S:.*]] = memref.cast %[[P]] : memref<?x?xf32> to memref<?x128xf32>
// CHECK: bufferization.to_tensor %[[S]] restrict writable
// CHECK: call @gnn_rt_tape_free(%[[T]])
// CHECK: return %{{.*}}, %{{.*}}, %[[FULL]]
// CHECK-NOT: unrealized_conversion_cast
func.func @tape(%h: tensor<?x128xf32>, %i: tensor<index>) -> (tensor<?x128xf32>, tensor<index>, i1) {
  %t = gnn.tape_create : !gnn.tape
  gnn.tape_push %t, %h : tensor<?x128xf32>
  gnn.tape_push %t, %i : tensor<index>
  %full = gnn.tape_refused %t
  %j = gnn.tape_pop %t : tensor<index>
  %g = gnn.tape_pop %t : tensor<?x128xf32>
  gnn.tape_free %t
  return %g, %j, %full : tensor<?x128xf32>, tensor<index>, i1
}

// -----

// An announced result: the runtime gets the slot, the address of the
// value's identity-layout buffer and its size in bytes (rows x 128 x 4;
// a rank-0 value of 8-byte elements: 8).
// CHECK-DAG: func.func private @gnn_rt_result_ready(i64, !llvm.ptr, i64)
// CHECK-LABEL: func @result_ready(
// CHECK-SAME: %[[H:.*]]: tensor<?x128xf32>, %[[I:.*]]: tensor<i64>
// CHECK: %[[B:.*]] = bufferization.to_memref %[[H]] read_only : memref<?x128xf32>
// CHECK: %[[E:.*]] = arith.constant 4 : index
// CHECK: %[[ROWS:.*]] = memref.dim %[[B]], %{{.*}} : memref<?x128xf32>
// CHECK: %[[P1:.*]] = arith.muli %[[E]], %[[ROWS]] : index
// CHECK: %[[COLS:.*]] = memref.dim %[[B]], %{{.*}} : memref<?x128xf32>
// CHECK: %[[P2:.*]] = arith.muli %[[P1]], %[[COLS]] : index
// CHECK: %[[A:.*]] = memref.extract_aligned_pointer_as_index %[[B]] : memref<?x128xf32> -> index
// CHECK: %[[A64:.*]] = arith.index_cast %[[A]] : index to i64
// CHECK: %[[SLOT:.*]] = arith.constant 1 : i64
// CHECK: %[[PTR:.*]] = llvm.inttoptr %[[A64]] : i64 to !llvm.ptr
// CHECK: %[[BYTES:.*]] = arith.index_cast %[[P2]] : index to i64
// CHECK: call @gnn_rt_result_ready(%[[SLOT]], %[[PTR]], %[[BYTES]]) : (i64, !llvm.ptr, i64) -> ()
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: call @gnn_rt_result_ready(%{{.*}}, %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, i64) -> ()
// CHECK-NOT: gnn.result_ready
func.func @result_ready(%h: tensor<?x128xf32>, %i: tensor<i64>) -> (tensor<i64>, tensor<?x128xf32>) {
  gnn.result_ready %h, 1 : tensor<?x128xf32>
  gnn.result_ready %i, 0 : tensor<i64>
  return %i, %h : tensor<i64>, tensor<?x128xf32>
}

// -----

// A graph built from another's endpoints and counts (the reversed graph a
// backward builds): each producer is lowered before its users read its
// parts (a lowering that redirected uses instead of replacing its op once
// left the first graph unlowered here), and no gnn op is left.
// CHECK-LABEL: func @reversed
// CHECK-COUNT-2: call @gnn_rt_bad_coo
// CHECK: bufferization.to_tensor %{{.*}} restrict writable
// CHECK-COUNT-2: call @gnn_rt_bad_coo
// CHECK-NOT: gnn.
// CHECK: return
func.func @reversed(%src: tensor<?xindex>, %dst: tensor<?xindex>, %ns: index, %nd: index) -> index {
  %g = gnn.graph_from_coo %src, %dst, %ns, %nd : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
  %s, %d = gnn.edge_endpoints %g : !gnn.graph<general> -> tensor<?xindex>, tensor<?xindex>
  %n = gnn.num_src_nodes %g : !gnn.graph<general>
  %m = gnn.num_dst_nodes %g : !gnn.graph<general>
  %r = gnn.graph_from_coo %d, %s, %m, %n : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
  %e = gnn.num_edges %r : !gnn.graph<general>
  return %e : index
}
