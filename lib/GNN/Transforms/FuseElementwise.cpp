//===- FuseElementwise.cpp - element-wise chains as one op ----------------===//
//
// Part of gnnc. Merges a chain of element-wise ops over one result shape
// (gnn.apply_nodes, gnn.dropout) into a single gnn.apply_nodes, so that the
// chain is one kernel that reads its inputs once and writes one result
// instead of a pass over memory per op (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// Whether ops with result type `type` can share one element loop: every
/// item dim static, so that two of them visit the same elements in the same
/// row-major order (dynamic item sizes come from the inputs at run time).
bool hasStaticItems(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() >= 1 &&
         !llvm::any_of(getItemShape(tensor), ShapedType::isDynamic);
}

/// Whether `v`, the result of an op in `user`'s block, is used by `user`
/// alone: fusing then removes its op rather than computing it twice, and
/// moves no work into a loop body.
bool feedsOnly(Value v, Operation *user) {
  Operation *def = v.getDefiningOp();
  return def && def->getBlock() == user->getBlock() &&
         llvm::all_of(v.getUsers(), [&](Operation *u) { return u == user; });
}

/// The block argument of a fused op's input.
using ArgOf = function_ref<Value(Value)>;

/// Replaces `root` by an apply_nodes of `root`'s result type over `inputs`
/// (each distinct value once) whose body `body` writes, given the block
/// argument of each input.
void replaceWithApplyNodes(PatternRewriter &rewriter, Operation *root,
                           ArrayRef<Value> inputs,
                           function_ref<Value(OpBuilder &, ArgOf)> body) {
  llvm::SetVector<Value> distinct(inputs.begin(), inputs.end());
  auto fused = rewriter.create<ApplyNodesOp>(
      root->getLoc(), root->getResult(0).getType(), distinct.getArrayRef());
  SmallVector<Type> elements;
  for (Value v : distinct)
    elements.push_back(getElementTypeOrSelf(v.getType()));
  SmallVector<Location> locs(elements.size(), root->getLoc());
  OpBuilder::InsertionGuard guard(rewriter);
  Block *block = rewriter.createBlock(&fused.getBody(), {}, elements, locs);
  Value result = body(rewriter, [&](Value input) {
    return block->getArgument(llvm::find(distinct, input) - distinct.begin());
  });
  rewriter.create<YieldOp>(root->getLoc(), ValueRange{result});
  rewriter.replaceOp(root, fused.getResult());
}

/// The body of `op` over a fused op's arguments, the element of input
/// `replaced` (if given) being `replacement`.
Value inlineInto(OpBuilder &b, ApplyNodesOp op, ArgOf argOf,
                 Value replaced = Value(), Value replacement = Value()) {
  SmallVector<Value> args;
  for (Value input : op.getInputs())
    args.push_back(input == replaced ? replacement : argOf(input));
  return cloneElementBody(b, op.getBody(), args);
}

/// The element of `op`'s result, given its input's element `x`.
Value dropElement(OpBuilder &b, DropoutOp op, Value x) {
  return b.create<DropoutElementOp>(op.getLoc(), x.getType(), x, op.getSeed(),
                                    op.getOffset(), op.getRateAttr());
}

/// An apply_nodes reads the result of another element-wise op of its own
/// result type that it alone uses: the two become one.
struct FuseProducer : public OpRewritePattern<ApplyNodesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyNodesOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getResult().getType();
    if (!hasStaticItems(type))
      return rewriter.notifyMatchFailure(op, "dynamic item dims");
    for (Value input : op.getInputs()) {
      if (input.getType() != type || !feedsOnly(input, op))
        continue;
      SmallVector<Value> inputs;
      for (Value other : op.getInputs())
        if (other != input)
          inputs.push_back(other);
      if (auto producer = input.getDefiningOp<ApplyNodesOp>()) {
        llvm::append_range(inputs, producer.getInputs());
        replaceWithApplyNodes(rewriter, op, inputs,
                              [&](OpBuilder &b, ArgOf argOf) {
                                Value x = inlineInto(b, producer, argOf);
                                return inlineInto(b, op, argOf, input, x);
                              });
        rewriter.eraseOp(producer);
        return success();
      }
      if (auto drop = input.getDefiningOp<DropoutOp>()) {
        inputs.push_back(drop.getInput());
        replaceWithApplyNodes(
            rewriter, op, inputs, [&](OpBuilder &b, ArgOf argOf) {
              Value x = dropElement(b, drop, argOf(drop.getInput()));
              return inlineInto(b, op, argOf, input, x);
            });
        rewriter.eraseOp(drop);
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "no element-wise input to fuse");
  }
};

/// Dropout of an apply_nodes result that nothing else reads: the
/// apply_nodes drops its elements itself.
struct FuseDropoutIntoProducer : public OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<ApplyNodesOp>();
    if (!producer || !hasStaticItems(op.getType()) ||
        !feedsOnly(op.getInput(), op))
      return rewriter.notifyMatchFailure(op, "no apply_nodes to drop in");
    replaceWithApplyNodes(rewriter, op, llvm::to_vector(producer.getInputs()),
                          [&](OpBuilder &b, ArgOf argOf) {
                            return dropElement(b, op,
                                               inlineInto(b, producer, argOf));
                          });
    rewriter.eraseOp(producer);
    return success();
  }
};

struct FuseElementwisePass
    : public gnn::impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseProducer, FuseDropoutIntoProducer>(&getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
