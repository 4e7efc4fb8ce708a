//===- ModelBuilderTest.cpp - model modules built with OpBuilder ----------===//
//
// Part of gnnc. The builders make verified modules with the contract's
// signatures for both architectures and their options (biases present or
// not, clamped or exact softmax, cross-attention modes), and a builder
// mistake is a verifier diagnostic, not a module.
//
//===----------------------------------------------------------------------===//

#include "../lib/GNN/Models/Builders/FunctionBuilder.h"
#include "GNN/InitAll.h"
#include "GNN/Models/TransformerBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::gnn;

namespace {
ModelConfig smallConfig(Architecture architecture) {
  ModelConfig c;
  c.architecture = architecture;
  c.layers = 2;
  c.dModel = 8;
  c.heads = 2;
  c.dFF = 16;
  c.srcVocab = 7;
  c.tgtVocab = 9;
  c.maxDepth = 3;
  return c;
}

/// The gnn.name of each argument (or result) of `fn`.
std::vector<std::string> names(func::FuncOp fn, bool results) {
  std::vector<std::string> out;
  unsigned n = results ? fn.getNumResults() : fn.getNumArguments();
  for (unsigned i = 0; i < n; ++i) {
    auto name =
        results
            ? fn.getResultAttrOfType<StringAttr>(i, GNNDialect::kNameAttrName)
            : fn.getArgAttrOfType<StringAttr>(i, GNNDialect::kNameAttrName);
    out.push_back(name ? name.str() : "<none>");
  }
  return out;
}

class ModelBuilderTest : public ::testing::Test {
protected:
  ModelBuilderTest() {
    DialectRegistry registry;
    gnn::registerAllDialectsAndExtensions(registry);
    context.appendDialectRegistry(registry);
  }
  MLIRContext context;
};
} // namespace

TEST_F(ModelBuilderTest, TransformerVariantsVerify) {
  for (bool biases : {true, false})
    for (std::optional<double> clamp :
         {std::optional<double>(5.0), std::optional<double>()})
      for (CrossAttention cross : {CrossAttention::DGL, CrossAttention::Shared,
                                   CrossAttention::Standard}) {
        ModelConfig c = smallConfig(Architecture::Transformer);
        c.scoreClamp = clamp;
        c.crossAttention = cross;
        OwningOpRef<ModuleOp> module =
            buildModelModule(context, c, [&](llvm::StringRef name) {
              return biases || !name.ends_with(".bias") ||
                     name.contains("norm");
            });
        ASSERT_TRUE(module);
        EXPECT_TRUE(succeeded(verify(*module)));
        auto decode = module->lookupSymbol<func::FuncOp>(model::kDecode);
        ASSERT_TRUE(decode);
        std::vector<std::string> results = names(decode, /*results=*/true);
        EXPECT_EQ(results,
                  (std::vector<std::string>{"log_probs", "self_k.0", "self_v.0",
                                            "self_k.1", "self_v.1"}));
        // The caches are updated in place.
        EXPECT_EQ(decode.getResultAttrOfType<StringAttr>(
                      1, GNNDialect::kUpdatesAttrName),
                  StringAttr::get(&context, "self_k.0"));
        std::vector<std::string> args = names(decode, /*results=*/false);
        EXPECT_EQ(std::count(args.begin(), args.end(),
                             "decoder.layers.0.self_attn.linears.0.bias"),
                  biases ? 1 : 0);
        // Exact softmax reduces the scores' maximum; a clamp does not.
        bool hasMax = false;
        module->walk(
            [&](ReduceOp op) { hasMax |= op.getKind() == ReduceKind::Max; });
        EXPECT_EQ(hasMax, !clamp.has_value());
      }
}

TEST_F(ModelBuilderTest, UniversalTransformerVerifies) {
  ModelConfig c = smallConfig(Architecture::UniversalTransformer);
  OwningOpRef<ModuleOp> module =
      buildModelModule(context, c, [](llvm::StringRef) { return true; });
  ASSERT_TRUE(module);
  auto encode = module->lookupSymbol<func::FuncOp>(model::kEncode);
  ASSERT_TRUE(encode);
  EXPECT_EQ(names(encode, /*results=*/true),
            (std::vector<std::string>{"memory", "enc_steps"}));
  auto decode = module->lookupSymbol<func::FuncOp>(model::kDecode);
  ASSERT_TRUE(decode);
  EXPECT_EQ(names(decode, /*results=*/true),
            (std::vector<std::string>{"log_probs", "dec_steps", "self_k.0",
                                      "self_v.0"}));
  // The cache holds every ACT step of a node in one row.
  auto cache = cast<RankedTensorType>(decode.getResultTypes()[2]);
  EXPECT_EQ(cache.getShape()[1], c.maxDepth);
}

TEST_F(ModelBuilderTest, InvalidIRIsADiagnosticNotAModule) {
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return success();
  });
  ModelConfig c = smallConfig(Architecture::Transformer);
  // A linear layer whose declared input width disagrees with its input.
  OwningOpRef<ModuleOp> module = models::buildModule(
      context, c, [](llvm::StringRef) { return true; },
      {[](ModuleOp m, const ModelConfig &c,
          llvm::function_ref<bool(llvm::StringRef)> has) {
        models::FunctionBuilder f(m, "broken", c, has);
        Value x = f.input("x", f.rows(c.dModel));
        f.finish({{f.linear(x, "layer", c.dModel + 1, 4), "y"}});
      }});
  EXPECT_FALSE(module);
  EXPECT_NE(diagnostics.find("gnn.linear"), std::string::npos) << diagnostics;
}
