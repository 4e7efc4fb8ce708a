//===- OpsTest.cpp - building, verifying and rewriting gnn ops ------------===//
//
// Part of gnnc. Ops built through the C++ API (as passes build them) must
// verify exactly when their invariants hold.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "gtest/gtest.h"

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
