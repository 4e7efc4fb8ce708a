//===- Initialization.cpp - fresh parameters as DGL's example makes them -===//
//
// Part of gnnc. Xavier-uniform for every matrix (embedding tables too),
// PyTorch's Linear bias default uniform(+-1/sqrt(fan_in)), LayerNorm 1 and
// 0. Each tensor has its own stream, from the seed and its name, so adding
// a tensor changes no other.
//
//===----------------------------------------------------------------------===//

#include "TrainerDetail.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::detail;

static void fillUniform(HostTensor &t, double bound, uint64_t seed,
                        llvm::StringRef name) {
  SplitMix64 rng(seed * 0x2545f4914f6cdd1dull ^ stableHash(name));
  float *p = t.as<float>();
  for (int64_t i = 0, n = t.numElements(); i < n; ++i)
    p[i] = float((2 * rng.uniform() - 1) * bound);
}

TensorMap Trainer::initialWeights(const ModelConfig &config, uint64_t seed,
                                  bool tieWeights) {
  std::vector<WeightSpec> specs = expectedWeights(config);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const WeightSpec &s : specs)
    shapes[s.name] = s.shape;
  TensorMap weights;
  for (const WeightSpec &spec : specs) {
    // Position tables are computed; attention biases are not in the model
    // DGL's example builds. Its decoder layers always have a src_attn,
    // used or not (cross-attention "shared"): the checkpoints hold one so
    // that PyTorch loads them strictly.
    llvm::StringRef specName(spec.name);
    bool unusedCross =
        specName.contains(".src_attn.") && specName.ends_with(".weight");
    if (!spec.required && !unusedCross)
      continue;
    llvm::StringRef name(spec.name);
    HostTensor t = zeros(spec.shape);
    if (name.ends_with(".norm.weight")) {
      std::fill_n(t.as<float>(), t.numElements(), 1.0f);
    } else if (name.ends_with(".norm.bias")) {
      // Zeros.
    } else if (spec.shape.size() == 2) {
      double fanOut = double(spec.shape[0]), fanIn = double(spec.shape[1]);
      fillUniform(t, std::sqrt(6.0 / (fanIn + fanOut)), seed, name);
    } else {
      // A Linear's bias: the fan-in of its weight.
      std::string weight = name.drop_back(strlen("bias")).str() + "weight";
      double fanIn = double(shapes.at(weight)[1]);
      fillUniform(t, 1.0 / std::sqrt(fanIn), seed, name);
    }
    weights[spec.name] = std::move(t);
  }
  if (tieWeights && config.srcVocab == config.tgtVocab) {
    weights["src_embed.lut.weight"] = weights["tgt_embed.lut.weight"];
    weights["generator.proj.weight"] = weights["tgt_embed.lut.weight"];
  }
  return weights;
}
