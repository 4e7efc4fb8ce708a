//===- GraphParts.cpp - decompose gnn graphs into their parts -------------===//
//
// Part of gnnc. A 1:N type conversion of `!gnn.graph` into the arrays of the
// runtime's gnn_graph, through the ops that carry values without looking at
// them: functions, calls, returns, loops, branches and selects. gnn ops keep
// their graph operands (casts of the parts) until their own lowering.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/GraphParts.h"
#include "GNN/Conversion/Passes.h"
#include "GNN/IR/GNNOps.h"

#include "mlir/Dialect/Func/Transforms/OneToNFuncConversions.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNDECOMPOSEGRAPHSPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

static_assert(GNN_GRAPH_PART_NUM_SRC == 0 && GNN_GRAPH_NUM_PARTS == 6,
              "getGraphPartTypes follows gnn_graph_part");

SmallVector<Type> mlir::gnn::getGraphPartTypes(MLIRContext *context) {
  auto ids =
      RankedTensorType::get({ShapedType::kDynamic}, IndexType::get(context));
  SmallVector<Type> parts(GNN_GRAPH_NUM_PARTS, ids);
  parts[GNN_GRAPH_PART_NUM_SRC] = IndexType::get(context);
  return parts;
}

static std::optional<Value> castToGraph(OpBuilder &b, Type graph,
                                        ValueRange parts, Location loc) {
  if (!isa<GraphType>(graph) || parts.size() != GNN_GRAPH_NUM_PARTS)
    return std::nullopt;
  return b.create<UnrealizedConversionCastOp>(loc, graph, parts).getResult(0);
}

GraphTypeConverter::GraphTypeConverter() {
  addConversion([](Type t) { return t; });
  addConversion(
      [](GraphType t,
         SmallVectorImpl<Type> &parts) -> std::optional<LogicalResult> {
        llvm::append_range(parts, getGraphPartTypes(t.getContext()));
        return success();
      });
  addArgumentMaterialization(castToGraph);
  addSourceMaterialization(castToGraph);
  addTargetMaterialization([](OpBuilder &b, TypeRange parts, Value graph,
                              Location loc)
                               -> std::optional<SmallVector<Value>> {
    if (!isa<GraphType>(graph.getType()) || parts.size() != GNN_GRAPH_NUM_PARTS)
      return std::nullopt;
    return SmallVector<Value>(
        b.create<UnrealizedConversionCastOp>(loc, parts, graph).getResults());
  });
}

FailureOr<SmallVector<Value>> mlir::gnn::getGraphParts(Value graph) {
  auto cast = graph.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || cast.getNumResults() != 1 ||
      cast.getNumOperands() != GNN_GRAPH_NUM_PARTS)
    return failure();
  return SmallVector<Value>(cast.getOperands());
}

void mlir::gnn::foldGraphCasts(ModuleOp module) {
  module.walk([](UnrealizedConversionCastOp cast) {
    if (cast.getNumOperands() != 1 ||
        !isa<GraphType>(cast.getOperand(0).getType()))
      return;
    FailureOr<SmallVector<Value>> parts = getGraphParts(cast.getOperand(0));
    if (failed(parts) || TypeRange(ValueRange(*parts)) != cast.getResultTypes())
      return;
    cast.replaceAllUsesWith(*parts);
    cast.erase();
  });
  // Uses first: a graph cast may feed only another (dead) graph cast.
  SmallVector<UnrealizedConversionCastOp> casts;
  module.walk([&](UnrealizedConversionCastOp cast) { casts.push_back(cast); });
  for (UnrealizedConversionCastOp cast : llvm::reverse(casts))
    if (cast.use_empty() &&
        llvm::any_of(cast->getResultTypes(), llvm::IsaPred<GraphType>))
      cast.erase();
}

namespace {
/// Keeps one entry per part: a graph's attributes go to each of its parts.
ArrayAttr expandAttrs(ArrayAttr attrs, const OneToNTypeMapping &mapping) {
  if (!attrs)
    return attrs;
  SmallVector<Attribute> expanded;
  for (auto [i, attr] : llvm::enumerate(attrs))
    expanded.append(mapping.getConvertedTypes(i).size(), attr);
  return ArrayAttr::get(attrs.getContext(), expanded);
}

/// Function signatures (arguments and results) and entry block arguments.
struct ConvertFuncSignature : OneToNOpConversionPattern<func::FuncOp> {
  using OneToNOpConversionPattern::OneToNOpConversionPattern;

  LogicalResult
  matchAndRewrite(func::FuncOp fn, OpAdaptor,
                  OneToNPatternRewriter &rewriter) const override {
    auto *converter = getTypeConverter<OneToNTypeConverter>();
    FunctionType type = fn.getFunctionType();
    OneToNTypeMapping inputs(type.getInputs()), results(type.getResults());
    if (failed(converter->computeTypeMapping(type.getInputs(), inputs)) ||
        failed(converter->computeTypeMapping(type.getResults(), results)))
      return failure();
    if (!inputs.hasNonIdentityConversion() &&
        !results.hasNonIdentityConversion())
      return failure();
    ArrayAttr argAttrs = expandAttrs(fn.getArgAttrsAttr(), inputs);
    ArrayAttr resultAttrs = expandAttrs(fn.getResAttrsAttr(), results);
    rewriter.modifyOpInPlace(fn, [&] {
      fn.setFunctionTypeAttr(TypeAttr::get(
          FunctionType::get(fn.getContext(), inputs.getConvertedTypes(),
                            results.getConvertedTypes())));
      if (argAttrs)
        fn.setArgAttrsAttr(argAttrs);
      if (resultAttrs)
        fn.setResAttrsAttr(resultAttrs);
    });
    if (!fn.isExternal())
      rewriter.applySignatureConversion(&fn.getBody().front(), inputs);
    return success();
  }
};

/// Loop-carried graphs (the 1:N SCF patterns of MLIR 19 cover while, if,
/// yield and condition, not for).
struct ConvertForLoop : OneToNOpConversionPattern<scf::ForOp> {
  using OneToNOpConversionPattern::OneToNOpConversionPattern;

  LogicalResult
  matchAndRewrite(scf::ForOp loop, OpAdaptor adaptor,
                  OneToNPatternRewriter &rewriter) const override {
    const OneToNTypeMapping &results = adaptor.getResultMapping();
    if (!results.hasNonIdentityConversion())
      return failure();
    SmallVector<Value> init;
    for (ValueRange parts : adaptor.getInitArgs())
      llvm::append_range(init, parts);
    auto newLoop =
        rewriter.create<scf::ForOp>(loop.getLoc(), loop.getLowerBound(),
                                    loop.getUpperBound(), loop.getStep(), init);
    newLoop->setAttrs(loop->getAttrs());
    rewriter.eraseBlock(newLoop.getBody());

    Block *body = loop.getBody();
    OneToNTypeMapping arguments(body->getArgumentTypes());
    if (failed(getTypeConverter<OneToNTypeConverter>()->computeTypeMapping(
            body->getArgumentTypes(), arguments)))
      return failure();
    rewriter.applySignatureConversion(body, arguments);
    rewriter.inlineRegionBefore(loop.getRegion(), newLoop.getRegion(),
                                newLoop.getRegion().end());
    rewriter.replaceOp(loop, newLoop.getResults(), results);
    return success();
  }
};

/// A select between graphs selects between each of their parts.
struct ConvertSelect : OneToNOpConversionPattern<arith::SelectOp> {
  using OneToNOpConversionPattern::OneToNOpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::SelectOp select, OpAdaptor adaptor,
                  OneToNPatternRewriter &rewriter) const override {
    const OneToNTypeMapping &results = adaptor.getResultMapping();
    if (!results.hasNonIdentityConversion())
      return failure();
    ValueRange whenTrue = adaptor.getTrueValue();
    ValueRange whenFalse = adaptor.getFalseValue();
    Value condition = adaptor.getCondition().front();
    SmallVector<Value> parts;
    for (auto [t, f] : llvm::zip_equal(whenTrue, whenFalse))
      parts.push_back(
          rewriter.create<arith::SelectOp>(select.getLoc(), condition, t, f));
    rewriter.replaceOp(select, parts, results);
    return success();
  }
};
} // namespace

void mlir::gnn::populateGraphDecompositionPatterns(
    GraphTypeConverter &converter, RewritePatternSet &patterns) {
  // Ahead of the function-interface pattern in populateFuncTypeConversion-
  // Patterns, which drops the argument attributes of converted arguments.
  patterns.add<ConvertFuncSignature>(converter, patterns.getContext(),
                                     /*benefit=*/2);
  patterns.add<ConvertForLoop, ConvertSelect>(converter, patterns.getContext());
  populateFuncTypeConversionPatterns(converter, patterns);
  scf::populateSCFStructuralOneToNTypeConversions(converter, patterns);
}

LogicalResult mlir::gnn::decomposeGraphs(ModuleOp module) {
  GraphTypeConverter converter;
  RewritePatternSet patterns(module.getContext());
  populateGraphDecompositionPatterns(converter, patterns);
  if (failed(
          applyPartialOneToNConversion(module, converter, std::move(patterns))))
    return failure();
  foldGraphCasts(module);
  // A graph that still crosses a non-gnn op has no lowering.
  WalkResult result = module.walk([](Operation *op) {
    if (isa<UnrealizedConversionCastOp>(op) ||
        isa_and_nonnull<GNNDialect>(op->getDialect()))
      return WalkResult::advance();
    for (Type t : op->getOperandTypes())
      if (isa<GraphType>(t))
        return op->emitOpError("takes a !gnn.graph, which cannot be split "
                               "into its parts here"),
               WalkResult::interrupt();
    for (Type t : op->getResultTypes())
      if (isa<GraphType>(t))
        return op->emitOpError("yields a !gnn.graph, which cannot be split "
                               "into its parts here"),
               WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {
struct GNNDecomposeGraphsPass
    : public gnn::impl::GNNDecomposeGraphsPassBase<GNNDecomposeGraphsPass> {
  void runOnOperation() override {
    if (failed(decomposeGraphs(getOperation())))
      signalPassFailure();
  }
};
} // namespace
