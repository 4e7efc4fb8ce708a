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
#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "gtest/gtest.h"

#include <map>

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

/// Calls of each function in `module`, by callee.
std::map<std::string, int> callCounts(ModuleOp module) {
  std::map<std::string, int> counts;
  module.walk([&](func::CallOp call) { ++counts[call.getCallee().str()]; });
  return counts;
}

TEST_F(ModelBuilderTest, LayersAreOneFunctionCalledPerLayer) {
  for (int64_t layers : {1, 2, 6}) {
    ModelConfig c = smallConfig(Architecture::Transformer);
    c.layers = layers;
    OwningOpRef<ModuleOp> module =
        buildModelModule(context, c, [](llvm::StringRef) { return true; });
    ASSERT_TRUE(module);
    std::vector<std::string> privates;
    for (auto fn : module->getOps<func::FuncOp>())
      if (fn.isPrivate()) {
        privates.push_back(fn.getSymName().str());
        EXPECT_TRUE(fn->hasAttr("no_inline")) << fn.getSymName().str();
      }
    // The same functions at every depth (the last decoder layer also
    // applies the final norm, as DGL's example does).
    std::vector<std::string> expected = {"encoder_layer", "cross_kv_layer",
                                         "decoder_self_qkv"};
    if (layers > 1)
      expected.push_back("decoder_layer");
    expected.push_back("decoder_last_layer");
    EXPECT_EQ(privates, expected) << layers << " layers";
    std::map<std::string, int> calls = callCounts(*module);
    EXPECT_EQ(calls["encoder_layer"], layers);
    EXPECT_EQ(calls["cross_kv_layer"], layers);
    EXPECT_EQ(calls["decoder_self_qkv"], layers);
    EXPECT_EQ(calls["decoder_layer"], layers - 1);
    EXPECT_EQ(calls["decoder_last_layer"], 1);
  }
}

TEST_F(ModelBuilderTest, LayersThatDifferGetTheirOwnFunction) {
  // Layer 1 of the encoder has no bias on its query projection.
  ModelConfig c = smallConfig(Architecture::Transformer);
  c.layers = 3;
  OwningOpRef<ModuleOp> module =
      buildModelModule(context, c, [](llvm::StringRef name) {
        return name != "encoder.layers.1.self_attn.linears.0.bias";
      });
  ASSERT_TRUE(module);
  std::map<std::string, int> calls = callCounts(*module);
  EXPECT_EQ(calls["encoder_layer"], 2);
  EXPECT_EQ(calls["encoder_layer_1"], 1);
  auto encode = module->lookupSymbol<func::FuncOp>(model::kEncode);
  std::vector<std::string> args = names(encode, /*results=*/false);
  EXPECT_EQ(std::count(args.begin(), args.end(),
                       "encoder.layers.1.self_attn.linears.0.bias"),
            0);
  EXPECT_EQ(std::count(args.begin(), args.end(),
                       "encoder.layers.2.self_attn.linears.0.bias"),
            1);
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
      context, c, BuildOptions(), [](llvm::StringRef) { return true; },
      {[](ModuleOp m, const ModelConfig &c, const BuildOptions &,
          llvm::function_ref<bool(llvm::StringRef)> has) {
        models::FunctionBuilder f(m, "broken", c, has);
        Value x = f.input("x", f.rows(c.dModel));
        f.finish({{f.linear(x, "layer", c.dModel + 1, 4), "y"}});
      }});
  EXPECT_FALSE(module);
  EXPECT_NE(diagnostics.find("gnn.linear"), std::string::npos) << diagnostics;
}

/// The gnn.fused_attention ops left in `module` after gnn-fuse-attention.
static int fusedAttentions(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(gnn::createFuseAttentionPass());
  if (failed(pm.run(module)))
    return -1;
  int count = 0;
  module.walk([&](FusedAttentionOp) { ++count; });
  return count;
}

TEST_F(ModelBuilderTest, AttentionWeightsVariantKeepsEveryLayerFused) {
  BuildOptions weights;
  weights.attentionWeights = true;
  auto all = [](llvm::StringRef) { return true; };
  for (std::optional<double> clamp :
       {std::optional<double>(5.0), std::optional<double>()}) {
    ModelConfig c = smallConfig(Architecture::Transformer);
    c.scoreClamp = clamp;
    OwningOpRef<ModuleOp> plain = buildModelModule(context, c, all);
    OwningOpRef<ModuleOp> module = buildModelModule(context, c, all, weights);
    ASSERT_TRUE(plain && module);
    auto encode = module->lookupSymbol<func::FuncOp>(model::kEncode);
    auto decode = module->lookupSymbol<func::FuncOp>(model::kDecode);
    EXPECT_EQ(names(encode, /*results=*/true),
              (std::vector<std::string>{"memory", "attn.enc.0", "attn.enc.1"}));
    EXPECT_EQ(names(decode, /*results=*/true),
              (std::vector<std::string>{
                  "log_probs", "self_k.0", "self_v.0", "self_k.1", "self_v.1",
                  "attn.dec.0", "attn.e2d.0", "attn.dec.1", "attn.e2d.1"}));
    auto type = cast<RankedTensorType>(decode.getResultTypes().back());
    EXPECT_EQ(type.getShape(),
              (llvm::ArrayRef<int64_t>{ShapedType::kDynamic, c.heads, 1}));
    // Every attention is still one fused op: the weights do not take the
    // layers off the fused path.
    int attentions = 0;
    plain->walk([&](SendAndRecvOp) { ++attentions; });
    EXPECT_GT(attentions, 0);
    EXPECT_EQ(fusedAttentions(*plain), attentions);
    EXPECT_EQ(fusedAttentions(*module), attentions);
  }

  ModelConfig c = smallConfig(Architecture::UniversalTransformer);
  c.layers = 1;
  c.crossAttention = CrossAttention::Shared;
  OwningOpRef<ModuleOp> module = buildModelModule(context, c, all, weights);
  ASSERT_TRUE(module);
  auto encode = module->lookupSymbol<func::FuncOp>(model::kEncode);
  EXPECT_EQ(names(encode, /*results=*/true),
            (std::vector<std::string>{"memory", "enc_steps", "attn.enc"}));
  auto steps = cast<RankedTensorType>(encode.getResultTypes().back());
  EXPECT_EQ(
      steps.getShape(),
      (llvm::ArrayRef<int64_t>{ShapedType::kDynamic, c.maxDepth, c.heads, 1}));
  auto decode = module->lookupSymbol<func::FuncOp>(model::kDecode);
  std::vector<std::string> results = names(decode, /*results=*/true);
  EXPECT_EQ(std::vector<std::string>(results.end() - 2, results.end()),
            (std::vector<std::string>{"attn.dec", "attn.e2d"}));
  EXPECT_EQ(fusedAttentions(*module), 3);
}
