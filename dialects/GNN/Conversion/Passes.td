//===- Passes.td - gnn conversion passes -------------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_PASSES_TD
#define GNN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// GNNToLoops
//===----------------------------------------------------------------------===//

def GNNDecomposeGraphsPass : Pass<"gnn-decompose-graphs", "ModuleOp"> {
  let summary = "Passes every graph that crosses a non-gnn op as its parts";
  let description = [{
    A 1:N type conversion of `!gnn.graph` into the index arrays of the
    runtime's `gnn_graph` (`runtime/include/gnnc/graph.h`, `gnn_graph_part`),
    in this order: the number of source nodes (`index`), then
    `tensor<?xindex>` arrays `src` and `dst` (per edge id), `in_ptr`
    (num_dst + 1 offsets), `in_src` and `in_eid` (per CSR slot). It rewrites
    function signatures (each part keeps its graph's argument or result
    attributes), `func.call`, `func.return`, `scf.for`, `scf.while`,
    `scf.if` (with their yields and conditions) and `arith.select`; a gnn op
    that uses a graph then finds it as an `unrealized_conversion_cast` of the
    parts, and a graph that a gnn op builds is cast to its parts where it
    leaves. `convert-gnn-to-loops` runs it first. A graph that crosses any
    other op is an error.

    ```mlir
    func.func private @layer(%g: !gnn.graph<complete>, %x: tensor<?x4xf32>)
        -> tensor<?x4xf32>
    func.func @f(%g: !gnn.graph<complete>, %x: tensor<?x4xf32>)
        -> tensor<?x4xf32> {
      %y = func.call @layer(%g, %x)
          : (!gnn.graph<complete>, tensor<?x4xf32>) -> tensor<?x4xf32>
      return %y : tensor<?x4xf32>
    }
    // becomes
    func.func private @layer(index, tensor<?xindex>, tensor<?xindex>,
        tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?x4xf32>)
        -> tensor<?x4xf32>
    func.func @f(%n: index, %src: tensor<?xindex>, %dst: tensor<?xindex>,
                 %in_ptr: tensor<?xindex>, %in_src: tensor<?xindex>,
                 %in_eid: tensor<?xindex>, %x: tensor<?x4xf32>)
        -> tensor<?x4xf32> {
      %y = func.call @layer(%n, %src, %dst, %in_ptr, %in_src, %in_eid, %x)
          : (...) -> tensor<?x4xf32>
      return %y : tensor<?x4xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def GNNPassRuntimeContextPass : Pass<"gnn-pass-runtime-context", "ModuleOp"> {
  let summary = "Gives every function the caller's runtime context and "
                "passes it to calls and error reports";
  let description = [{
    Lowered code reports bad input (ids out of range, features of the wrong
    size) to the runtime. So that programs running in one process keep
    their errors apart, reports go into a `gnn_rt_context` that the caller
    of the program passes (`runtime/include/gnnc/errors.h`): every
    `func.func` with a body gets a first argument `!llvm.ptr` marked
    `gnn.runtime_context`, every call of such a function passes the
    caller's, and so does every call of the runtime's error reports
    (`gnn_rt_edge_out_of_range`, `gnn_rt_rows_mismatch`,
    `gnn_rt_id_out_of_range`) and of its dense products (`gnn_rt_linear`,
    `gnn_rt_gemm` and the others of `RuntimeABI.h`, which report sizes that
    do not fit), whose declarations gain the argument. Running it twice
    changes nothing.

    ```mlir
    func.func @f(%ids: tensor<?xindex>) {
      func.call @gnn_rt_id_out_of_range(%i, %id, %n) : (i64, i64, i64) -> ()
    }
    // becomes
    func.func @f(%rt: !llvm.ptr {gnn.runtime_context}, %ids: tensor<?xindex>) {
      func.call @gnn_rt_id_out_of_range(%rt, %i, %id, %n)
          : (!llvm.ptr, i64, i64, i64) -> ()
    }
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def GNNBindParallelThreadsPass
    : Pass<"gnn-bind-parallel-threads", "ModuleOp"> {
  let summary = "Binds OpenMP's threads in a parallel region to the caller's "
                "runtime context";
  let description = [{
    Compiled code allocates its buffers from the runtime instance whose
    context the thread running it is bound to (`gnn_rt_context_bind`,
    `runtime/include/gnnc/runtime.h`). The runner binds the calling thread
    for a call; OpenMP's worker threads run parts of every parallel region
    and would otherwise allocate from the default instance's pool (and free
    into it), so that two instances in one process would share the
    workers' buffers. Each `omp.parallel` region of a function that takes
    the runtime context (`gnn-pass-runtime-context`) binds its thread to
    that context on entry and restores the thread's previous binding before
    its terminator: a call, two thread-local stores per thread and region.
    Regions of functions without the context are left alone; running it
    twice changes nothing.

    ```mlir
    omp.parallel {
      omp.wsloop { ... }
      omp.terminator
    }
    // becomes
    omp.parallel {
      %before = func.call @gnn_rt_context_bind(%rt) : (!llvm.ptr) -> !llvm.ptr
      omp.wsloop { ... }
      func.call @gnn_rt_context_bind(%before) : (!llvm.ptr) -> !llvm.ptr
      omp.terminator
    }
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::func::FuncDialect"];
}

def ConvertGNNToLoopsPass : Pass<"convert-gnn-to-loops", "ModuleOp"> {
  let summary = "Lowers gnn ops to loops over the graph's index arrays";
  let description = [{
    Rewrites every gnn op into `scf` loops over memrefs for CPU cores (with
    `bufferization.to_memref`/`to_tensor` at the tensor boundary, for
    one-shot bufferization to finish): edge-wise ops loop over edges,
    receiving ops loop over destination nodes and their in-edges through
    the CSR, the fused attention keeps a running maximum per destination and
    head, in `vector` registers when the feature sizes are static; with
    static sizes, runs of destinations that share a range of sources are
    computed in tiles through the runtime's GEMM (`attention-blocks`). Outer
    loops are `scf.parallel` (one iteration per edge or destination node, no
    shared writes).

    Graphs are first decomposed into their parts as `gnn-decompose-graphs`
    does, so they may be passed to and returned from functions, carried by
    `scf.for`/`scf.while`/`scf.if` and chosen by `arith.select`; a
    `!gnn.graph` function argument becomes six arguments, in this order:
    the number of source nodes (`index`), then `tensor<?xindex>` arrays
    `src` and `dst` (per edge id), `in_ptr` (num_dst + 1 offsets), `in_src`
    and `in_eid` (per CSR slot). Public functions get
    `llvm.emit_c_interface`. `gnn.graph_from_coo` builds the same arrays
    with a counting sort and reports ids out of range to the runtime
    (`gnn_rt_edge_out_of_range`), leaving an empty graph behind.

    A `!gnn.tape` becomes the runtime's `gnn_rt_tape` pointer
    (`gnn_rt_tape_create`, `gnn_rt_tape_free`); a push passes the value's
    buffer as an unranked memref to `gnn_rt_tape_push_<element>`, which
    copies it, and a pop gets the copy back from
    `gnn_rt_tape_pop_<element>_r<rank>` as a buffer the program owns.

    ```mlir
    func.func @f(%g: !gnn.graph<complete>, ...)
    // becomes
    func.func @f(%num_src: index, %src: tensor<?xindex>, %dst: tensor<?xindex>,
                 %in_ptr: tensor<?xindex>, %in_src: tensor<?xindex>,
                 %in_eid: tensor<?xindex>, ...)
    ```
  }];
  let options = [
    Option<"attentionBlocks", "attention-blocks", "bool", /*default=*/"true",
           "Let runs of destinations whose CSR rows list one "
           "shared range of sources (found at run time: the blocks of "
           "complete, causal and bipartite batches) compute "
           "gnn.fused_attention in tiles: scores of up to 64 destinations "
           "against 128 sources, and their weighted value rows, through "
           "the runtime's GEMM (gnn_rt_gemm); other rows take the "
           "per-destination loop">,
    Option<"parallelDense", "parallel-dense", "bool", /*default=*/"false",
           "Split the rows of each gnn.linear into one runtime call per "
           "OpenMP thread (omp_get_max_threads) inside an scf.parallel; the "
           "runtime's BLAS then runs single-threaded in each, so a program's "
           "loops and its dense layers share one thread pool">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// GNNToGPU
//===----------------------------------------------------------------------===//

def ConvertGNNToGPUPass : Pass<"convert-gnn-to-gpu", "ModuleOp"> {
  let summary = "Lowers gnn ops to the forms that GPU threads run: attention "
                "kernels and a parallel iteration per element";
  let description = [{
    The GPU's lowering of every gnn op, with graphs decomposed into their
    parts as `convert-gnn-to-loops` does (the same loop builders, asked for
    GPU threads instead of CPU cores):

    - `gnn.fused_attention` becomes a `gpu.launch`: a group of lanes (a
      power of two up to a warp) per destination and head, the dot products
      reduced by butterfly shuffles (`gpu.shuffle xor`) within the group,
      the online softmax kept by every lane; graphs whose rows are blocks of
      one source range take a warp per 32 destinations walking the sources
      in lockstep. Layouts the kernel does not take become loops.
    - `gnn.fused_attention_grad` over such graphs (f32, every edge listed,
      at most one head dim) becomes warp tiles too: a kernel per
      destination (statistics, then dq) and per source of the reversed
      graph (dk and dv, or dv then dk where k, v and both sums do not fit
      a lane), a lane per node, or 2, 4, ... lanes holding parts of wide
      rows (their dot products added by shuffles); rows that break the
      promise go edge by edge. Other backwards take the node passes below.
    - Element-wise ops (`apply_edges`, `apply_nodes`, `broadcast`,
      `gather_rows`, `dropout`, `sum_to`, adding `scatter_rows` of wide
      rows) get an `scf.parallel` iteration per row and item, scalar code,
      bad ids reported after the loop; the attention backward's passes over
      nodes and the in-edge index of `graph_from_coo` work in 4096 chunks.

    - `gnn.layer_norm`, `gnn.layer_norm_grad`, f32 `gnn.log_softmax` and
      f32 `gnn.sum_to` of the last dim alone become a `gpu.launch` of a
      warp per row: lane j takes elements j,
      j + 32, ... (coalesced), and butterfly shuffles combine the lanes'
      partial sums and maxima; a column summed into one element is one
      warp.
    - The running totals of an in-edge index's in-degrees (its `in_ptr`)
      are a `gpu.launch` of one block of 1024 threads: each sums a
      contiguous segment, the warps scan the sums with `gpu.shuffle up`
      and the first warp scans the warps' totals in dynamic shared memory
      between two `gpu.barrier`s, so that the host neither waits for the
      counts nor reads them.

    `gnn-parallel-loops-to-gpu` then maps the parallel loops to kernels.
    With `attention-kernels=false row-kernels=false scan-kernels=false`
    those ops take their loop forms (the backward's tiles a parallel
    iteration per node, each walking its own range), so that the CPU can run every other GPU form
    (`gnn-lower-to-cpu{device-loops}`, how tests check their arithmetic
    without a GPU).

    ```mlir
    %h = gnn.apply_nodes %x : tensor<?x4xf32> -> tensor<?x4xf32> {
    ^bb0(%a: f32):
      %e = math.exp %a : f32
      gnn.yield %e : f32
    }
    // becomes an iteration per row and item
    scf.parallel (%r, %i) = (%c0, %c0) to (%rows, %c4) step (%c1, %c1) {
      %a = memref.load %x[%r, %i] : memref<?x4xf32, strided<[4, 1], offset: ?>>
      %e = math.exp %a : f32
      memref.store %e, %h[%r, %i] : memref<?x4xf32>
    }
    ```
  }];
  let options = [
    Option<"attentionKernels", "attention-kernels", "bool",
           /*default=*/"true",
           "Lower gnn.fused_attention and the tiles of its backward to "
           "gpu.launch kernels; without, to loops (for running the other GPU "
           "forms and the tiles' arithmetic on a CPU)">,
    Option<"rowKernels", "row-kernels", "bool", /*default=*/"true",
           "Lower layer norm, its gradient, f32 log-softmax and f32 sums "
           "within rows to gpu.launch kernels of a warp per row; without, "
           "to loops (for running the other GPU forms on a CPU)">,
    Option<"scanKernels", "scan-kernels", "bool", /*default=*/"true",
           "Build the running totals of in-edge indices (the attention "
           "backward's reversal, graph_from_coo) as a block-wide scan "
           "kernel; without, as a serial loop (on the host, for running "
           "the other GPU forms on a CPU)">,
    Option<"attentionBlocks", "attention-blocks", "bool", /*default=*/"false",
           "Where attention takes its loop form, compute runs of block rows "
           "in GEMM tiles through the runtime, as convert-gnn-to-loops does "
           "(a CPU call: for the CPU runs of attention-kernels=false)">,
    Option<"parallelDense", "parallel-dense", "bool", /*default=*/"false",
           "Split gnn.linear into one runtime call per OpenMP thread, as "
           "convert-gnn-to-loops does (for the CPU runs of "
           "attention-kernels=false)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// ParallelLoopsToGPU
//===----------------------------------------------------------------------===//

def ParallelLoopsToGPUPass : Pass<"gnn-parallel-loops-to-gpu", "ModuleOp"> {
  let summary = "Runs the outermost parallel loops that a device can run as "
                "GPU kernels";
  let description = [{
    Turns each outermost one-dimensional `scf.parallel` over memrefs into a
    `gpu.launch` of `block-size` threads per block, one thread per
    iteration (those past the end do nothing). A loop stays on the host,
    and the loops inside it are considered instead, when its body calls a
    function (the runtime's error reports), allocates or frees memory,
    reads a global, still holds tensors, or reduces (`scf.reduce` with
    operands). The memrefs must be accessible from the device: the GPU
    pipeline allocates every buffer in unified memory.

    ```mlir
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %x = memref.load %a[%i] : memref<?xf32>
      memref.store %x, %b[%i] : memref<?xf32>
    }
    // becomes, with %blocks = ceildiv(%n, 128)
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %blocks, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
      // %i = %bx * 128 + %tx; if %i < %n: the body
      gpu.terminator
    }
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"128",
           "Threads per block">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect"
  ];
}

//===----------------------------------------------------------------------===//
// GPUAsyncLaunches
//===----------------------------------------------------------------------===//

def GPUAsyncLaunchesPass : Pass<"gnn-gpu-async-launches", "ModuleOp"> {
  let summary = "Launches kernels without waiting for each; the host waits "
                "before it touches memory";
  let description = [{
    A synchronous `gpu.launch_func` waits for its kernel to finish, so a
    program of many small kernels spends its time in those waits. This
    pass launches every kernel of the host functions asynchronously, on the
    host thread's stream (`gpu.wait async` gives it to the launch; one
    stream keeps the kernels in order), and has the host wait for the
    launched kernels (`gnn_cuda_wait_for_launches`, which waits only when
    kernels are in flight) before anything it does that may read or write
    memory: a load or a store (except on the host's stack, or in a buffer
    allocated in the same block and not yet handed to anything), a copy, a
    call
    of a function that is outside the program (the runtime's), and any op
    whose effects are unknown. A return does not wait: a caller in the
    program waits where it touches memory, and the caller outside it (the
    runner) synchronizes after every call before it reads results or
    errors. The runtime's dense products (cuBLAS on the same stream, in
    order after the kernels), the checks of id lists after their kernels
    (`gnn_rt_check_bad_id`, `gnn_rt_check_repeated_id`: the runtime runs
    them at the thread's next wait), a loop tape's pushes (their copies
    queued on that stream too) and its other calls (the host's
    bookkeeping), and error reports (which read no buffer) do not wait,
    nor do allocation and deallocation: the runtime reuses a block freed
    while the thread's kernels run only where stream order keeps the uses
    apart (a device block, for the same thread's later work), or where no
    queued work reads it (a host block no deferred check reads), and keeps
    others from reuse until the thread has waited. A call of a function of the program does not wait;
    that function waits where it touches memory. A private function that
    touches nothing but the buffers it is passed, launches and calls
    nothing, and gets from every call buffers no kernel has had yet (a
    host leaf: bufferization's `dealloc_helper`) waits nowhere, and neither
    its calls nor the caller's later loads of those buffers do. Reading a
    constant global, or copying one into a buffer no kernel has, does not
    wait either: kernels never address the host's constants. A branch
    (`scf.if`, `scf.index_switch`) some of whose ways touch nothing waits
    inside the ways that touch memory rather than before it, so that a
    rarely taken way costs the others no wait. Buffers no kernel writes
    are read without a wait: a public function's argument marked
    `gnn.read_only` (the program never writes it), and a private
    function's argument that every call passes such a buffer or one of
    the caller's that no kernel ever has.

    ```mlir
    gpu.launch_func @kernels::@scale blocks in (%n, %c1, %c1)
        threads in (%c128, %c1, %c1) args(%x : memref<?xf32>)
    %v = memref.load %x[%c0] : memref<?xf32>
    // becomes
    %stream = gpu.wait async
    %done = gpu.launch_func async [%stream] @kernels::@scale
        blocks in (%n, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%x : memref<?xf32>)
    func.call @gnn_cuda_wait_for_launches() : () -> ()
    %v = memref.load %x[%c0] : memref<?xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect"
  ];
}

//===----------------------------------------------------------------------===//
// GPUDedupKernels
//===----------------------------------------------------------------------===//

def GPUDedupKernelsPass : Pass<"gnn-gpu-dedup-kernels", "ModuleOp"> {
  let summary = "Keeps one module of each distinct outlined kernel";
  let description = [{
    `gpu-kernel-outlining` gives every launch a `gpu.module` of its own,
    and a program launches the same kernel from many places (a copy of one
    shape, a lookup's checks, a layer's loops in its forward and in its
    backward's tape form). Each module is compiled by LLVM and, when the
    program loads, by the driver. This pass keeps the first of each set of
    modules that hold one kernel computing the same (the same attributes
    but the kernel's name, equivalent bodies: the same ops, attributes and
    types on corresponding values, locations aside), points every launch
    of the others at it, and erases them (a module named by anything but a
    launch stays).

    ```mlir
    gpu.module @a { gpu.func @a(%x: memref<?xf32>) kernel { ... } }
    gpu.module @b { gpu.func @b(%x: memref<?xf32>) kernel { ... } }
    gpu.launch_func @a::@a blocks in (%n, %c1, %c1)
        threads in (%c128, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @b::@b blocks in (%n, %c1, %c1)
        threads in (%c128, %c1, %c1) args(%y : memref<?xf32>)
    // becomes, where the two bodies are the same
    gpu.module @a { gpu.func @a(%x: memref<?xf32>) kernel { ... } }
    gpu.launch_func @a::@a blocks in (%n, %c1, %c1)
        threads in (%c128, %c1, %c1) args(%x : memref<?xf32>)
    gpu.launch_func @a::@a blocks in (%n, %c1, %c1)
        threads in (%c128, %c1, %c1) args(%y : memref<?xf32>)
    ```
  }];
}

//===----------------------------------------------------------------------===//
// GPUPlaceBuffers
//===----------------------------------------------------------------------===//

def GPUPlaceBuffersPass : Pass<"gnn-gpu-place-buffers", "ModuleOp"> {
  let summary = "Allocates each buffer in device, host or unified memory, "
                "by who touches it";
  let description = [{
    The GPU pipeline allocates every buffer in unified memory, which host
    code and kernels share and the driver pages between them (and which
    the runtime places on the device when it hands a block out, so that a
    buffer the host alone uses moves back at its first touch). This pass,
    run on the host program after kernel outlining, allocates a buffer
    that only kernels and cuBLAS touch in device memory
    (`gnn_cuda_alloc_device`) and one that only the host touches in host
    memory (`gnn_cuda_alloc_host`): a block of bytes from the runtime,
    viewed as the buffer's type with `memref.view`, whose `memref.dealloc`
    frees the block as before (`gnn_cuda_free` takes all three kinds).
    Buffers both touch stay unified.

    It follows where each memref value's memory may go in the host
    program: into views and casts, `arith.select`, the arguments of a
    called function of the program, the results of its calls (from a
    private function's return), and the results and block arguments of
    `scf.for`, `scf.while` and `scf.if` (from their operands and
    terminators). The device touches a kernel's arguments, the runtime's
    dense products' buffers (`gnn_rt_linear`, `gnn_rt_gemm` and their
    variants, on cuBLAS) and a dense buffer a loop tape pushes (the
    driver copies it); the host touches a load, store or copy in host
    code, a strided buffer a tape pushes (its elements gathered) and what
    any other runtime function is passed. Both may touch a public
    function's results (its caller reads them, or passes them to another
    call), what any other op takes, and whatever a kernel not yet outlined
(a `gpu.launch` body) does. Sizes, addresses and deallocation
    touch nothing. A buffer whose type is not an identity-layout memref of
    integers, floats or indices, or that asks for more than 256-byte
    alignment, stays unified.

    ```mlir
    %t = memref.alloc(%n) : memref<?x4xf32>
    gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%t : memref<?x4xf32>)
    memref.dealloc %t : memref<?x4xf32>
    // becomes
    %bytes = arith.muli %c16, %n : index
    %size = arith.index_cast %bytes : index to i64
    %block = call @gnn_cuda_alloc_device(%size) : (i64) -> memref<?xi8>
    %t = memref.view %block[%c0][%n] : memref<?xi8> to memref<?x4xf32>
    gpu.launch_func @kernels::@fill blocks in (%n, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%t : memref<?x4xf32>)
    memref.dealloc %t : memref<?x4xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

//===----------------------------------------------------------------------===//
// GPUAssumeAlignedRows
//===----------------------------------------------------------------------===//

def GPUAssumeAlignedRowsPass
    : Pass<"gnn-gpu-assume-aligned-rows", "::mlir::gpu::GPUModuleOp"> {
  let summary = "States the alignment of the kernels' row loads for LLVM";
  let description = [{
    The tiled attention kernels of `convert-gnn-to-gpu` read rows of q, k,
    v and the upstream gradient with one `vector.load` each, and the host
    has made sure those rows start 16-byte aligned (copying a buffer whose
    rows do not); the loads carry the unit attribute `gnn.aligned_rows`.
    LLVM turns such a load into 16-byte loads (`ld.global.v4.f32`, a
    quarter of the load instructions) only if it can prove the address
    aligned, and a memref's pointer, offset and strides are run-time
    values. This pass, run on the outlined kernels (an assumption has
    unknown effects to bufferization's deallocation, so it cannot be
    stated earlier), removes the attribute and states for each such
    kernel argument, at the kernel's entry, that its aligned pointer is a
    multiple of 16 bytes and its offset and every stride but the last are
    multiples of 4 elements (`llvm.intr.assume`), from which LLVM's
    alignment inference derives each row's.

    ```mlir
    gpu.func @k(%x: memref<?x64xf32, strided<[?, 1], offset: ?>>, %r: index)
        kernel {
      %row = vector.load %x[%r, %c0] {gnn.aligned_rows}
          : memref<?x64xf32, strided<[?, 1], offset: ?>>, vector<64xf32>
      ...
    // becomes
      %p = memref.extract_aligned_pointer_as_index %x
          : memref<?x64xf32, strided<[?, 1], offset: ?>> -> index
      %low = arith.andi %p, %c15 : index
      %aligned = arith.cmpi eq, %low, %c0 : index
      "llvm.intr.assume"(%aligned) : (i1) -> ()
      ... (the offset and the row stride: multiples of 4)
      %row = vector.load %x[%r, %c0]
          : memref<?x64xf32, strided<[?, 1], offset: ?>>, vector<64xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

//===----------------------------------------------------------------------===//
// GPUMulHigh
//===----------------------------------------------------------------------===//

def GPUMulHighPass
    : Pass<"gnn-gpu-mul-high", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Takes the kernels' 32-bit products' high halves with mul.hi";
  let description = [{
    Dropout's Philox rounds multiply 32-bit words and keep both halves of
    each product (`arith.mului_extended`). Upstream's lowering widens the
    words to 64 bits and multiplies those, and once LLVM has folded the
    widening of a word that was itself narrowed, NVPTX emits a 64-bit
    multiply (`mul.lo.s64`, several 32-bit instructions on the device).
    This pass, run on the outlined kernels, gives each 32-bit
    `arith.mului_extended` its low half as `arith.muli` and its high half
    as NVVM's `mul.hi.u32` (`llvm.nvvm.mulhi.ui`).

    ```mlir
    %lo, %hi = arith.mului_extended %a, %b : i32
    // becomes
    %lo = arith.muli %a, %b : i32
    %hi = llvm.call_intrinsic "llvm.nvvm.mulhi.ui"(%a, %b)
        : (i32, i32) -> i32
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

//===----------------------------------------------------------------------===//
// GPUDataLayout
//===----------------------------------------------------------------------===//

def GPUDataLayoutPass
    : Pass<"gnn-gpu-data-layout", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Gives the kernels' module NVPTX's data layout";
  let description = [{
    A load or store that states no alignment takes its type's ABI alignment
    from the data layout of the LLVM module it is translated into. A
    `gpu.module` without one is translated under LLVM's default layout,
    which aligns a 64-bit integer to 4 bytes; `gpu-module-to-binary` sets
    the target's layout only after translation, so NVPTX would split every
    load and store of an `index` (node ids, CSR offsets, counts) into two
    32-bit ones. This pass, run on the kernels' modules before their
    conversion to the LLVM dialect, sets `llvm.data_layout` to the layout of
    `nvptx64-nvidia-cuda`, under which an `index` is 8-byte aligned (one
    `ld.global.u64`).

    ```mlir
    gpu.module @kernels {
      ...
    }
    // becomes
    gpu.module @kernels attributes {
        llvm.data_layout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"} {
      ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// GlobalsToBuffers
//===----------------------------------------------------------------------===//

def GlobalsToBuffersPass : Pass<"gnn-globals-to-buffers", "func::FuncOp"> {
  let summary = "Copies the globals a function reads into buffers it "
                "allocates, so that GPU kernels can read them";
  let description = [{
    Bufferized constants (`arith.constant dense<...>`) are read with
    `memref.get_global` from the host program's data, which a GPU kernel
    cannot address. In the GPU pipeline every buffer comes from unified
    memory, so each global that a function reads is copied once, at the
    function's entry, into a buffer of its own that replaces every read of
    it in the function (loops and kernels' bodies included); the
    deallocation pipeline frees the copies. Globals with a layout other
    than the identity are left as they are.

    ```mlir
    func.func @f(%x: memref<?x3xf32>) -> memref<?x3xf32> {
      %one = memref.get_global @__constant_xf32 : memref<f32>
      %r = call @gnn_kernel_broadcast(%one, %x)
          : (memref<f32>, memref<?x3xf32>) -> memref<?x3xf32>
      return %r : memref<?x3xf32>
    }
    // becomes
    func.func @f(%x: memref<?x3xf32>) -> memref<?x3xf32> {
      %global = memref.get_global @__constant_xf32 : memref<f32>
      %one = memref.alloc() : memref<f32>
      memref.copy %global, %one : memref<f32> to memref<f32>
      %r = call @gnn_kernel_broadcast(%one, %x)
          : (memref<f32>, memref<?x3xf32>) -> memref<?x3xf32>
      return %r : memref<?x3xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

#endif // GNN_CONVERSION_PASSES_TD
