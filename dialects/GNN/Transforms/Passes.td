//===- Passes.td - gnn transformation passes ---------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TRANSFORMS_PASSES_TD
#define GNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def FuseAttentionPass : Pass<"gnn-fuse-attention"> {
  let summary = "Fuses score, exp and the two sums of attention into one op";
  let description = [{
    Recognizes attention written the DGL way and replaces it with
    `gnn.fused_attention`, which makes one pass over the edges and writes no
    per-edge value to memory:

    - the score `u_dot_v(k, q)` (or `v_dot_u(q, k)`), followed, in the same
      op or in a `copy_e` op or a user-defined body, by the tutorial's
      `scaled_exp`: an optional scale (multiplication or division by a
      constant), an optional clamp, then `exp`;
    - the sums `u_mul_e(v, e) -> sum` and `copy_e(e) -> sum` (or a
      `gnn.reduce` sum of `e`), in one `gnn.send_and_recv` or in two;
    - optionally the division `wv / z` in a `gnn.apply_nodes`, which is then
      folded into the fused op (`normalize`);
    - the exact softmax: `exp(s - m)` in a body over the score `s` and
      `m = gnn.reduce max(s)`, then the sums and the division (required: the
      shift cancels only in `wv / z`); it becomes the normalized op without
      a clamp, whose online softmax is exact.

    Values that other code uses (the per-edge weights, say) are kept, so
    results do not change; code that does not match is left alone.

    ```mlir
    %s = gnn.apply_edges %g, u_dot_v(%k, %q) : ...
    %e = gnn.apply_edges %g, copy_e(%s) then [scale(0.125), exp] : ...
    %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum,
                                     copy_e(%e) -> sum] : ...
    // becomes
    %wv, %z = gnn.fused_attention %g, %q, %k, %v scale(1.250000e-01) : ...
    ```
  }];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def FuseAddendsPass : Pass<"gnn-fuse-addends"> {
  let summary = "Folds the sum of two matrices into the op that computes one";
  let description = [{
    A `gnn.apply_nodes` that adds two matrices of one type, one of them a
    result used nowhere else of a `gnn.linear` or the input gradient of a
    `gnn.layer_norm_grad`, becomes that op with the other matrix as its
    addend (`plus`). Residual connections (`x + W h`) take this form, and
    so do the sums of a value's gradients that differentiation writes
    (`dy1 W1 + dy2 W2` for an input read by two layers, or a layer norm's
    input gradient plus the residual path's). On the CPU a layer's product
    then adds into a copy of the addend, and the layer norm's backward adds
    it in its pass over the row: one pass over the rows instead of two.

    ```mlir
    %p = gnn.linear %h, %w : (tensor<?x128xf32>, tensor<128x128xf32>)
        -> tensor<?x128xf32>
    %r = gnn.apply_nodes(%x, %p) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      gnn.yield %s : f32
    } : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    // becomes
    %r = gnn.linear %h, %w plus %x
        : (tensor<?x128xf32>, tensor<128x128xf32>, tensor<?x128xf32>)
        -> tensor<?x128xf32>
    ```

    A layer's sum is then accumulated in another order (the addend first,
    then the product's terms), so results agree with the unfused form's to
    rounding, not bit for bit.
  }];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

def CopyStridedViewsPass : Pass<"gnn-copy-strided-views"> {
  let summary = "Copies slices within rows that lowered ops take as buffers";
  let description = [{
    Lowered gnn ops take each feature's buffer with row-major items (static
    strides after the first dim, any offset and row stride): a slice of
    rows, or of one index of an outer item dim, is read in place. A
    `bufferization.to_memref` of such a type whose tensor is a slice within
    rows (items 1-8 of 25, say), directly or through casts and reshapes,
    takes a row-major copy of the slice instead (`bufferization.alloc_tensor
    ... copy`, one per slice): bufferization cannot build that copy itself
    for a layout with a run-time offset. Reads that canonicalization has
    turned into `tensor.extract` need no copy and get none. Runs just
    before one-shot bufferization.

    ```mlir
    %q = tensor.extract_slice %x[0, 0, 1] [%n, 2, 8] [1, 1, 1]
        : tensor<?x2x25xf32> to tensor<?x2x8xf32>
    %m = bufferization.to_memref %q read_only
        : memref<?x2x8xf32, strided<[?, 8, 1], offset: ?>>
    // becomes
    %c = bufferization.alloc_tensor() copy(%q) : tensor<?x2x8xf32>
    %m = bufferization.to_memref %c read_only
        : memref<?x2x8xf32, strided<[?, 8, 1], offset: ?>>
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def FuseElementwisePass : Pass<"gnn-fuse-elementwise"> {
  let summary = "Merges chains of element-wise ops into one gnn.apply_nodes";
  let description = [{
    A `gnn.apply_nodes` whose input is the result of another
    `gnn.apply_nodes` or of a `gnn.dropout` of the same type (static item
    dims), used by it alone and in its block, takes that op's work into its
    own body; a `gnn.dropout` of such an apply_nodes result becomes
    `gnn.dropout_element` in the apply_nodes' body. So the bias-free
    activation, dropout and residual sum after a dense layer, or a
    backward's sum of gradients, dropout and scaling, are one kernel that
    reads each input once and writes one result, where each op was a pass
    over memory (and on a GPU a launch) of its own.

    ```mlir
    %h = gnn.apply_nodes(%p) {
    ^bb0(%a: f32):
      %m = arith.maximumf %a, %zero : f32
      gnn.yield %m : f32
    } : (tensor<?x64xf32>) -> tensor<?x64xf32>
    %d = gnn.dropout %h, %seed, %offset rate(1.000000e-01)
        : tensor<?x64xf32>
    %r = gnn.apply_nodes(%x, %d) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      gnn.yield %s : f32
    } : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    // becomes
    %r = gnn.apply_nodes(%x, %p) {
    ^bb0(%a: f32, %b: f32):
      %m = arith.maximumf %b, %zero : f32
      %d = gnn.dropout_element %m, %seed, %offset rate(1.000000e-01) : f32
      %s = arith.addf %a, %d : f32
      gnn.yield %s : f32
    } : (tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    ```

    An op whose result other ops read as well may be merged into its
    consumer when every such reader comes after the consumer: the merged op
    then yields that result too (a `gnn.apply_nodes` of several results),
    so an optimizer's update of a parameter from its two moments, each
    returned, is one op of three results that reads each input once.

    ```mlir
    %m1 = gnn.apply_nodes(%m, %g) { ... } : ... -> tensor<16x32xf32>
    %v1 = gnn.apply_nodes(%v, %g) { ... } : ... -> tensor<16x32xf32>
    %p1 = gnn.apply_nodes(%p, %m1, %v1) { ... } : ... -> tensor<16x32xf32>
    return %p1, %m1, %v1 : ...
    // becomes
    %u:3 = gnn.apply_nodes(%p, %m, %g, %v) { ... } : ...
        -> (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>)
    return %u#0, %u#1, %u#2 : ...
    ```

    With `siblings` (the GPU pipelines), apply_nodes of one shape that do
    not depend on each other merge too, where their row counts are the
    same (static, or an input they share) and nothing reads the earlier
    one's results before the later one (looked for among the 32 ops before
    it): an optimizer's updates of the parameters of one shape are one
    kernel, which saves a launch per update on a GPU. The CPU does without:
    one loop over many buffers needs more run-time overlap checks than
    LLVM's vectorizer makes.

    Each element is computed by the same operations in the same order, so
    results are bit for bit those of the chain (where the code generator
    contracts a multiply and an add that were in different kernels, to
    rounding). The GPU pipelines run it (`gnn-lower-to-nvvm`, and the CPU's
    `device-loops` form, which runs the GPU forms' arithmetic). The CPU's
    own dropout computes one random word per four elements in vector loops,
    which an element body cannot: with `dropouts=false` (the CPU pipeline)
    dropouts stay ops of their own and only apply_nodes merge.
  }];
  let options = [
    Option<"dropouts", "dropouts", "bool", "true",
           "Merge gnn.dropout too (as gnn.dropout_element in the body)">,
    Option<"siblings", "siblings", "bool", "false",
           "Also merge apply_nodes of one shape and row count that do not "
           "depend on each other (one kernel for several)">,
  ];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

//===----------------------------------------------------------------------===//
// Differentiation
//===----------------------------------------------------------------------===//

def DifferentiatePass : Pass<"gnn-differentiate", "ModuleOp"> {
  let summary = "Writes the reverse-mode gradient of gnn functions";
  let description = [{
    For each chosen function, whose first result is the loss (a float
    tensor of one element), writes the function `<name><suffix>` that takes
    the same arguments and returns the function's results followed by the
    loss's gradient with respect to each differentiable argument: those
    marked `gnn.differentiable`, or with `all-float-arguments` every float
    tensor argument. Gradient results are named `grad.<argument name>`.

    Every gnn op has an adjoint: message functions and element bodies
    (arith and math ops, differentiated symbolically) become element bodies
    over the upstream gradient; sums over in-edges flow back along the
    edges, over the reversed graph for source features; `max`/`min`
    through the edges that attain the extremum (all of them, on ties);
    `gather_rows` and `scatter_rows` are each other's transpose; dropout
    regenerates its mask. `gnn.fused_attention` with static feature sizes
    gets `gnn.fused_attention_grad`, which stores no per-edge value; one
    that returns its log-sum-exp hands it and its output to the backward
    instead of the backward recomputing the forward (other sizes
    are differentiated in the unfused form; for the exact softmax, the
    per-destination maximum is a constant of the backward). Graph
    construction, id lists and counts carry no gradient.

    A call goes through one backward function per callee, so a layer
    function called N times has one backward, compiled once: in
    straight-line code the call becomes a call of `@g_fwd` (g's results and
    its residuals, the tensors its backward reads) and its backward a call
    of `@g_vjp_tape` (g's arguments, its float results' gradients and the
    residuals in, its float arguments' gradients out), so g's forward runs
    once. Only values that depend on a differentiable argument and that the
    loss depends on get gradients. The functions it writes get the
    canonical forms of `gnn.apply_nodes` (an adjoint's body reads splat
    constants, such as the seed's broadcast ones, as scalars, and drops the
    inputs it does not read), so that no adjoint materializes or reads what
    it does not need.

    `scf.for` is differentiated through its body outlined as a callee: the
    reverse loop recomputes the state entering each iteration from the
    initial values (no per-iteration storage; O(trips^2) body runs, bounded
    by the trip count). `scf.while` (the ACT loop) is differentiated
    through its condition region and body as two functions: its forward
    pushes each iteration's state, the values its condition computes and its
    body's residuals onto a `!gnn.tape` and counts the iterations; the
    backward pops them in reverse in a loop of that many iterations
    (O(trips) body runs, nothing recomputed, and a program that does not
    grow with the trip count). A loop that carries what a tape cannot keep
    (a graph) is run once more to count its iterations and reversed like
    `scf.for`. `scf.if` outlines both branches; its adjoint is an
    `scf.if` on the same condition calling the taken branch's backward. An
    op on the way with no adjoint is an error naming it.

    ```mlir
    func.func @loss(%g: !gnn.graph<general>,
                    %x: tensor<?x4xf32> {gnn.differentiable})
        -> tensor<f32> {
      %m = gnn.reduce %g, sum(%x) : ...
      %l = gnn.sum_to %m : tensor<?x4xf32> -> tensor<f32>
      return %l : tensor<f32>
    }
    // gains
    func.func @loss_grad(%g: ..., %x: ...)
        -> (tensor<f32>, tensor<?x4xf32> {gnn.name = "grad.x"})
    ```
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "functions to differentiate (default: every function with an "
               "argument marked gnn.differentiable)">,
    Option<"allFloatArguments", "all-float-arguments", "bool", "false",
           "differentiate with respect to every float tensor argument">,
    Option<"suffix", "suffix", "std::string", "\"_grad\"",
           "appended to a function's name to name its gradient function">,
  ];
  let dependentDialects = ["::mlir::gnn::GNNDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

//===----------------------------------------------------------------------===//
// Kernel outlining
//===----------------------------------------------------------------------===//

def OutlineKernelsPass : Pass<"gnn-outline-kernels", "ModuleOp"> {
  let summary = "Generates each distinct gnn kernel once and calls it";
  let description = [{
    Every gnn op that lowers to loops of its own (`apply_edges`,
    `send_and_recv`, `reduce`, `apply_nodes`, `filter_nodes`,
    `filter_edges`, `fused_attention`, `layer_norm`, `log_softmax`,
    `dropout`, `sum_to`, `broadcast`) becomes
    a call of a private kernel function holding that op alone. Ops that are
    the same op with the same attributes, body and operand and result types
    share one kernel, whatever their operands: a model's 18 attention ops of
    one shape are compiled once, not 18 times, so compile time follows the
    number of distinct kernels, not the size of the program. Kernels are
    named `gnn_kernel_<op>` (made unique) and marked `gnn.kernel` and
    `no_inline` (LLVM must not copy them back into every caller). Scalars
    and tensors that a body uses from outside (an optimizer's step size, a
    flag, the objective whose elements its gate reads) become the kernel's
    arguments after the op's operands, and constants it uses are cloned
    into the kernel, so a training step's per-parameter updates share one
    kernel per shape. Ops already in a kernel, and ops with an operand (or
    a tensor used from outside) that is a slice (`tensor.extract_slice`,
    possibly reshaped) are left alone: kernels take identity-layout
    buffers, and a slice would have to be copied first.
    ```mlir
    %a = gnn.fused_attention %g, %q1, %k1, %v1 scale(0.125) normalize : ...
    %b = gnn.fused_attention %g, %q2, %k2, %v2 scale(0.125) normalize : ...
    // becomes
    %a = func.call @gnn_kernel_fused_attention(%g, %q1, %k1, %v1) : ...
    %b = func.call @gnn_kernel_fused_attention(%g, %q2, %k2, %v2) : ...
    func.func private @gnn_kernel_fused_attention(%g: !gnn.graph<general>,
        %q: tensor<?x8x16xf32>, ...) -> tensor<?x8x16xf32>
        attributes {gnn.kernel, no_inline} {
      %r = gnn.fused_attention %g, %q, %k, %v scale(0.125) normalize : ...
      return %r : tensor<?x8x16xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def AnnounceResultsPass : Pass<"gnn-announce-results", "ModuleOp"> {
  let summary = "Hands each result to the host as soon as it is final";
  let description = [{
    In each of the named functions, every tensor result is announced
    (`gnn.result_ready` with the result's number) right after the op that
    computes it, in the function's body, rather than only when the
    function returns: a host can then use the results that are ready while
    the rest of the function runs. A training step's backward computes the
    gradients of the last layer first; a data-parallel trainer passes them
    on to the other ranks while the layers below are differentiated. A
    result that is an argument is announced at the function's entry, one
    computed inside a loop or a branch after that op. Functions with more
    than one block, and results that are not ranked tensors a host can
    read (`gnn.result_ready`'s types), are left unannounced; a name that
    is no function is an error.

    ```mlir
    func.func @grad(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %a = call @last_layer(%x) : (tensor<4xf32>) -> tensor<4xf32>
      %b = call @first_layer(%a) : (tensor<4xf32>) -> tensor<4xf32>
      return %b, %a : tensor<4xf32>, tensor<4xf32>
    }
    // becomes, with functions=grad
      %a = call @last_layer(%x) : (tensor<4xf32>) -> tensor<4xf32>
      gnn.result_ready %a, 1 : tensor<4xf32>
      %b = call @first_layer(%a) : (tensor<4xf32>) -> tensor<4xf32>
      gnn.result_ready %b, 0 : tensor<4xf32>
      return %b, %a : tensor<4xf32>, tensor<4xf32>
    ```
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "the functions whose results are announced">,
  ];
  let dependentDialects = ["::mlir::gnn::GNNDialect"];
}

//===----------------------------------------------------------------------===//
// Vector math
//===----------------------------------------------------------------------===//

def ApproximateVectorMathPass : Pass<"gnn-approximate-vector-math"> {
  let summary = "Computes math functions on vectors by polynomials, in "
                "vector registers";
  let description = [{
    LLVM lowers a math function on a vector (`math.exp` on `vector<8xf32>`,
    say) to one libm call per lane. This pass rewrites such ops with MLIR's
    polynomial approximations, which stay vectorized; the fused attention's
    CPU kernel computes a chunk of edge weights with one vector `exp`. Ops on
    scalars are left to libm. For f32 `exp` the approximation is within 5
    ulp of libm for normal results; results below the smallest normal f32
    flush to zero, and `exp(-inf) = 0`, `exp(nan) = nan`, overflow gives
    `inf`.

    ```mlir
    %w = math.exp %s : vector<8xf32>
    // becomes range reduction, a polynomial and exponent bit arithmetic on
    // vector<8xf32> (arith and math.fma ops), with no call.
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def DeviceCopiesPass : Pass<"gnn-device-copies", "::mlir::func::FuncOp"> {
  let summary = "A GPU program's copies between buffers as parallel loops, "
                "so that kernels make them";
  let description = [{
    Bufferization and deallocation leave `memref.copy` ops in host code:
    the copies of values a loop carries (the Universal Transformer's ACT
    state, iteration after iteration) and of buffers a loop must keep
    alive. Lowered as they are, each is a `memcpy` by the host over
    unified memory: it waits for the kernels in flight and moves the pages
    of both buffers to the host and back. In the GPU forms this pass makes
    each such copy a parallel loop of one iteration per element (its flat
    index split into the indices of each dim, loads and stores through
    each side's layout), which `gnn-parallel-loops-to-gpu` launches as a
    kernel like the others. Copies inside parallel loops or kernels, of
    one element of a static shape (`gnn-element-copies`), and from or to
    the host's stack or data (`memref.alloca`, `memref.get_global`, which
    a kernel cannot address) stay as they are.

    ```mlir
    memref.copy %a, %b : memref<?x8xf32> to memref<?x8xf32>
    // becomes
    %n = memref.dim %a, %c0 : memref<?x8xf32>
    %count = arith.muli %n, %c8 : index
    scf.parallel (%f) = (%c0) to (%count) step (%c1) {
      %i = arith.remui %f, %c8 : index
      %r = arith.divui %f, %c8 : index
      %x = memref.load %a[%r, %i] : memref<?x8xf32>
      memref.store %x, %b[%r, %i] : memref<?x8xf32>
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def ElementCopiesPass : Pass<"gnn-element-copies"> {
  let summary = "Copies of one element as a load and a store";
  let description = [{
    A `memref.copy` between buffers of one element (every dim a static 1:
    what bufferization makes of an `scf.forall` that inserts single elements
    into its shared output, the GPU form of `gnn.scatter_rows`) becomes a
    `memref.load` and a `memref.store`. Lowered as it is, such a copy is a
    `memcpy` of unknown alignment, which a GPU kernel runs as four byte
    loads and four byte stores per float.

    ```mlir
    memref.copy %a, %b : memref<1x1xf32, strided<[16, 1], offset: ?>>
                      to memref<1x1xf32, strided<[16, 1], offset: ?>>
    // becomes
    %x = memref.load %a[%c0, %c0] : memref<1x1xf32, strided<[16, 1], offset: ?>>
    memref.store %x, %b[%c0, %c0] : memref<1x1xf32, strided<[16, 1], offset: ?>>
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ExpandRoundedDivisionsPass : Pass<"gnn-expand-rounded-divisions"> {
  let summary = "Computes arith.floordivsi and arith.ceildivsi from the "
                "truncating quotient and remainder, without overflow";
  let description = [{
    MLIR 19's `arith-expand` computes `ceildivsi(n, m)` as `-(-n / m)`
    for an `n` of the other sign than `m`: for the smallest signed `n`,
    `-n` overflows and the result is wrong (`ceildivsi(-2^63, 2^62 + 3)`
    gave 1, not -1). The lowering pipelines run this pass before
    `arith-expand`: the quotient is `divsi(n, m)`, moved one down (floor)
    or up (ceil) where the remainder is not zero and its sign says the
    truncation went the other way. Nothing overflows: a quotient that
    could (the smallest value, divided by 1 or -1) leaves no remainder.
    Scalars and vectors alike; a zero divisor and the smallest value by -1
    are the guard's (`gnn-guard-runtime-values`).

    ```mlir
    %c = arith.ceildivsi %n, %m : i64
    // becomes
    %q = arith.divsi %n, %m : i64
    %r = arith.remsi %n, %m : i64
    %inexact = arith.cmpi ne, %r, %c0 : i64
    %rneg = arith.cmpi slt, %r, %c0 : i64
    %mneg = arith.cmpi slt, %m, %c0 : i64
    %same = arith.cmpi eq, %rneg, %mneg : i1
    %up = arith.andi %inexact, %same : i1
    %q1 = arith.addi %q, %c1 : i64
    %c = arith.select %up, %q1, %q : i64
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

//===----------------------------------------------------------------------===//
// Checks before lowering
//===----------------------------------------------------------------------===//

def DecomposeTensorOpsPass : Pass<"gnn-decompose-tensor-ops"> {
  let summary = "Rewrites upstream tensor ops that do not bufferize into "
                "ones that do";
  let description = [{
    One-shot bufferization has no rule for some upstream tensor ops a
    program may write; the lowering pipelines run this pass first, so that
    they compile instead of stopping at "op was not bufferized". Today:
    `tensor.concat` becomes an empty tensor with each operand inserted as
    a slice (upstream's decomposition patterns).

    ```mlir
    %c = tensor.concat dim(0) %a, %b
        : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    // becomes tensor.empty and two tensor.insert_slice ops
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect"];
}

def CheckSelfContainedPass
    : Pass<"gnn-check-self-contained", "::mlir::ModuleOp"> {
  let summary = "Rejects programs that reach outside themselves: external "
                "functions and globals, names the lowering reserves";
  let description = [{
    A compiled program links against the process that runs it: a function
    or global it declares without defining resolves to whatever the
    process has under that name (`puts`, `abort`, libc's `stdout`), and a
    call of it or a store to it crashes the runner or worse. `gnn-run`
    runs this check on every program it is given, before lowering: each
    `func.func` without a body and each `memref.global` without an initial
    value that is not private is an error naming the symbol, and so is
    each op of the `llvm` dialect (its raw pointers, inline assembly and
    calls through pointers reach any memory and code of the process). (The lowering declares what it calls
    itself: the runtime and the C math library.) So is a symbol with a
    name that compiled code calls, where the program's function would be
    called instead: the prefixes of the lowering's own functions
    (`gnn_rt_`, `gnn_kernel_`, `_mlir_`, and OpenMP's `__kmpc_`, `omp_`),
    the C library's memory functions (`malloc`, `free`, `memcpy`, ...)
    and its math functions (`tanhf`, `erf`, ...).

    ```mlir
    // error: 'func.func' op @puts is declared without a body; a program
    // may call only functions it defines
    func.func private @puts(i32) -> i32
    ```
  }];
}

def CheckVectorSizesPass
    : Pass<"gnn-check-vector-sizes", "::mlir::ModuleOp"> {
  let summary = "Rejects vector types too large for LLVM's code generation";
  let description = [{
    LLVM compiles a vector operation on more lanes than the machine's
    registers hold lane by lane, in time about quadratic in the lanes: a
    seven-line program reading, squaring and summing a `vector<100000xf32>`
    took 56 s to compile (16,384 lanes: 0.75 s; 32,768: 3.2 s), and a
    million lanes would run for hours. `gnn-run` runs this check on every
    program it is given: each op whose operands, results, block arguments
    or attributes name a vector type (also nested, as an element type) of
    more than `max-elements` elements is an error naming the type. The
    lowering's own vectors are far smaller (16 to 256 lanes).

    ```mlir
    // error: 'vector.transfer_read' op uses 'vector<100000xf32>', a
    // vector of 100000 elements; at most 16384 compile in reasonable time (LLVM's
    // code generation takes time about quadratic in the lanes)
    %v = vector.transfer_read %x[%c0], %pad
        : tensor<100000xf32>, vector<100000xf32>
    ```
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", "16384",
           "the most elements a vector type may have">,
  ];
}

def CheckProgramSizePass
    : Pass<"gnn-check-program-size", "::mlir::ModuleOp"> {
  let summary = "Rejects programs too long to compile in reasonable time";
  let description = [{
    Compile time grows with a program's length: a chain of 10^5 scalar
    `arith` ops takes the lowering and LLVM's code generation about 15 s
    on a 2-core machine, and 10^6 ops would take minutes. `gnn-run` (and
    the library's `Program::compile`) runs this check on every program it
    is given: an operation past the first `max-operations` of the module
    (nested ones counted, the module itself not) is an error naming its
    position, before anything else is compiled. The models that gnnc
    builds itself are not programs given to it and are not bounded.

    ```mlir
    // With max-operations=2:
    func.func @f(%x: f32) -> f32 {
      %y = arith.addf %x, %x : f32
      // error: 'func.return' op is operation 3 of the program; gnnc
      // compiles programs of at most 2 operations (compile time grows
      // with their length)
      return %y : f32
    }
    ```
  }];
  let options = [
    Option<"maxOperations", "max-operations", "int64_t", "250000",
           "the most operations a program may have">,
  ];
}

def GuardRuntimeValuesPass : Pass<"gnn-guard-runtime-values", "ModuleOp"> {
  let summary = "Checks the run-time values that upstream ops are undefined "
                "for, and reports them to the runtime instead of trapping";
  let description = [{
    A program may divide by an input, index with it, reshape to it or
    size a tensor by it. For some values those ops are undefined: integer
    division by zero (or of the smallest signed value by -1) traps, an
    index or a slice past the end reads or writes outside the buffer, a
    reshape to a shape of another element count views memory the tensor
    does not own, and a size can ask for more memory than the machine has
    (a null buffer, then a crash). The lowering pipelines run this pass in
    every mode: before each such op whose operands are not known to be
    valid at compile time, the values are checked; a bad one is reported
    to the runtime (`gnn_rt_bad_value`, `runtime/include/gnnc/errors.h`:
    the kind, the values, the op's line and column), which fails the call
    with a one-line error, and the op runs on a stand-in that is safe: a
    divisor of 1, an extract or load of 0, an insert that leaves its
    destination, no store, an empty slice or reshape, sizes of 0.

    Covered: `arith` integer divisions and remainders (scalars, and
    vectors of a fixed size lane by lane: the first failing lane is
    reported, failing lanes divide by 1),
    `tensor.extract`/`insert` and `memref.load`/`store` (indices),
    `tensor.dim` (a dynamic index),
    `tensor.extract_slice`/`insert_slice` (offsets, sizes, strides, an
    insert's source sizes), `tensor.reshape` (the element count; negative
    sizes), and the dynamic sizes of `tensor.empty`, `tensor.splat`,
    `tensor.generate`, `bufferization.alloc_tensor`, `memref.alloc` and
    `memref.alloca` (at most `gnn_rt_allocation_limit_bytes`, the
    machine's memory). An index that is the induction variable of an
    `scf.for` or `scf.parallel` from a non-negative constant up to the
    tensor's own size is in range and is not checked, so loops over a
    tensor keep their plain loads. Bodies of gnn ops are left to the gnn
    lowering, which checks graph ids and feature sizes itself; with
    `host-only`, so are the bodies of loops that become GPU kernels.

    ```mlir
    %v = tensor.extract %x[%i] : tensor<?xf32>
    // becomes
    %n = tensor.dim %x, %c0 : tensor<?xf32>
    %in = arith.cmpi ult, %i, %n : index
    %v = scf.if %in -> (f32) {
      %e = tensor.extract %x[%i] : tensor<?xf32>
      scf.yield %e : f32
    } else {
      func.call @gnn_rt_bad_value(%c2, %i64, %n64, %c0_i64, %z, %z, %line,
                                  %column) : (i64, ...) -> ()
      scf.yield %zero : f32
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"hostOnly", "host-only", "bool", "false",
           "leave ops in the bodies of loops that become GPU kernels "
           "(linalg ops, scf.parallel, scf.forall, tensor.generate) "
           "unchecked: a kernel cannot call the runtime">,
  ];
}

def HeapLargeAllocasPass : Pass<"gnn-heap-large-allocas"> {
  let summary = "Moves a program's large or dynamically sized stack buffers "
                "to the heap";
  let description = [{
    A `memref.alloca` lives on the stack of the thread that runs it: 8 MiB
    for a program's main thread, less for OpenMP's workers. A program that
    filled a `memref<4000000xf32>` alloca crashed `gnn-run` (SIGSEGV: a
    stack overflow), and a dynamic size is unbounded. `gnn-run` runs this
    rewrite on every program it is given, before lowering: each alloca of
    dynamic size, or of more than `max-stack-bytes` (64 KiB by default; an
    element of unknown size counts as large), becomes a `memref.alloc` with
    the same sizes and alignment, which the deallocation pipeline frees when
    its last use is over. (The lowering's own tiles stay on the stack.)

    ```mlir
    %a = memref.alloca() : memref<4000000xf32>
    // becomes
    %a = memref.alloc() : memref<4000000xf32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let options = [
    Option<"maxStackBytes", "max-stack-bytes", "int64_t", "65536",
           "the largest static alloca kept on the stack, in bytes">,
  ];
}

def CheckDimIndicesPass : Pass<"gnn-check-dim-indices"> {
  let summary = "Rejects dimension queries whose constant index is out of "
                "range";
  let description = [{
    `tensor.dim` and `memref.dim` verify with any index: an index that is
    not below the operand's rank is undefined behavior, not invalid IR.
    Upstream patterns that the lowering's canonicalizations run read the
    operand's shape at such an index without checking it (MLIR 19's
    `gpu` dialect simplifies `memref.dim` of allocations that way), which
    reads past the shape. The lowering pipelines run this check first:
    a dimension query with a constant index (negative, or at least the
    rank of its ranked operand) is an error naming the index and the rank.

    ```mlir
    %c1 = arith.constant 1 : index
    // error: 'tensor.dim' op dimension index 1 is out of range for a
    // rank-1 operand (0 to 0)
    %n = tensor.dim %x, %c1 : tensor<?xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Bufferization
//===----------------------------------------------------------------------===//

def ReadOnlyArgumentsPass : Pass<"gnn-read-only-arguments", "ModuleOp"> {
  let summary = "Marks the tensor arguments of public functions read-only "
                "for bufferization";
  let description = [{
    One-shot bufferization with function boundaries treats a function's
    tensor arguments as writable: an op that updates a tensor in place (a
    `gnn.scatter_rows` into an argument, say) would then write into the
    caller's buffer. Compiled programs must leave their inputs as they
    were, so this pass sets `bufferization.writable = false` on every tensor
    argument of every public function with a body; bufferization then copies
    such an argument once where it would be updated, and reads the others
    in place. Each argument marked `false` also gets `gnn.read_only`, which
    outlives bufferization, so that the GPU's asynchronous launches need not
    wait before the host reads it. Arguments already marked keep their
    marking: one marked
    `bufferization.writable = true` is updated in the caller's buffer, and a
    result marked `gnn.updates = "name"` (see gnn-return-updated-arguments)
    must name such an argument (by `gnn.name`) of its type, or the pass
    fails.

    ```mlir
    func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32>
    // becomes
    func.func @main(%x: tensor<?x4xf32> {bufferization.writable = false,
                                         gnn.read_only})
        -> tensor<?x4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def SimplifyDeallocationsPass
    : Pass<"gnn-simplify-deallocations", "ModuleOp"> {
  let summary = "Answers the alias questions of bufferization.dealloc ops "
                "statically, within a budget or by the buffers' origins";
  let description = [{
    The deallocation pipeline's simplification (upstream
    `buffer-deallocation-simplification`) turns the run-time alias checks of
    `bufferization.dealloc` ops into static answers, but its pairwise
    analysis grows faster than quadratically with the memrefs a function's
    deallocations name: a function that names thousands would spend
    minutes there, and a
    6-layer Transformer's gradient function, which names 661, 32 seconds
    (the cost grows about as the cube of that count). It also takes any two
    results of calls to possibly alias, so it could not answer most of
    their questions anyway.

    This pass runs the upstream simplification on each function whose
    `bufferization.dealloc` ops name at most `max-operands` memrefs
    (operands and retained values together). In the others, it splits each
    dealloc op by where its buffers come from, in time linear in what the
    ops name: every memref is traced (through views, and through the values
    `scf.if`, `scf.for` and `scf.while` forward) to its origins — an
    allocating op, a call (under the deallocation's function boundary ABI a
    callee hands over buffers it owns, never an argument's or a global, so
    its results are fresh; results of one call share an origin where the
    callee may return one buffer for both), memory from before the function
    ran (arguments, globals), or anywhere. The memrefs are grouped where
    they share an origin (all in one group where one may come from
    anywhere); each group gets its own dealloc op, retaining only the values
    that may alias its memrefs, and a retained value's updated condition is
    the disjunction of its groups'. A memref alone in its group with nothing
    retained lowers to a conditional free instead of run-time alias checks
    over the whole list.

    Run after ownership-based deallocation with its default function
    boundary ABI (no `private-function-dynamic-ownership`).

    ```mlir
    // A function whose deallocations name few memrefs is simplified:
    bufferization.dealloc (%a : memref<?xf32>) if (%true) retain (%b : memref<?xf32>)
    // becomes, where %a and %b cannot alias,
    bufferization.dealloc (%a : memref<?xf32>) if (%true)

    // In a function over budget, results of two calls and an argument:
    %x = call @f() : () -> memref<?xf32>
    %y = call @g() : () -> memref<?xf32>
    bufferization.dealloc (%x, %y : memref<?xf32>, memref<?xf32>) if (%c, %d) retain (%arg : memref<?xf32>)
    // become
    bufferization.dealloc (%x : memref<?xf32>) if (%c)
    bufferization.dealloc (%y : memref<?xf32>) if (%d)
    ```
  }];
  let options = [
    Option<"maxOperands", "max-operands", "int64_t", /*default=*/"256",
           "functions whose dealloc ops name more memrefs are split by "
           "origin instead of simplified upstream">
  ];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def ReturnUpdatedArgumentsPass
    : Pass<"gnn-return-updated-arguments", "ModuleOp"> {
  let summary = "Leaves the updates of writable arguments in the caller's "
                "buffers instead of returning them";
  let description = [{
    Runs after one-shot bufferization. A result of a public function marked
    `gnn.updates = "name"` is the new value of the function's writable
    argument named `name` (its `gnn.name`; `bufferization.writable = true`):
    a decoder cache that the caller hands over and reads back. Where
    bufferization updated the argument in place, the function returns the
    argument's own buffer, which the deallocation pipeline would then copy
    so that the caller owns a fresh one. This pass removes such results
    instead; where the update went elsewhere, it first copies it into the
    argument. The caller reads each update from the buffer it passed. A copy
    goes right after the last op that reads the argument or touches the
    update (through views and results that may alias them) where the update
    is a new buffer and the function has one block; else before the return.

    Private functions' updates stay in the buffers their callers pass where
    every call allows it: the operand is a new buffer of the caller's or an
    argument that the caller, a public function, updates itself, and
    neither it nor an alias of it is read after the call. Such results are removed from the function and its
    calls, and the caller's uses of them read the operand. A training step
    that updates its parameters through such functions then copies nothing
    itself, and each function's temporaries are freed when it returns.

    ```mlir
    func.func @step(%c: memref<?x4xf32> {bufferization.writable = true,
                                         gnn.name = "cache"})
        -> (memref<?x4xf32> {gnn.updates = "cache"}) {
      ...
      return %c : memref<?x4xf32>
    }
    // becomes
    func.func @step(%c: memref<?x4xf32> {bufferization.writable = true,
                                         gnn.name = "cache"}) {
      ...
      return
    }
    ```

    A marked result whose argument is missing, not writable or not a
    buffer of the same shape is an error.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ScopeLoopAllocasPass : Pass<"gnn-scope-loop-allocas"> {
  let summary = "Frees each loop iteration's stack buffers when it ends";
  let description = [{
    `scf.for`, `scf.parallel` and `scf.forall` are automatic allocation
    scopes: a `memref.alloca` in an iteration lives until that iteration
    ends. Their lowering to control flow (`convert-scf-to-cf`) does not keep
    that promise: the allocas become dynamic stack allocations that pile up
    until the function returns. A kernel that takes tens of kilobytes of
    stack per tile of destinations (the fused attention's) then overflows
    the stack on a large graph when its loops run serially
    (`convert-scf-to-openmp` scopes the parallel bodies it makes itself).
    This pass keeps the promise: the body of every such loop, and both
    regions of an `scf.while`, that allocates on the stack itself (not
    only inside a nested scope) saves the stack pointer when it starts and
    restores it before its terminator. Allocating on the stack includes
    what the memref lowering puts there later: the descriptor of a cast to
    an unranked memref (a tape push's argument) and those of a call that
    passes or returns memrefs (the runtime's C-interface functions); a
    differentiated loop of 10^5 iterations overflowed the stack with them. A
    `memref.alloca_scope` would say the same, but `finalize-memref-to-llvm`
    lowers one into several blocks, which a region of an `scf` op cannot
    hold; so the pass writes the LLVM intrinsics, and also replaces the
    `memref.alloca_scope` ops in `scf` regions by their bodies between a
    save and a restore. It runs right before the memref lowering.

    ```mlir
    scf.for %i = %lo to %hi step %c1 {
      %tile = memref.alloca() : memref<64x128xf32>
      func.call @work(%tile, %i) : (memref<64x128xf32>, index) -> ()
    }
    // becomes
    scf.for %i = %lo to %hi step %c1 {
      %sp = llvm.intr.stacksave : !llvm.ptr
      %tile = memref.alloca() : memref<64x128xf32>
      func.call @work(%tile, %i) : (memref<64x128xf32>, index) -> ()
      llvm.intr.stackrestore %sp : !llvm.ptr
    }
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def KernelDestinationsPass : Pass<"gnn-kernel-destinations", "ModuleOp"> {
  let summary = "Has kernels write their results into the buffers their "
                "callers copy them to";
  let description = [{
    Runs after one-shot bufferization and `gnn-return-updated-arguments`,
    before deallocation. A kernel (a function `gnn-outline-kernels` made)
    returns buffers it allocates; where the caller's only use of one of
    them is to read it and then copy it into another buffer (an optimizer
    updating a parameter and its moments in the trainer's buffers), the
    call becomes a call of a variant of the kernel, `<kernel>_into`, that
    takes that buffer as a last argument and writes that result there (its
    other results stay results, each of which may be written in place in
    turn): no allocation, no copy, no page of fresh memory to fault in.

    Conditions: the copy's target is an argument, a buffer the function
    allocates or a view of one, defined before the call; nothing between
    the call and the copy reads or writes that buffer (through any view of
    it, or any buffer that an op taking it may return: only kernels that
    return new buffers are known not to); and the call's result is not
    used after the copy. The kernel may read
    the target itself only as an element-wise input: an argument of the
    result's type read by scalar loads at the indices of the kernel's one
    store to that result, before that store, in loops whose distinct
    unit-step induction variables are those indices (what `gnn.apply_nodes`
    is lowered to); then each element is read before it is overwritten, by
    the iteration that overwrites it. Distinct function arguments are taken
    not to share memory, as bufferization takes them. A kernel that reads
    the target through one argument k writes through that argument itself
    (the variant `<kernel>_into_arg<k>`, no extra argument; a kernel of
    several results that writes arguments 4, 2 and 1 so is
    `<kernel>_into_arg4_2_1`): its code then
    loads and stores through one pointer, which LLVM's vectorizer needs to
    vectorize it without a run-time check that the two do not overlap
    (they do, and the check sends every such call to the scalar loop).

    ```mlir
    %new = func.call @gnn_kernel_apply_nodes(%m, %g)
        : (memref<512xf32>, memref<512xf32>) -> memref<512xf32>
    memref.copy %new, %m : memref<512xf32> to memref<512xf32>
    // becomes
    func.call @gnn_kernel_apply_nodes_into_arg0(%m, %g)
        : (memref<512xf32>, memref<512xf32>) -> ()
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // GNN_TRANSFORMS_PASSES_TD
