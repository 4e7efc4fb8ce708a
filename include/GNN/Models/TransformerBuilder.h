//===- TransformerBuilder.h - the Transformer as gnn IR ---------*- C++ -*-===//
//
// Part of gnnc. Writes a model of docs/models.md as a gnn
// module: attention in DGL's form (score, scaled exp, two sums, division)
// for gnn-fuse-attention to fuse, dense layers as gnn.linear.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_TRANSFORMERBUILDER_H
#define GNN_MODELS_TRANSFORMERBUILDER_H

#include "GNN/Models/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace mlir::gnn {

/// The functions of a model module and the names (`gnn.name` attributes) of
/// their run-time arguments and results; every other tensor argument is a
/// weight named as in the weights file.
///
///   @encode(ee, src_tokens, src_positions, pe, weights) -> memory
///   @cross_kv(memory, weights) -> cross_k.i, cross_v.i  (per layer)
///   @decode(dd, ed, tgt_tokens, tgt_positions, cache_slots, pe,
///           cross_k.i, cross_v.i, self_k.i, self_v.i, weights)
///       -> log_probs, self_k.i, self_v.i
///
/// @decode computes only the new decoder nodes (the destinations of dd and
/// ed): their k/v are written to rows cache_slots of self_k.i / self_v.i,
/// whose rows are all decoder nodes the new ones attend to (dd's sources).
/// A teacher-forced forward passes every decoder node as new.
///
/// A Universal Transformer's module has the same functions with
///
///   @encode(ee, src_tokens, src_positions, pe, time_pe, weights)
///       -> memory, enc_steps
///   @cross_kv(memory, weights) -> cross_k.0, cross_v.0
///   @decode(dd, ed, tgt_tokens, tgt_positions, pe, time_pe, cross_k.0,
///           cross_v.0, weights) -> log_probs, dec_steps
///
/// where *_steps (int32, one per node) count the ACT steps a node was
/// active; @decode computes every decoder node of dd.
namespace model {
constexpr const char *kEncode = "encode", *kCrossKV = "cross_kv",
                     *kDecode = "decode";
constexpr const char *kEE = "ee", *kED = "ed", *kDD = "dd";
constexpr const char *kSrcTokens = "src_tokens",
                     *kSrcPositions = "src_positions",
                     *kTgtTokens = "tgt_tokens",
                     *kTgtPositions = "tgt_positions",
                     *kCacheSlots = "cache_slots", *kPE = "pe",
                     *kMemory = "memory", *kLogProbs = "log_probs",
                     *kTimePE = "time_pe", *kEncSteps = "enc_steps",
                     *kDecSteps = "dec_steps";
inline std::string crossK(int64_t i) { return "cross_k." + std::to_string(i); }
inline std::string crossV(int64_t i) { return "cross_v." + std::to_string(i); }
inline std::string selfK(int64_t i) { return "self_k." + std::to_string(i); }
inline std::string selfV(int64_t i) { return "self_v." + std::to_string(i); }

/// Kinds of attention, as attention-weight results name them.
constexpr const char *kEncAttention = "enc", *kDecAttention = "dec",
                     *kCrossAttention = "e2d";
/// The per-edge weights of attention `kind` in layer `layer`: "attn.enc.0".
inline std::string attentionWeights(const char *kind, int64_t layer) {
  return std::string("attn.") + kind + "." + std::to_string(layer);
}
/// A Universal Transformer's weights of every ACT step: "attn.enc".
inline std::string attentionSteps(const char *kind) {
  return std::string("attn.") + kind;
}
} // namespace model

/// What a built module computes besides the model's results.
struct BuildOptions {
  /// Every attention also returns its normalized per-edge weights (e / z,
  /// as the layer's division applies them): @encode returns
  /// attn.enc.<layer> and @decode attn.dec.<layer> and attn.e2d.<layer>,
  /// each [edges of ee / dd / ed, heads, 1] by edge id. A Universal
  /// Transformer's @encode returns attn.enc and its @decode attn.dec and
  /// attn.e2d, [edges, max_depth, heads, 1]: the weights of every ACT step,
  /// 0 on the edges into nodes not active at that step.
  bool attentionWeights = false;
};

/// The gnn IR of an architecture "transformer" model. `hasWeight` says
/// which optional tensors (attention biases) the weights file holds.
/// The models as verified modules of gnn IR, built with OpBuilder (weights
/// are function arguments named after their tensors; `hasWeight` tells
/// which optional ones, e.g. biases, the weights file has). Null, with the
/// verifier's diagnostics emitted on `context`, if a builder made invalid
/// IR.
OwningOpRef<ModuleOp>
buildTransformerModule(MLIRContext &context, const ModelConfig &config,
                       llvm::function_ref<bool(llvm::StringRef)> hasWeight,
                       const BuildOptions &options = {});

OwningOpRef<ModuleOp> buildUniversalTransformerModule(
    MLIRContext &context, const ModelConfig &config,
    llvm::function_ref<bool(llvm::StringRef)> hasWeight,
    const BuildOptions &options = {});

/// The module of `config`'s architecture.
OwningOpRef<ModuleOp>
buildModelModule(MLIRContext &context, const ModelConfig &config,
                 llvm::function_ref<bool(llvm::StringRef)> hasWeight,
                 const BuildOptions &options = {});

} // namespace mlir::gnn

#endif // GNN_MODELS_TRANSFORMERBUILDER_H
