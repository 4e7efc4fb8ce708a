//===- DecodingMemory.cpp - what decoding's caches will need -------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/TransformerModel.h"
#include "gnnc/memory.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::gnn;

llvm::Error mlir::gnn::checkDecodingMemory(const ModelConfig &c,
                                           int64_t sequencesPerBatch,
                                           int64_t beam, int64_t positions,
                                           llvm::StringRef remedy) {
  if (sequencesPerBatch <= 0)
    return llvm::Error::success();
  double rows = double(sequencesPerBatch) * double(beam);
  double depth = c.architecture == Architecture::UniversalTransformer
                     ? double(c.maxDepth)
                     : double(c.layers);
  double bytes = rows *
                 (double(positions) * depth * 2 * double(c.dModel) +
                  2 * double(c.tgtVocab)) *
                 sizeof(float);
  double budget = double(gnn_rt_allocation_limit_bytes()) / 2;
  if (bytes <= budget)
    return llvm::Error::success();
  auto gib = [](double b) { return llvm::formatv("{0:F1}", b / (1 << 30)); };
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("decoding {0} sequences per batch x beam {1} x {2} "
                    "positions needs about {3} GiB for its caches, more than "
                    "half of this machine's memory ({4} GiB); {5}",
                    sequencesPerBatch, beam, positions, gib(bytes), gib(budget),
                    remedy)
          .str());
}
