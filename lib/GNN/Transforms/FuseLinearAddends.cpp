//===- FuseLinearAddends.cpp - a layer adds its addend itself -------------===//
//
// Part of gnnc. Rewrites `apply_nodes(x, linear(h)) { a + b }` into
// `linear(h) plus x`, so that the layer's product adds into the rows it
// writes instead of a kernel of its own reading them again (see
// Passes.td).
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_FUSELINEARADDENDSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// Whether `op`'s body returns the sum of its two element arguments.
bool addsItsTwoInputs(ApplyNodesOp op) {
  Block &body = op.getBody().front();
  if (op.getInputs().size() != 2 || body.getNumArguments() != 2 ||
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

struct FoldAddIntoLinear : public OpRewritePattern<ApplyNodesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyNodesOp op,
                                PatternRewriter &rewriter) const override {
    if (!addsItsTwoInputs(op))
      return rewriter.notifyMatchFailure(op, "not the sum of two inputs");
    Type type = op.getResult().getType();
    Value lhs = op.getInputs()[0], rhs = op.getInputs()[1];
    if (lhs.getType() != type || rhs.getType() != type)
      return rewriter.notifyMatchFailure(op, "inputs of another type");
    // The later layer takes the other value as its addend.
    for (Value candidate : {rhs, lhs}) {
      auto layer = candidate.getDefiningOp<LinearOp>();
      if (!layer || layer.getAddend() || !candidate.hasOneUse())
        continue;
      Value addend = candidate == rhs ? lhs : rhs;
      rewriter.replaceOpWithNewOp<LinearOp>(op, type, layer.getInput(),
                                            layer.getWeight(), layer.getBias(),
                                            layer.getTransposeWeight(), addend);
      rewriter.eraseOp(layer);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no layer of its own to add into");
  }
};

struct FuseLinearAddendsPass
    : public gnn::impl::FuseLinearAddendsPassBase<FuseLinearAddendsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldAddIntoLinear>(&getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
