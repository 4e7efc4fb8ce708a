//===- GNNToGPU.cpp - lower gnn ops to the forms GPU threads run ----------===//
//
// Part of gnnc. The GPU's conversion: the loop lowerings asked for GPU
// threads (a parallel iteration per element, many short chunks), with
// gnn.fused_attention as its own kernel ahead of them.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"
#include "GNN/Conversion/Passes.h"
#include "GNNToLoops/LoweringPattern.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_CONVERTGNNTOGPUPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

/// Ahead of the fused attention's loop form.
constexpr unsigned kKernelBenefit = 2;

void mlir::gnn::populateGNNToGPUPatterns(RewritePatternSet &patterns) {
  loops::addLowering<FusedAttentionOp>(
      patterns, loops::lowerFusedAttentionToGPU, kKernelBenefit);
}

namespace {
struct ConvertGNNToGPUPass
    : public gnn::impl::ConvertGNNToGPUPassBase<ConvertGNNToGPUPass> {
  using ConvertGNNToGPUPassBase::ConvertGNNToGPUPassBase;

  void runOnOperation() override {
    LoopTarget target;
    target.threads = LoopTarget::Threads::GpuThreads;
    target.attentionBlocks = attentionBlocks;
    target.parallelDense = parallelDense;
    RewritePatternSet patterns(&getContext());
    populateGNNToLoopsPatterns(patterns, target);
    if (attentionKernels)
      populateGNNToGPUPatterns(patterns);
    if (failed(lowerGNNOps(getOperation(), std::move(patterns), "GPU")))
      signalPassFailure();
  }
};
} // namespace
