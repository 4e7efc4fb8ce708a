//===- GraphAdjoints.cpp - adjoints of message passing --------------------===//
//
// Part of gnnc. An edge function's gradient is an element body over its
// inputs and the upstream gradient (per edge, or per destination for the
// sums of send_and_recv and reduce), gathered to each input's target: kept
// for edge features, summed into destinations over the in-edges, into
// sources over the reversed graph.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::autodiff;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// A per-edge type with the per-row shape of `like`.
static RankedTensorType edgeTypeLike(Value like) {
  SmallVector<int64_t> shape = {ShapedType::kDynamic};
  llvm::append_range(shape, getItemShape(tensorType(like)));
  return RankedTensorType::get(shape, tensorType(like).getElementType());
}

namespace {
/// An edge function (a built-in message with its chain, or a body) and
/// where it is evaluated.
struct EdgeFunction {
  Value graph, edges;
  SmallVector<Value> inputs;
  SmallVector<Target> roles;
  MessageFnAttr fn; // or null, with body
  ArrayAttr post;   // chain after fn, or null
  Region *body = nullptr;
};
} // namespace

static char targetLetter(Target t) {
  return t == Target::Src ? 'u' : t == Target::Dst ? 'v' : 'e';
}

/// The adjoint of node input `i` of a plain product (copy, mul, or dot after
/// its chain) as one send_and_recv sum of "other operand times upstream"
/// into the input's nodes (over the reversed graph for sources): the
/// per-edge products are never stored. Null where the message cannot be
/// named (both factors at one target) or `f` is not such a product.
static Value productAdjoint(const EdgeFunction &f, unsigned i, Value up,
                            Target upRole, AdjointBuilder &ad) {
  Target target = f.roles[i];
  if (f.body)
    return {};
  BinaryOp kind = f.fn.getOp();
  bool plain = kind == BinaryOp::Dot ||
               ((kind == BinaryOp::Mul || kind == BinaryOp::Copy) && !f.post);
  if (!plain)
    return {};
  MLIRContext *ctx = ad.b.getContext();
  if (target == Target::Edge) {
    // An edge weight [.., 1] that multiplied node rows [.., d]: its
    // gradient is the dot product of that row and the upstream gradient.
    if (kind != BinaryOp::Mul || f.roles[1 - i] == upRole)
      return {};
    Value other = f.inputs[1 - i];
    auto inputType = tensorType(f.inputs[i]);
    ArrayRef<int64_t> mine = getItemShape(inputType);
    auto full = broadcastItemShapes(getItemShape(tensorType(other)),
                                    getItemShape(tensorType(up)));
    if (failed(full) || full->empty() || full->back() == 1 || mine.empty() ||
        mine.back() != 1 || mine.size() != full->size() ||
        !areCompatibleItemShapes(mine.drop_back(), ArrayRef(*full).drop_back()))
      return {};
    std::string name = std::string(1, targetLetter(f.roles[1 - i])) + "_dot_" +
                       targetLetter(upRole);
    return ad.b.create<ApplyEdgesOp>(
        inputType, f.graph, MessageFnAttr::parseName(ctx, name),
        ValueRange{other, up}, ArrayAttr(), f.edges);
  }
  bool reversed = target == Target::Src;
  auto map = [&](Target t) {
    if (!reversed || t == Target::Edge)
      return t;
    return t == Target::Src ? Target::Dst : Target::Src;
  };
  std::string name;
  SmallVector<Value> operands;
  if (kind == BinaryOp::Copy) {
    name = std::string("copy_") + targetLetter(map(upRole));
    operands = {up};
  } else {
    Target other = map(f.roles[1 - i]), seed = map(upRole);
    if (other == seed)
      return {};
    name = std::string(1, targetLetter(other)) + "_mul_" + targetLetter(seed);
    operands = {f.inputs[1 - i], up};
  }
  SmallVector<int64_t> item;
  for (Value v : operands)
    item = *broadcastItemShapes(item, getItemShape(tensorType(v)));
  auto inputType = tensorType(f.inputs[i]);
  SmallVector<int64_t> shape = {inputType.getDimSize(0)};
  llvm::append_range(shape, item);
  auto type = RankedTensorType::get(shape, inputType.getElementType());
  Value graph = reversed ? ad.reversed(f.graph) : f.graph;
  auto sum = ad.b.create<SendAndRecvOp>(
      TypeRange{type}, graph, operands, f.edges,
      ad.b.getArrayAttr({MessageFnAttr::parseName(ctx, name)}),
      ad.b.getArrayAttr({ReduceKindAttr::get(ctx, ReduceKind::Sum)}));
  return ad.sumTo(sum.getResult(0), inputType);
}

/// Adds the adjoints of `f`'s active inputs for the upstream gradient `up`
/// (per edge, or per destination with role Dst).
static LogicalResult differentiateEdgeFunction(const EdgeFunction &f, Value up,
                                               Target upRole,
                                               AdjointBuilder &ad) {
  if (llvm::none_of(f.inputs, [&](Value v) { return ad.isActive(v); }))
    return success();
  MLIRContext *ctx = ad.b.getContext();
  if (f.fn && f.fn.getOp() == BinaryOp::Dot) {
    // The chain acts on the dot product, not elementwise on the operands:
    // its adjoint first, over the recomputed score.
    if (f.post) {
      Value s = ad.b.create<ApplyEdgesOp>(edgeTypeLike(up), f.graph, f.fn,
                                          f.inputs, ArrayAttr(), f.edges);
      auto copy = MessageFnAttr::parseName(ctx, "copy_e");
      FailureOr<Value> ds = ad.elementAdjoint(
          f.graph, f.edges, {s}, {Target::Edge}, up, upRole, 0,
          [&](OpBuilder &b, ValueRange x) {
            return emitMessage(b, ad.b.getLoc(), copy, f.post, x);
          });
      if (failed(ds))
        return failure();
      up = *ds;
      upRole = Target::Edge;
    }
  }
  for (auto [i, input] : llvm::enumerate(f.inputs)) {
    if (!ad.isActive(input))
      continue;
    if (Value d = productAdjoint(f, i, up, upRole, ad)) {
      ad.accumulate(input, d);
      continue;
    }
    FailureOr<Value> t =
        ad.elementAdjoint(f.graph, f.edges, f.inputs, f.roles, up, upRole, i,
                          [&](OpBuilder &b, ValueRange x) -> Value {
                            if (f.body)
                              return cloneElementBody(b, *f.body, x);
                            bool dot = f.fn.getOp() == BinaryOp::Dot;
                            return emitMessage(b, ad.b.getLoc(), f.fn,
                                               dot ? ArrayAttr() : f.post, x);
                          });
    if (failed(t))
      return failure();
    ad.accumulate(input, ad.edgesToTarget(*t, f.roles[i], f.graph, f.edges,
                                          tensorType(input)));
  }
  return success();
}

/// The upstream gradient of the messages of one reduction whose result `r`
/// has adjoint `dr`, and its role: sum passes `dr` at the destination; mean
/// divides it by the in-degree; max and min pass it to the edges whose
/// message (`messages()`, recomputed) attains the extremum.
static std::pair<Value, Target>
reductionUpstream(ReduceKind kind, const EdgeFunction &f, Value r, Value dr,
                  AdjointBuilder &ad, llvm::function_ref<Value()> messages) {
  auto &b = ad.b;
  switch (kind) {
  case ReduceKind::Sum:
    return {dr, Target::Dst};
  case ReduceKind::Mean: {
    auto ids = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
    Value like = b.create<EdgeEndpointsOp>(ids, ids, f.graph).getSrc();
    Type element = tensorType(dr).getElementType();
    Value ones = ad.constantLike(like, 1.0, element);
    auto degreeType =
        RankedTensorType::get({tensorType(dr).getDimSize(0)}, element);
    Value degree =
        b.create<ReduceOp>(degreeType, f.graph, ones, f.edges, ReduceKind::Sum);
    Value scaled = ad.applyNodes(
        {dr, degree}, tensorType(dr), [&](OpBuilder &nb, ValueRange e) {
          return nb.create<arith::DivFOp>(b.getLoc(), e[0], e[1]);
        });
    return {scaled, Target::Dst};
  }
  case ReduceKind::Max:
  case ReduceKind::Min: {
    // Split evenly among the edges that attain the extremum, as
    // torch.amax/amin do: tied messages that move together (the same
    // function of an input) then get the derivative of the extremum.
    Value m = messages();
    Location loc = b.getLoc();
    auto hit = [&](OpBuilder &nb, Value x, Value extremum) -> Value {
      return nb.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, x,
                                      extremum);
    };
    auto c = [&](OpBuilder &nb, Type t, double v) -> Value {
      return nb.create<arith::ConstantOp>(loc, nb.getFloatAttr(t, v));
    };
    Value hits = ad.applyEdges(
        f.graph, f.edges, {m, r}, {Target::Edge, Target::Dst}, edgeTypeLike(m),
        [&](OpBuilder &nb, ValueRange e) -> Value {
          Type t = e[0].getType();
          return nb.create<arith::SelectOp>(loc, hit(nb, e[0], e[1]),
                                            c(nb, t, 1), c(nb, t, 0));
        });
    Value ties = b.create<ReduceOp>(r.getType(), f.graph, hits, f.edges,
                                    ReduceKind::Sum);
    Value share = ad.applyEdges(
        f.graph, f.edges, {m, r, dr, ties},
        {Target::Edge, Target::Dst, Target::Dst, Target::Dst}, edgeTypeLike(m),
        [&](OpBuilder &nb, ValueRange e) -> Value {
          Value part = nb.create<arith::DivFOp>(loc, e[2], e[3]);
          return nb.create<arith::SelectOp>(loc, hit(nb, e[0], e[1]), part,
                                            c(nb, e[2].getType(), 0));
        });
    return {share, Target::Edge};
  }
  }
  llvm_unreachable("unknown reduce kind");
}

static LogicalResult differentiate(ApplyEdgesOp op, AdjointBuilder &ad) {
  Value dy = ad.adjoint(op.getResult());
  EdgeFunction f{op.getGraph(),
                 op.getEdges(),
                 op.getInputs(),
                 {},
                 op.getFnAttr(),
                 op.getPostAttr(),
                 op.hasBody() ? &op.getBody() : nullptr};
  for (unsigned i = 0; i < op.getInputs().size(); ++i)
    f.roles.push_back(op.getInputTarget(i));
  return differentiateEdgeFunction(f, dy, Target::Edge, ad);
}

static LogicalResult differentiate(SendAndRecvOp op, AdjointBuilder &ad) {
  for (unsigned p = 0; p < op.getNumResults(); ++p) {
    Value r = op.getResult(p);
    Value dr = ad.adjoint(r);
    if (!dr)
      continue;
    MessageFnAttr fn = op.getMessage(p);
    EdgeFunction f{op.getGraph(), op.getEdges(), op.getMessageInputs(p), {}, fn,
                   ArrayAttr(),   nullptr};
    for (unsigned i = 0; i < fn.getArity(); ++i)
      f.roles.push_back(fn.getTarget(i));
    if (llvm::none_of(f.inputs, [&](Value v) { return ad.isActive(v); }))
      continue;
    auto [up, role] =
        reductionUpstream(op.getReducer(p), f, r, dr, ad, [&]() -> Value {
          return ad.b.create<ApplyEdgesOp>(edgeTypeLike(r), f.graph, fn,
                                           f.inputs, ArrayAttr(), f.edges);
        });
    if (failed(differentiateEdgeFunction(f, up, role, ad)))
      return failure();
  }
  return success();
}

static LogicalResult differentiate(ReduceOp op, AdjointBuilder &ad) {
  Value dr = ad.adjoint(op.getResult());
  auto copy = MessageFnAttr::parseName(ad.b.getContext(), "copy_e");
  EdgeFunction f{op.getGraph(), op.getEdges(), {op.getInput()}, {Target::Edge},
                 copy,          ArrayAttr(),   nullptr};
  auto [up, role] = reductionUpstream(op.getKind(), f, op.getResult(), dr, ad,
                                      [&] { return op.getInput(); });
  return differentiateEdgeFunction(f, up, role, ad);
}

static LogicalResult differentiate(FusedAttentionOp op, AdjointBuilder &ad) {
  // A normalized attention's log-sum-exp, when it returns it, serves the
  // backward; its own gradient is passed only when it is used.
  bool saved = op.getNormalize() && op.getNumResults() == 2;
  SmallVector<Value> grads;
  for (auto [i, r] : llvm::enumerate(op.getResults())) {
    Value d = ad.adjoint(r);
    if (!d && saved && i == 1)
      continue;
    grads.push_back(d ? d : ad.zerosLike(r));
  }
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  auto grad = ad.b.create<FusedAttentionGradOp>(
      q.getType(), k.getType(), v.getType(), op.getGraph(), q, k, v, grads,
      op.getEdges(), saved ? op.getResult(1) : Value(), op.getScaleAttr(),
      op.getClampLoAttr(), op.getClampHiAttr(), op.getNormalizeAttr());
  SmallVector<Value> inputs = {q, k, v};
  for (auto [input, d] : llvm::zip(inputs, grad.getResults()))
    if (ad.isActive(input))
      ad.accumulate(input, d);
  return success();
}

bool autodiff::hasFusedBackward(FusedAttentionOp op) {
  auto last = [](Value x) {
    return cast<RankedTensorType>(x.getType()).getShape().back();
  };
  return !ShapedType::isDynamic(last(op.getQuery())) &&
         !ShapedType::isDynamic(last(op.getValue()));
}

void autodiff::saveAttentionStatistics(FusedAttentionOp op) {
  if (!op.getNormalize() || op.getNumResults() != 1 || !hasFusedBackward(op))
    return;
  auto out = cast<RankedTensorType>(op.getResult(0).getType());
  SmallVector<int64_t> shape = {out.getDimSize(0)};
  llvm::append_range(shape,
                     getItemShape(tensorType(op.getQuery())).drop_back());
  shape.push_back(1);
  OpBuilder b(op);
  auto withStatistics = b.create<FusedAttentionOp>(
      op.getLoc(),
      TypeRange{out, RankedTensorType::get(shape, out.getElementType())},
      op->getOperands(), op->getAttrs());
  op.getResult(0).replaceAllUsesWith(withStatistics.getResult(0));
  op.erase();
}

LogicalResult autodiff::differentiateGraphOp(Operation *op, AdjointBuilder &ad,
                                             bool &handled) {
  handled = true;
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case<ApplyEdgesOp, SendAndRecvOp, ReduceOp, FusedAttentionOp>(
          [&](auto op) { return differentiate(op, ad); })
      .Default([&](Operation *) {
        handled = false;
        return success();
      });
}

void autodiff::unfuseAttention(FusedAttentionOp op,
                               llvm::DenseSet<Value> &constants) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  MLIRContext *ctx = b.getContext();
  Value g = op.getGraph(), q = op.getQuery(), k = op.getKey(),
        v = op.getValue(), edges = op.getEdges();
  // Per-edge and per-destination scores: [.., heads, 1].
  auto scoreItem = llvm::to_vector(getItemShape(tensorType(q)));
  scoreItem.back() = 1;
  Type element = tensorType(q).getElementType();
  auto rowsOf = [&](int64_t rows, ArrayRef<int64_t> item) {
    SmallVector<int64_t> shape = {rows};
    llvm::append_range(shape, item);
    return RankedTensorType::get(shape, element);
  };
  auto edgeScore = rowsOf(ShapedType::kDynamic, scoreItem);
  auto nodeScore = rowsOf(tensorType(q).getDimSize(0), scoreItem);
  auto dot = MessageFnAttr::parseName(ctx, "u_dot_v");
  auto scale =
      UnaryFnAttr::get(ctx, UnaryKind::Scale, op.getScale().convertToDouble());
  auto exp = UnaryFnAttr::get(ctx, UnaryKind::Exp);
  // e: the edge weights; m: the exact softmax's shift, if any.
  Value e, m;
  if (op.getClampLo()) {
    auto clamp = UnaryFnAttr::get(ctx, UnaryKind::Clamp,
                                  op.getClampLo()->convertToDouble(),
                                  op.getClampHi()->convertToDouble());
    e = b.create<ApplyEdgesOp>(edgeScore, g, dot, ValueRange{k, q},
                               b.getArrayAttr({scale, clamp, exp}), edges);
  } else if (op.getNormalize()) {
    // The exact softmax: shifted by the destination's maximum, which the
    // normalization cancels (so its gradient contributions cancel too).
    Value s = b.create<ApplyEdgesOp>(edgeScore, g, dot, ValueRange{k, q},
                                     b.getArrayAttr({scale}), edges);
    m = b.create<ReduceOp>(nodeScore, g, s, edges, ReduceKind::Max);
    constants.insert(m);
    auto shifted = b.create<ApplyEdgesOp>(
        edgeScore, g, ValueRange{s, m}, edges, MessageFnAttr(),
        b.getArrayAttr({TargetAttr::get(ctx, Target::Edge),
                        TargetAttr::get(ctx, Target::Dst)}),
        ArrayAttr());
    {
      OpBuilder::InsertionGuard guard(b);
      Block *block = b.createBlock(&shifted.getBody(), {}, {element, element},
                                   {b.getLoc(), b.getLoc()});
      Value d =
          b.create<arith::SubFOp>(block->getArgument(0), block->getArgument(1));
      b.create<YieldOp>(ValueRange{b.create<math::ExpOp>(d)});
    }
    e = shifted;
  } else {
    e = b.create<ApplyEdgesOp>(edgeScore, g, dot, ValueRange{k, q},
                               b.getArrayAttr({scale, exp}), edges);
  }
  auto wvType =
      rowsOf(tensorType(q).getDimSize(0), getItemShape(tensorType(v)));
  ArrayAttr messages =
      b.getArrayAttr({MessageFnAttr::parseName(ctx, "u_mul_e"),
                      MessageFnAttr::parseName(ctx, "copy_e")});
  Attribute sum = ReduceKindAttr::get(ctx, ReduceKind::Sum);
  auto sums = b.create<SendAndRecvOp>(TypeRange{wvType, nodeScore}, g,
                                      ValueRange{v, e, e}, edges, messages,
                                      b.getArrayAttr({sum, sum}));
  if (!op.getNormalize()) {
    op.getResult(0).replaceAllUsesWith(
        b.create<tensor::CastOp>(op.getResult(0).getType(), sums.getResult(0))
            .getResult());
    op.getResult(1).replaceAllUsesWith(
        b.create<tensor::CastOp>(op.getResult(1).getType(), sums.getResult(1))
            .getResult());
    op.erase();
    return;
  }
  auto normalized = b.create<ApplyNodesOp>(TypeRange{op.getResult(0).getType()},
                                           sums.getResults());
  {
    OpBuilder::InsertionGuard guard(b);
    Block *block = b.createBlock(&normalized.getBody(), {}, {element, element},
                                 {b.getLoc(), b.getLoc()});
    // Nodes without in-edges have wv = z = 0 and get 0, as the fused op
    // gives them; dividing by 1 there keeps every gradient finite.
    Value wv = block->getArgument(0), z = block->getArgument(1);
    Value zero = b.create<arith::ConstantOp>(b.getFloatAttr(element, 0.0));
    Value one = b.create<arith::ConstantOp>(b.getFloatAttr(element, 1.0));
    Value some = b.create<arith::CmpFOp>(arith::CmpFPredicate::OGT, z, zero);
    Value divisor = b.create<arith::SelectOp>(some, z, one);
    b.create<YieldOp>(ValueRange{b.create<arith::DivFOp>(wv, divisor)});
  }
  op.getResult(0).replaceAllUsesWith(normalized.getResult(0));
  if (op.getNumResults() == 2) {
    // The log-sum-exp, log(z) + m: -inf without in-edges, where log's
    // argument is 1 so that its gradient stays finite.
    SmallVector<Value> inputs = {sums.getResult(1)};
    if (m)
      inputs.push_back(m);
    auto lse =
        b.create<ApplyNodesOp>(TypeRange{op.getResult(1).getType()}, inputs);
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Type> types(inputs.size(), element);
    SmallVector<Location> locs(inputs.size(), b.getLoc());
    Block *block = b.createBlock(&lse.getBody(), {}, types, locs);
    Value z = block->getArgument(0);
    auto constant = [&](double x) {
      return b.create<arith::ConstantOp>(b.getFloatAttr(element, x));
    };
    Value some =
        b.create<arith::CmpFOp>(arith::CmpFPredicate::OGT, z, constant(0.0));
    Value logSum = b.create<math::LogOp>(
        b.create<arith::SelectOp>(some, z, constant(1.0)));
    if (m)
      logSum = b.create<arith::AddFOp>(logSum, block->getArgument(1));
    b.create<YieldOp>(ValueRange{b.create<arith::SelectOp>(
        some, logSum, constant(-std::numeric_limits<double>::infinity()))});
    op.getResult(1).replaceAllUsesWith(lse.getResult(0));
  }
  op.erase();
}
