//===- GNNDialect.td - the gnn dialect ---------------------*- tablegen -*-===//
//
// Part of gnnc. The gnn dialect expresses graph message passing.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_IR_GNNDIALECT_TD
#define GNN_IR_GNNDIALECT_TD

include "mlir/IR/OpBase.td"

def GNN_Dialect : Dialect {
  let name = "gnn";
  let cppNamespace = "::mlir::gnn";
  let summary = "Graph message passing: apply_edges, send_and_recv, reduce";
  let description = [{
    The `gnn` dialect expresses message passing over graphs in the vocabulary
    of DGL: edge-wise computations (`gnn.apply_edges`), message generation and
    aggregation into destination nodes (`gnn.send_and_recv`, `gnn.reduce`),
    node-wise computations (`gnn.apply_nodes`) and subsets of nodes and edges
    selected by predicates (`gnn.filter_nodes`, `gnn.filter_edges`).

    A graph is a value of type `!gnn.graph`: a set of directed edges from a
    source node space into a destination node space (the same space for
    homogeneous graphs). Node and edge features are ranked tensors whose
    leading dimension is indexed by node or edge id, e.g.
    `tensor<?x8x64xf32>` for 8 heads of 64 features per node and
    `tensor<?x8x1xf32>` for one score per edge and head. Every op has value
    semantics: results are new tensors, which lets passes fuse chains of ops
    without writing per-edge tensors to memory.

    DGL's built-in message functions (`u_dot_v`, `u_mul_e`, `copy_e`, ...)
    are attributes; user-defined functions are regions whose body computes
    one element of the result from one element of each input.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();

    /// Argument and result attributes of the functions gnnc runs. `gnn.name`
    /// (a non-empty string) names an argument or result for the runner;
    /// `gnn.updates` (a result's) names the writable argument whose new
    /// value the result is; `gnn.runtime_context` (a unit argument
    /// attribute) marks the runtime context that lowering adds.
    static constexpr ::llvm::StringLiteral kNameAttrName = "gnn.name";
    static constexpr ::llvm::StringLiteral kUpdatesAttrName = "gnn.updates";
    static constexpr ::llvm::StringLiteral kRuntimeContextAttrName =
        "gnn.runtime_context";
    /// `gnn.differentiable` (a unit argument attribute, on float tensors)
    /// marks the arguments gnn-differentiate takes gradients with respect to.
    static constexpr ::llvm::StringLiteral kDifferentiableAttrName =
        "gnn.differentiable";
    /// `gnn.read_only` (a unit argument attribute of a public function)
    /// marks an argument the program never writes (gnn-read-only-arguments
    /// sets it with bufferization's `writable = false`, which bufferization
    /// drops): a host read of it need not wait for running kernels.
    static constexpr ::llvm::StringLiteral kReadOnlyAttrName =
        "gnn.read_only";
    /// `gnn.kernel` (a unit attribute of a function) marks a kernel that
    /// gnn-outline-kernels made.
    static constexpr ::llvm::StringLiteral kKernelAttrName = "gnn.kernel";
    /// `gnn.aligned_rows` (a unit attribute of a vector.load in a kernel)
    /// marks a row load whose memref's rows start 16-byte aligned, which
    /// gnn-gpu-assume-aligned-rows states for LLVM.
    static constexpr ::llvm::StringLiteral kAlignedRowsAttrName =
        "gnn.aligned_rows";
  }];
}

#endif // GNN_IR_GNNDIALECT_TD
