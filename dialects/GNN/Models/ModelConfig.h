//===- ModelConfig.h - Transformer model configs and weights ----*- C++ -*-===//
//
// Part of gnnc. The model contract of docs/models.md: the
// JSON config (with its defaults), the vocabulary, and the names, shapes and
// dtypes every weights file must have.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_MODELCONFIG_H
#define GNN_MODELS_MODELCONFIG_H

#include "GNN/Support/SafeTensors.h"
#include "GNN/Support/Tokenizer.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::gnn {

enum class Architecture { Transformer, UniversalTransformer };

/// Where cross-attention takes its q/k/v (A) and output (O) projections.
enum class CrossAttention { DGL, Shared, Standard };

struct ModelConfig {
  Architecture architecture = Architecture::Transformer;
  int64_t layers = 0, dModel = 0, heads = 0, dFF = 0;
  int64_t srcVocab = 0, tgtVocab = 0;
  int64_t maxLen = 50;
  /// Empty: exact softmax.
  std::optional<double> scoreClamp = 10.0;
  CrossAttention crossAttention = CrossAttention::DGL;
  int64_t maxDepth = 8;
  double actThreshold = 0.99;
  /// Resolved against the config file's directory.
  std::string weightsPath, vocabPath;

  int64_t dk() const { return dModel / heads; }
};

/// Parses and validates a config; `directory` resolves relative paths.
llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef json,
                                             llvm::StringRef directory);
llvm::Expected<ModelConfig> readModelConfig(llvm::StringRef path);

/// Tokens by id: <sos>, <eos>, <pad>, then the file's tokens in order.
llvm::Expected<std::vector<std::string>> readVocab(llvm::StringRef path);

/// The tokenizer of a model's text inputs: integer ids with `ids`, else
/// the words of the config's vocabulary (an error when it names none).
llvm::Expected<Tokenizer> readTokenizer(const ModelConfig &config, bool ids);

/// One tensor a model needs.
struct WeightSpec {
  std::string name;
  /// -1: at least `minRows` (a table indexed by position or step), the
  /// config's `minRowsOf`.
  std::vector<int64_t> shape;
  bool required = true;
  int64_t minRows = 0;
  std::string minRowsOf;
};

/// Every tensor the model reads, with its shape (optional ones included).
std::vector<WeightSpec> expectedWeights(const ModelConfig &config);

/// Checks that `weights` holds every required tensor with its shape and
/// dtype F32, and that optional ones, when present, have theirs.
llvm::Error checkWeights(const ModelConfig &config, const TensorMap &weights);

} // namespace mlir::gnn

#endif // GNN_MODELS_MODELCONFIG_H
