//===- FuseAttention.cpp - fuse score, exp and sums into one op -----------===//
//
// Part of gnnc. DGL computes attention as four kernels with per-edge tensors
// between them; this pass recognizes that computation and replaces it with
// gnn.fused_attention, one pass over the edges.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::gnn {
#define GEN_PASS_DEF_FUSEATTENTIONPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// A per-edge weight exp(clamp(scale * dot(key_src, query_dst), lo, hi)).
struct ScoreMatch {
  Value query, key;
  double scale = 1.0;
  std::optional<std::pair<double, double>> clamp;
  /// The edge subset the weight was computed on (null: all edges).
  Value edges;
  /// exp(t - max t) per destination: exact only once normalized.
  bool shifted = false;
};
} // namespace

/// The elementwise chain of a user-defined edge body with one input:
/// multiplications or divisions by constants, max then min (or min then max)
/// with constants, and exp. Fails on anything else.
static FailureOr<SmallVector<Attribute>> chainFromBody(ApplyEdgesOp op) {
  Block &block = op.getBody().front();
  MLIRContext *ctx = op.getContext();
  Value current = block.getArgument(0);
  SmallVector<Attribute> chain;
  std::optional<double> pendingLo, pendingHi;
  auto constantOperand = [&](Operation *nested) -> std::optional<double> {
    if (nested->getNumOperands() != 2)
      return std::nullopt;
    Value other = nested->getOperand(0) == current ? nested->getOperand(1)
                                                   : nested->getOperand(0);
    FloatAttr value;
    if (nested->getOperand(0) != current && nested->getOperand(1) != current)
      return std::nullopt;
    if (!matchPattern(other, m_Constant(&value)))
      return std::nullopt;
    return value.getValueAsDouble();
  };
  auto flushClamp = [&]() -> LogicalResult {
    if (!pendingLo && !pendingHi)
      return success();
    if (!pendingLo || !pendingHi || *pendingLo > *pendingHi)
      return failure(); // one-sided or empty clamps are not the pattern
    chain.push_back(
        UnaryFnAttr::get(ctx, UnaryKind::Clamp, *pendingLo, *pendingHi));
    pendingLo.reset();
    pendingHi.reset();
    return success();
  };
  for (Operation &nested : block.without_terminator()) {
    if (isa<arith::ConstantOp>(nested))
      continue;
    if (nested.getNumResults() != 1)
      return failure();
    std::optional<double> constant = constantOperand(&nested);
    if (isa<arith::MulFOp>(nested) && constant) {
      if (failed(flushClamp()))
        return failure();
      chain.push_back(UnaryFnAttr::get(ctx, UnaryKind::Scale, *constant));
    } else if (isa<arith::DivFOp>(nested) && constant &&
               nested.getOperand(0) == current && *constant != 0.0) {
      if (failed(flushClamp()))
        return failure();
      chain.push_back(UnaryFnAttr::get(ctx, UnaryKind::Scale, 1.0 / *constant));
    } else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(nested) && constant &&
               !pendingLo) {
      pendingLo = *constant;
    } else if (isa<arith::MinimumFOp, arith::MinNumFOp>(nested) && constant &&
               !pendingHi) {
      pendingHi = *constant;
    } else if (isa<math::ExpOp>(nested) && nested.getOperand(0) == current) {
      if (failed(flushClamp()))
        return failure();
      chain.push_back(UnaryFnAttr::get(ctx, UnaryKind::Exp));
    } else {
      return failure();
    }
    current = nested.getResult(0);
  }
  if (failed(flushClamp()))
    return failure();
  auto yield = cast<YieldOp>(block.getTerminator());
  if (yield.getValues().size() != 1 || yield.getValues()[0] != current)
    return failure();
  return chain;
}

/// Reads [scale]? [clamp]? exp into `match`.
static LogicalResult readChain(ArrayRef<Attribute> rawChain,
                               ScoreMatch &match) {
  SmallVector<Attribute> chain = simplifyUnaryChain(rawChain);
  ArrayRef<Attribute> rest(chain);
  auto next = [&](UnaryKind kind) -> UnaryFnAttr {
    if (rest.empty() || cast<UnaryFnAttr>(rest.front()).getKind() != kind)
      return {};
    auto fn = cast<UnaryFnAttr>(rest.front());
    rest = rest.drop_front();
    return fn;
  };
  if (UnaryFnAttr scale = next(UnaryKind::Scale))
    match.scale = scale.getA().convertToDouble();
  if (UnaryFnAttr clamp = next(UnaryKind::Clamp))
    match.clamp = {clamp.getA().convertToDouble(),
                   clamp.getB().convertToDouble()};
  if (!next(UnaryKind::Exp) || !rest.empty())
    return failure();
  return success();
}

/// Edge subsets compose when one side computes all edges or both compute
/// the same subset.
static LogicalResult mergeEdges(Value &edges, Value more) {
  if (!more)
    return success();
  if (edges && edges != more)
    return failure();
  edges = more;
  return success();
}

/// Reads the dot product `dot` on `graph`, followed by its own chain and
/// then `chain`, into `match`.
static LogicalResult matchDot(ApplyEdgesOp dot, Value graph,
                              ArrayRef<Attribute> chain, ScoreMatch &match) {
  if (!dot || dot.getGraph() != graph)
    return failure();
  MessageFnAttr fn = dot.getFnAttr();
  if (!fn || fn.getOp() != BinaryOp::Dot || fn.getLhs() == Target::Edge ||
      fn.getRhs() == Target::Edge ||
      failed(mergeEdges(match.edges, dot.getEdges())))
    return failure();
  bool keyFirst = fn.getLhs() == Target::Src;
  match.key = dot.getInputs()[keyFirst ? 0 : 1];
  match.query = dot.getInputs()[keyFirst ? 1 : 0];
  SmallVector<Attribute> full;
  if (std::optional<ArrayAttr> post = dot.getPost())
    llvm::append_range(full, post->getValue());
  llvm::append_range(full, chain);
  return readChain(full, match);
}

/// Matches the exact softmax's weight `exp(t - m)` where `m` is the
/// destination's maximum of the score `t`: a body `(e %t, v %m)` computing
/// `exp(t - m)`, with `m = gnn.reduce max(t)`.
static std::optional<ScoreMatch> matchShiftedWeight(ApplyEdgesOp op,
                                                    Value graph) {
  if (op.getFnAttr() || op.getInputs().size() != 2 ||
      op.getInputTarget(0) != Target::Edge ||
      op.getInputTarget(1) != Target::Dst)
    return std::nullopt;
  Block &body = op.getBody().front();
  auto ops =
      llvm::to_vector(llvm::make_pointer_range(body.without_terminator()));
  if (ops.size() != 2)
    return std::nullopt;
  auto sub = dyn_cast<arith::SubFOp>(ops[0]);
  auto exp = dyn_cast<math::ExpOp>(ops[1]);
  auto yield = cast<YieldOp>(body.getTerminator());
  if (!sub || !exp || sub.getLhs() != body.getArgument(0) ||
      sub.getRhs() != body.getArgument(1) ||
      exp.getOperand() != sub.getResult() || yield.getValues().size() != 1 ||
      yield.getValues()[0] != exp.getResult())
    return std::nullopt;
  Value score = op.getInputs()[0];
  auto max = op.getInputs()[1].getDefiningOp<ReduceOp>();
  if (!max || max.getGraph() != graph || max.getKind() != ReduceKind::Max ||
      max.getInput() != score)
    return std::nullopt;
  ScoreMatch match;
  match.shifted = true;
  if (failed(mergeEdges(match.edges, op.getEdges())) ||
      failed(mergeEdges(match.edges, max.getEdges())))
    return std::nullopt;
  Attribute exponent = UnaryFnAttr::get(op.getContext(), UnaryKind::Exp);
  if (failed(matchDot(score.getDefiningOp<ApplyEdgesOp>(), graph, exponent,
                      match)))
    return std::nullopt;
  return match;
}

/// Matches `e` as the exp of a (scaled, clamped) dot-product score on `graph`.
static std::optional<ScoreMatch> matchWeight(Value e, Value graph) {
  auto op = e.getDefiningOp<ApplyEdgesOp>();
  if (!op || op.getGraph() != graph)
    return std::nullopt;
  if (std::optional<ScoreMatch> shifted = matchShiftedWeight(op, graph))
    return shifted;
  ScoreMatch match;
  SmallVector<Attribute> chain;
  ApplyEdgesOp dot = op;
  if (MessageFnAttr fn = op.getFnAttr();
      !fn || (fn.getOp() == BinaryOp::Copy && fn.getLhs() == Target::Edge)) {
    // exp applied to an edge value computed by another op.
    if (!fn) {
      if (op.getInputs().size() != 1 || op.getInputTarget(0) != Target::Edge)
        return std::nullopt;
      FailureOr<SmallVector<Attribute>> body = chainFromBody(op);
      if (failed(body))
        return std::nullopt;
      chain = std::move(*body);
    } else if (std::optional<ArrayAttr> post = op.getPost()) {
      llvm::append_range(chain, post->getValue());
    }
    dot = op.getInputs()[0].getDefiningOp<ApplyEdgesOp>();
    if (!dot || dot.getGraph() != graph ||
        failed(mergeEdges(match.edges, op.getEdges())))
      return std::nullopt;
  }
  if (failed(matchDot(dot, graph, chain, match)))
    return std::nullopt;
  return match;
}

/// A place where Σ over in-edges of `e` (the normalizer z) is computed.
struct SumSite {
  Operation *op = nullptr;
  Value result;
};

static bool isSumOf(SendAndRecvOp op, unsigned i, Value e) {
  MessageFnAttr fn = op.getMessage(i);
  return op.getReducer(i) == ReduceKind::Sum && fn.getOp() == BinaryOp::Copy &&
         fn.getLhs() == Target::Edge && op.getMessageInputs(i)[0] == e;
}

/// Finds z = Σ e on the same graph and edges: first in `anchor` itself, then
/// in other ops of the same block.
static std::optional<SumSite> findNormalizer(SendAndRecvOp anchor, Value e) {
  for (unsigned i = 0; i < anchor.getNumResults(); ++i)
    if (isSumOf(anchor, i, e))
      return SumSite{anchor, anchor.getResult(i)};
  for (Operation *user : e.getUsers()) {
    if (user == anchor || user->getBlock() != anchor->getBlock())
      continue;
    if (auto send = dyn_cast<SendAndRecvOp>(user)) {
      if (send.getGraph() != anchor.getGraph() ||
          send.getEdges() != anchor.getEdges())
        continue;
      for (unsigned i = 0; i < send.getNumResults(); ++i)
        if (isSumOf(send, i, e))
          return SumSite{send, send.getResult(i)};
    } else if (auto reduce = dyn_cast<ReduceOp>(user)) {
      if (reduce.getGraph() == anchor.getGraph() &&
          reduce.getEdges() == anchor.getEdges() &&
          reduce.getKind() == ReduceKind::Sum)
        return SumSite{reduce, reduce.getResult()};
    }
  }
  return std::nullopt;
}

/// The apply_nodes computing exactly wv / z, if it is the only user of both.
static ApplyNodesOp findDivision(Value wv, Value z) {
  if (!wv.hasOneUse() || !z.hasOneUse())
    return {};
  auto div = dyn_cast<ApplyNodesOp>(*wv.getUsers().begin());
  if (!div || *z.getUsers().begin() != div || div.getInputs().size() != 2 ||
      div.getInputs()[0] != wv || div.getInputs()[1] != z ||
      div.getNumResults() != 1 || div.getResult(0).getType() != wv.getType())
    return {};
  Block &body = div.getBody().front();
  if (!llvm::hasSingleElement(body.without_terminator()))
    return {};
  auto divf = dyn_cast<arith::DivFOp>(body.front());
  auto yield = cast<YieldOp>(body.getTerminator());
  if (!divf || divf.getLhs() != body.getArgument(0) ||
      divf.getRhs() != body.getArgument(1) || yield.getValues().size() != 1 ||
      yield.getValues()[0] != divf.getResult())
    return {};
  return div;
}

/// True if every user of `value` comes after `point` in its block.
static bool allUsersAfter(Value value, Operation *point) {
  for (Operation *user : value.getUsers()) {
    Operation *ancestor = point->getBlock()->findAncestorOpInBlock(*user);
    if (!ancestor || ancestor == point || ancestor->isBeforeInBlock(point))
      return false;
  }
  return true;
}

namespace {
struct FuseAttention : OpRewritePattern<SendAndRecvOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SendAndRecvOp op,
                                PatternRewriter &rewriter) const override {
    for (unsigned i = 0; i < op.getNumResults(); ++i)
      if (succeeded(fusePair(op, i, rewriter)))
        return success();
    return failure();
  }

  LogicalResult fusePair(SendAndRecvOp op, unsigned i,
                         PatternRewriter &rewriter) const {
    MessageFnAttr fn = op.getMessage(i);
    Value wv = op.getResult(i);
    if (op.getReducer(i) != ReduceKind::Sum || fn.getOp() != BinaryOp::Mul ||
        wv.use_empty())
      return failure();
    // u_mul_e(v, e) or e_mul_u(e, v).
    bool valueFirst = fn.getLhs() == Target::Src && fn.getRhs() == Target::Edge;
    if (!valueFirst &&
        !(fn.getLhs() == Target::Edge && fn.getRhs() == Target::Src))
      return failure();
    OperandRange inputs = op.getMessageInputs(i);
    Value value = inputs[valueFirst ? 0 : 1];
    Value e = inputs[valueFirst ? 1 : 0];

    std::optional<ScoreMatch> score = matchWeight(e, op.getGraph());
    // Weights computed on a subset must be summed over that same subset.
    if (!score || (score->edges && score->edges != op.getEdges()))
      return failure();
    std::optional<SumSite> z = findNormalizer(op, e);
    if (!z)
      return failure();

    // Build after the later of the two sums, or at the division it absorbs.
    ApplyNodesOp division = findDivision(wv, z->result);
    // A shifted weight sums to a different z; only wv / z is the same.
    if (score->shifted && !division)
      return failure();
    Operation *point = op;
    if (division)
      point = division;
    else if (op->isBeforeInBlock(z->op))
      point = z->op;
    if (!division &&
        (!allUsersAfter(wv, point) || !allUsersAfter(z->result, point)))
      return failure();

    OperationState state(op.getLoc(), FusedAttentionOp::getOperationName());
    SmallVector<Type> types = {wv.getType()};
    if (!division)
      types.push_back(z->result.getType());
    OpBuilder &b = rewriter;
    FusedAttentionOp::build(
        b, state, types, op.getGraph(), score->query, score->key, value,
        op.getEdges(), b.getF64FloatAttr(score->scale),
        score->clamp ? b.getF64FloatAttr(score->clamp->first) : FloatAttr(),
        score->clamp ? b.getF64FloatAttr(score->clamp->second) : FloatAttr(),
        division ? b.getUnitAttr() : UnitAttr());
    if (!isValid(state))
      return failure();

    rewriter.setInsertionPoint(point);
    Operation *fused = rewriter.create(state);
    if (division) {
      rewriter.replaceOp(division, fused->getResults());
    } else {
      rewriter.replaceAllUsesWith(wv, fused->getResult(0));
      rewriter.replaceAllUsesWith(z->result, fused->getResult(1));
    }
    return success();
  }

  /// Shapes the fused op cannot express (unusual broadcasts) are not fused:
  /// the op's own shape rule decides.
  static bool isValid(const OperationState &state) {
    auto item = [](Value v) {
      return getItemShape(cast<ShapedType>(v.getType()));
    };
    Value q = state.operands[1], k = state.operands[2], v = state.operands[3];
    for (Value f : {q, k, v})
      if (getElementTypeOrSelf(f.getType()) !=
          getElementTypeOrSelf(q.getType()))
        return false;
    if (failed(verifyAttentionInputShapes(item(q), item(k), item(v))))
      return false;
    SmallVector<SmallVector<int64_t>, 2> expected =
        getAttentionResultItemShapes(item(q), item(v));
    for (auto [i, type] : llvm::enumerate(state.types))
      if (!areCompatibleItemShapes(getItemShape(cast<ShapedType>(type)),
                                   expected[i]))
        return false;
    return true;
  }
};

struct FuseAttentionPass
    : public gnn::impl::FuseAttentionPassBase<FuseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseAttentionPatterns(patterns);
    SendAndRecvOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void mlir::gnn::populateFuseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseAttention>(patterns.getContext());
}
