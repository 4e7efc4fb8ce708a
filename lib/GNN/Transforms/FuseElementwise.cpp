//===- FuseElementwise.cpp - element-wise chains as one op ----------------===//
//
// Part of gnnc. Merges element-wise ops over one result shape
// (gnn.apply_nodes, gnn.dropout) that feed each other into a single
// gnn.apply_nodes, so that they are one kernel that reads its inputs once,
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
/// Whether ops with results of shape `type` can share one element loop:
/// every item dim static, so that two of them visit the same elements in
/// the same row-major order (dynamic item sizes come from the inputs at run
/// time).
bool hasStaticItems(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() >= 1 &&
         !llvm::any_of(getItemShape(tensor), ShapedType::isDynamic);
}

/// The inputs of an element-wise op (apply_nodes or dropout).
SmallVector<Value> inputsOf(Operation *op) {
  if (auto drop = dyn_cast<DropoutOp>(op))
    return {drop.getInput()};
  return llvm::to_vector(cast<ApplyNodesOp>(op).getInputs());
}

/// The elements of an element-wise op's results, given its inputs'.
SmallVector<Value> elementsOf(OpBuilder &b, Operation *op, ValueRange args) {
  if (auto drop = dyn_cast<DropoutOp>(op))
    return {b.create<DropoutElementOp>(drop.getLoc(), args[0].getType(),
                                       args[0], drop.getSeed(),
                                       drop.getOffset(), drop.getRateAttr())};
  return cloneElementBodyResults(b, cast<ApplyNodesOp>(op).getBody(), args);
}

/// Whether every result of both ops has the shape of the consumer's first
/// (with static item dims): then one loop visits each op's elements in the
/// same order.
bool shareOneShape(Operation *producer, Operation *consumer) {
  auto shape = cast<ShapedType>(consumer->getResult(0).getType()).getShape();
  if (!hasStaticItems(consumer->getResult(0).getType()))
    return false;
  auto same = [&](Value v) {
    return cast<ShapedType>(v.getType()).getShape() == shape;
  };
  return llvm::all_of(producer->getResults(), same) &&
         llvm::all_of(consumer->getResults(), same);
}

/// Whether `producer`'s results may be computed at `consumer` instead: both
/// in one block (no work moves into a loop body), and every other reader
/// of them after `consumer`.
bool canMoveTo(Operation *producer, Operation *consumer) {
  if (producer->getBlock() != consumer->getBlock())
    return false;
  Block *block = consumer->getBlock();
  for (Operation *user : producer->getUsers()) {
    if (user == consumer)
      continue;
    Operation *at = block->findAncestorOpInBlock(*user);
    if (!at || !consumer->isBeforeInBlock(at))
      return false;
  }
  return true;
}

/// Replaces `producer` and `consumer` (which may read results of
/// `producer`; a sibling does not) by one apply_nodes at `consumer`: its body
/// computes `producer`'s elements, then `consumer`'s from them; it yields
/// `consumer`'s results, then those of `producer` that other ops read.
void merge(PatternRewriter &rewriter, Operation *producer,
           Operation *consumer) {
  llvm::SetVector<Value> inputs;
  for (Value v : inputsOf(consumer))
    if (v.getDefiningOp() != producer)
      inputs.insert(v);
  for (Value v : inputsOf(producer))
    inputs.insert(v);
  SmallVector<Value> kept;
  for (Value r : producer->getResults())
    if (llvm::any_of(r.getUsers(), [&](Operation *u) { return u != consumer; }))
      kept.push_back(r);
  SmallVector<Type> types(consumer->getResultTypes());
  llvm::append_range(types, ValueRange(kept).getTypes());

  rewriter.setInsertionPoint(consumer);
  Location loc = consumer->getLoc();
  auto fused = rewriter.create<ApplyNodesOp>(loc, types, inputs.getArrayRef());
  SmallVector<Type> elements;
  for (Value v : inputs)
    elements.push_back(getElementTypeOrSelf(v.getType()));
  SmallVector<Location> locs(elements.size(), loc);
  OpBuilder::InsertionGuard guard(rewriter);
  Block *block = rewriter.createBlock(&fused.getBody(), {}, elements, locs);
  auto argOf = [&](Value input) -> Value {
    return block->getArgument(llvm::find(inputs, input) - inputs.begin());
  };
  SmallVector<Value> producerArgs =
      llvm::map_to_vector(inputsOf(producer), argOf);
  SmallVector<Value> made = elementsOf(rewriter, producer, producerArgs);
  SmallVector<Value> consumerArgs;
  for (Value v : inputsOf(consumer))
    consumerArgs.push_back(v.getDefiningOp() == producer
                               ? made[cast<OpResult>(v).getResultNumber()]
                               : argOf(v));
  SmallVector<Value> yielded = elementsOf(rewriter, consumer, consumerArgs);
  for (Value r : kept)
    yielded.push_back(made[cast<OpResult>(r).getResultNumber()]);
  rewriter.create<YieldOp>(loc, yielded);

  unsigned count = consumer->getNumResults();
  for (auto [r, now] : llvm::zip(kept, fused.getResults().drop_front(count)))
    rewriter.replaceAllUsesWith(r, now);
  rewriter.replaceOp(consumer, fused.getResults().take_front(count));
  rewriter.eraseOp(producer);
}

/// An element-wise op (`ConsumerOp`) reads a result of an apply_nodes or a
/// dropout of its shape: the two become one apply_nodes. Where other ops
/// read the producer's results too, the merged op yields those as well.
template <typename ConsumerOp>
struct FuseProducer : public OpRewritePattern<ConsumerOp> {
  FuseProducer(MLIRContext *context, bool dropouts)
      : OpRewritePattern<ConsumerOp>(context), dropouts(dropouts) {}

  LogicalResult matchAndRewrite(ConsumerOp op,
                                PatternRewriter &rewriter) const override {
    for (Value input : inputsOf(op)) {
      Operation *producer = input.getDefiningOp();
      // A dropout of a dropout stays two ops: the merged op would be one
      // for nothing (dropout is what the consumer body would hold alone).
      if (!isa_and_nonnull<ApplyNodesOp, DropoutOp>(producer) ||
          (!dropouts && isa<DropoutOp>(producer)) ||
          (isa<DropoutOp>(op) && isa<DropoutOp>(producer)) ||
          !shareOneShape(producer, op) || !canMoveTo(producer, op))
        continue;
      merge(rewriter, producer, op);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no element-wise input to fuse");
  }

  bool dropouts;
};

/// Whether two apply_nodes of one shape have as many rows at run time: a
/// static count, or an input they share (every input of an apply_nodes has
/// its result's rows).
bool haveSameRows(ApplyNodesOp a, ApplyNodesOp b) {
  if (!cast<ShapedType>(a.getResult(0).getType()).isDynamicDim(0))
    return true;
  return llvm::any_of(a.getInputs(), [&](Value v) {
    return llvm::is_contained(b.getInputs(), v);
  });
}

/// How far back an apply_nodes looks for a sibling: the ops between two
/// merged siblings are walked for each candidate, so a bounded window keeps
/// the pass linear in a block's length.
constexpr unsigned kSiblingWindow = 32;

/// Two apply_nodes of one shape that do not depend on each other (an
/// optimizer's updates of parameters of one shape, ops reading one input)
/// become one op yielding both ops' results: one kernel where there were
/// two, and shared inputs read once. The earlier one moves to the later,
/// where nothing reads its results before.
struct FuseSiblings : public OpRewritePattern<ApplyNodesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyNodesOp op,
                                PatternRewriter &rewriter) const override {
    unsigned seen = 0;
    for (Operation *prev = op->getPrevNode(); prev && seen < kSiblingWindow;
         prev = prev->getPrevNode(), ++seen) {
      auto sibling = dyn_cast<ApplyNodesOp>(prev);
      if (!sibling || !shareOneShape(sibling, op) ||
          !haveSameRows(sibling, op) || !canMoveTo(sibling, op))
        continue;
      merge(rewriter, sibling, op);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no sibling to merge with");
  }
};

struct FuseElementwisePass
    : public gnn::impl::FuseElementwisePassBase<FuseElementwisePass> {
  using FuseElementwisePassBase::FuseElementwisePassBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseProducer<ApplyNodesOp>>(&getContext(), dropouts);
    if (dropouts)
      patterns.add<FuseProducer<DropoutOp>>(&getContext(), dropouts);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Siblings after chains: a chain merged first keeps its values in
    // registers rather than passing them between siblings' results.
    if (!siblings)
      return;
    RewritePatternSet siblingPatterns(&getContext());
    siblingPatterns.add<FuseSiblings>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(),
                                            std::move(siblingPatterns))))
      signalPassFailure();
  }
};
} // namespace
