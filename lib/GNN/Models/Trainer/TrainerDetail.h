//===- TrainerDetail.h - shared by the trainer's files ----------*- C++ -*-===//
//
// Part of gnnc. The trainer's batch and its random streams. Private to
// lib/GNN/Models.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_TRAINER_TRAINERDETAIL_H
#define GNN_MODELS_TRAINER_TRAINERDETAIL_H

#include "../Inference/InferenceDetail.h"
#include "GNN/Models/Trainer.h"

namespace mlir::gnn {

/// The run-time inputs of a training module's functions for one batch.
struct Trainer::Batch {
  detail::GraphPtr ee, dd, ed;
  HostTensor srcTokens, srcPositions, tgtTokens, tgtPositions;
  HostTensor labelIds, padIds, labelWeights;
  /// Universal Transformer: act_loss_weight / all nodes, per node.
  HostTensor actWeightsEnc, actWeightsDec;
  /// The label of each decoder node.
  std::vector<int64_t> labels;
  /// The inputs staged for the program's device (prepareBatch), in
  /// batchInputs() order; null: the batch's own are handed over.
  std::unique_ptr<StagedInputs> staged;
};

namespace detail {
/// SplitMix64: a fixed, portable generator (the trainer's results must not
/// depend on the standard library's).
struct SplitMix64 {
  uint64_t state;
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with 53 bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [0, n).
  uint64_t below(uint64_t n) { return uint64_t(uniform() * double(n)); }
};

/// FNV-1a of `text`: names and fingerprints that must be the same in every
/// run (llvm::hash_value is not).
inline uint64_t stableHash(llvm::StringRef text,
                           uint64_t h = 0xcbf29ce484222325ull) {
  for (char c : text) {
    h ^= uint8_t(c);
    h *= 0x100000001b3ull;
  }
  return h;
}
} // namespace detail
} // namespace mlir::gnn

#endif // GNN_MODELS_TRAINER_TRAINERDETAIL_H
