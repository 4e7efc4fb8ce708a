//===- ModelMode.h - gnn-run on Transformer models --------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUN_MODELMODE_H
#define GNN_RUN_MODELMODE_H

#include "GNN/Runner/JitRunner.h"

#include "mlir/IR/MLIRContext.h"

#include <string>

namespace gnnrun {

enum class Mode { Forward, Greedy, Beam };

/// The most --threads a model run takes.
constexpr int64_t kMaxThreads = 1024;

struct ModelRunOptions {
  std::string config, weights, ir, src, tgt, out;
  /// How the model compiles (fusion, device, cache, checked mode, code
  /// generation threads) and the runtime instance it runs with.
  mlir::gnn::CompileOptions compile;
  bool ids = false, emitIR = false, incremental = false;
  Mode mode = Mode::Greedy;
  int64_t beamSize = 4, maxLen = 0, batchSize = 64, threads = 0;
  /// Runs the whole input this many times (timing); the last run's output
  /// is written.
  int64_t repeat = 1;
  double alpha = 0.6;
  /// Sequences longer than max_len are cut to it (DGL's example) instead
  /// of rejected.
  bool truncate = false;
  /// No progress or summary on stderr.
  bool quiet = false;
  /// Where to write the run's summary as JSON (none: nowhere).
  std::string statsJson;
  /// Where to write attention maps (none: nowhere), and of which input
  /// sequences (comma-separated indices).
  std::string attentionOut, attentionSeqs = "0";
  /// Run weights that hold NaN or infinity.
  bool allowNonFinite = false;
};

/// Runs gnn-run's model mode; returns the exit code.
int runModel(mlir::MLIRContext &context, const ModelRunOptions &options);

} // namespace gnnrun

#endif // GNN_RUN_MODELMODE_H
