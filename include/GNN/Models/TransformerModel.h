//===- TransformerModel.h - run compiled Transformer models -----*- C++ -*-===//
//
// Part of gnnc. Compiles a model's gnn module (built from its config, or a
// user's) and runs batches of sequences as one block-diagonal graph:
// teacher-forced forward, and greedy or beam decoding that computes only the
// new decoder nodes at each step and reuses the cached k/v of the others.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_TRANSFORMERMODEL_H
#define GNN_MODELS_TRANSFORMERMODEL_H

#include "GNN/Models/ModelConfig.h"
#include "GNN/Runner/JitRunner.h"
#include "GNN/Support/Tokenizer.h"

#include "mlir/IR/MLIRContext.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::gnn {

/// Special token ids.
constexpr int64_t kSos = 0, kEos = 1;

struct ModelOptions {
  CompileOptions compile;
  /// Weights file; empty: the config's.
  std::string weightsPath;
  /// A gnn module to run instead of the built one; empty: build it.
  std::string irPath;
  /// Compile the variant of the model that also returns every attention's
  /// per-edge weights (BuildOptions::attentionWeights), so that forward()
  /// can draw attention maps. The model's own results are the same.
  bool attentionWeights = false;
  /// The longest decoder input to prepare positions for (>= max_len).
  int64_t positions = 0;
  /// Threads of parallel loops (0: all cores). Calls on fewer than
  /// kParallelRows nodes run on one: forking costs more than it saves.
  int threads = 0;
  /// Load weights that hold NaN or infinity (an error naming the first
  /// such tensor otherwise).
  bool allowNonFinite = false;
};

constexpr int64_t kParallelRows = 32;

/// The attention maps of chosen sequences of a forward batch, as the
/// README's "Attention maps" section names them. For sequence `s` (its
/// `names` entry), kind k in enc, dec, e2d and layer l (a Universal
/// Transformer: `step<t>`, t from 0 to the most ACT steps a node of that
/// side of the sequence ran, minus one): `attn.<k>.<l>.<s>`, float32
/// [heads, destinations, sources], each edge's weight (0 where there is no
/// edge or, for a Universal Transformer, the destination was not active);
/// `tokens.src.<s>` and `tokens.tgt.<s>` (int64 ids; tgt: the decoder
/// inputs); for a Universal Transformer `steps.enc.<s>` and `steps.dec.<s>`
/// (int32 ACT steps per node).
struct AttentionMaps {
  /// Indices of the sequences in the batch.
  std::vector<int64_t> sequences;
  /// What each of `sequences` is called in the names (e.g. its input line).
  std::vector<int64_t> names;
  /// The maps, added to by every forward() given this.
  TensorMap tensors;
};

/// Decoding keeps, per sequence of a batch and beam, every layer's self-
/// attention keys and values for every position (times the ACT depth for a
/// Universal Transformer), plus a row of log-probs. Refuses, naming the
/// numbers, a decoding of `sequencesPerBatch` x `beam` rows of up to
/// `positions` whose caches would not fit in half of this machine's memory,
/// instead of growing until the system gives out; `remedy` ends the
/// message (what the caller may lower, in its own terms).
llvm::Error checkDecodingMemory(const ModelConfig &config,
                                int64_t sequencesPerBatch, int64_t beam,
                                int64_t positions, llvm::StringRef remedy);

class TransformerModel {
public:
  /// Reads and checks the weights, builds (or reads) the module and
  /// compiles it.
  static llvm::Expected<std::unique_ptr<TransformerModel>>
  load(MLIRContext &ctx, const ModelConfig &config,
       const ModelOptions &options);

  /// The module the model runs, as gnn IR text (before compilation).
  static llvm::Expected<std::string> emitIR(MLIRContext &ctx,
                                            const ModelConfig &config,
                                            const std::string &weightsPath);

  const ModelConfig &getConfig() const { return config; }

  /// Teacher-forced results by name: `log_probs` [sum of target lengths,
  /// tgt_vocab], rows in input order; for a universal_transformer also
  /// `enc_steps` / `dec_steps` (int32, one per source / target token: the
  /// ACT steps it was active). Sources and targets are non-empty; targets
  /// are decoder inputs.
  /// With `maps` (the model loaded with ModelOptions::attentionWeights),
  /// also adds the attention maps of `maps->sequences` to `maps->tensors`.
  llvm::Expected<TensorMap> forward(llvm::ArrayRef<Sequence> sources,
                                    llvm::ArrayRef<Sequence> targets,
                                    AttentionMaps *maps = nullptr);

  /// Greedy decoding; outputs exclude <sos> and <eos>. `maxLen` bounds the
  /// output to maxLen - 1 tokens.
  llvm::Expected<std::vector<Sequence>> greedy(llvm::ArrayRef<Sequence> sources,
                                               int64_t maxLen);

  /// Beam search with the GNMT length penalty ((5 + len) / 6)^alpha.
  llvm::Expected<std::vector<Sequence>> beam(llvm::ArrayRef<Sequence> sources,
                                             int64_t beamSize, double alpha,
                                             int64_t maxLen);

  /// forward()'s results computed through the step-by-step decoder, one
  /// step per position (a check that decoding changes nothing).
  llvm::Expected<TensorMap>
  forwardIncremental(llvm::ArrayRef<Sequence> sources,
                     llvm::ArrayRef<Sequence> targets);

  /// How the model's program was compiled (or found in the cache).
  const CompileInfo &getCompileInfo() const {
    return program->getCompileInfo();
  }

private:
  struct Encoded;
  struct Step;
  struct Hypothesis;
  TransformerModel() = default;
  llvm::Expected<Encoded> encode(llvm::ArrayRef<Sequence> sources);
  /// Computes the next node of every live hypothesis: log_probs rows (and
  /// dec_steps for a universal_transformer), one per hypothesis.
  llvm::Expected<TensorMap> decodeStep(Encoded &enc,
                                       std::vector<Hypothesis *> &live);
  /// The shape of one decoder node's row of a self-attention k/v cache:
  /// [heads, dk], or for every ACT step [max_depth, heads, dk].
  std::vector<int64_t> cacheRowShape() const;
  /// @decode's log_probs (and dec_steps), by name.
  llvm::Expected<TensorMap>
  decoderResults(std::map<std::string, HostTensor> &outputs) const;
  /// Adds the maps of `maps->sequences` from the per-edge weights that
  /// @encode (in `enc`) and @decode (`decoded`) returned.
  llvm::Error collectAttention(const Encoded &enc, const gnn_graph &dd,
                               const gnn_graph &ed,
                               llvm::ArrayRef<Sequence> sources,
                               llvm::ArrayRef<Sequence> targets,
                               std::map<std::string, HostTensor> &decoded,
                               AttentionMaps &maps) const;
  bool universal() const {
    return config.architecture == Architecture::UniversalTransformer;
  }
  llvm::Error bindWeights();

  /// Runs `entry` on run-time inputs for `rows` nodes.
  struct Inputs;
  /// On a GPU, the results `keep` picks stay there.
  llvm::Expected<std::map<std::string, HostTensor>>
  run(const char *entry, const Inputs &inputs, int64_t rows,
      JitProgram::ResultPlacement keep = {});
  /// The run-time inputs of @decode.
  Inputs decoderInputs(const Encoded &enc, const gnn_graph *dd,
                       const gnn_graph *ed, const HostTensor &tokens,
                       const HostTensor &positions, const HostTensor &slots,
                       llvm::ArrayRef<HostTensor *> selfK,
                       llvm::ArrayRef<HostTensor *> selfV) const;

  ModelConfig config;
  int threads = 0;
  /// The program returns per-edge attention weights.
  bool attentionWeights = false;
  /// The program runs on a GPU: decoding's caches and cross-attention k/v
  /// stay there between calls.
  bool onDevice = false;
  TensorMap weights;
  HostTensor pe, timePE;
  std::unique_ptr<JitProgram> program;
  /// Weight arguments of each entry, by position.
  std::map<std::string, std::vector<const HostTensor *>> bound;
};

} // namespace mlir::gnn

#endif // GNN_MODELS_TRANSFORMERMODEL_H
