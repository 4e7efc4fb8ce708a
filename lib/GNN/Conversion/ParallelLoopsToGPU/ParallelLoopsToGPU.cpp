//===- ParallelLoopsToGPU.cpp - outer parallel loops as GPU kernels -------===//
//
// Part of gnnc. The loops that convert-gnn-to-loops emits are one
// scf.parallel per op, one iteration per edge, node or row, with no shared
// writes: each becomes a launch with one thread per iteration. Loops whose
// bodies need the host stay there.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_PARALLELLOOPSTOGPUPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// Whether a device can run `loop`'s body as it is.
bool runsOnDevice(scf::ParallelOp loop) {
  if (loop.getNumLoops() != 1 || loop.getNumReductions() != 0)
    return false;
  WalkResult walk = loop.getBody()->walk([&](Operation *op) {
    bool hostOnly =
        isa<func::CallOp, memref::AllocOp, memref::ReallocOp, memref::DeallocOp,
            memref::GetGlobalOp, gpu::LaunchOp>(op) ||
        isa_and_nonnull<bufferization::BufferizationDialect>(op->getDialect());
    for (Value operand : op->getOperands())
      hostOnly |= isa<TensorType>(operand.getType());
    return hostOnly ? WalkResult::interrupt() : WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

/// Replaces `loop` by a launch of one thread per iteration.
void launchLoop(scf::ParallelOp loop, int64_t blockSize) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto idx = [&](int64_t v) {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  Value lb = loop.getLowerBound()[0], ub = loop.getUpperBound()[0],
        step = loop.getStep()[0];
  // A launch needs at least one block.
  Value nonEmpty =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sgt, ub, lb);
  auto ifNonEmpty = b.create<scf::IfOp>(loc, nonEmpty, /*withElse=*/false);
  b.setInsertionPointToStart(&ifNonEmpty.getThenRegion().front());
  Value count = b.create<arith::CeilDivUIOp>(
      loc, b.create<arith::SubIOp>(loc, ub, lb), step);
  Value threads = idx(blockSize);
  Value blocks = b.create<arith::CeilDivUIOp>(loc, count, threads);
  Value one = idx(1);
  auto launch =
      b.create<gpu::LaunchOp>(loc, blocks, one, one, threads, one, one);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value i = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, launch.getBlockIds().x, threads),
      launch.getThreadIds().x);
  Value inRange =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, i, count);
  auto ifInRange = b.create<scf::IfOp>(loc, inRange, /*withElse=*/false);
  b.create<gpu::TerminatorOp>(loc);

  b.setInsertionPointToStart(&ifInRange.getThenRegion().front());
  IRMapping mapping;
  mapping.map(
      loop.getInductionVars()[0],
      b.create<arith::AddIOp>(loc, lb, b.create<arith::MulIOp>(loc, i, step)));
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  loop.erase();
}

struct ParallelLoopsToGPUPass
    : public gnn::impl::ParallelLoopsToGPUPassBase<ParallelLoopsToGPUPass> {
  using ParallelLoopsToGPUPassBase::ParallelLoopsToGPUPassBase;

  void runOnOperation() override {
    if (blockSize < 1 || blockSize > 1024) {
      getOperation().emitError("block-size must be in [1, 1024]");
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp, gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      auto loop = dyn_cast<scf::ParallelOp>(op);
      if (!loop || !runsOnDevice(loop))
        return WalkResult::advance();
      loops.push_back(loop);
      return WalkResult::skip();
    });
    for (scf::ParallelOp loop : loops)
      launchLoop(loop, blockSize);
  }
};
} // namespace
