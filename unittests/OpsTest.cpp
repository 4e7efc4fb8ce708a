//===- OpsTest.cpp - building, verifying and rewriting gnn ops ------------===//
//
// Part of gnnc. Ops built through the C++ API (as passes build them) must
// verify exactly when their invariants hold.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "gtest/gtest.h"

#include <set>

using namespace mlir;
using namespace mlir::gnn;

namespace {
class GNNOpsTest : public ::testing::Test {
protected:
  GNNOpsTest() : builder(&context) {
    context.loadDialect<GNNDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    handler = std::make_unique<ScopedDiagnosticHandler>(
        &context, [this](Diagnostic &diag) {
          diagnostics.push_back(diag.str());
          return success();
        });
  }

  /// A function with the given argument types; returns its entry block args.
  ValueRange makeFunction(ArrayRef<Type> args) {
    builder.setInsertionPointToEnd(module->getBody());
    auto fn = builder.create<func::FuncOp>(builder.getUnknownLoc(), "f",
                                           builder.getFunctionType(args, {}));
    Block *entry = fn.addEntryBlock();
    builder.setInsertionPointToStart(entry);
    builder.create<func::ReturnOp>(builder.getUnknownLoc());
    builder.setInsertionPointToStart(entry);
    return entry->getArguments();
  }

  RankedTensorType feature(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  std::vector<std::string> diagnostics;
  const int64_t dyn = ShapedType::kDynamic;
};

TEST_F(GNNOpsTest, BuiltinApplyEdgesVerifies) {
  auto graph = GraphType::get(&context, GraphStructure::Complete);
  ValueRange args =
      makeFunction({graph, feature({dyn, 8, 64}), feature({dyn, 8, 64})});
  auto op = builder.create<ApplyEdgesOp>(
      builder.getUnknownLoc(), feature({dyn, 8, 1}), args[0],
      MessageFnAttr::parseName(&context, "u_dot_v"),
      ValueRange{args[1], args[2]}, ArrayAttr());
  EXPECT_TRUE(succeeded(verify(*module)));
  EXPECT_EQ(op.getInputTarget(0), Target::Src);
  EXPECT_EQ(op.getInputTarget(1), Target::Dst);
  EXPECT_FALSE(op.hasBody());
}

TEST_F(GNNOpsTest, DotResultShapeIsChecked) {
  auto graph = GraphType::get(&context, GraphStructure::Complete);
  ValueRange args =
      makeFunction({graph, feature({dyn, 8, 64}), feature({dyn, 8, 64})});
  builder.create<ApplyEdgesOp>(builder.getUnknownLoc(), feature({dyn, 8, 64}),
                               args[0],
                               MessageFnAttr::parseName(&context, "u_dot_v"),
                               ValueRange{args[1], args[2]}, ArrayAttr());
  EXPECT_TRUE(failed(verify(*module)));
  ASSERT_FALSE(diagnostics.empty());
  EXPECT_NE(diagnostics.front().find("per-row shape [8, 64]"),
            std::string::npos)
      << diagnostics.front();
}

TEST_F(GNNOpsTest, StaticRowsMustMatchTheGraph) {
  auto graph = GraphType::get(&context, GraphStructure::General, 3, 5, 7);
  ValueRange args = makeFunction({graph, feature({4, 2}), feature({7, 2})});
  builder.create<ApplyEdgesOp>(builder.getUnknownLoc(), feature({7, 2}),
                               args[0],
                               MessageFnAttr::parseName(&context, "u_add_e"),
                               ValueRange{args[1], args[2]}, ArrayAttr());
  EXPECT_TRUE(failed(verify(*module)));
  ASSERT_FALSE(diagnostics.empty());
  EXPECT_NE(diagnostics.front().find("has 4 rows, but the graph has 3"),
            std::string::npos)
      << diagnostics.front();
}

TEST_F(GNNOpsTest, CanonicalizationMergesScaledExp) {
  auto graph = GraphType::get(&context, GraphStructure::Causal);
  ValueRange args =
      makeFunction({graph, feature({dyn, 2, 16}), feature({dyn, 2, 16})});
  Location loc = builder.getUnknownLoc();
  auto score = builder.create<ApplyEdgesOp>(
      loc, feature({dyn, 2, 1}), args[0],
      MessageFnAttr::parseName(&context, "u_dot_v"),
      ValueRange{args[1], args[2]}, ArrayAttr());
  auto chain =
      builder.getArrayAttr({UnaryFnAttr::get(&context, UnaryKind::Scale, 0.5),
                            UnaryFnAttr::get(&context, UnaryKind::Scale, 0.5),
                            UnaryFnAttr::get(&context, UnaryKind::Exp)});
  auto exp =
      builder.create<ApplyEdgesOp>(loc, feature({dyn, 2, 1}), args[0],
                                   MessageFnAttr::parseName(&context, "copy_e"),
                                   ValueRange{score.getResult()}, chain);
  // Keep the result alive so that the rewrite has a user to update.
  auto sum =
      builder.create<ReduceOp>(loc, feature({dyn, 2, 1}), args[0],
                               exp.getResult(), Value(), ReduceKind::Sum);
  ASSERT_TRUE(succeeded(verify(*module)));

  RewritePatternSet patterns(&context);
  ApplyEdgesOp::getCanonicalizationPatterns(patterns, &context);
  // Only the apply_edges ops: the unused reduce must stay for the check.
  GreedyRewriteConfig config;
  config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
  (void)applyOpPatternsAndFold({score.getOperation(), exp.getOperation()},
                               std::move(patterns), config);
  ASSERT_TRUE(succeeded(verify(*module)));
  auto merged = sum.getInput().getDefiningOp<ApplyEdgesOp>();
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged.getFnAttr().getName(), "u_dot_v");
  ASSERT_TRUE(merged.getPost());
  ASSERT_EQ(merged.getPost()->size(), 2u);
  auto scale = cast<UnaryFnAttr>((*merged.getPost())[0]);
  EXPECT_EQ(scale.getKind(), UnaryKind::Scale);
  EXPECT_DOUBLE_EQ(scale.getA().convertToDouble(), 0.25);
}
} // namespace

/// Every gnn op that reads float features along a graph declares what their
/// rows are indexed by (GraphFeatureOpInterface), for every such operand:
/// the runner checks arguments through it, so an op that skipped it would
/// leave its inputs unchecked before a call. ops.mlir shows every op (a new
/// op fails here until it is added there).
TEST(GraphFeatureOpInterfaceTest, EveryGraphOpDeclaresItsFeatureRows) {
  MLIRContext context;
  context.loadDialect<GNNDialect, func::FuncDialect, arith::ArithDialect>();
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(
      GNN_SOURCE_DIR "/test/Dialect/GNN/ops.mlir", config);
  ASSERT_TRUE(module);
  std::set<std::string> seen;
  module->walk([&](Operation *op) {
    if (!isa<GNNDialect>(op->getDialect()))
      return;
    seen.insert(op->getName().getStringRef().str());
    bool onGraph =
        llvm::any_of(op->getOperandTypes(), llvm::IsaPred<GraphType>);
    SmallVector<Value> features;
    for (Value v : op->getOperands())
      if (auto t = dyn_cast<RankedTensorType>(v.getType());
          t && isa<FloatType>(t.getElementType()))
        features.push_back(v);
    if (!onGraph || features.empty())
      return;
    auto iface = dyn_cast<GraphFeatureOpInterface>(op);
    ASSERT_TRUE(iface) << op->getName().getStringRef().str()
                       << " reads features along a graph but does not "
                          "implement GraphFeatureOpInterface";
    SmallVector<FeatureRows> rows;
    iface.getRowRequirements(rows);
    for (Value f : features)
      EXPECT_TRUE(llvm::any_of(
          rows, [&](const FeatureRows &r) { return r.feature == f; }))
          << op->getName().getStringRef().str()
          << " leaves a feature operand without its rows";
    EXPECT_EQ(iface.getFeatureGraph(), op->getOperand(0));
  });
  for (RegisteredOperationName name : context.getRegisteredOperations())
    if (name.getDialectNamespace() == GNNDialect::getDialectNamespace()) {
      EXPECT_TRUE(seen.count(name.getStringRef().str()))
          << name.getStringRef().str() << " is missing from ops.mlir";
    }
}
