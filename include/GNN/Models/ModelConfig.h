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

/// The fields that define a model (what it computes, not where its files
/// are), as X(type, name, default): ModelConfig declares its fields from
/// this list and visitFields() visits them from it, so that what is derived
/// from every field (a training state's fingerprint) cannot miss a new one.
/// scoreClamp empty: exact softmax.
#define GNN_MODEL_CONFIG_FIELDS(X)                                             \
  X(Architecture, architecture, Architecture::Transformer)                     \
  X(int64_t, layers, 0)                                                        \
  X(int64_t, dModel, 0)                                                        \
  X(int64_t, heads, 0)                                                         \
  X(int64_t, dFF, 0)                                                           \
  X(int64_t, srcVocab, 0)                                                      \
  X(int64_t, tgtVocab, 0)                                                      \
  X(int64_t, maxLen, 50)                                                       \
  X(std::optional<double>, scoreClamp, 10.0)                                   \
  X(CrossAttention, crossAttention, CrossAttention::DGL)                       \
  X(int64_t, maxDepth, 8)                                                      \
  X(double, actThreshold, 0.99)

/// Declares a field of a GNN_*_FIELDS list; visits one.
#define GNN_DECLARE_FIELD(type, name, init) type name = init;
#define GNN_VISIT_FIELD(type, name, init) visit(#name, self.name);

struct ModelConfig {
  GNN_MODEL_CONFIG_FIELDS(GNN_DECLARE_FIELD)
  /// Resolved against the config file's directory.
  std::string weightsPath, vocabPath;

  int64_t dk() const { return dModel / heads; }

  /// Calls visit(name, field) for every field of GNN_MODEL_CONFIG_FIELDS
  /// (`self` a ModelConfig, const or not).
  template <typename Self, typename Visitor>
  static void visitFields(Self &self, Visitor &&visit) {
    GNN_MODEL_CONFIG_FIELDS(GNN_VISIT_FIELD)
  }
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
