//===- AttributesTest.cpp - gnn attributes and shape helpers --------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;

namespace {
class GNNAttrTest : public ::testing::Test {
protected:
  GNNAttrTest() { context.loadDialect<GNNDialect>(); }
  MLIRContext context;
};

TEST_F(GNNAttrTest, MessageFnNamesRoundTrip) {
  unsigned valid = 0;
  const char *targets[] = {"u", "v", "e"};
  const char *ops[] = {"add", "sub", "mul", "div", "dot"};
  for (const char *lhs : targets)
    for (const char *op : ops)
      for (const char *rhs : targets) {
        std::string name = std::string(lhs) + "_" + op + "_" + rhs;
        MessageFnAttr fn = MessageFnAttr::parseName(&context, name);
        if (std::string(lhs) == rhs) {
          EXPECT_FALSE(fn) << name;
          continue;
        }
        ASSERT_TRUE(fn) << name;
        EXPECT_EQ(fn.getName(), name);
        EXPECT_EQ(fn.getArity(), 2u);
        ++valid;
      }
  EXPECT_EQ(valid, 30u);
  for (const char *t : targets) {
    MessageFnAttr fn =
        MessageFnAttr::parseName(&context, std::string("copy_") + t);
    ASSERT_TRUE(fn);
    EXPECT_EQ(fn.getArity(), 1u);
    EXPECT_EQ(fn.getName(), std::string("copy_") + t);
  }
}

TEST_F(GNNAttrTest, MessageFnRejectsMalformedNames) {
  for (const char *name :
       {"", "copy", "copy_x", "u_dot", "u_copy_v", "u_dot_v_e", "x_add_v",
        "u_pow_v", "copy_u_v", "_dot_v", "u__v"})
    EXPECT_FALSE(MessageFnAttr::parseName(&context, name)) << name;
}

TEST_F(GNNAttrTest, MessageFnTargets) {
  MessageFnAttr fn = MessageFnAttr::parseName(&context, "e_div_v");
  EXPECT_EQ(fn.getOp(), BinaryOp::Div);
  EXPECT_EQ(fn.getTarget(0), Target::Edge);
  EXPECT_EQ(fn.getTarget(1), Target::Dst);
}

TEST_F(GNNAttrTest, UnaryFnApply) {
  auto scale = UnaryFnAttr::get(&context, UnaryKind::Scale, 0.125);
  auto clamp = UnaryFnAttr::get(&context, UnaryKind::Clamp, -5.0, 5.0);
  auto exp = UnaryFnAttr::get(&context, UnaryKind::Exp);
  auto relu = UnaryFnAttr::get(&context, UnaryKind::Relu);
  auto neg = UnaryFnAttr::get(&context, UnaryKind::Neg);
  EXPECT_DOUBLE_EQ(scale.apply(8.0), 1.0);
  EXPECT_DOUBLE_EQ(clamp.apply(-7.0), -5.0);
  EXPECT_DOUBLE_EQ(clamp.apply(7.0), 5.0);
  EXPECT_DOUBLE_EQ(clamp.apply(0.5), 0.5);
  EXPECT_DOUBLE_EQ(exp.apply(1.0), std::exp(1.0));
  EXPECT_DOUBLE_EQ(relu.apply(-2.0), 0.0);
  EXPECT_DOUBLE_EQ(relu.apply(2.0), 2.0);
  EXPECT_DOUBLE_EQ(neg.apply(2.0), -2.0);
  EXPECT_EQ(UnaryFnAttr::getNumConstants(UnaryKind::Clamp), 2u);
  EXPECT_EQ(UnaryFnAttr::getNumConstants(UnaryKind::Scale), 1u);
  EXPECT_EQ(UnaryFnAttr::getNumConstants(UnaryKind::Exp), 0u);
}

TEST(ShapeTest, BroadcastItemShapes) {
  const int64_t dyn = ShapedType::kDynamic;
  using Shape = SmallVector<int64_t>;
  EXPECT_EQ(*broadcastItemShapes({8, 64}, {8, 1}), (Shape{8, 64}));
  EXPECT_EQ(*broadcastItemShapes({8, 1}, {8, 64}), (Shape{8, 64}));
  EXPECT_EQ(*broadcastItemShapes({64}, {8, 1}), (Shape{8, 64}));
  EXPECT_EQ(*broadcastItemShapes({}, {3, 4}), (Shape{3, 4}));
  EXPECT_EQ(*broadcastItemShapes({dyn, 4}, {2, 1}), (Shape{2, 4}));
  EXPECT_EQ(*broadcastItemShapes({dyn}, {dyn}), (Shape{dyn}));
  EXPECT_TRUE(failed(broadcastItemShapes({8, 64}, {4, 64})));
  EXPECT_TRUE(failed(broadcastItemShapes({3}, {2})));
}

TEST_F(GNNAttrTest, GraphTypeRows) {
  auto graph = GraphType::get(&context, GraphStructure::Bipartite, 3, 4, 12);
  EXPECT_EQ(graph.getNumRows(Target::Src), 3);
  EXPECT_EQ(graph.getNumRows(Target::Dst), 4);
  EXPECT_EQ(graph.getNumRows(Target::Edge), 12);
  EXPECT_FALSE(graph.isHomogeneous());
  auto dynamic = GraphType::get(&context, GraphStructure::Causal);
  EXPECT_TRUE(dynamic.isHomogeneous());
  EXPECT_TRUE(ShapedType::isDynamic(dynamic.getNumEdges()));
}
} // namespace
