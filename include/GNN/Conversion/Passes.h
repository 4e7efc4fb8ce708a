//===- Passes.h - gnn conversion passes -------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_PASSES_H
#define GNN_CONVERSION_PASSES_H

#include "GNN/Conversion/LoopTarget.h"

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
#include "mlir/Rewrite/FrozenRewritePatternSet.h"

namespace mlir::gnn {

#define GEN_PASS_DECL
#include "GNN/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "GNN/Conversion/Passes.h.inc"

/// The op lowerings of convert-gnn-to-loops as dialect-conversion patterns,
/// one per gnn op outside element bodies, in the forms that suit `target`:
/// each builds loops over buffers and replaces its op. Graph operands must
/// already be in parts, and a graph's producer lowered before its users
/// (lowerGNNOps).
void populateGNNToLoopsPatterns(RewritePatternSet &patterns,
                                const LoopTarget &target);

/// The GPU kernels of convert-gnn-to-gpu, which take precedence over the
/// loop patterns they join: gnn.fused_attention and, over graphs that
/// promise ranges, its backward as gpu.launch kernels (`attention`; without
/// it the backward's tiles run as parallel loops, for CPU checks), and a
/// warp per row for layer norm, its gradient, log-softmax and sums within
/// rows (`rows`).
void populateGNNToGPUPatterns(RewritePatternSet &patterns,
                              const LoopTarget &target, bool attention,
                              bool rows);

/// Declares gpu.barrier's memory effects (it reads and writes memory), so
/// that buffer deallocation takes the kernels with barriers that
/// convert-gnn-to-gpu builds.
void registerGPUBarrierEffects(DialectRegistry &registry);

/// Decomposes `module`'s graphs into their parts, then lowers every gnn op
/// outside an element body with the best of `patterns` that applies, in
/// program order, by MLIR's dialect conversion; an op that no pattern is
/// for is an error naming `targetName`, and so is any error a pattern
/// reports, even where a lesser one then applies.
LogicalResult lowerGNNOps(ModuleOp module,
                          const FrozenRewritePatternSet &patterns,
                          StringRef targetName);

} // namespace mlir::gnn

#endif // GNN_CONVERSION_PASSES_H
