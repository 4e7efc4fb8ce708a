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

def ConvertGNNToLoopsPass : Pass<"convert-gnn-to-loops", "ModuleOp"> {
  let summary = "Lowers gnn ops to loops over the graph's index arrays";
  let description = [{
    Rewrites every gnn op into `scf` loops over memrefs (with
    `bufferization.to_memref`/`to_tensor` at the tensor boundary, for
    one-shot bufferization to finish): edge-wise ops loop over edges,
    receiving ops loop over destination nodes and their in-edges through
    the CSR, the fused attention keeps a running maximum per destination and
    head, in `vector` registers when the feature sizes are static. Outer
    loops are `scf.parallel` (one iteration per edge or destination node, no
    shared writes).

    A `!gnn.graph` function argument becomes six arguments, in this order:
    the number of source nodes (`index`), then `tensor<?xindex>` arrays
    `src` and `dst` (per edge id), `in_ptr` (num_dst + 1 offsets), `in_src`
    and `in_eid` (per CSR slot). Public functions get
    `llvm.emit_c_interface`. `gnn.graph_from_coo` builds the same arrays
    with a counting sort and reports ids out of range to the runtime
    (`gnn_rt_edge_out_of_range`), leaving an empty graph behind.

    ```mlir
    func.func @f(%g: !gnn.graph<complete>, ...)
    // becomes
    func.func @f(%num_src: index, %src: tensor<?xindex>, %dst: tensor<?xindex>,
                 %in_ptr: tensor<?xindex>, %in_src: tensor<?xindex>,
                 %in_eid: tensor<?xindex>, ...)
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect"
  ];
}

#endif // GNN_CONVERSION_PASSES_TD
