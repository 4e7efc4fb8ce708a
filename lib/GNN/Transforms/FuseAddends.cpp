//===- FuseAddends.cpp - an op adds the other term of a sum itself --------===//
//
// Part of gnnc. Rewrites `apply_nodes(x, y) { a + b }`, where y is a
// single-use result of gnn.linear or gnn.layer_norm_grad's input gradient,
// into that op with `plus x`, so that the op adds x in its own pass over the
// rows instead of a kernel of its own reading them again (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_FUSEADDENDSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// Whether `op`'s body returns the sum of its two element arguments.
bool addsItsTwoInputs(ApplyNodesOp op) {
  Block &body = op.getBody().front();
  if (op.getInputs().size() != 2 || op.getNumResults() != 1 ||
      body.getNumArguments() != 2 ||
      !llvm::hasSingleElement(body.without_terminator()))
    return false;
  auto add = dyn_cast<arith::AddFOp>(body.front());
  Operation *yield = body.getTerminator();
  if (!add || yield->getNumOperands() != 1 ||
      yield->getOperand(0) != add.getResult())
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (add.getLhs() == a && add.getRhs() == b) ||
         (add.getLhs() == b && add.getRhs() == a);
}

/// Replaces `sum` by `term`'s op computing term + addend, if that op takes
/// an addend and has none yet, nothing else uses `term`, and the op is in
/// `sum`'s block (moving it into a loop body would run it every iteration).
LogicalResult foldInto(ApplyNodesOp sum, Value term, Value addend,
                       PatternRewriter &rewriter) {
  Operation *def = term.getDefiningOp();
  if (!term.hasOneUse() || !def || def->getBlock() != sum->getBlock())
    return failure();
  if (auto layer = term.getDefiningOp<LinearOp>()) {
    if (layer.getAddend())
      return failure();
    rewriter.replaceOpWithNewOp<LinearOp>(sum, term.getType(), layer.getInput(),
                                          layer.getWeight(), layer.getBias(),
                                          layer.getTransposeWeight(), addend);
    rewriter.eraseOp(layer);
    return success();
  }
  if (auto norm = term.getDefiningOp<LayerNormGradOp>()) {
    if (norm.getAddend() || term != norm.getInputGrad())
      return failure();
    rewriter.setInsertionPoint(sum);
    auto fused = rewriter.create<LayerNormGradOp>(
        norm.getLoc(), norm.getInputGrad().getType(),
        norm.getNormalizedGrad().getType(), norm.getInput(), norm.getWeight(),
        norm.getGrad(), addend, norm.getEpsAttr());
    rewriter.replaceOp(sum, fused.getInputGrad());
    rewriter.replaceAllUsesWith(norm.getNormalizedGrad(),
                                fused.getNormalizedGrad());
    rewriter.eraseOp(norm);
    return success();
  }
  return failure();
}

struct FoldSumIntoTerm : public OpRewritePattern<ApplyNodesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyNodesOp op,
                                PatternRewriter &rewriter) const override {
    if (!addsItsTwoInputs(op))
      return rewriter.notifyMatchFailure(op, "not the sum of two inputs");
    Type type = op.getResult(0).getType();
    Value lhs = op.getInputs()[0], rhs = op.getInputs()[1];
    if (lhs.getType() != type || rhs.getType() != type)
      return rewriter.notifyMatchFailure(op, "inputs of another type");
    // The later term's op takes the other term as its addend.
    if (succeeded(foldInto(op, rhs, lhs, rewriter)) ||
        succeeded(foldInto(op, lhs, rhs, rewriter)))
      return success();
    return rewriter.notifyMatchFailure(op, "no term's op to add into");
  }
};

struct FuseAddendsPass
    : public gnn::impl::FuseAddendsPassBase<FuseAddendsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldSumIntoTerm>(&getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
