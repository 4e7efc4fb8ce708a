//===- ModelConfigTest.cpp - model configs, vocabularies and weights ------===//
//
// Part of gnnc. The contract of docs/models.md: defaults,
// every rejected value, and the exact tensor names and shapes.
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/ModelConfig.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace mlir::gnn;

namespace {
const char *kTransformer = R"({"architecture": "transformer", "layers": 2,
  "d_model": 8, "heads": 2, "d_ff": 16, "src_vocab": 7, "tgt_vocab": 9,
  "weights": "w.safetensors", "vocab": "/abs/vocab.txt"})";

std::string errorOf(llvm::Expected<ModelConfig> config) {
  if (config)
    return "no error";
  return llvm::toString(config.takeError());
}

std::string withKey(const std::string &json, const std::string &entry) {
  return json.substr(0, json.size() - 1) + ", " + entry + "}";
}

TEST(ModelConfig, TransformerDefaults) {
  auto config = parseModelConfig(kTransformer, "/models/copy");
  ASSERT_TRUE(bool(config)) << llvm::toString(config.takeError());
  EXPECT_EQ(config->architecture, Architecture::Transformer);
  EXPECT_EQ(config->layers, 2);
  EXPECT_EQ(config->dk(), 4);
  EXPECT_EQ(config->maxLen, 50);
  ASSERT_TRUE(config->scoreClamp.has_value());
  EXPECT_EQ(*config->scoreClamp, 10.0);
  EXPECT_EQ(config->crossAttention, CrossAttention::DGL);
  EXPECT_EQ(config->weightsPath, "/models/copy/w.safetensors");
  EXPECT_EQ(config->vocabPath, "/abs/vocab.txt");
}

TEST(ModelConfig, ExplicitValues) {
  auto config = parseModelConfig(
      withKey(kTransformer, R"("score_clamp": null, "max_len": 5000,
          "cross_attention": "standard")"),
      "");
  ASSERT_TRUE(bool(config)) << llvm::toString(config.takeError());
  EXPECT_FALSE(config->scoreClamp.has_value());
  EXPECT_EQ(config->maxLen, 5000);
  EXPECT_EQ(config->crossAttention, CrossAttention::Standard);
}

TEST(ModelConfig, UniversalDefaults) {
  auto config = parseModelConfig(
      R"({"architecture": "universal_transformer", "d_model": 8, "heads": 1,
          "d_ff": 8, "src_vocab": 5, "tgt_vocab": 5, "max_depth": 4,
          "act_threshold": 0.5})",
      "");
  ASSERT_TRUE(bool(config)) << llvm::toString(config.takeError());
  EXPECT_EQ(config->crossAttention, CrossAttention::Shared);
  EXPECT_EQ(config->maxDepth, 4);
  EXPECT_EQ(config->actThreshold, 0.5);
}

TEST(ModelConfig, RejectsBadValues) {
  EXPECT_EQ(errorOf(parseModelConfig("{", "")).substr(0, 26),
            "config is not valid JSON: ");
  EXPECT_EQ(errorOf(parseModelConfig("[1]", "")),
            "config is not a JSON object");
  EXPECT_EQ(errorOf(parseModelConfig(
                withKey(kTransformer, R"("max_length": 9)"), "")),
            "config has an unknown key 'max_length'");
  EXPECT_EQ(errorOf(parseModelConfig(R"({"architecture": "rnn"})", "")),
            "unknown architecture 'rnn'; expected transformer or "
            "universal_transformer");
  EXPECT_EQ(errorOf(parseModelConfig(
                R"({"architecture": "transformer", "layers": 1, "heads": 1,
                    "d_ff": 4, "src_vocab": 4, "tgt_vocab": 4})",
                "")),
            "config needs \"d_model\"");
  EXPECT_EQ(errorOf(parseModelConfig(
                withKey(kTransformer, R"("max_len": 5001)"), "")),
            "config \"max_len\" is 5001, outside [1, 5000]");
  EXPECT_EQ(
      errorOf(parseModelConfig(withKey(kTransformer, R"("max_len": 2.5)"), "")),
      "config \"max_len\" must be an integer");
  EXPECT_EQ(errorOf(parseModelConfig(
                withKey(kTransformer, R"("score_clamp": -1)"), "")),
            "config \"score_clamp\" must be a positive number or null");
  EXPECT_EQ(errorOf(parseModelConfig(
                withKey(kTransformer, R"("cross_attention": "x")"), "")),
            "config \"cross_attention\" must be \"dgl\", \"shared\" or "
            "\"standard\"");
  EXPECT_EQ(errorOf(parseModelConfig(
                R"({"architecture": "transformer", "layers": 1, "d_model": 6,
                    "heads": 4, "d_ff": 4, "src_vocab": 4, "tgt_vocab": 4})",
                "")),
            "config \"d_model\" (6) must be a multiple of \"heads\" (4)");
  EXPECT_EQ(errorOf(parseModelConfig(
                R"({"architecture": "universal_transformer", "d_model": 8,
                    "heads": 1, "d_ff": 8, "src_vocab": 5, "tgt_vocab": 5,
                    "cross_attention": "dgl"})",
                "")),
            "a universal_transformer's cross-attention is \"shared\"");
  EXPECT_EQ(errorOf(parseModelConfig(
                withKey(kTransformer, R"("act_threshold": 1.5)"), "")),
            "config \"act_threshold\" must be a number in (0, 1]");
}

/// A weights map with every required tensor of `config`.
TensorMap completeWeights(const ModelConfig &config) {
  TensorMap weights;
  for (const WeightSpec &spec : expectedWeights(config)) {
    if (!spec.required)
      continue;
    HostTensor t;
    t.shape = spec.shape;
    t.allocate();
    weights[spec.name] = std::move(t);
  }
  return weights;
}

TEST(ModelConfig, WeightsContract) {
  ModelConfig config = llvm::cantFail(parseModelConfig(kTransformer, ""));
  TensorMap weights = completeWeights(config);
  EXPECT_FALSE(bool(checkWeights(config, weights)));
  EXPECT_TRUE(weights.count("decoder.layers.1.src_attn.linears.3.weight"));
  EXPECT_TRUE(weights.count("encoder.layers.0.sublayer.1.norm.bias"));
  EXPECT_FALSE(weights.count("encoder.layers.0.sublayer.2.norm.bias"));

  TensorMap missing = weights;
  missing.erase("decoder.layers.1.feed_forward.w_2.bias");
  EXPECT_EQ(llvm::toString(checkWeights(config, missing)),
            "weights: missing tensor 'decoder.layers.1.feed_forward.w_2.bias' "
            "[8]");

  TensorMap misshaped = weights;
  misshaped["tgt_embed.lut.weight"].shape = {8, 9};
  EXPECT_EQ(llvm::toString(checkWeights(config, misshaped)),
            "weights: tensor 'tgt_embed.lut.weight' has shape [8, 9], "
            "expected [9, 8]");

  TensorMap wrongType = weights;
  wrongType["generator.proj.bias"].dtype = DType::F64;
  EXPECT_EQ(
      llvm::toString(checkWeights(config, wrongType)),
      "weights: tensor 'generator.proj.bias' has dtype F64, expected F32");

  TensorMap shortTable = weights;
  shortTable["pos_enc.pe"].shape = {1, 10, 8};
  EXPECT_EQ(llvm::toString(checkWeights(config, shortTable)),
            "weights: tensor 'pos_enc.pe' has shape [1, 10, 8], expected "
            "[1, N, 8] with N >= max_len (50)");
  shortTable["pos_enc.pe"].shape = {1, 5000, 8};
  EXPECT_FALSE(bool(checkWeights(config, shortTable)));

  TensorMap someBiases = weights;
  someBiases["encoder.layers.0.self_attn.linears.0.bias"].shape = {8};
  EXPECT_EQ(llvm::toString(checkWeights(config, someBiases)),
            "weights: 'encoder.layers.0.self_attn.linears.{0,1,2,3}.bias' "
            "must be all present or all absent");
}

TEST(ModelConfig, SharedCrossAttentionNeedsNoSrcAttn) {
  ModelConfig config = llvm::cantFail(parseModelConfig(
      withKey(kTransformer, R"("cross_attention": "shared")"), ""));
  TensorMap weights = completeWeights(config);
  EXPECT_FALSE(weights.count("decoder.layers.0.src_attn.linears.0.weight"));
  EXPECT_FALSE(bool(checkWeights(config, weights)));
}

TEST(ModelConfig, UniversalWeights) {
  ModelConfig config = llvm::cantFail(parseModelConfig(
      R"({"architecture": "universal_transformer", "d_model": 8, "heads": 1,
          "d_ff": 8, "src_vocab": 5, "tgt_vocab": 5})",
      ""));
  TensorMap weights = completeWeights(config);
  EXPECT_TRUE(weights.count("encoder.layer.self_attn.linears.0.weight"));
  EXPECT_TRUE(weights.count("halt_dec.linear.weight"));
  EXPECT_EQ(weights["halt_enc.linear.weight"].shape,
            (std::vector<int64_t>{1, 8}));
  EXPECT_FALSE(bool(checkWeights(config, weights)));
}

TEST(ModelConfig, Vocab) {
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("vocab", "txt", path));
  auto write = [&](const char *text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << text;
  };
  write("a\nb\nc\n");
  auto vocab = readVocab(path);
  ASSERT_TRUE(bool(vocab)) << llvm::toString(vocab.takeError());
  EXPECT_EQ(*vocab, (std::vector<std::string>{"<sos>", "<eos>", "<pad>", "a",
                                              "b", "c"}));
  write("a\n\nb\n");
  EXPECT_NE(llvm::toString(readVocab(path).takeError()).find(":2: empty token"),
            std::string::npos);
  write("a\nb c\n");
  EXPECT_NE(llvm::toString(readVocab(path).takeError())
                .find(":2: token 'b c' contains whitespace"),
            std::string::npos);
  write("a\n<eos>\n");
  EXPECT_NE(llvm::toString(readVocab(path).takeError())
                .find(":2: token '<eos>' appears twice"),
            std::string::npos);
  llvm::sys::fs::remove(path);
}
} // namespace
