//===- FunctionBuilder.cpp - model functions built as gnn IR --------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "FunctionBuilder.h"
#include "GNN/IR/FunctionEquivalence.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Verifier.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::models;

FunctionBuilder::FunctionBuilder(
    ModuleOp module, llvm::StringRef name, const ModelConfig &config,
    llvm::function_ref<bool(llvm::StringRef)> hasWeight)
    : b(module.getLoc(), module.getContext()), c(config), module(module),
      hasWeight(hasWeight) {
  d = c.dModel;
  h = c.heads;
  dk = c.dk();
  // Diagnostics about a built op name its function.
  b.setLoc(NameLoc::get(b.getStringAttr(name)));
  b.setInsertionPointToEnd(module.getBody());
  fn = b.create<func::FuncOp>(name, b.getFunctionType({}, {}));
  entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  zero = index(0);
}

RankedTensorType FunctionBuilder::rows(int64_t width) {
  return RankedTensorType::get({ShapedType::kDynamic, width}, b.getF32Type());
}
RankedTensorType FunctionBuilder::heads() {
  return RankedTensorType::get({ShapedType::kDynamic, h, dk}, b.getF32Type());
}
RankedTensorType FunctionBuilder::heads1() {
  return RankedTensorType::get({ShapedType::kDynamic, h, 1}, b.getF32Type());
}
RankedTensorType FunctionBuilder::ids() {
  return RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
}
GraphType FunctionBuilder::graph(GraphStructure structure) {
  return GraphType::get(b.getContext(), structure);
}

Value FunctionBuilder::input(llvm::StringRef name, Type type) {
  args.push_back({name.str()});
  return entry->addArgument(type, b.getLoc());
}

Value FunctionBuilder::updatedInput(llvm::StringRef name, Type type) {
  Value v = input(name, type);
  args.back().writable = true;
  return v;
}

Value FunctionBuilder::weight(const std::string &name,
                              llvm::ArrayRef<int64_t> shape) {
  auto it = weights.find(name);
  if (it != weights.end())
    return it->second;
  Value w = input(name, RankedTensorType::get(shape, b.getF32Type()));
  weights[name] = w;
  return w;
}

Value FunctionBuilder::constant(double v) {
  return b.create<arith::ConstantOp>(b.getF32FloatAttr(float(v)));
}

Value FunctionBuilder::index(int64_t v) {
  return b.create<arith::ConstantIndexOp>(v);
}

Value FunctionBuilder::linear(Value in, const std::string &prefix,
                              int64_t inWidth, int64_t outWidth) {
  Value w = weight(prefix + ".weight", {outWidth, inWidth});
  Value bias;
  if (hasWeight(prefix + ".bias"))
    bias = weight(prefix + ".bias", {outWidth});
  return b.create<LinearOp>(rows(outWidth), in, w, bias,
                            /*transpose_weight=*/false, /*addend=*/Value());
}

Value FunctionBuilder::layerNorm(Value in, const std::string &prefix) {
  Value w = weight(prefix + ".weight", {d});
  Value bias = weight(prefix + ".bias", {d});
  return b.create<LayerNormOp>(x(), in, w, bias, b.getF64FloatAttr(1.0e-05));
}

Value FunctionBuilder::logSoftmax(Value in) {
  return b.create<LogSoftmaxOp>(in.getType(), in);
}

/// Fills `region` with one block whose arguments are the element types of
/// `in` and yields what `body` builds from them.
static void buildElementBody(ImplicitLocOpBuilder &b, Region &region,
                             TypeRange in,
                             llvm::function_ref<Value(ValueRange)> body) {
  OpBuilder::InsertionGuard guard(b);
  SmallVector<Type> elements;
  for (Type t : in)
    elements.push_back(getElementTypeOrSelf(t));
  SmallVector<Location> locs(elements.size(), b.getLoc());
  Block *block = b.createBlock(&region, {}, elements, locs);
  Value result = body(block->getArguments());
  b.create<YieldOp>(ValueRange{result});
}

Value FunctionBuilder::apply(ValueRange in, Type resultType,
                             llvm::function_ref<Value(ValueRange)> body) {
  auto op = b.create<ApplyNodesOp>(TypeRange{resultType}, in);
  buildElementBody(b, op.getBody(), in.getTypes(), body);
  return op.getResult(0);
}

Value FunctionBuilder::gather(Value source, Value list, Type resultType) {
  return b.create<GatherRowsOp>(resultType ? resultType : source.getType(),
                                source, list);
}

Value FunctionBuilder::scatter(Value source, Value dest, Value list) {
  return b.create<ScatterRowsOp>(dest.getType(), source, dest, list);
}

Value FunctionBuilder::filterNodes(ValueRange in, Value candidates,
                                   llvm::function_ref<Value(ValueRange)> keep) {
  auto op = b.create<FilterNodesOp>(ids(), in, candidates);
  buildElementBody(b, op.getBody(), in.getTypes(), keep);
  return op;
}

Value FunctionBuilder::inSubgraph(Value g, Value nodes, Value *eids) {
  auto op = b.create<InSubgraphOp>(graph(), ids(), g, nodes);
  if (eids)
    *eids = op.getEids();
  return op.getResult();
}

Value FunctionBuilder::residual(Value a, Value r) {
  return apply({a, r}, x(), [&](ValueRange e) -> Value {
    return b.create<arith::AddFOp>(e[0], e[1]);
  });
}

Value FunctionBuilder::feedForward(Value in, const std::string &prefix) {
  Value hidden = linear(in, prefix + ".w_1", d, c.dFF);
  Value relu = apply({hidden}, rows(c.dFF), [&](ValueRange e) -> Value {
    return b.create<arith::MaximumFOp>(e[0], constant(0.0));
  });
  return linear(dropout(relu), prefix + ".w_2", c.dFF, d);
}

// Counter offsets: each dropout of a function owns 2^40 of them (more
// elements than any tensor has), each layer call 2^44 (16 dropouts).
static constexpr int64_t kSiteOffsets = int64_t(1) << 40;
static constexpr int64_t kLayerOffsets = int64_t(1) << 44;

void FunctionBuilder::enableDropout(double rate) {
  rng = input("rng", RankedTensorType::get({2}, b.getI64Type()));
  dropoutRate = rate;
}

/// rng[0] and rng[1] + `shift`.
static std::pair<Value, Value> seedAndOffset(ImplicitLocOpBuilder &b, Value rng,
                                             int64_t shift) {
  Value seed = b.create<tensor::ExtractOp>(
      rng, ValueRange{b.create<arith::ConstantIndexOp>(0)});
  Value offset = b.create<tensor::ExtractOp>(
      rng, ValueRange{b.create<arith::ConstantIndexOp>(1)});
  offset = b.create<arith::AddIOp>(
      offset, b.create<arith::ConstantOp>(b.getI64IntegerAttr(shift)));
  return {seed, offset};
}

Value FunctionBuilder::dropout(Value in) {
  if (!rng || dropoutRate == 0)
    return in;
  auto [seed, offset] = seedAndOffset(b, rng, dropoutSites++ * kSiteOffsets);
  if (dropoutStep) {
    // Step t's ranges follow the function's own: (t + 1) * kLayerOffsets.
    Value t = b.create<arith::IndexCastOp>(b.getI64Type(), dropoutStep);
    Value one = b.create<arith::ConstantOp>(b.getI64IntegerAttr(1));
    Value stride =
        b.create<arith::ConstantOp>(b.getI64IntegerAttr(kLayerOffsets));
    offset = b.create<arith::AddIOp>(
        offset,
        b.create<arith::MulIOp>(b.create<arith::AddIOp>(t, one), stride));
  }
  return b.create<DropoutOp>(in.getType(), in, seed, offset,
                             b.getF64FloatAttr(dropoutRate));
}

Value FunctionBuilder::embedTokens(const std::string &lutName, int64_t vocab,
                                   Value tokens) {
  Value lut = weight(lutName, {vocab, d});
  Value e = gather(lut, tokens, x());
  return apply({e}, x(), [&](ValueRange a) -> Value {
    Value scale = constant(std::sqrt(double(d)));
    return b.create<arith::MulFOp>(a[0], scale);
  });
}

Value FunctionBuilder::embed(const std::string &lutName, int64_t vocab,
                             Value tokens, Value positions, Value pe) {
  Value lut = weight(lutName, {vocab, d});
  Value e = gather(lut, tokens, x());
  Value p = gather(pe, positions);
  return apply({e, p}, x(), [&](ValueRange a) -> Value {
    Value scale = constant(std::sqrt(double(d)));
    return b.create<arith::AddFOp>(b.create<arith::MulFOp>(a[0], scale), a[1]);
  });
}

Value FunctionBuilder::numRows(Value in) {
  return b.create<tensor::DimOp>(in, zero);
}

Value FunctionBuilder::splitHeads(Value in) {
  Value n = numRows(in);
  SmallVector<OpFoldResult> shape = {n, b.getIndexAttr(h), b.getIndexAttr(dk)};
  return b.create<tensor::ExpandShapeOp>(
      heads(), in, SmallVector<ReassociationIndices>{{0}, {1, 2}}, shape);
}

Value FunctionBuilder::mergeHeads(Value in) {
  return b.create<tensor::CollapseShapeOp>(
      x(), in, SmallVector<ReassociationIndices>{{0}, {1, 2}});
}

Value FunctionBuilder::attention(Value g, Value q, Value k, Value v,
                                 Value *weights) {
  MLIRContext *ctx = b.getContext();
  double scale = 1.0 / std::sqrt(double(dk));
  auto dot = MessageFnAttr::parseName(ctx, "u_dot_v");
  Value e;
  if (c.scoreClamp) {
    ArrayAttr post = b.getArrayAttr(
        {UnaryFnAttr::get(ctx, UnaryKind::Scale, scale),
         UnaryFnAttr::get(ctx, UnaryKind::Clamp, -*c.scoreClamp, *c.scoreClamp),
         UnaryFnAttr::get(ctx, UnaryKind::Exp)});
    e = b.create<ApplyEdgesOp>(heads1(), g, dot, ValueRange{k, q}, post);
  } else {
    // Exact softmax: subtract the destination's maximum score.
    Value s = b.create<ApplyEdgesOp>(
        heads1(), g, dot, ValueRange{k, q},
        b.getArrayAttr({UnaryFnAttr::get(ctx, UnaryKind::Scale, scale)}));
    Value m = b.create<ReduceOp>(heads1(), g, s, Value(), ReduceKind::Max);
    ArrayAttr roles = b.getArrayAttr({TargetAttr::get(ctx, Target::Edge),
                                      TargetAttr::get(ctx, Target::Dst)});
    auto op = b.create<ApplyEdgesOp>(heads1(), g, ValueRange{s, m}, Value(),
                                     MessageFnAttr(), roles, ArrayAttr());
    buildElementBody(b, op.getBody(), TypeRange{heads1(), heads1()},
                     [&](ValueRange a) -> Value {
                       return b.create<math::ExpOp>(
                           b.create<arith::SubFOp>(a[0], a[1]));
                     });
    e = op;
  }
  ArrayAttr messages =
      b.getArrayAttr({MessageFnAttr::parseName(ctx, "u_mul_e"),
                      MessageFnAttr::parseName(ctx, "copy_e")});
  Attribute sum = ReduceKindAttr::get(ctx, ReduceKind::Sum);
  auto received = b.create<SendAndRecvOp>(TypeRange{heads(), heads1()}, g,
                                          ValueRange{v, e, e}, Value(),
                                          messages, b.getArrayAttr({sum, sum}));
  if (weights) {
    // Each edge's share of its destination's sum, e / z, from a sum of its
    // own: the layer's z keeps its one use (the division), so
    // gnn-fuse-attention fuses the layer exactly as without weights and the
    // model computes the same values; only the weights are unfused.
    Value z = b.create<ReduceOp>(heads1(), g, e, Value(), ReduceKind::Sum);
    ArrayAttr roles = b.getArrayAttr({TargetAttr::get(ctx, Target::Edge),
                                      TargetAttr::get(ctx, Target::Dst)});
    auto share = b.create<ApplyEdgesOp>(heads1(), g, ValueRange{e, z}, Value(),
                                        MessageFnAttr(), roles, ArrayAttr());
    buildElementBody(b, share.getBody(), TypeRange{heads1(), heads1()},
                     [&](ValueRange a) -> Value {
                       return b.create<arith::DivFOp>(a[0], a[1]);
                     });
    *weights = share;
  }
  return apply(received.getResults(), heads(), [&](ValueRange a) -> Value {
    return b.create<arith::DivFOp>(a[0], a[1]);
  });
}

void FunctionBuilder::finish(
    llvm::ArrayRef<std::pair<Value, std::string>> results) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Value> values;
  SmallVector<Type> types;
  for (const auto &r : results) {
    values.push_back(r.first);
    types.push_back(r.first.getType());
  }
  b.create<func::ReturnOp>(values);
  fn.setFunctionType(FunctionType::get(ctx, entry->getArgumentTypes(), types));
  auto name = StringAttr::get(ctx, GNNDialect::kNameAttrName);
  for (auto [i, a] : llvm::enumerate(args)) {
    if (a.writable)
      fn.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                    b.getBoolAttr(true));
    fn.setArgAttr(i, name, b.getStringAttr(a.name));
  }
  // A result named like a writable input is its update, left in the
  // caller's buffer (gnn-return-updated-arguments).
  for (auto [i, r] : llvm::enumerate(results)) {
    bool update = llvm::any_of(
        args, [&](const Arg &a) { return a.writable && a.name == r.second; });
    if (update)
      fn.setResultAttr(i, GNNDialect::kUpdatesAttrName,
                       b.getStringAttr(r.second));
    fn.setResultAttr(i, name, b.getStringAttr(r.second));
  }
}

SmallVector<Value>
FunctionBuilder::callLayer(llvm::StringRef name, llvm::StringRef prefix,
                           const Named &inputs, LayerBody body,
                           llvm::ArrayRef<std::string> updated) {
  auto callerName = [&](llvm::StringRef n) {
    if (n.consume_front(kLayerPrefix) && (n.empty() || n.front() == '.'))
      return (prefix + n).str();
    return n.str();
  };
  auto layerHasWeight = [&](llvm::StringRef n) {
    return hasWeight(callerName(n));
  };
  // A name no function has yet; kept if the layer is new.
  std::string unique = name.str();
  for (int i = 1; module.lookupSymbol(unique); ++i)
    unique = name.str() + "_" + std::to_string(i);
  FunctionBuilder layer(module, unique, c, layerHasWeight);
  SmallVector<Value> in;
  for (const auto &[value, inputName] : inputs)
    in.push_back(llvm::is_contained(updated, inputName)
                     ? layer.updatedInput(inputName, value.getType())
                     : layer.input(inputName, value.getType()));
  Value layerRng;
  if (rng) {
    layer.enableDropout(dropoutRate);
    in.push_back(layer.rng);
    // The layer's range of offsets, after this function's own dropouts'.
    auto [seed, offset] = seedAndOffset(b, rng, ++layerCalls * kLayerOffsets);
    layerRng = b.create<tensor::FromElementsOp>(ValueRange{seed, offset});
  }
  layer.finish(body(layer, in));
  layer.fn.setPrivate();
  // LLVM must not copy the layer back into each caller.
  layer.fn->setAttr("no_inline", b.getUnitAttr());

  func::FuncOp callee = layer.fn;
  for (auto existing : module.getOps<func::FuncOp>())
    if (existing != layer.fn && existing.isPrivate() &&
        areEquivalentFunctions(existing, layer.fn)) {
      callee = existing;
      break;
    }
  SmallVector<Value> operands;
  for (const auto &[value, inputName] : inputs)
    operands.push_back(value);
  if (layerRng)
    operands.push_back(layerRng);
  for (size_t i = operands.size(); i < layer.args.size(); ++i) {
    auto type = cast<RankedTensorType>(layer.fn.getArgumentTypes()[i]);
    operands.push_back(weight(callerName(layer.args[i].name), type.getShape()));
  }
  if (callee != layer.fn)
    layer.fn.erase();
  return b.create<func::CallOp>(callee, operands).getResults();
}

OwningOpRef<ModuleOp>
mlir::gnn::models::buildModule(MLIRContext &context,
                               llvm::function_ref<void(ModuleOp)> build) {
  context.loadDialect<GNNDialect, arith::ArithDialect, func::FuncDialect,
                      math::MathDialect, tensor::TensorDialect,
                      bufferization::BufferizationDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
  build(*module);
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp> mlir::gnn::models::buildModule(
    MLIRContext &context, const ModelConfig &config,
    const BuildOptions &options,
    llvm::function_ref<bool(llvm::StringRef)> hasWeight,
    std::initializer_list<FunctionBuild> functions) {
  return buildModule(context, [&](ModuleOp module) {
    for (FunctionBuild function : functions)
      function(module, config, options, hasWeight);
  });
}
