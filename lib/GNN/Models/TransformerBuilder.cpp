//===- TransformerBuilder.cpp - the Transformer as gnn IR -----------------===//
//
// Part of gnnc. The module is written as text and parsed by the caller: the
// text is what `gnn-run --emit-ir` shows, and writing it reads like the
// model's math.
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/TransformerBuilder.h"
#include "FunctionWriter.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::models;

namespace {
std::string layerName(const char *stack, int64_t i) {
  return std::string(stack) + ".layers." + std::to_string(i);
}

/// Where cross-attention of decoder layer `L` takes q/k/v and output.
std::pair<std::string, std::string> crossModules(const ModelConfig &c,
                                                 const std::string &L) {
  switch (c.crossAttention) {
  case CrossAttention::DGL:
    return {L + ".src_attn", L + ".self_attn"};
  case CrossAttention::Shared:
    return {L + ".self_attn", L + ".self_attn"};
  case CrossAttention::Standard:
    return {L + ".src_attn", L + ".src_attn"};
  }
  return {};
}

void writeEncoder(llvm::raw_ostream &out, const ModelConfig &c,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionWriter f(c, hasWeight);
  std::string ee = f.input(model::kEE, FunctionWriter::kGraph);
  std::string tokens = f.input(model::kSrcTokens, FunctionWriter::kIds);
  std::string positions = f.input(model::kSrcPositions, FunctionWriter::kIds);
  std::string pe = f.input(model::kPE, f.x());
  std::string x =
      f.embed("src_embed.lut.weight", c.srcVocab, tokens, positions, pe);
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string L = layerName("encoder", i);
    std::string n = f.layerNorm(x, L + ".sublayer.0.norm");
    std::string A = L + ".self_attn.linears.";
    std::string q = f.splitHeads(f.linear(n, A + "0", f.d, f.d));
    std::string k = f.splitHeads(f.linear(n, A + "1", f.d, f.d));
    std::string v = f.splitHeads(f.linear(n, A + "2", f.d, f.d));
    std::string a = f.mergeHeads(f.attention(ee, q, k, v));
    x = f.residual(x, f.linear(a, A + "3", f.d, f.d));
    x = f.residual(x, f.feedForward(f.layerNorm(x, L + ".sublayer.1.norm"),
                                    L + ".feed_forward"));
  }
  x = f.layerNorm(x, "encoder.norm");
  f.setType(x, f.x());
  f.finish(out, model::kEncode, {{x, model::kMemory}});
}

void writeCrossKV(llvm::raw_ostream &out, const ModelConfig &c,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionWriter f(c, hasWeight);
  std::string mem = f.input(model::kMemory, f.x());
  std::vector<std::pair<std::string, std::string>> results;
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string A = crossModules(c, layerName("decoder", i)).first;
    std::string k = f.splitHeads(f.linear(mem, A + ".linears.1", f.d, f.d));
    std::string v = f.splitHeads(f.linear(mem, A + ".linears.2", f.d, f.d));
    f.setType(k, f.heads());
    f.setType(v, f.heads());
    results.push_back({k, model::crossK(i)});
    results.push_back({v, model::crossV(i)});
  }
  f.finish(out, model::kCrossKV, results);
}

void writeDecoder(llvm::raw_ostream &out, const ModelConfig &c,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionWriter f(c, hasWeight);
  std::string dd = f.input(model::kDD, FunctionWriter::kGraph);
  std::string ed = f.input(model::kED, FunctionWriter::kGraph);
  std::string tokens = f.input(model::kTgtTokens, FunctionWriter::kIds);
  std::string positions = f.input(model::kTgtPositions, FunctionWriter::kIds);
  std::string slots = f.input(model::kCacheSlots, FunctionWriter::kIds);
  std::string pe = f.input(model::kPE, f.x());
  std::vector<std::string> crossK, crossV, selfK, selfV;
  for (int64_t i = 0; i < c.layers; ++i) {
    crossK.push_back(f.input(model::crossK(i), f.heads()));
    crossV.push_back(f.input(model::crossV(i), f.heads()));
  }
  for (int64_t i = 0; i < c.layers; ++i) {
    selfK.push_back(f.updatedInput(model::selfK(i), f.heads()));
    selfV.push_back(f.updatedInput(model::selfV(i), f.heads()));
  }
  std::string y =
      f.embed("tgt_embed.lut.weight", c.tgtVocab, tokens, positions, pe);
  std::vector<std::pair<std::string, std::string>> results;
  auto scatter = [&](const std::string &rowsOf, const std::string &cache) {
    std::string r = f.fresh();
    return std::make_pair(
        r, "  " + r + " = gnn.scatter_rows " + rowsOf + " into " + cache + "[" +
               slots + "] : (" + f.heads() + ", " + f.heads() + ", " +
               FunctionWriter::kIds + ") -> " + f.heads() + "\n");
  };
  for (int64_t i = 0; i < c.layers; ++i) {
    bool last = i == c.layers - 1;
    std::string L = layerName("decoder", i);
    std::string S = L + ".self_attn.linears.";
    std::string n = f.layerNorm(y, L + ".sublayer.0.norm");
    std::string q = f.splitHeads(f.linear(n, S + "0", f.d, f.d));
    std::string k = f.splitHeads(f.linear(n, S + "1", f.d, f.d));
    std::string v = f.splitHeads(f.linear(n, S + "2", f.d, f.d));
    auto [kAll, kText] = scatter(k, selfK[i]);
    auto [vAll, vText] = scatter(v, selfV[i]);
    f.raw(kText + vText);
    f.setType(kAll, f.heads());
    f.setType(vAll, f.heads());
    results.push_back({kAll, model::selfK(i)});
    results.push_back({vAll, model::selfV(i)});
    std::string a = f.mergeHeads(f.attention(dd, q, kAll, vAll));
    y = f.residual(y, f.linear(a, S + "3", f.d, f.d));
    if (last)
      y = f.layerNorm(y, "decoder.norm");
    auto [A, O] = crossModules(c, L);
    std::string cq = f.splitHeads(f.linear(
        f.layerNorm(y, L + ".sublayer.1.norm"), A + ".linears.0", f.d, f.d));
    std::string ca = f.mergeHeads(f.attention(ed, cq, crossK[i], crossV[i]));
    y = f.residual(y, f.linear(ca, O + ".linears.3", f.d, f.d));
    y = f.residual(y, f.feedForward(f.layerNorm(y, L + ".sublayer.2.norm"),
                                    L + ".feed_forward"));
    if (last)
      y = f.layerNorm(y, "decoder.norm");
  }
  std::string logits = f.linear(y, "generator.proj", f.d, c.tgtVocab);
  std::string lp = f.fresh();
  f.raw("  " + lp + " = gnn.log_softmax " + logits + " : (" +
        f.rows(c.tgtVocab) + ") -> " + f.rows(c.tgtVocab) + "\n");
  f.setType(lp, f.rows(c.tgtVocab));
  results.insert(results.begin(), {lp, model::kLogProbs});
  f.finish(out, model::kDecode, results);
}
} // namespace

std::string mlir::gnn::buildTransformerIR(
    const ModelConfig &config,
    llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  return moduleText("A Transformer (" + std::to_string(config.layers) +
                        " layers, d_model " + std::to_string(config.dModel) +
                        ", " + std::to_string(config.heads) + " heads)",
                    config, hasWeight,
                    {writeEncoder, writeCrossKV, writeDecoder});
}

std::string
mlir::gnn::buildModelIR(const ModelConfig &config,
                        llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  return config.architecture == Architecture::UniversalTransformer
             ? buildUniversalTransformerIR(config, hasWeight)
             : buildTransformerIR(config, hasWeight);
}
