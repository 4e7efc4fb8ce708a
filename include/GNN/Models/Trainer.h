//===- Trainer.h - training Transformers with compiled steps ----*- C++ -*-===//
//
// Part of gnnc. Trains a model as docs/training.md states
// it: a step (the batch's forward, label-smoothed loss, backward from
// gnn-differentiate, and the Adam/Noam update) is one call of a program
// compiled once per run; parameters, moments and accumulated gradients
// stay in the trainer between steps and the step updates them in place.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_TRAINER_H
#define GNN_MODELS_TRAINER_H

#include "GNN/Models/ModelConfig.h"
#include "GNN/Models/TrainingBuilder.h"
#include "GNN/Runner/JitRunner.h"
#include "GNN/Support/Tokenizer.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/ThreadPool.h"

#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::gnn {

/// One training pair: the source tokens and the expected output (without
/// <sos> and <eos>).
struct TrainingExample {
  Sequence source, target;
};

/// The options that shape a training run's results, as X(type, name,
/// default) (see GNN_MODEL_CONFIG_FIELDS): a saved state is only resumed
/// under the same values of every one.
/// lrFactor, warmup: Noam, lr(t) = factor * d_model^-0.5 * min(t^-0.5,
/// t * warmup^-1.5). gradAccum: gradients of this many batches are summed
/// before one update. tieWeights: src_embed.lut.weight, tgt_embed.lut.weight
/// and generator.proj.weight are one tensor. actLossWeight: a Universal
/// Transformer's weight of the ACT loss (mean remainder). shuffle: shuffle
/// the training set every epoch.
#define GNN_TRAINER_OPTION_FIELDS(X)                                           \
  X(uint64_t, seed, 1)                                                         \
  X(int64_t, batchSize, 128)                                                   \
  X(double, labelSmoothing, 0.1)                                               \
  X(double, dropout, 0.1)                                                      \
  X(double, lrFactor, 0.1)                                                     \
  X(int64_t, warmup, 4000)                                                     \
  X(int64_t, gradAccum, 1)                                                     \
  X(bool, tieWeights, false)                                                   \
  X(double, actLossWeight, 0.01)                                               \
  X(bool, shuffle, true)

struct TrainerOptions {
  GNN_TRAINER_OPTION_FIELDS(GNN_DECLARE_FIELD)
  /// How it runs, which changes no result.
  int threads = 0;
  CompileOptions compile;
  /// @train_grad announces each gradient as soon as the backward has
  /// computed it (gnn-announce-results), so that batchGradients() hands it
  /// to its listener while the layers below are differentiated.
  bool announceGradients = false;

  /// Whether gradients are summed over several batches per update (and a
  /// sum is kept between steps).
  bool accumulates() const { return gradAccum > 1; }

  /// Calls visit(name, field) for every field of GNN_TRAINER_OPTION_FIELDS.
  template <typename Self, typename Visitor>
  static void visitFields(Self &self, Visitor &&visit) {
    GNN_TRAINER_OPTION_FIELDS(GNN_VISIT_FIELD)
  }
};

/// What a saved training state must agree with to be resumed: every field
/// of `config` and `options` (their GNN_*_FIELDS lists) and the trained
/// parameters' names, dtypes and shapes (`parameters`, in order).
uint64_t stateFingerprint(const ModelConfig &config,
                          const TrainerOptions &options,
                          const std::vector<std::string> &parameters,
                          const TensorMap &tensors);

/// Sums over the batches of an epoch.
struct LossTotals {
  /// Sum over batches of (batch loss x n_tokens).
  double loss = 0;
  /// A Universal Transformer's act_loss of the last batch.
  double actLoss = 0;
  int64_t tokens = 0, correct = 0;
  /// Universal Transformer: nodes (encoder and decoder) and, for each ACT
  /// step s (from 1), how many of them entered step s.
  int64_t nodes = 0;
  std::vector<int64_t> entered;
  LossTotals &operator+=(const LossTotals &o) {
    loss += o.loss;
    tokens += o.tokens;
    correct += o.correct;
    nodes += o.nodes;
    if (entered.size() < o.entered.size())
      entered.resize(o.entered.size());
    for (size_t s = 0; s < o.entered.size(); ++s)
      entered[s] += o.entered[s];
    return *this;
  }
  double averageLoss() const { return tokens ? loss / double(tokens) : 0; }
  double accuracy() const {
    return tokens ? double(correct) / double(tokens) : 0;
  }
};

/// Where a run stands: what --resume restores.
struct TrainingPosition {
  /// Updates done (Adam's t).
  int64_t step = 0;
  /// The epoch under way (0-based) and the next batch of it.
  int64_t epoch = 0, batch = 0;
  /// Training batches whose gradients were computed, and how many of them
  /// wait in the accumulated gradients for an update.
  int64_t batchesSeen = 0, pending = 0;
};

class Trainer {
public:
  /// Checks `weights` (the initial parameters under DGL names; tensors the
  /// model does not train are kept for checkpoints), builds the training
  /// module, differentiates and compiles it.
  static llvm::Expected<std::unique_ptr<Trainer>>
  create(MLIRContext &ctx, const ModelConfig &config, TensorMap weights,
         const TrainerOptions &options);

  /// The training program as gnn IR text: @train_loss, @eval_loss,
  /// @train_grad (with the layers' forward and backward functions) and
  /// @train_step, before lowering.
  static llvm::Expected<std::string> emitIR(MLIRContext &ctx,
                                            const ModelConfig &config,
                                            const TensorMap &weights,
                                            const TrainerOptions &options);

  /// Freshly initialized parameters, as DGL's example initializes them:
  /// Xavier-uniform for every matrix, Linear biases uniform(+-1/sqrt(fan
  /// in)), LayerNorm 1 and 0; from gnnc's own random stream of `seed`.
  static TensorMap initialWeights(const ModelConfig &config, uint64_t seed,
                                  bool tieWeights);

  /// Computes the loss and gradients of `batch`, adds the gradients to the
  /// accumulated ones and, every grad_accum batches, updates the
  /// parameters. Fails (changing nothing) on a non-finite loss.
  llvm::Expected<LossTotals>
  trainBatch(llvm::ArrayRef<const TrainingExample *> batch);

private:
  struct Batch;

public:
  /// A batch made ready to train on: its graphs and index tensors built
  /// and, for a GPU program, already on the device. It must not outlive
  /// its trainer (its device copies are the program's).
  class PreparedBatch {
  public:
    PreparedBatch(PreparedBatch &&);
    PreparedBatch &operator=(PreparedBatch &&);
    ~PreparedBatch();

  private:
    friend class Trainer;
    explicit PreparedBatch(std::unique_ptr<Batch> batch);
    std::unique_ptr<Batch> batch;
  };
  /// Makes `batch` ready for trainBatch(). Safe to call on another thread
  /// while this trainer trains.
  llvm::Expected<PreparedBatch>
  prepareBatch(llvm::ArrayRef<const TrainingExample *> batch) const;
  /// trainBatch() of a prepared batch.
  llvm::Expected<LossTotals> trainBatch(PreparedBatch batch);

  /// A batch being prepared (prepareAhead) while the caller goes on.
  class BatchAhead {
  public:
    BatchAhead(BatchAhead &&) = default;
    BatchAhead &operator=(BatchAhead &&) = delete;
    /// Waits for an unfinished preparation; an unclaimed failure is
    /// dropped.
    ~BatchAhead();
    /// prepareBatch()'s result, once it is there (once only).
    llvm::Expected<PreparedBatch> take();

  private:
    friend class Trainer;
    struct Slot;
    BatchAhead(std::shared_ptr<Slot> slot, std::shared_future<void> done);
    std::shared_ptr<Slot> slot;
    std::shared_future<void> done;
  };
  /// prepareBatch() of `batch`: for a GPU program on the trainer's worker
  /// thread, so that the host builds the next batch and its copies cross
  /// while the device trains on this one; on the CPU, whose cores the
  /// training step keeps busy, at take() on the taking thread.
  BatchAhead prepareAhead(std::vector<const TrainingExample *> batch) const;

  /// The loss and accuracy of `batch` in evaluation mode (no dropout).
  llvm::Expected<LossTotals>
  evaluateBatch(llvm::ArrayRef<const TrainingExample *> batch);

  /// Loss and gradients of `batch` with the current parameters, no update:
  /// `loss` (the label-smoothed loss), for a Universal Transformer
  /// `act_loss`, and `grad.<name>` (the gradient of loss + act_loss) for
  /// every trained parameter (tied weights: the summed gradient under each
  /// of the three names).
  llvm::Expected<TensorMap>
  gradients(llvm::ArrayRef<const TrainingExample *> batch);

  /// Data-parallel training (fit() with a world): the parts of trainBatch
  /// that ranks run apart. The loss totals of `batch` and its gradients
  /// into `gradients` (grad.<argument>: a tied parameter's under each of its
  /// names), with the dropout of training batch number `streamIndex` (its
  /// getPosition().batchesSeen in one process); changes nothing. Fails on
  /// a non-finite loss.
  /// With announceGradients, `onGradient` sees each gradient (by its name
  /// in `gradients`, as dense float32 bytes valid during the call) as soon
  /// as the backward has computed it, on the calling thread.
  using GradientListener = llvm::function_ref<void(
      llvm::StringRef name, const void *data, size_t bytes)>;
  llvm::Expected<LossTotals>
  batchGradients(llvm::ArrayRef<const TrainingExample *> batch,
                 int64_t streamIndex, TensorMap &gradients,
                 GradientListener onGradient = {});
  /// The trained parameters in the order their gradients are complete in
  /// @train_grad's backward (each after the last of its arguments'
  /// announcements; by name without announceGradients), and the
  /// gradients (grad.<argument>) that make up each.
  const std::vector<std::string> &getGradientOrder() const {
    return gradientOrder;
  }
  const std::vector<std::string> &
  gradientNames(llvm::StringRef parameter) const;
  /// Adds the gradients of `parameter` among batchGradients() to its
  /// accumulated sum as @train_step adds a batch's: in the order of its
  /// arguments' names.
  void accumulate(const TensorMap &gradients, llvm::StringRef parameter);
  /// The accumulated sums by parameter (ranks pass them on and broadcast
  /// them); empty without accumulation.
  TensorMap &accumulatedGradients() { return accumulated; }
  /// Adam from the accumulated sums (@train_apply), which clears them: one
  /// update step.
  llvm::Error applyAccumulated();
  /// Every tensor of the trainer's state (parameters, moments, sums) in a
  /// fixed order: what a data-parallel run broadcasts from rank 0.
  std::vector<HostTensor *> stateTensors();
  const ModelConfig &getConfig() const { return config; }

  /// The parameters under DGL state_dict names (tied weights under all
  /// three), with the untrained tensors of the initial weights.
  TensorMap weights() const;

  /// Everything --resume needs besides the data: parameters, Adam moments,
  /// pending gradients, the position, and a fingerprint of the model and
  /// the hyperparameters.
  TensorMap state(const TrainingPosition &position) const;
  /// weights() and state() as views of the trainer's tensors (no copies,
  /// for writing them out): valid until the trainer next changes them.
  TensorMap weightViews() const;
  TensorMap stateViews(const TrainingPosition &position) const;
  /// Restores a state(); an error if it is another model's or config's, or
  /// holds a position no run reaches or a value that is not finite.
  llvm::Expected<TrainingPosition> restore(const TensorMap &state);
  /// The most epochs (gnn-train's --epochs) and batches a run trains.
  static constexpr int64_t kMaxEpochs = 1000000, kMaxBatchesSeen = int64_t(1)
                                                                   << 40;

  /// The order of the training set in `epoch` (shuffled from the seed and
  /// the epoch alone, so a resumed run sees the same batches).
  std::vector<int64_t> epochOrder(int64_t epoch, int64_t examples) const;

  /// The learning rate of update step `t` (1-based).
  double learningRate(int64_t t) const;

  const TrainingPosition &getPosition() const { return position; }
  const TrainerOptions &getOptions() const { return options; }
  void setPosition(const TrainingPosition &p) { position = p; }
  const CompileInfo &getCompileInfo() const {
    return program->getCompileInfo();
  }
  /// Names of the trained parameters (a tied group under its canonical
  /// name, tgt_embed.lut.weight).
  const std::vector<std::string> &getParameterNames() const { return names; }

private:
  Trainer() = default;
  /// Whether `p` is a position a run of these options can reach.
  llvm::Error checkPosition(const TrainingPosition &p) const;
  llvm::Expected<std::unique_ptr<Batch>>
  makeBatch(llvm::ArrayRef<const TrainingExample *> examples) const;
  /// The batch's inputs of the training program, by parameter name.
  std::vector<std::pair<const char *, Argument>>
  batchInputs(const Batch &batch) const;
  /// Runs training entry `entry` (@train_step or @train_grad) on `batch`
  /// with the dropout stream of training batch `streamIndex`; its loss
  /// totals (an error on a non-finite loss), its results in `out`.
  llvm::Expected<LossTotals>
  runTraining(const char *entry, const Batch &batch, int64_t streamIndex,
              const HostTensor *adam, std::map<std::string, HostTensor> &out,
              JitProgram::ResultListener onResult = {});
  bool universal() const {
    return config.architecture == Architecture::UniversalTransformer;
  }
  /// Runs `entry` on `batch`; results by name. Arguments named
  /// param.<p>, adam.m.<p>, adam.v.<p> and accum.<p> are the trainer's
  /// tensors, updated in place; `adam` is the step's Adam hyperparameters.
  llvm::Expected<std::map<std::string, HostTensor>>
  run(const char *entry, const Batch &batch, const HostTensor *rng,
      const HostTensor *adam = nullptr,
      JitProgram::ResultListener onResult = {});
  /// The parameters in the order @train_grad completes their gradients,
  /// from the order of its announcements (`announced`: result numbers).
  void orderGradients(llvm::ArrayRef<int64_t> announced);
  /// Loss, tokens and correct predictions from an entry's results.
  llvm::Expected<LossTotals>
  totals(const Batch &batch, std::map<std::string, HostTensor> &results) const;
  TensorMap collectWeights(bool views) const;
  TensorMap collectState(const TrainingPosition &position, bool views) const;
  /// The canonical parameter a weight name is (tied names map to one).
  std::string canonical(llvm::StringRef name) const;
  /// Each kind of per-parameter state the trainer keeps (parameters, Adam
  /// moments and, with accumulation, the sums), with its name prefix
  /// (model::kParamPrefix, ...).
  template <typename Self> static auto stateKinds(Self &self) {
    llvm::SmallVector<std::pair<const char *, decltype(&self.params)>, 4>
        kinds = {{model::kParamPrefix, &self.params},
                 {model::kMoment1Prefix, &self.moment1},
                 {model::kMoment2Prefix, &self.moment2}};
    if (self.options.accumulates())
      kinds.push_back({model::kAccumPrefix, &self.accumulated});
    return kinds;
  }
  /// The tensors that state names of one of stateKinds()'s prefixes are kept
  /// in (the prefix consumed from `name`); null for other names.
  TensorMap *stateOf(llvm::StringRef &name);
  /// For a GPU program: moves parameters, moments and sums into unified
  /// memory, which the program updates in place across steps (no copies
  /// in and out at every call). A no-op on the CPU.
  llvm::Error keepStateOnDevice();
  /// @train_step's `adam` argument for the next step: Adam at the Noam
  /// rate of step position.step + 1 if `update`, else no update.
  HostTensor adamHyperparameters(bool update) const;

  ModelConfig config;
  TrainerOptions options;
  /// Trained parameters by canonical name; Adam moments and accumulated
  /// gradients (only with accumulation) alike.
  TensorMap params, moment1, moment2, accumulated;
  /// Tensors of the initial weights that are not trained.
  TensorMap untrained;
  std::vector<std::string> names;
  HostTensor pe, timePE;
  std::vector<std::string> gradientOrder;
  /// Each parameter's gradients (grad.<argument>), sorted by name; built
  /// once, read by the exchange thread too.
  std::map<std::string, std::vector<std::string>> gradientPieces;
  std::unique_ptr<JitProgram> program;
  /// prepareAhead()'s thread, started at its first use.
  mutable std::unique_ptr<llvm::StdThreadPool> worker;
  TrainingPosition position;
  uint64_t fingerprint = 0;
};

} // namespace mlir::gnn

#endif // GNN_MODELS_TRAINER_H
