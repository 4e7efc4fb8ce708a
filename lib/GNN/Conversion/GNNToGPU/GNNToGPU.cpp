//===- GNNToGPU.cpp - lower gnn ops to the forms GPU threads run ----------===//
//
// Part of gnnc. The GPU's conversion: the loop lowerings asked for GPU
// threads (a parallel iteration per element, many short chunks), with
// gnn.fused_attention, its backward over graphs that promise ranges and the
// ops that reduce rows as kernels of their own ahead of them.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"
#include "GNN/Conversion/Passes.h"
#include "GNNToLoops/LoweringPattern.h"
#include "RowKernels.h"
#include "RunningTotals.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_CONVERTGNNTOGPUPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

/// Ahead of the ops' loop forms.
constexpr unsigned kKernelBenefit = 2;

void mlir::gnn::populateGNNToGPUPatterns(RewritePatternSet &patterns,
                                         const LoopTarget &target,
                                         bool attention, bool rows) {
  if (attention)
    loops::addLowering<FusedAttentionOp>(
        patterns, loops::lowerFusedAttentionToGPU, kKernelBenefit);
  loops::TileThreads tileThreads =
      attention ? loops::TileThreads::Warps : loops::TileThreads::Loops;
  loops::addLowering<FusedAttentionGradOp>(
      patterns,
      [target, tileThreads](FusedAttentionGradOp op, RewriterBase &rewriter) {
        return loops::lowerFusedAttentionGradToTiles(op, target, tileThreads,
                                                     rewriter);
      },
      kKernelBenefit);
  if (rows) {
    loops::addLowering<LayerNormOp>(patterns, loops::lowerLayerNormToGPU,
                                    kKernelBenefit);
    loops::addLowering<LayerNormGradOp>(
        patterns, loops::lowerLayerNormGradToGPU, kKernelBenefit);
    loops::addLowering<LogSoftmaxOp>(patterns, loops::lowerLogSoftmaxToGPU,
                                     kKernelBenefit);
    loops::addLowering<SumToOp>(patterns, loops::lowerRowSumToGPU,
                                kKernelBenefit);
    loops::addLowering<SumToOp>(patterns, loops::lowerColumnTotalToGPU,
                                kKernelBenefit);
  }
}

namespace {
struct ConvertGNNToGPUPass
    : public gnn::impl::ConvertGNNToGPUPassBase<ConvertGNNToGPUPass> {
  using ConvertGNNToGPUPassBase::ConvertGNNToGPUPassBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    ConvertGNNToGPUPassBase::getDependentDialects(registry);
    registerGPUBarrierEffects(registry);
  }

  void runOnOperation() override {
    LoopTarget target;
    target.threads = LoopTarget::Threads::GpuThreads;
    target.attentionBlocks = attentionBlocks;
    target.parallelDense = parallelDense;
    // Without the scan (the GPU forms on CPU cores) the totals stay a loop.
    if (scanKernels)
      target.runningTotals = loops::blockRunningTotals;
    RewritePatternSet patterns(&getContext());
    populateGNNToLoopsPatterns(patterns, target);
    populateGNNToGPUPatterns(patterns, target, attentionKernels, rowKernels);
    if (failed(lowerGNNOps(getOperation(), std::move(patterns), "GPU")))
      signalPassFailure();
  }
};
} // namespace
