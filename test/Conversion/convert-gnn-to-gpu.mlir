// RUN: gnn-opt %s --convert-gnn-to-gpu --split-input-file | FileCheck %s

// 8 heads of 64 on a general graph: a warp (32 lanes) per destination and
// head, two elements per lane; the dot product is reduced by 5 butterfly shuffles; the online
// softmax rescales the running sums.
// CHECK-LABEL: func.func @heads
// CHECK:         scf.if
// CHECK:           gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in (%{{.*}} = %c128
// CHECK:             scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK:               scf.if {{.*}} -> (i1, index, f32)
// CHECK-COUNT-2:         math.fma
// CHECK:               gpu.shuffle  xor {{.*}}, %c16_i32, %c32_i32
// CHECK:               gpu.shuffle  xor {{.*}}, %c8_i32
// CHECK:               gpu.shuffle  xor {{.*}}, %c4_i32
// CHECK:               gpu.shuffle  xor {{.*}}, %c2_i32
// CHECK:               gpu.shuffle  xor {{.*}}, %c1_i32
// CHECK:               scf.if
// CHECK:                 arith.maximumf
// CHECK:                 math.exp
// CHECK:                 math.exp
// CHECK:             gpu.terminator
// CHECK-NOT:     scf.parallel
func.func @heads(%g: !gnn.graph<general>, %q: tensor<?x8x64xf32>,
                 %k: tensor<?x8x64xf32>, %v: tensor<?x8x64xf32>)
    -> tensor<?x8x64xf32> {
  %o = gnn.fused_attention %g, %q, %k, %v scale(1.250000e-01) normalize
      : (!gnn.graph<general>, tensor<?x8x64xf32>, tensor<?x8x64xf32>,
         tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
  return %o : tensor<?x8x64xf32>
}

// -----

// The same on complete blocks: the tiled kernel. A warp per 32 destinations
// (blocks of 32 threads, a grid of tiles x heads, 16 KB of shared memory);
// each lane checks that its CSR row is the range its first source starts;
// the warp's range is the min and max over 5 shuffles each; the walk over it
// stages 32 sources' key and value rows in shared memory (16-byte slices,
// 8 loads in flight before their stores), then reads each source's rows
// from there (one vector load each) with no shuffle per edge, a barrier on
// either side; rows that break the promise go edge by edge.
// CHECK-LABEL: func.func @tiled
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %c8{{.*}}) threads({{.*}}) in (%{{.*}} = %c32{{.*}}) dynamic_shared_memory_size %c16384_i32
// CHECK:           scf.for {{.*}} -> (i1)
// CHECK:             arith.cmpi eq
// CHECK-COUNT-5:   arith.minsi
// CHECK-COUNT-5:   arith.maxsi
// CHECK:           vector.load {{.*}} : memref<?x8x64xf32, strided<[?, 64, 1], offset: ?>>, vector<64xf32>
// CHECK:           gpu.dynamic_shared_memory
// CHECK:           memref.view {{.*}} to memref<32x64xf32, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<32x64xf32, #gpu.address_space<workgroup>>
// CHECK:           scf.for {{.*}} step %c32{{.*}} -> (f32, f32, f32
// CHECK-COUNT-8:     vector.load {{.*}} : memref<?x8x64xf32, strided<[?, 64, 1], offset: ?>>, vector<4xf32>
// CHECK-COUNT-8:     vector.store {{.*}} : memref<32x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK:             gpu.barrier
// CHECK:             scf.for {{.*}} -> (f32, f32, f32
// CHECK-NOT:           gpu.shuffle
// CHECK:               vector.load {{.*}} : memref<32x64xf32, #gpu.address_space<workgroup>>, vector<64xf32>
// CHECK:               scf.if
// CHECK:                 vector.load {{.*}} : memref<32x64xf32, #gpu.address_space<workgroup>>, vector<64xf32>
// CHECK:                 math.exp
// CHECK:             gpu.barrier
// CHECK:           scf.if
// CHECK:             scf.for
// CHECK:               memref.load
// CHECK:           scf.if
// CHECK-COUNT-64:    memref.store
// CHECK:           gpu.terminator
func.func @tiled(%g: !gnn.graph<complete>, %q: tensor<?x8x64xf32>,
                 %k: tensor<?x8x64xf32>, %v: tensor<?x8x64xf32>)
    -> tensor<?x8x64xf32> {
  %o = gnn.fused_attention %g, %q, %k, %v scale(1.250000e-01) normalize
      : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>,
         tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
  return %o : tensor<?x8x64xf32>
}

// -----

// 16 features: groups of 16 lanes, two per warp. The edge loop runs for the
// warp's largest in-degree (a max over 5 shuffles), the dot product needs 4.
// Unnormalized with a clamp: no running maximum, z is stored by lane 0.
// CHECK-LABEL: func.func @small_groups
// CHECK:         gpu.launch
// CHECK:           arith.divui %{{.*}}, %c16
// CHECK-COUNT-5:   arith.maxui
// CHECK:           scf.for
// CHECK-NOT:         gpu.shuffle  xor {{.*}}, %c16_i32
// CHECK:             gpu.shuffle  xor {{.*}}, %c8_i32
// CHECK:             gpu.shuffle  xor {{.*}}, %c1_i32
// CHECK:             arith.maximumf {{.*}}, %cst
// CHECK:             arith.minimumf
// CHECK-NOT:         arith.maximumf
// CHECK:             math.exp
// CHECK:           memref.store {{.*}} : memref<?x2x1xf32>
func.func @small_groups(%g: !gnn.graph<causal>, %q: tensor<?x2x16xf32>,
                        %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>,
                        %live: tensor<?xindex>)
    -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>) {
  %wv, %z = gnn.fused_attention %g, %q, %k, %v scale(2.500000e-01)
      clamp(-5.000000e+00, 5.000000e+00) edges(%live)
      : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x16xf32>,
         tensor<?x2x16xf32>, tensor<?xindex>)
      -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>)
  return %wv, %z : tensor<?x2x16xf32>, tensor<?x2x1xf32>
}

// -----

// Feature sizes known only at run time: the loops, for the loop offloading
// of the GPU pipeline to run.
// CHECK-LABEL: func.func @dynamic_size
// CHECK-NOT:     gpu.launch
// CHECK:         scf.parallel
func.func @dynamic_size(%g: !gnn.graph<complete>, %q: tensor<?x?xf32>,
                        %k: tensor<?x?xf32>, %v: tensor<?x?xf32>)
    -> tensor<?x?xf32> {
  %o = gnn.fused_attention %g, %q, %k, %v scale(1.0) normalize
      : (!gnn.graph<complete>, tensor<?x?xf32>, tensor<?x?xf32>,
         tensor<?x?xf32>) -> tensor<?x?xf32>
  return %o : tensor<?x?xf32>
}

// -----

// Bipartite blocks without heads, value rows wider than keys, no normalize:
// the tiled kernel on a grid of tiles x 1 with tiles of 32 key rows of 16
// and value rows of 24 (5 KB), z stored per lane.
// CHECK-LABEL: func.func @tiled_bipartite
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c32{{.*}}) dynamic_shared_memory_size %c5120_i32
// CHECK:           vector.load {{.*}} : memref<?x16xf32, strided<[?, 1], offset: ?>>, vector<16xf32>
// CHECK:           memref.view {{.*}} to memref<32x16xf32, #gpu.address_space<workgroup>>
// CHECK:           memref.view {{.*}} to memref<32x24xf32, #gpu.address_space<workgroup>>
// CHECK:           scf.for {{.*}} -> (f32, f32, f32
// CHECK:             gpu.barrier
// CHECK:             scf.for
// CHECK:               arith.maximumf {{.*}}, %cst
// CHECK:               arith.minimumf
// CHECK:               vector.load {{.*}} : memref<32x24xf32, #gpu.address_space<workgroup>>, vector<24xf32>
// CHECK:               math.exp
// CHECK-COUNT-24:  memref.store {{.*}} : memref<?x24xf32>
// CHECK:           memref.store {{.*}} : memref<?x1xf32>
func.func @tiled_bipartite(%g: !gnn.graph<bipartite>, %q: tensor<?x16xf32>,
                           %k: tensor<?x16xf32>, %v: tensor<?x24xf32>)
    -> (tensor<?x24xf32>, tensor<?x1xf32>) {
  %wv, %z = gnn.fused_attention %g, %q, %k, %v scale(2.500000e-01)
      clamp(-5.000000e+00, 5.000000e+00)
      : (!gnn.graph<bipartite>, tensor<?x16xf32>, tensor<?x16xf32>,
         tensor<?x24xf32>) -> (tensor<?x24xf32>, tensor<?x1xf32>)
  return %wv, %z : tensor<?x24xf32>, tensor<?x1xf32>
}

// -----

// Elementwise ops take a parallel iteration per row and item (neighbouring
// threads touch neighbouring elements), not per row with a loop over the
// row's items.
// CHECK-LABEL: func.func @elementwise
// CHECK:         scf.parallel (%[[I:.*]]) =
// CHECK-NEXT:      %[[C:.*]] = arith.remui %[[I]], %c5
// CHECK-NEXT:      %[[Q:.*]] = arith.divui %[[I]], %c5
// CHECK-NEXT:      %[[H:.*]] = arith.remui %[[Q]], %c3
// CHECK-NEXT:      %[[R:.*]] = arith.divui %[[Q]], %c3
// CHECK-NOT:       scf.for
// CHECK:           math.exp
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[R]], %[[H]], %[[C]]]
// CHECK:         scf.parallel
// CHECK-NOT:       scf.for
// CHECK:           math.tanh
// CHECK:         scf.parallel
// CHECK-NOT:       scf.for
// CHECK:           memref.store
// CHECK-NOT:     scf.for
func.func @elementwise(%g: !gnn.graph<general>, %x: tensor<?x3x5xf32>,
                       %y: tensor<?x3x5xf32>, %r: tensor<3x5xf32>)
    -> (tensor<?x3x5xf32>, tensor<?x3x5xf32>, tensor<?x3x5xf32>) {
  %n = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    gnn.yield %e : f32
  } : (tensor<?x3x5xf32>) -> tensor<?x3x5xf32>
  %u = gnn.apply_edges %g, (u %x, v %y) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.subf %a, %b : f32
    %t = math.tanh %d : f32
    gnn.yield %t : f32
  } : (!gnn.graph<general>, tensor<?x3x5xf32>, tensor<?x3x5xf32>)
      -> tensor<?x3x5xf32>
  %b = gnn.broadcast %r like %y : tensor<3x5xf32>, tensor<?x3x5xf32> -> tensor<?x3x5xf32>
  return %n, %u, %b : tensor<?x3x5xf32>, tensor<?x3x5xf32>, tensor<?x3x5xf32>
}
