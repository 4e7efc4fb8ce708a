//===- GNNCanonicalize.cpp - canonicalization patterns of gnn ops ---------===//
//
// Part of gnnc. Local rewrites that put message passing into one normal form,
// so that later passes (fusion) match fewer shapes of the same computation.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/BitVector.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gnn;

//===----------------------------------------------------------------------===//
// ApplyEdgesOp
//===----------------------------------------------------------------------===//

SmallVector<Attribute>
mlir::gnn::simplifyUnaryChain(ArrayRef<Attribute> chain) {
  SmallVector<Attribute> out;
  for (Attribute attr : chain) {
    auto fn = cast<UnaryFnAttr>(attr);
    if (fn.getKind() == UnaryKind::Scale && fn.getA().isExactlyValue(1.0))
      continue;
    auto prev = out.empty() ? UnaryFnAttr() : cast<UnaryFnAttr>(out.back());
    if (prev && prev.getKind() == UnaryKind::Scale &&
        fn.getKind() == UnaryKind::Scale) {
      // Scales are stored in double precision; the product is exact enough
      // for float features and is what the lowering would compute anyway.
      double product =
          prev.getA().convertToDouble() * fn.getA().convertToDouble();
      out.back() = UnaryFnAttr::get(fn.getContext(), UnaryKind::Scale, product);
      if (product == 1.0)
        out.pop_back();
      continue;
    }
    if (prev && prev.getKind() == UnaryKind::Clamp &&
        fn.getKind() == UnaryKind::Clamp) {
      double lo =
          std::max(prev.getA().convertToDouble(), fn.getA().convertToDouble());
      double hi =
          std::min(prev.getB().convertToDouble(), fn.getB().convertToDouble());
      if (lo <= hi) {
        out.back() =
            UnaryFnAttr::get(fn.getContext(), UnaryKind::Clamp, lo, hi);
        continue;
      }
    }
    out.push_back(fn);
  }
  return out;
}

namespace {
struct SimplifyElementwiseChain : OpRewritePattern<ApplyEdgesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyEdgesOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ArrayAttr> chain = op.getPost();
    if (!chain)
      return failure();
    SmallVector<Attribute> simplified = simplifyUnaryChain(chain->getValue());
    if (simplified.size() == chain->size() &&
        llvm::equal(simplified, chain->getValue()))
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      if (simplified.empty())
        op.removePostAttr();
      else
        op.setPostAttr(rewriter.getArrayAttr(simplified));
    });
    return success();
  }
};

/// copy_e(%x) then [B], where %x = f(...) then [A] has no other use, is
/// f(...) then [A, B]: one edge pass instead of two.
struct MergeCopyIntoProducer : OpRewritePattern<ApplyEdgesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyEdgesOp op,
                                PatternRewriter &rewriter) const override {
    MessageFnAttr fn = op.getFnAttr();
    if (!fn || fn.getOp() != BinaryOp::Copy || fn.getLhs() != Target::Edge ||
        op.getEdges())
      return failure();
    auto producer = op.getInputs()[0].getDefiningOp<ApplyEdgesOp>();
    if (!producer || !producer.getFnAttr() || producer.getEdges() ||
        producer.getGraph() != op.getGraph() ||
        !producer.getResult().hasOneUse() ||
        producer.getResult().getType() != op.getResult().getType())
      return failure();
    SmallVector<Attribute> chain;
    if (std::optional<ArrayAttr> first = producer.getPost())
      llvm::append_range(chain, first->getValue());
    if (std::optional<ArrayAttr> second = op.getPost())
      llvm::append_range(chain, second->getValue());
    rewriter.replaceOpWithNewOp<ApplyEdgesOp>(
        op, op.getResult().getType(), op.getGraph(), producer.getFnAttr(),
        producer.getInputs(), rewriter.getArrayAttr(chain));
    rewriter.eraseOp(producer);
    return success();
  }
};
} // namespace

void ApplyEdgesOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<SimplifyElementwiseChain, MergeCopyIntoProducer>(context);
}

//===----------------------------------------------------------------------===//
// SendAndRecvOp
//===----------------------------------------------------------------------===//

namespace {
/// Drops message/reduce pairs whose result is unused or repeats an earlier
/// pair (same function, reducer and inputs).
struct PruneMessages : OpRewritePattern<SendAndRecvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SendAndRecvOp op,
                                PatternRewriter &rewriter) const override {
    unsigned count = op.getNumResults();
    // keep[i]: index among the kept pairs whose result replaces result i.
    SmallVector<std::optional<unsigned>> replacement(count);
    SmallVector<unsigned> kept;
    for (unsigned i = 0; i < count; ++i) {
      if (op.getResult(i).use_empty())
        continue;
      for (unsigned k = 0; k < kept.size(); ++k) {
        unsigned j = kept[k];
        if (op.getMessage(j) == op.getMessage(i) &&
            op.getReducer(j) == op.getReducer(i) &&
            op.getResult(j).getType() == op.getResult(i).getType() &&
            llvm::equal(op.getMessageInputs(j), op.getMessageInputs(i))) {
          replacement[i] = k;
          break;
        }
      }
      if (!replacement[i]) {
        replacement[i] = kept.size();
        kept.push_back(i);
      }
    }
    if (kept.size() == count || kept.empty())
      return failure();

    SmallVector<Value> inputs;
    SmallVector<Attribute> messages, reducers;
    SmallVector<Type> types;
    for (unsigned i : kept) {
      llvm::append_range(inputs, op.getMessageInputs(i));
      messages.push_back(op.getMessages()[i]);
      reducers.push_back(op.getReducers()[i]);
      types.push_back(op.getResult(i).getType());
    }
    auto pruned = rewriter.create<SendAndRecvOp>(
        op.getLoc(), types, op.getGraph(), inputs, op.getEdges(),
        rewriter.getArrayAttr(messages), rewriter.getArrayAttr(reducers));
    for (unsigned i = 0; i < count; ++i)
      if (replacement[i])
        rewriter.replaceAllUsesWith(op.getResult(i),
                                    pruned.getResult(*replacement[i]));
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void SendAndRecvOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                MLIRContext *context) {
  results.add<PruneMessages>(context);
}

//===----------------------------------------------------------------------===//
// ApplyNodesOp
//===----------------------------------------------------------------------===//

namespace {
/// The value of every element of `feature` if it is a splat constant or a
/// broadcast of one (a gradient's seed), else null.
TypedAttr splatValueOf(Value feature) {
  while (auto broadcast = feature.getDefiningOp<BroadcastOp>())
    feature = broadcast.getInput();
  SplatElementsAttr splat;
  if (!matchPattern(feature, m_Constant(&splat)))
    return {};
  return dyn_cast<TypedAttr>(splat.getSplatValue<Attribute>());
}

/// A body reads a splat constant input as a scalar constant of its own, so
/// that the input need not be materialized, and read, per element.
struct InlineConstantInputs : OpRewritePattern<ApplyNodesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyNodesOp op,
                                PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    bool changed = false;
    for (auto [input, arg] : llvm::zip(op.getInputs(), body.getArguments())) {
      if (arg.use_empty())
        continue;
      TypedAttr value = splatValueOf(input);
      if (!value || value.getType() != arg.getType())
        continue;
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&body);
      Value scalar = rewriter.create<arith::ConstantOp>(op.getLoc(), value);
      rewriter.replaceAllUsesWith(arg, scalar);
      changed = true;
    }
    return success(changed);
  }
};

/// Drops inputs the body does not read, and repeats of an input, while the
/// rest still give the result its per-row shape (an input may be there
/// only to broadcast the others).
struct DropUnreadInputs : OpRewritePattern<ApplyNodesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyNodesOp op,
                                PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    OperandRange inputs = op.getInputs();
    unsigned count = inputs.size();
    FailureOr<SmallVector<int64_t>> shape = itemShapeOf(op, {});
    if (failed(shape))
      return failure();
    llvm::BitVector dropped(count);
    bool changed = false;
    for (unsigned i = 0; i < count; ++i) {
      BlockArgument arg = body.getArgument(i);
      for (unsigned j = 0; j < i && !arg.use_empty(); ++j)
        if (!dropped[j] && inputs[j] == inputs[i]) {
          rewriter.replaceAllUsesWith(arg, body.getArgument(j));
          changed = true;
        }
      if (!arg.use_empty())
        continue;
      dropped.set(i);
      FailureOr<SmallVector<int64_t>> rest = itemShapeOf(op, dropped);
      if (failed(rest) || *rest != *shape)
        dropped.reset(i);
    }
    if (dropped.none())
      return success(changed);
    rewriter.modifyOpInPlace(op, [&] {
      op->eraseOperands(dropped);
      body.eraseArguments(dropped);
    });
    return success();
  }

private:
  /// The per-row shape the inputs not in `dropped` broadcast to; failure if
  /// none is left.
  static FailureOr<SmallVector<int64_t>>
  itemShapeOf(ApplyNodesOp op, const llvm::BitVector &dropped) {
    SmallVector<int64_t> shape;
    bool any = false;
    for (auto [i, input] : llvm::enumerate(op.getInputs())) {
      if (!dropped.empty() && dropped[i])
        continue;
      FailureOr<SmallVector<int64_t>> merged = broadcastItemShapes(
          shape, getItemShape(cast<ShapedType>(input.getType())));
      if (failed(merged))
        return failure();
      shape = *merged;
      any = true;
    }
    if (!any)
      return failure();
    return shape;
  }
};

/// A result whose body yields one of its elements unchanged is that input,
/// where the input already has the result's type.
struct ForwardYieldedInput : OpRewritePattern<ApplyNodesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyNodesOp op,
                                PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());
    bool changed = false;
    for (auto [result, value] : llvm::zip(op.getResults(), yield.getValues())) {
      auto arg = dyn_cast<BlockArgument>(value);
      if (result.use_empty() || !arg || arg.getOwner() != &body)
        continue;
      Value input = op.getInputs()[arg.getArgNumber()];
      if (input.getType() != result.getType())
        continue;
      rewriter.replaceAllUsesWith(result, input);
      changed = true;
    }
    return success(changed);
  }
};

/// Results nothing reads are not computed, while some result is.
struct DropUnusedResults : OpRewritePattern<ApplyNodesOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ApplyNodesOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> used;
    SmallVector<Value> yielded;
    auto yield = cast<YieldOp>(op.getBody().front().getTerminator());
    for (auto [result, value] : llvm::zip(op.getResults(), yield.getValues()))
      if (!result.use_empty()) {
        used.push_back(result);
        yielded.push_back(value);
      }
    if (used.empty() || used.size() == op.getNumResults())
      return failure();
    auto kept = rewriter.create<ApplyNodesOp>(
        op.getLoc(), ValueRange(used).getTypes(), op.getInputs());
    rewriter.inlineRegionBefore(op.getBody(), kept.getBody(),
                                kept.getBody().end());
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperands(yielded); });
    for (auto [old, now] : llvm::zip(used, kept.getResults()))
      rewriter.replaceAllUsesWith(old, now);
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void ApplyNodesOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<InlineConstantInputs, DropUnreadInputs, ForwardYieldedInput,
              DropUnusedResults>(context);
}
