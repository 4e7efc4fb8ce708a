//===- AdjointBuilder.cpp - building blocks of adjoint rules --------------===//
//
// Part of gnnc. Accumulating adjoints, shaped constants, sums undoing
// broadcasts, the reversed graph, and element bodies over an upstream
// gradient.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::autodiff;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

void AdjointBuilder::accumulate(Value v, Value contribution) {
  assert(contribution.getType() == v.getType() && "adjoint of another type");
  Value &slot = adjoints[v];
  slot = slot ? add(slot, contribution) : contribution;
}

void AdjointBuilder::accumulateSummed(Value v, Value contribution) {
  accumulate(v, sumTo(contribution, v.getType()));
}

Value AdjointBuilder::constantLike(Value like, double value, Type elementType) {
  if (!elementType)
    elementType = tensorType(like).getElementType();
  auto type = tensorType(like).clone(elementType);
  auto splat = [&](RankedTensorType t) -> Value {
    return b.create<arith::ConstantOp>(DenseElementsAttr::get(
        t, b.getFloatAttr(elementType, value).getValue()));
  };
  // A small static shape is a constant of its own (the loss's seed); large
  // ones are broadcast rather than stored in the program.
  if (type.hasStaticShape() && type.getNumElements() <= 64)
    return splat(type);
  Value scalar = splat(RankedTensorType::get({}, elementType));
  if (hasBoundedRowWidth(type))
    return b.create<BroadcastOp>(type, scalar, like);
  // Rows wider than gnn ops take (an argument the loss does not read).
  SmallVector<Value> sizes;
  for (auto [d, size] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(size))
      sizes.push_back(b.create<tensor::DimOp>(like, d));
  return b.create<tensor::SplatOp>(b.create<tensor::ExtractOp>(scalar), type,
                                   sizes);
}

Value AdjointBuilder::add(Value x, Value y) {
  RankedTensorType type = tensorType(x);
  if (type.getRank() == 0) {
    // Element bodies need rows: add 0-d values as one row.
    auto row = RankedTensorType::get({1}, type.getElementType());
    SmallVector<ReassociationIndices> none;
    auto expand = [&](Value v) -> Value {
      return b.create<tensor::ExpandShapeOp>(row, v, none,
                                             ArrayRef<OpFoldResult>{});
    };
    Value sum = add(expand(x), expand(y));
    return b.create<tensor::CollapseShapeOp>(type, sum, none);
  }
  return applyNodes({x, y}, type, [](OpBuilder &nb, ValueRange e) -> Value {
    return nb.create<arith::AddFOp>(nb.getUnknownLoc(), e[0], e[1]);
  });
}

Value AdjointBuilder::sumTo(Value x, Type type) {
  if (x.getType() == type)
    return x;
  return b.create<SumToOp>(type, x);
}

Value AdjointBuilder::reversed(Value graph) {
  Value &slot = reversedGraphs[graph];
  if (slot)
    return slot;
  OpBuilder::InsertionGuard guard(b);
  // Right after the graph is known, so every use in the sweep sees it.
  if (Operation *def = graph.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(graph).getOwner());
  auto ids = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  auto ends = b.create<EdgeEndpointsOp>(ids, ids, graph);
  Value numSrc = b.create<NumSrcNodesOp>(b.getIndexType(), graph);
  Value numDst = b.create<NumDstNodesOp>(b.getIndexType(), graph);
  slot = b.create<GraphFromCooOp>(
      GraphType::get(b.getContext(), GraphStructure::General), ends.getDst(),
      ends.getSrc(), numDst, numSrc);
  return slot;
}

Value AdjointBuilder::edgesToTarget(Value t, Target target, Value graph,
                                    Value edges, RankedTensorType type) {
  if (target == Target::Edge)
    return sumTo(t, type);
  Value over = target == Target::Dst ? graph : reversed(graph);
  SmallVector<int64_t> shape = {type.getDimSize(0)};
  llvm::append_range(shape, getItemShape(tensorType(t)));
  auto summedType = RankedTensorType::get(shape, type.getElementType());
  Value summed =
      b.create<ReduceOp>(summedType, over, t, edges, ReduceKind::Sum);
  return sumTo(summed, type);
}

/// Fills the empty region of `op` with one block over the element types of
/// `inputs` that yields what `body` builds.
static void buildBody(ImplicitLocOpBuilder &b, Region &region,
                      ValueRange inputs, ElementBody body) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Type> elements;
  for (Value v : inputs)
    elements.push_back(tensorType(v).getElementType());
  SmallVector<Location> locs(elements.size(), b.getLoc());
  Block *block = b.createBlock(&region, {}, elements, locs);
  Value result = body(b, block->getArguments());
  b.create<YieldOp>(ValueRange{result});
}

Value AdjointBuilder::applyNodes(ValueRange inputs, RankedTensorType type,
                                 ElementBody body) {
  auto op = b.create<ApplyNodesOp>(TypeRange{type}, inputs);
  buildBody(b, op.getBody(), inputs, body);
  // A body that passes one input through unchanged (the adjoint of a sum
  // with respect to either term) would copy it: that input is the result.
  Value yielded = op.getBody().front().getTerminator()->getOperand(0);
  if (auto arg = dyn_cast<BlockArgument>(yielded))
    if (Value input = inputs[arg.getArgNumber()]; input.getType() == type) {
      op.erase();
      return input;
    }
  return op.getResult(0);
}

Value AdjointBuilder::applyEdges(Value graph, Value edges, ValueRange inputs,
                                 ArrayRef<Target> roles, RankedTensorType type,
                                 ElementBody body) {
  SmallVector<Attribute> roleAttrs;
  for (Target t : roles)
    roleAttrs.push_back(TargetAttr::get(b.getContext(), t));
  auto op = b.create<ApplyEdgesOp>(type, graph, inputs, edges, MessageFnAttr(),
                                   b.getArrayAttr(roleAttrs), ArrayAttr());
  buildBody(b, op.getBody(), inputs, body);
  return op;
}

FailureOr<Value> AdjointBuilder::elementAdjoint(
    Value graph, Value edges, ValueRange inputs, ArrayRef<Target> roles,
    Value seed, Target seedRole, unsigned wrt, ElementBody forward) {
  SmallVector<Value> all(inputs);
  all.push_back(seed);
  SmallVector<int64_t> item;
  for (Value v : all)
    item = *broadcastItemShapes(item, getItemShape(tensorType(v)));
  // Rows: the graph's edges, or the rows the node inputs share.
  int64_t rows = ShapedType::kDynamic;
  if (!graph)
    for (Value v : all)
      if (!tensorType(v).isDynamicDim(0))
        rows = tensorType(v).getDimSize(0);
  SmallVector<int64_t> shape = {rows};
  llvm::append_range(shape, item);
  auto type = RankedTensorType::get(shape, tensorType(seed).getElementType());

  LogicalResult result = success();
  auto body = [&](OpBuilder &nb, ValueRange e) -> Value {
    Block *block = nb.getInsertionBlock();
    Value y = forward(nb, e.drop_back());
    SmallVector<Operation *> ops =
        llvm::map_to_vector(*block, [](Operation &op) { return &op; });
    FailureOr<SmallVector<Value>> d =
        scalarAdjoints(nb, b.getLoc(), ops, y, e.back(), e.slice(wrt, 1));
    if (failed(d)) {
      result = failure();
      return e.back();
    }
    return d->front();
  };
  Value t;
  if (graph) {
    SmallVector<Target> allRoles(roles);
    allRoles.push_back(seedRole);
    t = applyEdges(graph, edges, all, allRoles, type, body);
  } else {
    t = applyNodes(all, type, body);
  }
  if (failed(result))
    return failure();
  return t;
}

LogicalResult AdjointBuilder::noAdjoint(Operation *op, const Twine &why) {
  InFlightDiagnostic diag = op->emitOpError()
                            << "has no adjoint: gnn-differentiate cannot take "
                               "gradients through it";
  if (!why.isTriviallyEmpty())
    diag << " (" << why << ")";
  return diag;
}
