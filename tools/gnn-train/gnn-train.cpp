//===- gnn-train.cpp - train Transformers with compiled training steps ---===//
//
// Part of gnnc.
//
//   gnn-train --config MODEL.json --train-src FILE --train-tgt FILE
//             [--valid-src FILE --valid-tgt FILE] [--ids] --out-dir DIR
//             [--init WEIGHTS.safetensors] [--seed N] [--epochs N]
//             [--max-steps N] [--batch-size B] [--label-smoothing E]
//             [--dropout P] [--lr-factor F] [--warmup W] [--grad-accum K]
//             [--tie-weights] [--act-loss-weight W] [--threads T] [--resume]
//             [--grads-out FILE] [--device cpu|cuda] [--viz-seq N]
//
// Trains as docs/training.md states it; after each epoch
// writes DIR/epoch-N.safetensors (DGL state_dict names) and
// DIR/train-state.safetensors (what --resume continues from), each whole
// or not at all.
//
//===----------------------------------------------------------------------===//

#include "GNN/InitAll.h"
#include "GNN/Models/Trainer.h"
#include "GNN/Models/TransformerRunner.h"
#include "GNN/Runner/CompileThreads.h"
#include "GNN/Support/CompileCache.h"
#include "GNN/Support/FatalErrors.h"
#include "GNN/Support/HeapSettings.h"
#include "GNN/Support/OutputFile.h"
#include "GNN/Support/SafeTensors.h"
#include "gnnc/cuda.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>

using namespace mlir;
using namespace mlir::gnn;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("gnn-train options");
cl::opt<std::string> configFile("config", cl::cat(category),
                                cl::desc("model config (JSON)"),
                                cl::value_desc("MODEL.json"));
cl::opt<std::string> trainSrc("train-src", cl::cat(category),
                              cl::desc("training sources, one a line"));
cl::opt<std::string>
    trainTgt("train-tgt", cl::cat(category),
             cl::desc("expected outputs, one a line (no <sos>/<eos>)"));
cl::opt<std::string> validSrc("valid-src", cl::cat(category),
                              cl::desc("validation sources"));
cl::opt<std::string> validTgt("valid-tgt", cl::cat(category),
                              cl::desc("validation expected outputs"));
cl::opt<bool> idsInput("ids", cl::cat(category),
                       cl::desc("lines hold integer token ids"));
cl::opt<std::string> outDir("out-dir", cl::cat(category),
                            cl::desc("where checkpoints go"));
cl::opt<std::string>
    initFile("init", cl::cat(category),
             cl::desc("initial weights (default: fresh, from --seed)"));
cl::opt<uint64_t> seed("seed", cl::cat(category), cl::init(1),
                       cl::desc("seed of initialization, order and dropout"));
cl::opt<int64_t> epochs("epochs", cl::cat(category), cl::init(10),
                        cl::desc("epochs to train (default 10)"));
cl::opt<int64_t>
    maxSteps("max-steps", cl::cat(category), cl::init(0),
             cl::desc("stop after this many updates (default: no limit)"));
cl::opt<int64_t> batchSize("batch-size", cl::cat(category), cl::init(128),
                           cl::desc("sequences per batch (default 128)"));
cl::opt<double> labelSmoothing("label-smoothing", cl::cat(category),
                               cl::init(0.1),
                               cl::desc("label smoothing (default 0.1)"));
cl::opt<double> dropout("dropout", cl::cat(category), cl::init(0.1),
                        cl::desc("dropout rate (default 0.1)"));
cl::opt<double> lrFactor("lr-factor", cl::cat(category), cl::init(0.1),
                         cl::desc("Noam factor (default 0.1)"));
cl::opt<int64_t> warmup("warmup", cl::cat(category), cl::init(4000),
                        cl::desc("Noam warmup steps (default 4000)"));
cl::opt<int64_t> gradAccum("grad-accum", cl::cat(category), cl::init(1),
                           cl::desc("batches per update (default 1)"));
cl::opt<bool>
    tieWeights("tie-weights", cl::cat(category),
               cl::desc("one tensor for both embeddings and the generator"));
cl::opt<double> actLossWeight(
    "act-loss-weight", cl::cat(category), cl::init(0.01),
    cl::desc("weight of the ACT loss (universal_transformer; default 0.01)"));
cl::opt<bool> resume("resume", cl::cat(category),
                     cl::desc("continue from DIR/train-state.safetensors"));
cl::opt<std::string> gradsOut(
    "grads-out", cl::cat(category),
    cl::desc("write the first batch's loss and gradients here and exit"));
cl::opt<std::string> device("device", cl::cat(category), cl::init("cpu"),
                            cl::desc("cpu or cuda"));
cl::opt<bool> deviceLoops(
    "device-loops", cl::cat(category), cl::Hidden,
    cl::desc("(--device cpu) lower the step's ops whose GPU form is plain "
             "loops as for a GPU and run that form here: tests check the GPU "
             "training step's arithmetic without a GPU"));
cl::opt<bool> emitIR("emit-ir", cl::cat(category),
                     cl::desc("print the training program (gnn IR) and exit"));
cl::opt<int64_t> vizSeq(
    "viz-seq", cl::cat(category), cl::init(-1),
    cl::desc("after each epoch, write DIR/attention-epoch-N.safetensors: the "
             "attention maps of this validation pair (0-based) under the "
             "epoch's weights, for scripts/plot-attention.py"));
cl::opt<bool> shuffle("shuffle", cl::cat(category), cl::init(true),
                      cl::desc("shuffle the training set every epoch "
                               "(default true; --shuffle=false keeps the "
                               "files' order)"));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "gnn-train") << message << "\n";
  return 1;
}

/// Pairs of a source and a target file; `what` names them in errors.
llvm::Expected<std::vector<TrainingExample>>
readPairs(const std::string &src, const std::string &tgt, const char *what,
          const Tokenizer &tokenizer, const ModelConfig &config) {
  std::string srcWhat = std::string(what) + " source";
  std::string tgtWhat = std::string(what) + " target";
  auto sources = readSequences(src, srcWhat.c_str(), tokenizer, config.srcVocab,
                               config.maxLen);
  if (!sources)
    return sources.takeError();
  // The decoder input is <sos> + target: at most max_len tokens.
  auto targets = readSequences(tgt, tgtWhat.c_str(), tokenizer, config.tgtVocab,
                               config.maxLen - 1);
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

std::vector<const TrainingExample *>
slice(const std::vector<TrainingExample> &data,
      const std::vector<int64_t> &order, int64_t begin, int64_t end) {
  std::vector<const TrainingExample *> batch;
  for (int64_t i = begin; i < end; ++i)
    batch.push_back(&data[order[i]]);
  return batch;
}

/// A bar on stderr while an epoch runs, when stderr is a terminal.
class Progress {
public:
  Progress(int64_t epoch, int64_t total)
      : epoch(epoch), total(total), shown(llvm::errs().is_displayed()) {}
  void update(int64_t done, const LossTotals &sofar) {
    if (!shown)
      return;
    constexpr int width = 30;
    int filled = total ? int(width * done / total) : width;
    llvm::errs() << llvm::format("\repoch %lld [", (long long)epoch)
                 << std::string(filled, '=') << std::string(width - filled, ' ')
                 << llvm::format("] %lld/%lld batches, loss %.4f",
                                 (long long)done, (long long)total,
                                 sofar.averageLoss());
  }
  ~Progress() {
    if (shown)
      llvm::errs() << "\r" << std::string(80, ' ') << "\r";
  }

private:
  int64_t epoch, total;
  bool shown;
};

/// Checks that `dir` exists (made if not) and takes files.
llvm::Error prepareDirectory(const std::string &dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create --out-dir '%s': %s",
                                   dir.c_str(), ec.message().c_str());
  llvm::SmallString<256> probe(dir);
  llvm::sys::path::append(probe, ".gnn-train-probe");
  if (llvm::Error e = writeFileAtomically(probe, "probe"))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(), "--out-dir '%s' is not writable: %s",
        dir.c_str(), llvm::toString(std::move(e)).c_str());
  llvm::sys::fs::remove(probe);
  return llvm::Error::success();
}

std::string inDir(llvm::StringRef name) {
  llvm::SmallString<256> path(outDir.getValue());
  llvm::sys::path::append(path, name);
  return path.str().str();
}

/// The weights, then the state, each whole or not at all: a state on disk
/// always comes with the checkpoint it continues from.
llvm::Error saveCheckpoint(const Trainer &trainer, const std::string &name,
                           const TrainingPosition &position) {
  // Views: a checkpoint streams the trainer's tensors to disk, copying
  // none of them in memory first.
  if (llvm::Error e = writeSafeTensors(inDir(name), trainer.weightViews()))
    return e;
  return writeSafeTensors(inDir("train-state.safetensors"),
                          trainer.stateViews(position));
}

/// DIR/attention-epoch-N.safetensors: the attention maps of validation
/// pair `index` under the checkpoint `weights` (one file per epoch, which
/// scripts/plot-attention.py animates).
llvm::Error writeAttentionMaps(MLIRContext &context, const ModelConfig &config,
                               const std::string &weights,
                               const TrainingExample &pair, int64_t index,
                               CompileCache *cache, unsigned compileThreads,
                               int64_t epoch) {
  ModelOptions options;
  options.compile.cache = cache;
  options.compile.compileThreads = compileThreads;
  options.weightsPath = weights;
  options.positions = config.maxLen;
  options.attentionWeights = true;
  auto model = TransformerModel::load(context, config, options);
  if (!model)
    return model.takeError();
  AttentionMaps maps;
  maps.sequences = {0};
  maps.names = {index};
  Sequence decoderInput = {kSos};
  llvm::append_range(decoderInput, pair.target);
  auto results = (*model)->forward({pair.source}, {decoderInput}, &maps);
  if (!results)
    return results.takeError();
  return writeSafeTensors(
      inDir("attention-epoch-" + std::to_string(epoch) + ".safetensors"),
      maps.tensors);
}

llvm::Error checkOptions(int threads) {
  auto bad = [](const llvm::Twine &m) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), m);
  };
  if (configFile.empty() || trainSrc.empty() || trainTgt.empty())
    return bad("give --config, --train-src and --train-tgt");
  if (outDir.empty() && gradsOut.empty() && !emitIR)
    return bad("give --out-dir (or --grads-out)");
  if (validSrc.empty() != validTgt.empty())
    return bad("give both --valid-src and --valid-tgt, or neither");
  if (vizSeq < -1)
    return bad("--viz-seq must not be negative");
  if (vizSeq >= 0 && validSrc.empty())
    return bad("--viz-seq names a validation pair: give --valid-src and "
               "--valid-tgt");
  if (epochs < 1 || epochs > 1000000)
    return bad("--epochs must be between 1 and 10^6");
  // Not given is no limit; a limit of no updates would train nothing.
  if (maxSteps.getNumOccurrences() && maxSteps < 1)
    return bad("--max-steps must be at least 1");
  if (batchSize < 1 || batchSize > (int64_t(1) << 24))
    return bad("--batch-size must be between 1 and 2^24");
  if (!(labelSmoothing >= 0 && labelSmoothing < 1))
    return bad("--label-smoothing must be in [0, 1)");
  if (!(dropout >= 0 && dropout < 1))
    return bad("--dropout must be in [0, 1)");
  if (!(lrFactor > 0 && std::isfinite(lrFactor.getValue())))
    return bad("--lr-factor must be a positive number");
  if (warmup < 1)
    return bad("--warmup must be at least 1");
  if (gradAccum < 1 || gradAccum > 1000000)
    return bad("--grad-accum must be between 1 and 10^6");
  if (!(actLossWeight >= 0 && std::isfinite(actLossWeight.getValue())))
    return bad("--act-loss-weight must be a non-negative number");
  if (threads < 0 || threads > 4096)
    return bad("--threads must be between 0 (all cores) and 4096");
  if (device != "cpu" && device != "cuda")
    return bad("--device must be cpu or cuda, not '" + device + "'");
  if (deviceLoops && device != "cpu")
    return bad("--device-loops runs the GPU form on the CPU (--device cpu)");
  if (resume && !initFile.empty())
    return bad("--resume continues from the state; it takes no --init");
  if (resume && !gradsOut.empty())
    return bad("--grads-out computes gradients of the given weights; it "
               "takes no --resume");
  return llvm::Error::success();
}
} // namespace

static int run(int argc, char **argv) {
  keepFreedHeapForReuse();
  // libLLVM registers an option named "threads" of its own; --threads is
  // part of gnn-train's interface, so LLVM's is renamed first.
  auto &registered = cl::getRegisteredOptions();
  if (auto it = registered.find("threads"); it != registered.end())
    it->second->setArgStr("llvm-threads");
  cl::opt<int> threads("threads", cl::cat(category), cl::init(0),
                       cl::desc("threads (default: all cores)"));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "train Transformers with compiled steps\n");
  if (llvm::Error e = checkOptions(threads))
    return fail(llvm::toString(std::move(e)));

  if (device == "cuda") {
    char why[256];
    if (!gnn_cuda_init(why, sizeof(why)))
      return fail("--device cuda: " + llvm::Twine(why) +
                  "; run with --device cpu");
  }
  auto config = readModelConfig(configFile);
  if (!config)
    return fail(llvm::toString(config.takeError()));
  auto tokenizer = readTokenizer(*config, idsInput);
  if (!tokenizer)
    return fail(llvm::toString(tokenizer.takeError()));
  auto train = readPairs(trainSrc, trainTgt, "training", *tokenizer, *config);
  if (!train)
    return fail(llvm::toString(train.takeError()));
  std::vector<TrainingExample> valid;
  if (!validSrc.empty()) {
    auto read =
        readPairs(validSrc, validTgt, "validation", *tokenizer, *config);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    valid = std::move(*read);
  }
  if (vizSeq >= int64_t(valid.size()))
    return fail("--viz-seq " + llvm::Twine(vizSeq) + " is past the " +
                llvm::Twine(valid.size()) + " validation pairs");
  if (!outDir.empty())
    if (llvm::Error e = prepareDirectory(outDir))
      return fail(llvm::toString(std::move(e)));

  TensorMap weights;
  if (!initFile.empty()) {
    auto read = readSafeTensors(initFile);
    if (!read)
      return fail("--init: " + llvm::toString(read.takeError()));
    weights = std::move(*read);
  } else {
    weights = Trainer::initialWeights(*config, seed, tieWeights);
  }

  if (threads > 0)
    setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
  CompileThreads compileThreads{unsigned(threads)};
  DialectRegistry registry;
  registerAllDialectsAndExtensions(registry);
  MLIRContext context(registry);
  compileThreads.attach(context);
  context.loadAllAvailableDialects();
  std::optional<CompileCache> cache;
  std::string cachePath = defaultCompileCacheDirectory();
  if (!cachePath.empty())
    cache.emplace(cachePath);
  TrainerOptions options;
  options.seed = seed;
  options.batchSize = batchSize;
  options.labelSmoothing = labelSmoothing;
  options.dropout = dropout;
  options.lrFactor = lrFactor;
  options.warmup = warmup;
  options.gradAccum = gradAccum;
  options.tieWeights = tieWeights;
  options.actLossWeight = actLossWeight;
  options.shuffle = shuffle;
  options.threads = threads;
  options.compile.parallel = threads != 1;
  options.compile.compileThreads = compileThreads.count();
  options.compile.device = device == "cuda" ? Device::CUDA : Device::CPU;
  options.compile.deviceLoops = deviceLoops;
  options.compile.cache = cache ? &*cache : nullptr;
  if (emitIR) {
    auto text = Trainer::emitIR(context, *config, weights, options);
    if (!text)
      return fail(llvm::toString(text.takeError()));
    llvm::outs() << *text;
    return 0;
  }
  auto start = std::chrono::steady_clock::now();
  auto trainer = Trainer::create(context, *config, std::move(weights), options);
  if (!trainer)
    return fail(llvm::toString(trainer.takeError()));
  Trainer &t = **trainer;
  double compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  int64_t examples = int64_t(train->size());
  if (!gradsOut.empty()) {
    // The first batch of the files' order: a reference can rebuild it.
    std::vector<int64_t> order(examples);
    std::iota(order.begin(), order.end(), 0);
    auto grads = t.gradients(
        slice(*train, order, 0, std::min<int64_t>(batchSize, examples)));
    if (!grads)
      return fail(llvm::toString(grads.takeError()));
    if (llvm::Error e = writeSafeTensors(gradsOut, *grads))
      return fail(llvm::toString(std::move(e)));
    return 0;
  }

  if (resume) {
    std::string statePath = inDir("train-state.safetensors");
    auto state = readSafeTensors(statePath);
    if (!state)
      return fail("--resume: " + llvm::toString(state.takeError()));
    auto restored = t.restore(*state);
    if (!restored)
      return fail("--resume: " + statePath + ": " +
                  llvm::toString(restored.takeError()));
  }
  llvm::outs() << llvm::format(
      "gnn-train: %lld training pairs, %lld validation pairs, %zu "
      "parameter tensors; compiled in %.2f s%s\n",
      (long long)examples, (long long)valid.size(),
      t.getParameterNames().size(), compileSeconds,
      t.getCompileInfo().cacheHit ? " (compile cache hit)" : "");
  llvm::outs().flush();

  int64_t batches = (examples + batchSize - 1) / batchSize;
  // --max-steps updates done, none of the next one's batches pending.
  auto atStepLimit = [](const TrainingPosition &at) {
    return maxSteps > 0 && at.step >= maxSteps && at.pending == 0;
  };
  TrainingPosition position = t.getPosition();
  // A resumed run may have nothing left to do; it says so and changes
  // nothing (not even one more update).
  if (atStepLimit(position)) {
    llvm::outs() << "gnn-train: the state is at update step " << position.step
                 << " (--max-steps " << maxSteps.getValue()
                 << "): nothing to train\n";
    return 0;
  }
  if (position.epoch >= epochs) {
    llvm::outs() << "gnn-train: the state has finished " << position.epoch
                 << " epoch(s) (--epochs " << epochs.getValue()
                 << "): nothing to train\n";
    return 0;
  }
  // The state fixes the batch size, not the data: a state saved mid-epoch
  // on more training pairs than given now continues nowhere.
  if (position.batch >= batches)
    return fail(llvm::Twine("--resume: the state is at batch ") +
                llvm::Twine(position.batch + 1) + " of epoch " +
                llvm::Twine(position.epoch + 1) +
                ", but the training data makes " + llvm::Twine(batches) +
                " batch(es) of " + llvm::Twine(batchSize.getValue()) +
                " (is it the data the state was trained on?)");
  for (int64_t epoch = position.epoch; epoch < epochs; ++epoch) {
    std::vector<int64_t> order = t.epochOrder(epoch, examples);
    LossTotals trained;
    auto epochStart = std::chrono::steady_clock::now();
    bool stopped = false, midEpoch = false;
    {
      Progress progress(epoch + 1, batches);
      int64_t first = epoch == position.epoch ? position.batch : 0;
      for (int64_t b = first; b < batches; ++b) {
        int64_t begin = b * batchSize;
        auto done = t.trainBatch(
            slice(*train, order, begin, std::min(begin + batchSize, examples)));
        if (!done)
          return fail(llvm::toString(done.takeError()) + " at update step " +
                      llvm::Twine(t.getPosition().step + 1) + " (epoch " +
                      llvm::Twine(epoch + 1) + ", batch " + llvm::Twine(b + 1) +
                      "); the last complete checkpoint is kept");
        trained += *done;
        progress.update(b + 1, trained);
        if (atStepLimit(t.getPosition())) {
          // At the epoch's end, the epoch's checkpoint is the stop's.
          stopped = true;
          midEpoch = b + 1 < batches;
          TrainingPosition at = t.getPosition();
          at.epoch = epoch;
          at.batch = b + 1;
          if (midEpoch)
            if (llvm::Error e = saveCheckpoint(
                    t, "step-" + std::to_string(at.step) + ".safetensors", at))
              return fail(llvm::toString(std::move(e)));
          break;
        }
      }
    }
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - epochStart)
                         .count();
    LossTotals validated;
    for (int64_t begin = 0; begin < int64_t(valid.size()); begin += batchSize) {
      std::vector<const TrainingExample *> batch;
      for (int64_t i = begin;
           i < std::min<int64_t>(begin + batchSize, valid.size()); ++i)
        batch.push_back(&valid[i]);
      auto done = t.evaluateBatch(batch);
      if (!done)
        return fail("validation: " + llvm::toString(done.takeError()));
      validated += *done;
    }
    llvm::outs() << llvm::format("epoch %lld: train loss %.4f acc %.4f",
                                 (long long)(epoch + 1), trained.averageLoss(),
                                 trained.accuracy());
    if (!valid.empty())
      llvm::outs() << llvm::format(" | valid loss %.4f acc %.4f",
                                   validated.averageLoss(),
                                   validated.accuracy());
    if (trained.nodes) {
      // ACT: the share of nodes that entered each step.
      llvm::outs() << " | steps";
      for (auto [s, n] : llvm::enumerate(trained.entered))
        llvm::outs() << llvm::format(" %zu:%.0f%%", s + 1,
                                     100.0 * double(n) / double(trained.nodes));
    }
    llvm::outs() << llvm::format(
        " | %.2f s, %.0f tokens/s, step %lld\n", seconds,
        seconds > 0 ? double(trained.tokens) / seconds : 0.0,
        (long long)t.getPosition().step);
    llvm::outs().flush();
    if (midEpoch)
      return 0;
    TrainingPosition at = t.getPosition();
    at.epoch = epoch + 1;
    at.batch = 0;
    std::string checkpoint =
        "epoch-" + std::to_string(epoch + 1) + ".safetensors";
    if (llvm::Error e = saveCheckpoint(t, checkpoint, at))
      return fail(llvm::toString(std::move(e)));
    if (vizSeq >= 0)
      if (llvm::Error e = writeAttentionMaps(
              context, *config, inDir(checkpoint), valid[vizSeq], vizSeq,
              cache ? &*cache : nullptr, compileThreads.count(), epoch + 1))
        return fail("--viz-seq: " + llvm::toString(std::move(e)));
    if (stopped)
      return 0;
    t.setPosition(at);
    position = at;
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::gnn::installFatalErrorHandlers("gnn-train");
  return mlir::gnn::finishStandardOutput("gnn-train", run(argc, argv));
}
