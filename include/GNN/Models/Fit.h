//===- Fit.h - the training loop over epochs --------------------*- C++ -*-===//
//
// Part of gnnc. fit() runs a Trainer over a data set for a number of
// epochs as gnn-train does: batches in each epoch's order, validation
// after each epoch, a checkpoint per epoch (and at a step limit), and a
// callback per epoch that may stop it. Tools and bindings print; this
// computes and writes files.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_FIT_H
#define GNN_MODELS_FIT_H

#include "GNN/Distributed/Agreement.h"
#include "GNN/Models/Trainer.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::gnn {

/// Pairs of a source and a target file, tokenized, checked against the
/// model's vocabularies and lengths; `what` names them in errors
/// ("training", "validation").
llvm::Expected<std::vector<TrainingExample>>
readTrainingPairs(const std::string &srcPath, const std::string &tgtPath,
                  const char *what, const Tokenizer &tokenizer,
                  const ModelConfig &config);

/// The training pairs of `trainSrc`/`trainTgt` and, where `validSrc` is
/// not empty, the validation pairs (`ids`: lines hold token ids, else the
/// config's vocabulary).
llvm::Error readTrainingData(const ModelConfig &config, bool ids,
                             const std::string &trainSrc,
                             const std::string &trainTgt,
                             const std::string &validSrc,
                             const std::string &validTgt,
                             std::vector<TrainingExample> &train,
                             std::vector<TrainingExample> &valid);

/// The weights of `initPath` (its errors prefixed by `what`, e.g.
/// "--init"), or, where it is empty, fresh ones from `seed`.
llvm::Expected<TensorMap>
initialTrainingWeights(const ModelConfig &config, const std::string &initPath,
                       llvm::StringRef what, uint64_t seed, bool tieWeights);

/// The file --resume continues from, in a run's output directory.
constexpr const char *kTrainStateFile = "train-state.safetensors";

/// The path of file `name` in a run's output directory `outDir`.
std::string runFile(const std::string &outDir, llvm::StringRef name);

/// Restores the trainer from DIR/train-state.safetensors.
llvm::Error resumeFrom(Trainer &trainer, const std::string &outDir);

/// Writes DIR/`name` (the weights, DGL names), then
/// DIR/train-state.safetensors (at `position`), each whole or not at all: a
/// state on disk always comes with the checkpoint it continues from.
llvm::Error saveCheckpoint(const Trainer &trainer, const std::string &outDir,
                           const std::string &name,
                           const TrainingPosition &position);

struct FitOptions {
  /// Train until this many epochs are done (counting those of a restored
  /// state).
  int64_t epochs = 10;
  /// Stop after this many updates (0: no limit).
  int64_t maxSteps = 0;
  /// Where checkpoints go (epoch-N.safetensors, step-N.safetensors and the
  /// train state); empty: none are written.
  std::string outDir;
  /// The ranks of a data-parallel run (null, or one rank without
  /// `tensors`: this process alone). Every rank calls fit() with the same data
  /// and options, its trainer built with grad_accum K x A (an update sums K x A
  /// batches); the run equals one process with that grad_accum, bit for bit:
  /// rank r computes the batches whose number in the training stream is r
  /// modulo K, the ranks sum the gradients in the stream's order, and each rank
  /// applies the same update. Rank 0's state is everyone's at the start,
  /// rank 0 alone writes files, validation is split among the ranks, and
  /// the callbacks see totals of all ranks (call them on rank 0 only).
  /// Errors are agreed on: where one rank fails, the others return a
  /// RankFailed.
  Communicator *world = nullptr;
  /// Where a data-parallel run passes its gradient sums (NCCL between GPUs);
  /// null: `world`. Set, it makes even one rank a data-parallel run (the
  /// check of the NCCL path on one GPU).
  Communicator *tensors = nullptr;
  /// A data-parallel run passes each parameter's gradient sum on while the
  /// backward computes the layers below where it can (the trainer
  /// announces its gradients, TrainerOptions::announceGradients, and the
  /// sums travel over `world`, callable from another thread), unless this
  /// is false; else after the backward. The sums are the same either way.
  bool overlapExchange = true;
  /// The exchange during the backward passes the sums of consecutive
  /// parameters (in the order the backward completes them) as one message
  /// of at least this many bytes where there are.
  size_t bucketBytes = size_t(1) << 20;
};

/// What one epoch did.
struct EpochReport {
  /// 1-based.
  int64_t epoch = 0;
  LossTotals train, valid;
  /// There were validation pairs.
  bool validated = false;
  /// Wall time of the epoch's training batches.
  double seconds = 0;
  /// Updates done so far.
  int64_t step = 0;
  /// Data-parallel runs: seconds this rank spent passing on and
  /// broadcasting gradient sums after its backward (what the exchange adds
  /// to a round), seconds its exchange thread spent on them while the
  /// backward ran (awaiting the other ranks' sums included), and seconds
  /// waiting at the gathers for the other ranks' batches.
  double exchangeSeconds = 0, duringBackwardSeconds = 0, waitSeconds = 0;
  /// The step limit stopped the epoch before its end: a step-N checkpoint
  /// was written, and no epoch-N one will be.
  bool midEpoch = false;
  double tokensPerSecond() const {
    return seconds > 0 ? double(train.tokens) / seconds : 0.0;
  }
};

struct FitCallbacks {
  /// After each training batch: the 1-based epoch, batches done of the
  /// epoch's total, and the epoch's totals so far (a progress bar).
  std::function<void(int64_t epoch, int64_t done, int64_t total,
                     const LossTotals &sofar)>
      onBatch;
  /// After each epoch's validation, before its checkpoint is written;
  /// returning false stops training after that checkpoint.
  std::function<bool(const EpochReport &)> onEpoch;
  /// After an epoch's checkpoint DIR/epoch-N.safetensors is written (its
  /// path and the 1-based epoch); an error stops training with it.
  std::function<llvm::Error(const std::string &checkpoint, int64_t epoch)>
      afterCheckpoint;
  /// Asked after each training batch (an interrupt from the user); true
  /// ends training with an error that says where, without a checkpoint.
  std::function<bool()> interrupted;
};

/// One epoch's line as gnn-train prints it (without the newline):
/// `epoch N: train loss L acc A | valid loss ... | steps ... | S s, T
/// tokens/s, step K`.
std::string formatEpochLine(const EpochReport &report);

/// Makes `dir` (and its parents) where missing and checks that files can
/// be written in it; `what` names it in errors ("--out-dir").
llvm::Error prepareRunDirectory(const std::string &dir, llvm::StringRef what);

/// A training run's settings as gnn-train's flags and gnnc.train's options
/// give them, checked alike by checkTrainingSettings.
struct TrainingSettings {
  TrainerOptions trainer;
  int64_t epochs = 10;
  /// A limit on updates, where one is given.
  std::optional<int64_t> maxSteps;
  std::string device = "cpu";
  bool resume = false, init = false;
};

/// The ranges of the settings and what contradicts what (epochs 1..10^6,
/// a step limit of at least 1, batch size 1..2^24, label smoothing and
/// dropout in [0, 1), a positive finite learning-rate factor, a warm-up of
/// at least 1, accumulation 1..10^6, a non-negative finite ACT loss
/// weight, threads 0..4096, device cpu or cuda, no init to resume). The
/// message names an option as `name` spells it from its snake_case name
/// (`--batch-size` for the tool, `batch_size` for Python).
llvm::Error
checkTrainingSettings(const TrainingSettings &settings,
                      llvm::function_ref<std::string(llvm::StringRef)> name);

/// How fit() ended.
enum class FitEnd {
  /// Every epoch ran.
  Epochs,
  /// The step limit was reached.
  StepLimit,
  /// onEpoch returned false.
  Stopped,
  /// Nothing to train: the trainer's position was already at the step
  /// limit, or had finished every epoch.
  AlreadyAtStepLimit,
  AlreadyDone,
};

/// Trains from the trainer's position (a restored state continues where it
/// stopped). A failed batch ends it with an error naming the update step,
/// epoch and batch; the last complete checkpoint is kept.
llvm::Expected<FitEnd> fit(Trainer &trainer,
                           llvm::ArrayRef<TrainingExample> train,
                           llvm::ArrayRef<TrainingExample> valid,
                           const FitOptions &options,
                           const FitCallbacks &callbacks = {});

} // namespace mlir::gnn

#endif // GNN_MODELS_FIT_H
