// RUN: gnn-opt %s --convert-gnn-to-gpu --split-input-file | FileCheck %s
// RUN: gnn-opt %s "--convert-gnn-to-gpu=attention-kernels=false scan-kernels=false" --split-input-file | FileCheck %s --check-prefix=LOOPS
// RUN: gnn-opt %s "--convert-gnn-to-gpu=attention-kernels=false scan-kernels=false attention-blocks=true" --split-input-file | FileCheck %s --check-prefix=BLOCKS
// RUN: gnn-opt %s --convert-gnn-to-loops --split-input-file | FileCheck %s --check-prefix=CPU

// The GPU forms that convert-gnn-to-gpu builds for GPU threads, against
// convert-gnn-to-loops' forms for CPU cores on the same input.

// Attention is a kernel; without attention kernels, the loop form (for
// running the other GPU forms on a CPU), which takes GEMM tiles only when
// asked.
// CHECK-LABEL: func.func @attention
// CHECK:         gpu.launch
// CHECK-NOT:     scf.parallel
// LOOPS-LABEL: func.func @attention
// LOOPS-NOT:     gpu.launch
// LOOPS-NOT:     gnn_rt_gemm
// LOOPS:         scf.parallel
// LOOPS-NOT:     gpu.launch
// LOOPS-NOT:     gnn_rt_gemm
// BLOCKS-LABEL: func.func @attention
// BLOCKS-NOT:    gpu.launch
// BLOCKS:        call @gnn_rt_gemm
// CPU-LABEL: func.func @attention
// CPU-NOT:       gpu.launch
// CPU:           call @gnn_rt_gemm
func.func @attention(%g: !gnn.graph<general>, %q: tensor<?x8x64xf32>,
                     %k: tensor<?x8x64xf32>, %v: tensor<?x8x64xf32>)
    -> tensor<?x8x64xf32> {
  %o = gnn.fused_attention %g, %q, %k, %v scale(1.250000e-01) normalize
      : (!gnn.graph<general>, tensor<?x8x64xf32>, tensor<?x8x64xf32>,
         tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
  return %o : tensor<?x8x64xf32>
}

// -----

// sum_to over rows: a tree of threads, one per block of 32 rows and result
// element, then one per block of 32 of those sums and result element, then
// one per result element over the last sums; scalar code. CPU cores take
// blocks of 128 rows in vectors of 8, then the blocks' sums.
// CHECK-LABEL: func.func @sum_to
// CHECK:         %[[NB:.*]] = arith.ceildivui %{{.*}}, %c32
// CHECK:         %[[N:.*]] = arith.muli %[[NB]], %{{.*}} : index
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]])
// CHECK-NOT:     vector
// CHECK:           scf.for {{.*}} -> (f32)
// CHECK:         %[[NB2:.*]] = arith.ceildivui %{{.*}}, %c32
// CHECK:         %[[N2:.*]] = arith.muli %[[NB2]], %{{.*}} : index
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[N2]])
// CHECK-NOT:     vector
// CHECK:           scf.for {{.*}} -> (f32)
// CHECK:         scf.parallel
// CHECK-NOT:     vector
// CHECK:           scf.for {{.*}} -> (f32)
// CHECK-NOT:     scf.parallel
// CHECK:         return
// CPU-LABEL: func.func @sum_to
// CPU:           arith.ceildivui %{{.*}}, %c128
// CPU:           vector<8xf32>
func.func @sum_to(%x: tensor<?x29xf32>) -> tensor<29xf32> {
  %c = gnn.sum_to %x : tensor<?x29xf32> -> tensor<29xf32>
  return %c : tensor<29xf32>
}

// -----

// dropout: Philox on scalar counters (ten rounds of two 32x32->64-bit
// products each), no vectors; CPU cores take vectors of 8 counters.
// CHECK-LABEL: func.func @dropout
// CHECK:         scf.parallel
// CHECK-NOT:     vector
// CHECK-COUNT-20: arith.mului_extended {{.*}} : i32
// CHECK-NOT:     vector
// CPU-LABEL: func.func @dropout
// CPU-COUNT-20:  arith.mului_extended {{.*}} : vector<8xi32>
func.func @dropout(%x: tensor<?x19xf32>, %seed: i64, %offset: i64) -> tensor<?x19xf32> {
  %y = gnn.dropout %x, %seed, %offset rate(1.000000e-01) : tensor<?x19xf32>
  return %y : tensor<?x19xf32>
}

// -----

// graph_from_coo counts and places edges in up to 4096 chunks (a GPU
// thread walks its chunk's edges one by one); CPU cores take up to 16.
// CHECK-LABEL: func.func @coo
// CHECK:         %[[MOST:.*]] = arith.constant 4096 : index
// CHECK-NEXT:    arith.minui %[[MOST]], %{{.*}} : index
// CPU-LABEL: func.func @coo
// CPU:           %[[MOST:.*]] = arith.constant 16 : index
// CPU-NEXT:      arith.minui %[[MOST]], %{{.*}} : index
func.func @coo(%src: tensor<?xindex>, %dst: tensor<?xindex>, %n: index) -> index {
  %g = gnn.graph_from_coo %src, %dst, %n, %n : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
  %e = gnn.num_edges %g : !gnn.graph<general>
  return %e : index
}

// -----

// An adding scatter of wide rows into a destination of dynamic rows: the
// copy of the destination is a parallel loop (no memref.copy on the host);
// a slot per row takes the first entry naming it, a second pass marks a
// repeated id; then an iteration per entry and element adds into its own
// row unless an id repeats, and a thread per item element adds the list's
// rows in list order if one does (each loop reads the mark on the device).
// CHECK-LABEL: func.func @scatter_add
// CHECK-NOT:     memref.copy
// CHECK:         %[[SLOT:.*]] = memref.alloc() : memref<1xi64>
// CHECK:         scf.parallel
// CHECK-NEXT:      arith.remui
// CHECK:           memref.store
// CHECK:         %[[FIRST:.*]] = memref.alloc(%{{.*}}) : memref<?xi64>
// CHECK:         scf.parallel
// CHECK:           memref.store %{{.*}}, %[[FIRST]]
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw minu %{{.*}}, %[[FIRST]]
// CHECK:         %[[REPEAT:.*]] = memref.alloc() : memref<1xi64>
// CHECK:         scf.parallel
// CHECK:           memref.load %[[FIRST]]
// CHECK:           memref.atomic_rmw minu %{{.*}}, %[[REPEAT]]
// CHECK:         scf.parallel
// CHECK:           memref.load %[[REPEAT]]
// CHECK-NOT:       scf.for
// CHECK:           arith.addf
// CHECK:         scf.parallel
// CHECK:           memref.load %[[REPEAT]]
// CHECK:           scf.for
// CHECK:             arith.addf
// CHECK:         call @gnn_rt_check_bad_id(%[[SLOT]],
// CPU-LABEL: func.func @scatter_add
// CPU:           memref.copy
func.func @scatter_add(%s: tensor<?x8x16xf32>, %x: tensor<?x8x16xf32>, %ids: tensor<?xindex>) -> tensor<?x8x16xf32> {
  %a = gnn.scatter_rows %s into %x[%ids] add : (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?xindex>) -> tensor<?x8x16xf32>
  return %a : tensor<?x8x16xf32>
}

// -----

// An adding scatter of rows of one element (a loss's gradient): the same
// loops; where an id repeats, one thread, whose loop has min(entries, 1)
// iterations rather than a static 1 (a loop of one iteration folds into
// the host's code); none without entries. The first bad entry is checked
// at the end of the block by the runtime (gnn_rt_check_bad_id: after the
// kernels, or queued on their stream).
// CHECK-LABEL: func.func @scatter_add_narrow
// CHECK:         %[[SLOT:.*]] = memref.alloc() : memref<1xi64>
// CHECK:         %[[ONE:.*]] = arith.minui %{{.*}}, %c1{{.*}} : index
// CHECK:         %[[N:.*]] = arith.muli %[[ONE]], %c1
// CHECK:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]])
// CHECK:           scf.for
// CHECK:             memref.atomic_rmw minu %{{.*}}, %[[SLOT]]
// CHECK:             arith.addf
// CHECK:         %[[IDS:.*]] = memref.cast %{{.*}} : memref<?xindex> to memref<?xindex, strided<[?], offset: ?>>
// CHECK:         call @gnn_rt_check_bad_id(%[[SLOT]], %[[IDS]], %{{.*}}) : (memref<1xi64>, memref<?xindex, strided<[?], offset: ?>>, i64) -> ()
// CHECK-NEXT:  return
// CPU-LABEL: func.func @scatter_add_narrow
// CPU-NOT:       scf.parallel
// CPU:           scf.for
// CPU:             func.call @gnn_rt_id_out_of_range
func.func @scatter_add_narrow(%s: tensor<?x1xf32>, %x: tensor<?x1xf32>, %ids: tensor<?xindex>) -> tensor<?x1xf32> {
  %a = gnn.scatter_rows %s into %x[%ids] add : (tensor<?x1xf32>, tensor<?x1xf32>, tensor<?xindex>) -> tensor<?x1xf32>
  return %a : tensor<?x1xf32>
}

// -----

// An adding scatter into a table of a static 29 rows (an embedding table's
// gradient): the ids are checked by a parallel loop, then a thread per
// table element walks the list and sums the rows naming its row in a
// register, in list order; no copy of the table, no slots.
// CHECK-LABEL: func.func @scatter_add_table
// CHECK:         %[[OUT:.*]] = memref.alloc() : memref<29x128xf32>
// CHECK:         %[[SLOT:.*]] = memref.alloc() : memref<1xi64>
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw minu %{{.*}}, %[[SLOT]]
// CHECK:         scf.parallel
// CHECK:           %[[START:.*]] = memref.load %{{.*}} : memref<29x128xf32
// CHECK:           %[[SUM:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[START]]) -> (f32)
// CHECK:             arith.cmpi eq
// CHECK:             scf.if
// CHECK:               arith.addf %[[ACC]]
// CHECK:           memref.store %[[SUM]], %[[OUT]]
// CHECK-NOT:     memref.alloc
// CHECK:         call @gnn_rt_check_bad_id(%[[SLOT]],
// CPU-LABEL: func.func @scatter_add_table
// CPU:           memref.copy
func.func @scatter_add_table(%s: tensor<?x128xf32>, %x: tensor<29x128xf32>, %ids: tensor<?xindex>) -> tensor<29x128xf32> {
  %a = gnn.scatter_rows %s into %x[%ids] add : (tensor<?x128xf32>, tensor<29x128xf32>, tensor<?xindex>) -> tensor<29x128xf32>
  return %a : tensor<29x128xf32>
}

// -----

// A scatter without add of rows of a static shape (a decoding step's cache
// rows): the CPU form inserts row slices in a serial loop; the GPU form an
// element per iteration of an scf.forall into the destination, which
// bufferization writes in place as it does the row slices. The ids are
// checked by parallel loops first, and both are checked by the runtime at
// the end of the block: the repeated id, then the first bad entry.
// CHECK-LABEL: func.func @scatter_cache_rows
// CHECK:         memref.atomic_rmw minu
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw minu
// CHECK:         %[[SLOT:.*]] = memref.alloc() : memref<1xi64>
// CHECK:         %[[N8:.*]] = arith.muli %{{.*}}, %c8
// CHECK:         %[[N:.*]] = arith.muli %[[N8]], %c16
// CHECK:         scf.forall (%[[F:.*]]) in (%[[N]]) shared_outs(%[[O:.*]] = %{{.*}})
// CHECK:           arith.remui %[[F]], %c16
// CHECK:           memref.atomic_rmw minu %{{.*}}, %[[SLOT]]
// CHECK:           %[[E:.*]] = tensor.extract_slice %{{.*}} [1, 1, 1] [1, 1, 1]
// CHECK:           scf.forall.in_parallel
// CHECK-NEXT:        tensor.parallel_insert_slice %[[E]] into %[[O]]
// CHECK:         call @gnn_rt_check_repeated_id
// CHECK:         call @gnn_rt_check_bad_id(%[[SLOT]],
// CPU-LABEL: func.func @scatter_cache_rows
// CPU-NOT:       scf.forall
// CPU:           scf.for
// CPU:             tensor.insert_slice
func.func @scatter_cache_rows(%s: tensor<?x8x16xf32>, %cache: tensor<?x8x16xf32>, %ids: tensor<?xindex>) -> tensor<?x8x16xf32> {
  %a = gnn.scatter_rows %s into %cache[%ids] : (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?xindex>) -> tensor<?x8x16xf32>
  return %a : tensor<?x8x16xf32>
}

// -----

// A scatter without add of rows of a dynamic width: the ids must be
// distinct, checked by parallel loops (a slot per destination row takes
// the smallest entry naming it, then the smallest entry that is not its
// row's first), checked by the runtime after them (the repeated entry,
// its id's first entry, the op's line and column); CPU cores walk the ids
// in one serial loop.
// CHECK-LABEL: func.func @scatter_distinct
// CHECK:         scf.parallel
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw minu
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw minu %{{.*}}, %[[REPEATED:.*]][
// CHECK:         call @gnn_rt_check_repeated_id(%[[REPEATED]], %{{.*}}, %{{.*}}, %c{{[0-9]+}}_i64, %c{{[0-9]+}}_i64) : (memref<1xi64>, memref<?xindex, strided<[?], offset: ?>>, memref<?xi64, strided<[?], offset: ?>>, i64, i64) -> ()
// CPU-LABEL: func.func @scatter_distinct
// CPU-NOT:       memref.atomic_rmw
// CPU:           scf.for
// CPU:             func.call @gnn_rt_bad_value
func.func @scatter_distinct(%s: tensor<?x?xf32>, %x: tensor<?x?xf32>, %ids: tensor<?xindex>) -> tensor<?x?xf32> {
  %a = gnn.scatter_rows %s into %x[%ids] : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xindex>) -> tensor<?x?xf32>
  return %a : tensor<?x?xf32>
}

// -----

// Two lookups: each kernel lowers its own bad-id slot, and the runtime
// checks both slots (and reports the first bad entry of each) at the end
// of the block, after both loops: on a GPU, queued after the kernels
// where launches do not wait, so the host does not wait for them. The tanh between them reads the first lookup's rows, where a bad
// id gave zeros. CPU cores report each bad entry in the loop itself.
// CHECK-LABEL: func.func @lookups
// CHECK:         %[[S1:.*]] = memref.alloc() : memref<1xi64>
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw minu %{{.*}}, %[[S1]]
// CHECK:         scf.parallel
// CHECK:           math.tanh
// CHECK:         %[[S2:.*]] = memref.alloc() : memref<1xi64>
// CHECK:         scf.parallel
// CHECK:           memref.atomic_rmw minu %{{.*}}, %[[S2]]
// CHECK:         call @gnn_rt_check_bad_id(%[[S1]],
// CHECK:         call @gnn_rt_check_bad_id(%[[S2]],
// CHECK-NEXT:  return
// CPU-LABEL: func.func @lookups
// CPU-NOT:       memref.atomic_rmw
// CPU:           scf.parallel
// CPU:             func.call @gnn_rt_id_out_of_range
func.func @lookups(%x: tensor<?x4xf32>, %a: tensor<?xindex>, %b: tensor<?xindex>) -> tensor<?x4xf32> {
  %xa = gnn.gather_rows %x[%a] : (tensor<?x4xf32>, tensor<?xindex>) -> tensor<?x4xf32>
  %t = gnn.apply_nodes(%xa) {
  ^bb0(%e: f32):
    %r = math.tanh %e : f32
    gnn.yield %r : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %tb = gnn.gather_rows %t[%b] : (tensor<?x4xf32>, tensor<?xindex>) -> tensor<?x4xf32>
  return %tb : tensor<?x4xf32>
}

// -----

// A dense layer with an addend (a residual) whose product goes to cuBLAS
// whole: the GPU form adds the addend an element per iteration (the same
// sum, addend + product); the CPU form a row per iteration in vectors.
// CHECK-LABEL: func.func @linear_addend
// CHECK:         call @gnn_rt_linear
// CHECK:         scf.parallel
// CHECK-NEXT:      arith.remui
// CHECK-NOT:       vector.load
// CHECK:           %[[PRODUCT:.*]] = memref.load
// CHECK:           %[[ADDEND:.*]] = memref.load
// CHECK:           arith.addf %[[ADDEND]], %[[PRODUCT]] : f32
// CPU-LABEL: func.func @linear_addend
// CPU:           call @gnn_rt_linear
// CPU:           scf.parallel
// CPU:             scf.for
// CPU:               vector.load
func.func @linear_addend(%x: tensor<?x64xf32>, %w: tensor<32x64xf32>, %b: tensor<32xf32>, %r: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %y = gnn.linear %x, %w, %b plus %r : (tensor<?x64xf32>, tensor<32x64xf32>, tensor<32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}
