// RUN: gnn-opt %s --convert-gnn-to-gpu --split-input-file | FileCheck %s
// RUN: gnn-opt %s --convert-gnn-to-gpu="attention-kernels=false scan-kernels=false" --split-input-file | FileCheck %s --check-prefix=LOOPS

// The attention backward over a graph that promises ranges: two warp tiles,
// destinations then sources, a lane per node (16 + 16 + 16 floats a lane),
// 32 nodes and one head (grid y: 8) to a warp. Each kernel checks its
// lanes' rows once and reduces the warp's range (min, max) and its rounds
// of rows that break the promise (max): fifteen shuffles of node ids. With
// whole rows a lane, dot products need no shuffle. The destination kernel
// stores the statistics (shift, norm, D) for the source kernel; the
// reversal's index is built between the two. Rows of q, k, v and dout are
// read in 16-byte loads (marked for gnn-gpu-assume-aligned-rows): a buffer
// whose rows do not start aligned is copied first. Each walk stages the
// rows its steps read 32 steps at a time in shared memory (4,480 bytes: k
// and v, or q and dout, and the source kernel's statistics), between two
// barriers.
// CHECK-LABEL: func.func @complete
// CHECK-COUNT-4: memref.extract_aligned_pointer_as_index
// CHECK:         scf.if
// CHECK:           scf.yield
// CHECK:         } else {
// CHECK:           memref.alloc
// CHECK:           memref.copy
// CHECK:         %[[TILES:.*]] = arith.ceildivui %{{.*}}, %c32
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[TILES]], %{{.*}} = %c8{{.*}}) threads({{.*}}) in (%{{.*}} = %c32{{.*}}) dynamic_shared_memory_size %c4480_i32
// CHECK:           vector.load {{.*}} {gnn.aligned_rows}
// CHECK-COUNT-15:  gpu.shuffle  xor %{{.*}} : i64
// CHECK-NOT:       gpu.shuffle  xor %{{.*}} : f32
// CHECK:           memref.view {{.*}} to memref<32x16xf32, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<32x16xf32, #gpu.address_space<workgroup>>
// CHECK:           scf.for {{.*}} step %c32
// CHECK-COUNT-4:     vector.store {{.*}} : memref<32x16xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK:             gpu.barrier
// CHECK:             scf.for
// CHECK:               vector.load {{.*}} : memref<32x16xf32, #gpu.address_space<workgroup>>, vector<16xf32>
// CHECK:             gpu.barrier
// CHECK:           memref.store
// CHECK:           memref.store
// CHECK:           memref.store
// CHECK:           gpu.terminator
// The reversal's in-degrees and smallest neighbours by atomic adds and
// mins over the edges, then their running totals (its in_ptr) in one block
// of 1024 threads: shuffles scan each warp's segment sums, the first warp
// scans the warps' totals in shared memory.
// CHECK:         scf.parallel
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw addi
// CHECK:           memref.atomic_rmw minu
// CHECK:         scf.parallel
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[ONE:.*]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads({{.*}}) in (%{{.*}} = %c1024, {{.*}}) dynamic_shared_memory_size %c256_i32
// CHECK:           gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<32xi64, #gpu.address_space<workgroup>>
// CHECK:           scf.for
// CHECK-COUNT-5:   gpu.shuffle  up %{{.*}} : i64
// CHECK:           gpu.barrier
// CHECK-COUNT-5:   gpu.shuffle  up %{{.*}} : i64
// CHECK:           gpu.barrier
// CHECK:           scf.for
// CHECK:           gpu.terminator
// Each edge placed at its destination's first slot plus its distance from
// the smallest neighbour, then checked (kept its slot, slots in edge id
// order); the chunks' three passes, each reading that check's mark, place
// the edges where it failed.
// CHECK:         scf.parallel
// CHECK:           memref.store
// CHECK:           memref.store
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw minu
// CHECK-COUNT-3: scf.parallel
// CHECK:         gpu.launch
// CHECK-COUNT-15:  gpu.shuffle  xor %{{.*}} : i64
// CHECK-NOT:       gpu.shuffle  xor %{{.*}} : f32
// CHECK-COUNT-2:   memref.view {{.*}} to memref<32x16xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-3:   memref.view {{.*}} to memref<32x1xf32, #gpu.address_space<workgroup>>
// CHECK:           scf.for {{.*}} step %c32
// CHECK:             gpu.barrier
// CHECK:             scf.for
// CHECK:               memref.load {{.*}} : memref<32x1xf32, #gpu.address_space<workgroup>>
// CHECK:             gpu.barrier
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return
// The same per-lane code without kernels: a parallel iteration per node and
// head, each walking its own range (no shuffles).
// LOOPS-LABEL: func.func @complete
// LOOPS-NOT:     gpu.launch
// LOOPS-NOT:     gpu.shuffle
// LOOPS-NOT:     gnn.aligned_rows
// LOOPS:         scf.parallel
// LOOPS:         return
func.func @complete(%g: !gnn.graph<complete>, %q: tensor<?x8x16xf32>,
                    %k: tensor<?x8x16xf32>, %v: tensor<?x8x16xf32>,
                    %d: tensor<?x8x16xf32>)
    -> (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>) {
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %d scale(0.25)
      clamp(-5.0, 5.0) normalize
      : (!gnn.graph<complete>, tensor<?x8x16xf32>, tensor<?x8x16xf32>,
         tensor<?x8x16xf32>, tensor<?x8x16xf32>)
      -> (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>)
  return %dq, %dk, %dv : tensor<?x8x16xf32>, tensor<?x8x16xf32>,
                         tensor<?x8x16xf32>
}

// -----

// Rows of 64 (q, dout and dq: 192 floats) take four lanes a node, each
// holding 16 elements of each row (loads of vector<16xf32> at its part);
// eight nodes to a warp; two shuffles (xor 2, 1) add a dot product's
// parts. With the forward's log-sum-exp given, the shift is not stored.
// CHECK-LABEL: func.func @wide
// CHECK:         %[[TILES:.*]] = arith.ceildivui %{{.*}}, %c8
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %[[TILES]], {{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32
// CHECK:           arith.divui %[[TID]], %c4
// CHECK:           %[[PART:.*]] = arith.remui %[[TID]], %c4
// CHECK:           vector.load {{.*}} vector<16xf32>
// CHECK:           scf.for
// CHECK:             vector.load {{.*}} vector<16xf32>
// CHECK:             gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}} : f32
// CHECK:             gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}} : f32
// CHECK-NOT:         gpu.shuffle  xor %{{.*}}, %c4_i32{{.*}} : f32
// CHECK:           memref.store
// CHECK:           memref.store
// CHECK-NOT:       memref.store {{.*}} : memref<?x8x1xf32>
// CHECK:           gpu.terminator
// CHECK:         gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK:           gpu.terminator
// CHECK:         gpu.launch
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @wide(%g: !gnn.graph<causal>, %q: tensor<?x8x64xf32>,
                %k: tensor<?x8x64xf32>, %v: tensor<?x8x64xf32>,
                %d: tensor<?x8x64xf32>, %lse: tensor<?x8x1xf32>)
    -> (tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) {
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %d scale(0.125)
      normalize saved(%lse)
      : (!gnn.graph<causal>, tensor<?x8x64xf32>, tensor<?x8x64xf32>,
         tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x1xf32>)
      -> (tensor<?x8x64xf32>, tensor<?x8x64xf32>, tensor<?x8x64xf32>)
  return %dq, %dk, %dv : tensor<?x8x64xf32>, tensor<?x8x64xf32>,
                         tensor<?x8x64xf32>
}

// -----

// Unnormalized, q and k 16 wide, v 32: the destination kernel's 64 floats
// fit a lane, but k, v, dk and dv (96) do not: the sources take two
// kernels, dv then dk. No statistics are stored (the edges' weights need
// none).
// CHECK-LABEL: func.func @split_sources
// CHECK:         gpu.launch
// CHECK-NOT:       memref.store {{.*}} : memref<?x2x1xf32>
// CHECK:           gpu.terminator
// CHECK:         gpu.launch {{.*}} dynamic_shared_memory_size
// CHECK:           gpu.terminator
// CHECK:         gpu.launch
// CHECK:           gpu.terminator
// CHECK:         gpu.launch
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @split_sources(%g: !gnn.graph<bipartite>, %q: tensor<?x2x16xf32>,
                         %k: tensor<?x2x16xf32>, %v: tensor<?x2x32xf32>,
                         %dwv: tensor<?x2x32xf32>, %dz: tensor<?x2x1xf32>)
    -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x32xf32>) {
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %dwv, %dz
      scale(0.25)
      : (!gnn.graph<bipartite>, tensor<?x2x16xf32>, tensor<?x2x16xf32>,
         tensor<?x2x32xf32>, tensor<?x2x32xf32>, tensor<?x2x1xf32>)
      -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x32xf32>)
  return %dq, %dk, %dv : tensor<?x2x16xf32>, tensor<?x2x16xf32>,
                         tensor<?x2x32xf32>
}

// -----

// No tiles for a general graph, an edge subset or f64 rows: the loop form,
// a parallel iteration per node and head (kernels made later); the only
// kernels are the reversals' running totals.
// CHECK-LABEL: func.func @not_tiled
// CHECK-COUNT-3: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c1024, {{.*}}) dynamic_shared_memory_size
// CHECK-NOT:     gpu.launch
// CHECK:         return
// LOOPS-LABEL: func.func @not_tiled
func.func @not_tiled(%g: !gnn.graph<general>, %c: !gnn.graph<complete>,
                     %q: tensor<?x2x16xf32>, %d: tensor<?x2x16xf32>,
                     %eids: tensor<?xindex>, %q64: tensor<?x2x16xf64>)
    -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf64>) {
  %a:3 = gnn.fused_attention_grad %g, %q, %q, %q, %d scale(0.25) normalize
      : (!gnn.graph<general>, tensor<?x2x16xf32>, tensor<?x2x16xf32>,
         tensor<?x2x16xf32>, tensor<?x2x16xf32>)
      -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  %b:3 = gnn.fused_attention_grad %c, %q, %q, %q, %d scale(0.25) normalize
      edges(%eids)
      : (!gnn.graph<complete>, tensor<?x2x16xf32>, tensor<?x2x16xf32>,
         tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?xindex>)
      -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  %e:3 = gnn.fused_attention_grad %c, %q64, %q64, %q64, %q64 scale(0.25)
      normalize
      : (!gnn.graph<complete>, tensor<?x2x16xf64>, tensor<?x2x16xf64>,
         tensor<?x2x16xf64>, tensor<?x2x16xf64>)
      -> (tensor<?x2x16xf64>, tensor<?x2x16xf64>, tensor<?x2x16xf64>)
  return %a#0, %b#1, %e#2 : tensor<?x2x16xf32>, tensor<?x2x16xf32>,
                            tensor<?x2x16xf64>
}
