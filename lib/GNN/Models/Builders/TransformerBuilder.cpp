//===- TransformerBuilder.cpp - the Transformer as gnn IR -----------------===//
//
// Part of gnnc. Three functions: @encode (the encoder stack over the source
// graph), @cross_kv (every decoder layer's cross-attention keys and values
// of the memory) and @decode (the decoder stack for new target nodes, with
// a k/v cache that the runner grows in place).
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/TransformerBuilder.h"
#include "ModelInputs.h"
#include "TransformerLayers.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::models;

std::string models::layerName(const char *stack, int64_t i) {
  return std::string(stack) + ".layers." + std::to_string(i);
}

std::pair<std::string, std::string> models::crossModules(const ModelConfig &c,
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

FunctionBuilder::Named models::encoderLayer(FunctionBuilder &f, Value x,
                                            Value graph, bool weights) {
  std::string L = kLayerPrefix.str();
  Value n = f.layerNorm(x, L + ".sublayer.0.norm");
  std::string A = L + ".self_attn.linears.";
  Value q = f.splitHeads(f.linear(n, A + "0", f.d, f.d));
  Value k = f.splitHeads(f.linear(n, A + "1", f.d, f.d));
  Value v = f.splitHeads(f.linear(n, A + "2", f.d, f.d));
  Value w;
  Value a = f.mergeHeads(f.attention(graph, q, k, v, weights ? &w : nullptr));
  x = f.residual(x, f.dropout(f.linear(a, A + "3", f.d, f.d)));
  x = f.residual(x,
                 f.dropout(f.feedForward(f.layerNorm(x, L + ".sublayer.1.norm"),
                                         L + ".feed_forward")));
  if (weights)
    return {{x, "x"}, {w, model::kEncAttention}};
  return {{x, "x"}};
}

FunctionBuilder::Named models::decoderLayer(FunctionBuilder &f, ValueRange in,
                                            bool last, bool weights) {
  const ModelConfig &c = f.c;
  std::string L = kLayerPrefix.str();
  std::string S = L + ".self_attn.linears.";
  Value y = in[0];
  Value selfW, crossW;
  Value a = f.mergeHeads(
      f.attention(in[4], in[1], in[2], in[3], weights ? &selfW : nullptr));
  y = f.residual(y, f.dropout(f.linear(a, S + "3", f.d, f.d)));
  if (last)
    y = f.layerNorm(y, "decoder.norm");
  auto [A, O] = crossModules(c, L);
  Value cq = f.splitHeads(f.linear(f.layerNorm(y, L + ".sublayer.1.norm"),
                                   A + ".linears.0", f.d, f.d));
  Value ca = f.mergeHeads(
      f.attention(in[5], cq, in[6], in[7], weights ? &crossW : nullptr));
  y = f.residual(y, f.dropout(f.linear(ca, O + ".linears.3", f.d, f.d)));
  y = f.residual(y,
                 f.dropout(f.feedForward(f.layerNorm(y, L + ".sublayer.2.norm"),
                                         L + ".feed_forward")));
  if (last)
    y = f.layerNorm(y, "decoder.norm");
  if (weights)
    return {{y, "y"},
            {selfW, model::kDecAttention},
            {crossW, model::kCrossAttention}};
  return {{y, "y"}};
}

FunctionBuilder::Named models::decoderSelfQKV(FunctionBuilder &l,
                                              ValueRange in) {
  std::string S = kLayerPrefix.str() + ".self_attn.linears.";
  Value n = l.layerNorm(in[0], kLayerPrefix.str() + ".sublayer.0.norm");
  return {{l.splitHeads(l.linear(n, S + "0", l.d, l.d)), "q"},
          {l.splitHeads(l.linear(n, S + "1", l.d, l.d)), "k"},
          {l.splitHeads(l.linear(n, S + "2", l.d, l.d)), "v"}};
}

FunctionBuilder::Named models::crossKV(FunctionBuilder &l, ValueRange in) {
  std::string A = crossModules(l.c, kLayerPrefix.str()).first;
  return {{l.splitHeads(l.linear(in[0], A + ".linears.1", l.d, l.d)), "k"},
          {l.splitHeads(l.linear(in[0], A + ".linears.2", l.d, l.d)), "v"}};
}

namespace {
void buildEncoder(ModuleOp module, const ModelConfig &c,
                  const BuildOptions &options,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionBuilder f(module, model::kEncode, c, hasWeight);
  EncoderInputs in = encoderInputs(f);
  Value x = f.embed("src_embed.lut.weight", c.srcVocab, in.tokens, in.positions,
                    in.pe);
  bool weights = options.attentionWeights;
  FunctionBuilder::Named results = {{Value(), model::kMemory}};
  for (int64_t i = 0; i < c.layers; ++i) {
    SmallVector<Value> out =
        f.callLayer("encoder_layer", layerName("encoder", i),
                    {{x, "x"}, {in.graph, model::kEE}},
                    [&](FunctionBuilder &l, ValueRange in) {
                      return encoderLayer(l, in[0], in[1], weights);
                    });
    x = out[0];
    if (weights)
      results.push_back(
          {out[1], model::attentionWeights(model::kEncAttention, i)});
  }
  results[0].first = f.layerNorm(x, "encoder.norm");
  f.finish(results);
}

void buildCrossKV(ModuleOp module, const ModelConfig &c, const BuildOptions &,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionBuilder f(module, model::kCrossKV, c, hasWeight);
  Value mem = f.input(model::kMemory, f.x());
  std::vector<std::pair<Value, std::string>> results;
  for (int64_t i = 0; i < c.layers; ++i) {
    SmallVector<Value> kv =
        f.callLayer("cross_kv_layer", layerName("decoder", i),
                    {{mem, model::kMemory}}, crossKV);
    results.push_back({kv[0], model::crossK(i)});
    results.push_back({kv[1], model::crossV(i)});
  }
  f.finish(results);
}

void buildDecoder(ModuleOp module, const ModelConfig &c,
                  const BuildOptions &options,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionBuilder f(module, model::kDecode, c, hasWeight);
  DecoderInputs in = decoderInputs(f);
  std::vector<Value> crossK, crossV, selfK, selfV;
  for (int64_t i = 0; i < c.layers; ++i) {
    crossK.push_back(f.input(model::crossK(i), f.heads()));
    crossV.push_back(f.input(model::crossV(i), f.heads()));
  }
  for (int64_t i = 0; i < c.layers; ++i) {
    selfK.push_back(f.updatedInput(model::selfK(i), f.heads()));
    selfV.push_back(f.updatedInput(model::selfV(i), f.heads()));
  }
  Value y = f.embed("tgt_embed.lut.weight", c.tgtVocab, in.tokens, in.positions,
                    in.pe);
  std::vector<std::pair<Value, std::string>> results, weightResults;
  bool weights = options.attentionWeights;
  for (int64_t i = 0; i < c.layers; ++i) {
    bool last = i == c.layers - 1;
    std::string L = layerName("decoder", i);
    SmallVector<Value> qkv =
        f.callLayer("decoder_self_qkv", L, {{y, "y"}}, decoderSelfQKV);
    // The new nodes' k/v go into their cache slots.
    Value kAll = f.scatter(qkv[1], selfK[i], in.slots);
    Value vAll = f.scatter(qkv[2], selfV[i], in.slots);
    results.push_back({kAll, model::selfK(i)});
    results.push_back({vAll, model::selfV(i)});
    // DGL's example applies the final norm inside its last layer (twice).
    SmallVector<Value> out =
        f.callLayer(last ? "decoder_last_layer" : "decoder_layer", L,
                    {{y, "y"},
                     {qkv[0], "q"},
                     {kAll, "k"},
                     {vAll, "v"},
                     {in.dd, model::kDD},
                     {in.ed, model::kED},
                     {crossK[i], "cross_k"},
                     {crossV[i], "cross_v"}},
                    [&](FunctionBuilder &l, ValueRange in) {
                      return decoderLayer(l, in, last, weights);
                    });
    y = out[0];
    if (weights) {
      weightResults.push_back(
          {out[1], model::attentionWeights(model::kDecAttention, i)});
      weightResults.push_back(
          {out[2], model::attentionWeights(model::kCrossAttention, i)});
    }
  }
  Value lp = f.logSoftmax(f.linear(y, "generator.proj", f.d, c.tgtVocab));
  results.insert(results.begin(), {lp, model::kLogProbs});
  llvm::append_range(results, weightResults);
  f.finish(results);
}
} // namespace

OwningOpRef<ModuleOp> mlir::gnn::buildTransformerModule(
    MLIRContext &context, const ModelConfig &config,
    llvm::function_ref<bool(llvm::StringRef)> hasWeight,
    const BuildOptions &options) {
  return buildModule(context, config, options, hasWeight,
                     {buildEncoder, buildCrossKV, buildDecoder});
}

OwningOpRef<ModuleOp>
mlir::gnn::buildModelModule(MLIRContext &context, const ModelConfig &config,
                            llvm::function_ref<bool(llvm::StringRef)> hasWeight,
                            const BuildOptions &options) {
  return config.architecture == Architecture::UniversalTransformer
             ? buildUniversalTransformerModule(context, config, hasWeight,
                                               options)
             : buildTransformerModule(context, config, hasWeight, options);
}
