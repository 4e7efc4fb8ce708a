//===- ElementCopies.cpp - copies of one element as a load and a store ----===//
//
// Part of gnnc. memref.copy lowers to a memcpy whose alignment LLVM does
// not know; for one float inside a GPU kernel that is four byte loads and
// four byte stores.
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_ELEMENTCOPIESPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
bool isOneElement(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && llvm::all_of(memref.getShape(),
                                [](int64_t size) { return size == 1; });
}

struct ElementCopy : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    if (!isOneElement(op.getSource().getType()) ||
        !isOneElement(op.getTarget().getType()))
      return rewriter.notifyMatchFailure(op, "not a copy of one element");
    auto rank = cast<MemRefType>(op.getSource().getType()).getRank();
    Value zero = rewriter.create<arith::ConstantIndexOp>(op.getLoc(), 0);
    SmallVector<Value> at(rank, zero);
    Value x = rewriter.create<memref::LoadOp>(op.getLoc(), op.getSource(), at);
    SmallVector<Value> to(cast<MemRefType>(op.getTarget().getType()).getRank(),
                          zero);
    rewriter.replaceOpWithNewOp<memref::StoreOp>(op, x, op.getTarget(), to);
    return success();
  }
};

struct ElementCopiesPass : gnn::impl::ElementCopiesPassBase<ElementCopiesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ElementCopy>(&getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
