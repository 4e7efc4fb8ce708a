//===- Passes.h - gnn conversion passes -------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_PASSES_H
#define GNN_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::gnn {

#define GEN_PASS_DECL
#include "GNN/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "GNN/Conversion/Passes.h.inc"

/// How convert-gnn-to-loops lowers what has a choice (its pass options).
struct GNNToLoopsOptions {
  /// gnn.fused_attention as GPU kernels (gpu.launch) instead of loops.
  bool gpuKernels = false;
  /// Fused attention over complete and causal blocks as GEMM tiles.
  bool attentionBlocks = true;
  /// Dense layers split over the cores.
  bool parallelDense = false;
  /// The ops whose GPU form is plain loops take it (implied by gpuKernels).
  bool deviceLoops = false;
};

/// The op lowerings of convert-gnn-to-loops as rewrite patterns, one per gnn
/// op outside element bodies: each builds loops over buffers and replaces
/// its op. Graph operands must already be in parts (the pass first
/// decomposes graphs with populateGraphDecompositionPatterns), and a graph's
/// producer must be lowered before its users.
void populateGNNToLoopsPatterns(RewritePatternSet &patterns,
                                const GNNToLoopsOptions &options);

} // namespace mlir::gnn

#endif // GNN_CONVERSION_PASSES_H
