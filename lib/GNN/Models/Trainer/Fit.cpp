//===- Fit.cpp - the training loop over epochs ---------------------------===//
//
// Part of gnnc. Epochs of training batches in each epoch's order,
// validation, checkpoints and the step limit, as docs/training.md states
// them; printing is the caller's (callbacks).
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/Fit.h"

#include "DataParallel.h"
#include "TrainerDetail.h"

#include "GNN/Support/DirectoryLock.h"
#include "GNN/Support/SafeTensors.h"

#include "GNN/Support/OutputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <optional>

using namespace mlir::gnn;
using detail::fail;
using llvm::Error;
using llvm::Expected;
using llvm::Twine;

llvm::Expected<std::vector<TrainingExample>> mlir::gnn::readTrainingPairs(
    const std::string &srcPath, const std::string &tgtPath, const char *what,
    const Tokenizer &tokenizer, const ModelConfig &config) {
  std::string srcWhat = std::string(what) + " source";
  std::string tgtWhat = std::string(what) + " target";
  auto sources = readSequences(srcPath, srcWhat.c_str(), tokenizer,
                               config.srcVocab, config.maxLen);
  if (!sources)
    return sources.takeError();
  // The decoder input is <sos> + target: at most max_len tokens.
  auto targets = readSequences(tgtPath, tgtWhat.c_str(), tokenizer,
                               config.tgtVocab, config.maxLen - 1);
  if (!targets)
    return targets.takeError();
  if (sources->size() != targets->size())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "%s: the source file has %zu lines but the target file %zu", what,
        sources->size(), targets->size());
  std::vector<TrainingExample> pairs;
  for (auto [s, t] : llvm::zip_equal(*sources, *targets))
    pairs.push_back({std::move(s), std::move(t)});
  return pairs;
}

std::string mlir::gnn::runFile(const std::string &outDir,
                               llvm::StringRef name) {
  llvm::SmallString<256> path(outDir);
  llvm::sys::path::append(path, name);
  return path.str().str();
}

Error mlir::gnn::resumeFrom(Trainer &trainer, const std::string &outDir) {
  std::string statePath = runFile(outDir, kTrainStateFile);
  auto state = readSafeTensors(statePath);
  if (!state)
    return fail("--resume: " + llvm::toString(state.takeError()));
  auto restored = trainer.restore(*state);
  if (!restored)
    return fail("--resume: " + statePath + ": " +
                llvm::toString(restored.takeError()));
  return Error::success();
}

Error mlir::gnn::saveCheckpoint(const Trainer &trainer,
                                const std::string &outDir,
                                const std::string &name,
                                const TrainingPosition &position) {
  // A checkpoint is a model to run and a state to resume: never one with
  // weights that are not finite (a learning rate far too large).
  // Views: a checkpoint streams the trainer's tensors to disk, copying
  // none of them in memory first.
  TensorMap weights = trainer.weightViews();
  if (std::optional<std::string> bad = firstNonFiniteTensor(weights))
    return fail("'" + *bad + "' is not finite after update step " +
                Twine(position.step) + ": " + name +
                " is not written; the last complete checkpoint is kept");
  if (Error e = writeSafeTensors(runFile(outDir, name), weights))
    return e;
  return writeSafeTensors(runFile(outDir, kTrainStateFile),
                          trainer.stateViews(position));
}

namespace {
/// One run of fit(): the data, the limits and where the trainer stands.
class Fit {
public:
  Fit(Trainer &t, llvm::ArrayRef<TrainingExample> train,
      llvm::ArrayRef<TrainingExample> valid, const FitOptions &options,
      const FitCallbacks &callbacks)
      : t(t), train(train), valid(valid), options(options),
        callbacks(callbacks), batchSize(t.getOptions().batchSize),
        examples(int64_t(train.size())),
        batches((examples + batchSize - 1) / batchSize) {}

  Expected<FitEnd> run();

private:
  /// The step limit's updates are done, none of the next one's batches
  /// pending.
  bool atStepLimit(const TrainingPosition &at) const {
    return options.maxSteps > 0 && at.step >= options.maxSteps &&
           at.pending == 0;
  }
  std::vector<const TrainingExample *>
  slice(llvm::ArrayRef<TrainingExample> data, const std::vector<int64_t> *order,
        int64_t begin) const {
    std::vector<const TrainingExample *> batch;
    int64_t end = std::min<int64_t>(begin + batchSize, data.size());
    for (int64_t i = begin; i < end; ++i)
      batch.push_back(&data[order ? (*order)[i] : i]);
    return batch;
  }
  /// Several ranks, or gradient sums over NCCL (which one rank may take, as
  /// a check of that path).
  bool parallel() const {
    return options.world && (options.world->size() > 1 || options.tensors);
  }
  /// The exchange during the backward, where this run takes it so.
  detail::OverlappedExchange *overlapped() {
    if (!exchange && options.overlapExchange &&
        t.getOptions().announceGradients && !options.tensors &&
        options.world->callableFromAnyThread())
      exchange = std::make_unique<detail::OverlappedExchange>(
          t, *options.world, options.bucketBytes);
    return exchange.get();
  }
  /// Whether this process writes the run's files (rank 0).
  bool writer() const { return !parallel() || options.world->rank() == 0; }
  /// `e` where this process alone runs; else what the ranks agree on.
  Error agreed(Error e) const {
    return parallel() ? agree(*options.world, std::move(e)) : std::move(e);
  }
  Error save(const std::string &name, const TrainingPosition &at) const {
    Error e = Error::success();
    if (!options.outDir.empty() && writer())
      e = saveCheckpoint(t, options.outDir, name, at);
    return agreed(std::move(e));
  }
  /// The error of a failed training batch (0-based `batch` of `epoch`).
  Error batchFailed(Error e, int64_t epoch, int64_t batch) const {
    return fail(llvm::toString(std::move(e)) + " at update step " +
                Twine(t.getPosition().step + 1) + " (epoch " +
                Twine(epoch + 1) + ", batch " + Twine(batch + 1) +
                "); the last complete checkpoint is kept");
  }
  /// Trains the epoch's batches from `first`; whether the step limit
  /// stopped it (`report.train` holds the totals).
  Expected<bool> trainEpoch(int64_t epoch, int64_t first, EpochReport &report);
  /// Starts preparing batch `b` of `epoch`, whose example order is `order`
  /// (Trainer::prepareAhead): on a GPU the host builds it and its copies
  /// cross while the device trains on the batch before, the next epoch's
  /// first one during the epoch's last step.
  void prepareAhead(int64_t epoch, int64_t b,
                    const std::vector<int64_t> &order) {
    ahead.emplace(
        Ahead{epoch, b, t.prepareAhead(slice(train, &order, b * batchSize))});
  }
  /// Batch `b` of `epoch`: the one prepared ahead, or made now.
  Expected<Trainer::PreparedBatch>
  takeBatch(int64_t epoch, int64_t b, const std::vector<int64_t> &order) {
    if (!ahead || ahead->epoch != epoch || ahead->batch != b)
      prepareAhead(epoch, b, order);
    Expected<Trainer::PreparedBatch> batch = ahead->prepared.take();
    ahead.reset();
    return batch;
  }
  /// trainEpoch() of a data-parallel run: rounds of one batch per rank.
  Expected<bool> trainRounds(int64_t epoch, int64_t first, EpochReport &report);
  /// After the epoch's batches before `next`: whether the step limit stops
  /// the epoch (mid-epoch, with a step-N checkpoint).
  Expected<bool> stopsAtStepLimit(int64_t epoch, int64_t next,
                                  EpochReport &report);
  Expected<LossTotals> validate();
  Expected<LossTotals> validateApart();

  Trainer &t;
  llvm::ArrayRef<TrainingExample> train, valid;
  const FitOptions &options;
  const FitCallbacks &callbacks;
  int64_t batchSize, examples, batches;
  std::unique_ptr<detail::OverlappedExchange> exchange;
  /// The batch prepared ahead and where it is.
  struct Ahead {
    int64_t epoch, batch;
    Trainer::BatchAhead prepared;
  };
  std::optional<Ahead> ahead;
};
} // namespace

Expected<bool> Fit::stopsAtStepLimit(int64_t epoch, int64_t next,
                                     EpochReport &report) {
  if (!atStepLimit(t.getPosition()))
    return false;
  // At the epoch's end, the epoch's checkpoint is the stop's.
  if (next < batches) {
    TrainingPosition at = t.getPosition();
    at.epoch = epoch;
    at.batch = next;
    if (Error e = save("step-" + std::to_string(at.step) + ".safetensors", at))
      return std::move(e);
    report.midEpoch = true;
  }
  return true;
}

Expected<bool> Fit::trainEpoch(int64_t epoch, int64_t first,
                               EpochReport &report) {
  if (parallel())
    return trainRounds(epoch, first, report);
  std::vector<int64_t> order = t.epochOrder(epoch, examples);
  for (int64_t b = first; b < batches; ++b) {
    Expected<Trainer::PreparedBatch> batch = takeBatch(epoch, b, order);
    if (b + 1 < batches)
      prepareAhead(epoch, b + 1, order);
    else if (epoch + 1 < options.epochs)
      prepareAhead(epoch + 1, 0, t.epochOrder(epoch + 1, examples));
    Expected<LossTotals> done = batch ? t.trainBatch(std::move(*batch))
                                      : Expected<LossTotals>(batch.takeError());
    if (!done)
      return batchFailed(done.takeError(), epoch, b);
    report.train += *done;
    if (callbacks.onBatch)
      callbacks.onBatch(epoch + 1, b + 1, batches, report.train);
    if (callbacks.interrupted && callbacks.interrupted())
      return fail("interrupted after update step " +
                  Twine(t.getPosition().step) + " (epoch " + Twine(epoch + 1) +
                  ", batch " + Twine(b + 1) +
                  "); the last complete checkpoint is kept");
    Expected<bool> stop = stopsAtStepLimit(epoch, b + 1, report);
    if (!stop || *stop)
      return stop;
  }
  return false;
}

Expected<bool> Fit::trainRounds(int64_t epoch, int64_t first,
                                EpochReport &report) {
  Communicator &world = *options.world;
  const int64_t ranks = world.size(), me = world.rank();
  const int64_t maxDepth = t.getConfig().maxDepth;
  std::vector<int64_t> order = t.epochOrder(epoch, examples);
  for (int64_t b = first; b < batches;) {
    // A round: the stream's batches up to the next multiple of K (an update
    // ends on one) or the epoch's end; its i-th batch is rank start + i's.
    TrainingPosition at = t.getPosition();
    const int64_t start = at.pending % ranks;
    const int64_t count = std::min(ranks - start, batches - b);
    const int64_t mine = me - start;
    std::optional<LossTotals> totals;
    TensorMap gradients;
    Error failed = Error::success();
    detail::OverlappedExchange *during = overlapped();
    if (during)
      during->begin(int(start), int(count));
    if (mine >= 0 && mine < count) {
      auto onGradient = [&](llvm::StringRef name, const void *data,
                            size_t bytes) {
        during->gradientReady(name, data, bytes);
      };
      Expected<LossTotals> done =
          t.batchGradients(slice(train, &order, (b + mine) * batchSize),
                           at.batchesSeen + mine, gradients,
                           during ? Trainer::GradientListener(onGradient)
                                  : Trainer::GradientListener());
      if (done)
        totals = std::move(*done);
      else
        failed = batchFailed(done.takeError(), epoch, b + mine);
    }
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::time_point from, Clock::time_point to) {
      return std::chrono::duration<double>(to - from).count();
    };
    // During the backward, every rank (a failed one too) ends the round's
    // exchange before the ranks agree on failures; the sums of a failed
    // round are never applied.
    auto computed = Clock::now();
    if (during)
      report.duringBackwardSeconds += during->finish();
    auto finished = Clock::now();
    if (Error e = agreed(std::move(failed)))
      return std::move(e);
    std::vector<std::optional<LossTotals>> all =
        detail::gatherTotals(world, totals, maxDepth);
    auto gathered = Clock::now();
    if (!during)
      detail::exchangeGradients(t, options.tensors ? *options.tensors : world,
                                int(start), int(count), gradients);
    auto exchanged = Clock::now();
    report.waitSeconds += seconds(finished, gathered);
    report.exchangeSeconds +=
        seconds(computed, finished) + seconds(gathered, exchanged);
    for (int64_t i = 0; i < count; ++i) {
      report.train += *all[start + i];
      if (callbacks.onBatch)
        callbacks.onBatch(epoch + 1, b + i + 1, batches, report.train);
    }
    b += count;
    at.batchesSeen += count;
    at.pending += count;
    t.setPosition(at);
    if (at.pending == t.getOptions().gradAccum)
      if (Error e = agreed(t.applyAccumulated()))
        return std::move(e);
    Expected<bool> stop = stopsAtStepLimit(epoch, b, report);
    if (!stop || *stop)
      return stop;
  }
  return false;
}

Expected<LossTotals> Fit::validateApart() {
  // Rank r evaluates the batches r, r + K, ...; every rank sums all of
  // them in the batches' order, as one process does.
  Communicator &world = *options.world;
  const int64_t ranks = world.size(), me = world.rank();
  const int64_t count = (int64_t(valid.size()) + batchSize - 1) / batchSize;
  LossTotals validated;
  for (int64_t round = 0; round < count; round += ranks) {
    std::optional<LossTotals> mine;
    Error failed = Error::success();
    if (round + me < count) {
      Expected<LossTotals> done =
          t.evaluateBatch(slice(valid, nullptr, (round + me) * batchSize));
      if (done)
        mine = std::move(*done);
      else
        failed = fail("validation: " + llvm::toString(done.takeError()));
    }
    if (Error e = agreed(std::move(failed)))
      return std::move(e);
    for (const std::optional<LossTotals> &totals :
         detail::gatherTotals(world, mine, t.getConfig().maxDepth))
      if (totals)
        validated += *totals;
  }
  return validated;
}

Expected<LossTotals> Fit::validate() {
  if (parallel())
    return validateApart();
  LossTotals validated;
  for (int64_t begin = 0; begin < int64_t(valid.size()); begin += batchSize) {
    auto done = t.evaluateBatch(slice(valid, nullptr, begin));
    if (!done)
      return fail("validation: " + llvm::toString(done.takeError()));
    validated += *done;
  }
  return validated;
}

Expected<FitEnd> Fit::run() {
  // One run writes into a directory at a time (rank 0 for all ranks).
  std::optional<DirectoryLock> lock;
  Error locked = Error::success();
  if (!options.outDir.empty() && writer()) {
    Expected<DirectoryLock> acquired =
        DirectoryLock::acquire(options.outDir, "the output directory");
    if (acquired)
      lock.emplace(std::move(*acquired));
    else
      locked = acquired.takeError();
  }
  if (Error e = agreed(std::move(locked)))
    return std::move(e);
  if (parallel()) {
    int64_t ranks = options.world->size();
    if (t.getOptions().gradAccum % ranks != 0)
      return fail("a data-parallel trainer sums K x A batches per update: "
                  "its grad_accum " +
                  Twine(t.getOptions().gradAccum) +
                  " is not a multiple of the " + Twine(ranks) + " ranks");
    detail::broadcastState(t, *options.world);
  }
  TrainingPosition position = t.getPosition();
  // A resumed run may have nothing left to do; it changes nothing (not
  // even one more update).
  if (atStepLimit(position))
    return FitEnd::AlreadyAtStepLimit;
  if (position.epoch >= options.epochs)
    return FitEnd::AlreadyDone;
  // The state fixes the batch size, not the data: a state saved mid-epoch
  // on more training pairs than given now continues nowhere.
  if (position.epoch * batches + position.batch != position.batchesSeen &&
      position.batch < batches)
    return fail(Twine("--resume: the state has trained ") +
                Twine(position.batchesSeen) + " batches, but is at batch " +
                Twine(position.batch + 1) + " of epoch " +
                Twine(position.epoch + 1) + " of " + Twine(batches) +
                " batch(es) (is it the data the state was trained on?)");
  if (position.batch >= batches)
    return fail(Twine("--resume: the state is at batch ") +
                Twine(position.batch + 1) + " of epoch " +
                Twine(position.epoch + 1) + ", but the training data makes " +
                Twine(batches) + " batch(es) of " + Twine(batchSize) +
                " (is it the data the state was trained on?)");
  for (int64_t epoch = position.epoch; epoch < options.epochs; ++epoch) {
    EpochReport report;
    report.epoch = epoch + 1;
    auto start = std::chrono::steady_clock::now();
    Expected<bool> stopped =
        trainEpoch(epoch, epoch == position.epoch ? position.batch : 0, report);
    if (!stopped)
      return stopped.takeError();
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    Expected<LossTotals> validated = validate();
    if (!validated)
      return validated.takeError();
    report.valid = *validated;
    report.validated = !valid.empty();
    report.step = t.getPosition().step;
    bool goOn = !callbacks.onEpoch || callbacks.onEpoch(report);
    if (parallel()) {
      // Rank 0's callback decides.
      char decision = goOn;
      options.world->broadcast(&decision, 1, 0);
      goOn = decision;
    }
    if (report.midEpoch)
      return FitEnd::StepLimit;
    TrainingPosition at = t.getPosition();
    at.epoch = epoch + 1;
    at.batch = 0;
    std::string checkpoint =
        "epoch-" + std::to_string(epoch + 1) + ".safetensors";
    if (Error e = save(checkpoint, at))
      return std::move(e);
    if (!options.outDir.empty()) {
      Error e = Error::success();
      if (callbacks.afterCheckpoint && writer())
        e = callbacks.afterCheckpoint(runFile(options.outDir, checkpoint),
                                      epoch + 1);
      if (Error agreedError = agreed(std::move(e)))
        return std::move(agreedError);
    }
    if (*stopped)
      return FitEnd::StepLimit;
    t.setPosition(at);
    position = at;
    if (!goOn)
      return FitEnd::Stopped;
  }
  return FitEnd::Epochs;
}

Expected<FitEnd> mlir::gnn::fit(Trainer &trainer,
                                llvm::ArrayRef<TrainingExample> train,
                                llvm::ArrayRef<TrainingExample> valid,
                                const FitOptions &options,
                                const FitCallbacks &callbacks) {
  return Fit(trainer, train, valid, options, callbacks).run();
}

Error mlir::gnn::readTrainingData(const ModelConfig &config, bool ids,
                                  const std::string &trainSrc,
                                  const std::string &trainTgt,
                                  const std::string &validSrc,
                                  const std::string &validTgt,
                                  std::vector<TrainingExample> &train,
                                  std::vector<TrainingExample> &valid) {
  auto tokenizer = readTokenizer(config, ids);
  if (!tokenizer)
    return tokenizer.takeError();
  auto read =
      readTrainingPairs(trainSrc, trainTgt, "training", *tokenizer, config);
  if (!read)
    return read.takeError();
  train = std::move(*read);
  if (validSrc.empty())
    return Error::success();
  read =
      readTrainingPairs(validSrc, validTgt, "validation", *tokenizer, config);
  if (!read)
    return read.takeError();
  valid = std::move(*read);
  return Error::success();
}

Expected<TensorMap> mlir::gnn::initialTrainingWeights(
    const ModelConfig &config, const std::string &initPath,
    llvm::StringRef what, uint64_t seed, bool tieWeights) {
  if (initPath.empty())
    return Trainer::initialWeights(config, seed, tieWeights);
  auto read = readSafeTensors(initPath);
  if (!read)
    return fail(what + ": " + llvm::toString(read.takeError()));
  return std::move(*read);
}

std::string mlir::gnn::formatEpochLine(const EpochReport &r) {
  std::string line;
  llvm::raw_string_ostream os(line);
  os << llvm::format("epoch %lld: train loss %.4f acc %.4f", (long long)r.epoch,
                     r.train.averageLoss(), r.train.accuracy());
  if (r.validated)
    os << llvm::format(" | valid loss %.4f acc %.4f", r.valid.averageLoss(),
                       r.valid.accuracy());
  if (r.train.nodes) {
    // ACT: the share of nodes that entered each step.
    os << " | steps";
    for (auto [s, n] : llvm::enumerate(r.train.entered))
      os << llvm::format(" %zu:%.0f%%", s + 1,
                         100.0 * double(n) / double(r.train.nodes));
  }
  os << llvm::format(" | %.2f s, %.0f tokens/s, step %lld", r.seconds,
                     r.tokensPerSecond(), (long long)r.step);
  return os.str();
}

Error mlir::gnn::prepareRunDirectory(const std::string &dir,
                                     llvm::StringRef what) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create %s '%s': %s",
                                   what.str().c_str(), dir.c_str(),
                                   ec.message().c_str());
  llvm::SmallString<256> probe(dir);
  llvm::sys::path::append(probe, ".gnn-train-probe");
  if (Error e = writeFileAtomically(probe, "probe"))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(), "%s '%s' is not writable: %s",
        what.str().c_str(), dir.c_str(), llvm::toString(std::move(e)).c_str());
  llvm::sys::fs::remove(probe);
  return Error::success();
}

Error mlir::gnn::checkTrainingSettings(
    const TrainingSettings &s,
    llvm::function_ref<std::string(llvm::StringRef)> name) {
  auto bad = [&](llvm::StringRef option, const llvm::Twine &rule) {
    return fail(name(option) + " " + rule);
  };
  const TrainerOptions &o = s.trainer;
  if (s.epochs < 1 || s.epochs > 1000000)
    return bad("epochs", "must be between 1 and 10^6");
  // Not given is no limit; a limit of no updates would train nothing.
  if (s.maxSteps && *s.maxSteps < 1)
    return bad("max_steps", "must be at least 1");
  if (o.batchSize < 1 || o.batchSize > (int64_t(1) << 24))
    return bad("batch_size", "must be between 1 and 2^24");
  if (!(o.labelSmoothing >= 0 && o.labelSmoothing < 1))
    return bad("label_smoothing", "must be in [0, 1)");
  if (!(o.dropout >= 0 && o.dropout < 1))
    return bad("dropout", "must be in [0, 1)");
  if (!(o.lrFactor > 0 && std::isfinite(o.lrFactor)))
    return bad("lr_factor", "must be a positive number");
  if (o.warmup < 1)
    return bad("warmup", "must be at least 1");
  if (o.gradAccum < 1 || o.gradAccum > 1000000)
    return bad("grad_accum", "must be between 1 and 10^6");
  if (!(o.actLossWeight >= 0 && std::isfinite(o.actLossWeight)))
    return bad("act_loss_weight", "must be a non-negative number");
  if (o.threads < 0 || o.threads > 4096)
    return bad("threads", "must be between 0 (all cores) and 4096");
  if (s.device != "cpu" && s.device != "cuda")
    return bad("device", "must be cpu or cuda, not '" + s.device + "'");
  if (s.resume && s.init)
    return bad("resume",
               "continues from the state; it takes no " + name("init"));
  return Error::success();
}
