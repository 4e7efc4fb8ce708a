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
// Under an MPI launcher (`mpirun -np K gnn-train ...`) the K processes
// train one model data-parallel (docs/distributed.md).
//
// Trains as docs/training.md states it; after each epoch
// writes DIR/epoch-N.safetensors (DGL state_dict names) and
// DIR/train-state.safetensors (what --resume continues from), each whole
// or not at all.
//
//===----------------------------------------------------------------------===//

#include "GNN/Distributed/Agreement.h"
#include "GNN/Distributed/Launch.h"
#include "GNN/InitAll.h"
#include "GNN/Models/Fit.h"
#include "GNN/Models/Trainer.h"
#include "GNN/Models/TransformerModel.h"
#include "GNN/Runner/CompileThreads.h"
#include "GNN/Support/CompileCache.h"
#include "GNN/Support/Environment.h"
#include "GNN/Support/FatalErrors.h"
#include "GNN/Support/OutputFile.h"
#include "GNN/Support/SafeTensors.h"
#include "gnnc/cuda.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

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
cl::opt<bool> ncclOneRank(
    "nccl", cl::cat(category), cl::Hidden,
    cl::desc("(--device cuda under an MPI launcher) pass the gradient sums "
             "over NCCL even on one rank: checks the NCCL path on a machine "
             "with one GPU against a run without it"));
cl::opt<bool> emitIR("emit-ir", cl::cat(category),
                     cl::desc("print the training program (gnn IR) and exit"));
cl::opt<int64_t> vizSeq(
    "viz-seq", cl::cat(category), cl::init(-1),
    cl::desc("after each epoch, write DIR/attention-epoch-N.safetensors: the "
             "attention maps of this validation pair (0-based) under the "
             "epoch's weights, for scripts/plot-attention.py"));
cl::opt<bool> overlapExchange(
    "overlap-exchange", cl::cat(category),
    cl::desc("data-parallel runs on CPUs: pass each layer's gradient sums on "
             "while the backward computes the layers below (=false: after "
             "the backward; the same weights either way; default: where each "
             "rank leaves a core beyond its --threads)"));
cl::opt<int64_t> bucketKB(
    "bucket-kb", cl::cat(category), cl::init(1024),
    cl::desc("with the exchange during the backward: pass the sums of "
             "consecutive parameters as one message of at least this many "
             "KiB (default 1024)"));
cl::opt<bool> shuffle("shuffle", cl::cat(category), cl::init(true),
                      cl::desc("shuffle the training set every epoch "
                               "(default true; --shuffle=false keeps the "
                               "files' order)"));

/// The processes of this run: a data-parallel one's world, or none; and
/// where its gradient sums go between GPUs (NCCL), or none.
Communicator *world = nullptr, *gpuTensors = nullptr;
bool parallel() { return world && world->size() > 1; }
/// Rank 0, or the only process: the one that prints and writes files.
bool leader() { return !world || world->rank() == 0; }

int fail(const llvm::Twine &message) {
  auto &os = llvm::WithColor::error(llvm::errs(), "gnn-train");
  if (parallel())
    os << "rank " << world->rank() << ": ";
  os << message << "\n";
  return 1;
}

/// Prints `e` and returns 1; quietly where another rank failed (it prints
/// its own error).
int fail(llvm::Error e) {
  std::string message;
  llvm::handleAllErrors(
      std::move(e), [&](const RankFailed &) {},
      [&](const llvm::ErrorInfoBase &info) { message = info.message(); });
  return message.empty() ? 1 : fail(llvm::Twine(message));
}

/// `e` alone, or what the ranks of a data-parallel run agree on.
llvm::Error agreed(llvm::Error e) {
  return parallel() ? agree(*world, std::move(e)) : std::move(e);
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

/// DIR/attention-epoch-N.safetensors: the attention maps of validation
/// pair `index` under the checkpoint `weights` (one file per epoch, which
/// scripts/plot-attention.py animates).
llvm::Error writeAttentionMaps(MLIRContext &context, const ModelConfig &config,
                               const std::string &weights,
                               const TrainingExample &pair, int64_t index,
                               const CompileOptions &compile, int64_t epoch) {
  ModelOptions options;
  options.compile.cache = compile.cache;
  options.compile.compileThreads = compile.compileThreads;
  options.compile.runtime = compile.runtime;
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
      runFile(outDir,
              "attention-epoch-" + std::to_string(epoch) + ".safetensors"),
      maps.tensors);
}

/// The training settings of the flags (checkTrainingSettings checks them,
/// as it does gnnc.train's options).
TrainingSettings trainingSettings(int threads) {
  TrainingSettings s;
  s.trainer.batchSize = batchSize;
  s.trainer.labelSmoothing = labelSmoothing;
  s.trainer.dropout = dropout;
  s.trainer.lrFactor = lrFactor;
  s.trainer.warmup = warmup;
  s.trainer.gradAccum = gradAccum;
  s.trainer.actLossWeight = actLossWeight;
  s.trainer.seed = seed;
  s.trainer.tieWeights = tieWeights;
  s.trainer.shuffle = shuffle;
  s.trainer.threads = threads;
  s.epochs = epochs;
  if (maxSteps.getNumOccurrences())
    s.maxSteps = maxSteps;
  s.device = device;
  s.resume = resume;
  s.init = !initFile.empty();
  return s;
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
  if (llvm::Error e = checkTrainingSettings(
          trainingSettings(threads), [](llvm::StringRef option) {
            return "--" + llvm::join(llvm::split(option, '_'), "-");
          }))
    return e;
  if (deviceLoops && device != "cpu")
    return bad("--device-loops runs the GPU form on the CPU (--device cpu)");
  if (bucketKB < 1 || bucketKB > (int64_t(1) << 20))
    return bad("--bucket-kb must be between 1 and 2^20");
  if (resume && !gradsOut.empty())
    return bad("--grads-out computes gradients of the given weights; it "
               "takes no --resume");
  return llvm::Error::success();
}

/// The trainer's options from the flags.
TrainerOptions trainerOptions(int threads, const CompileOptions &compile) {
  TrainerOptions options = trainingSettings(threads).trainer;
  options.compile = compile;
  options.compile.parallel = threads != 1;
  options.compile.device = device == "cuda" ? Device::CUDA : Device::CPU;
  options.compile.deviceLoops = deviceLoops;
  return options;
}

/// The training and validation pairs, checked against --viz-seq.
llvm::Error readData(const ModelConfig &config,
                     std::vector<TrainingExample> &train,
                     std::vector<TrainingExample> &valid) {
  if (llvm::Error e = readTrainingData(config, idsInput, trainSrc, trainTgt,
                                       validSrc, validTgt, train, valid))
    return e;
  if (vizSeq >= int64_t(valid.size()))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--viz-seq " + llvm::Twine(vizSeq) + " is past the " +
            llvm::Twine(valid.size()) + " validation pairs");
  return llvm::Error::success();
}

/// --grads-out: the loss and gradients of the first batch of the files'
/// order (a reference can rebuild it).
llvm::Error writeGradients(Trainer &t, llvm::ArrayRef<TrainingExample> train) {
  std::vector<const TrainingExample *> batch;
  for (int64_t i = 0; i < std::min<int64_t>(batchSize, train.size()); ++i)
    batch.push_back(&train[i]);
  auto grads = t.gradients(batch);
  if (!grads)
    return grads.takeError();
  return writeSafeTensors(gradsOut, *grads);
}

/// One epoch's line on stdout.
void printEpoch(const EpochReport &r) {
  llvm::outs() << formatEpochLine(r) << "\n";
  llvm::outs().flush();
}

/// Rank 0's time in the gradient exchange of a data-parallel run.
struct ExchangeTime {
  double training = 0, exchange = 0, during = 0, wait = 0;
  void add(const EpochReport &r) {
    training += r.seconds;
    exchange += r.exchangeSeconds;
    during += r.duringBackwardSeconds;
    wait += r.waitSeconds;
  }
  void print() const {
    double share = training > 0 ? 100.0 * exchange / training : 0.0;
    llvm::outs() << llvm::format(
        "gnn-train: %d ranks: %.2f s of %.2f s training passing on and "
        "broadcasting gradient sums after the backward (%.1f%%), %.2f s "
        "during it (on the exchange thread, awaiting other ranks' sums "
        "included), %.2f s waiting for other ranks' batches\n",
        world->size(), exchange, training, share, during, wait);
  }
};

/// The epochs, with a progress bar, epoch lines and --viz-seq's maps (all
/// on rank 0 alone).
int trainEpochs(Trainer &t, MLIRContext &context, const ModelConfig &config,
                llvm::ArrayRef<TrainingExample> train,
                llvm::ArrayRef<TrainingExample> valid,
                const CompileOptions &compile) {
  std::optional<Progress> progress;
  ExchangeTime exchange;
  FitCallbacks callbacks;
  if (leader()) {
    callbacks.onBatch = [&](int64_t epoch, int64_t done, int64_t total,
                            const LossTotals &sofar) {
      if (!progress)
        progress.emplace(epoch, total);
      progress->update(done, sofar);
    };
    callbacks.onEpoch = [&](const EpochReport &report) {
      progress.reset();
      printEpoch(report);
      exchange.add(report);
      return true;
    };
  }
  if (vizSeq >= 0 && leader())
    callbacks.afterCheckpoint = [&](const std::string &checkpoint,
                                    int64_t epoch) -> llvm::Error {
      if (llvm::Error e =
              writeAttentionMaps(context, config, checkpoint, valid[vizSeq],
                                 vizSeq, compile, epoch))
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "--viz-seq: " +
                                           llvm::toString(std::move(e)));
      return llvm::Error::success();
    };
  FitOptions options;
  options.epochs = epochs;
  options.maxSteps = maxSteps;
  options.outDir = outDir;
  options.world = world;
  options.tensors = gpuTensors;
  options.bucketBytes = size_t(bucketKB) * 1024;
  auto end = fit(t, train, valid, options, callbacks);
  progress.reset();
  if (!end)
    return fail(end.takeError());
  if (!leader())
    return 0;
  if (*end == FitEnd::AlreadyAtStepLimit)
    llvm::outs() << "gnn-train: the state is at update step "
                 << t.getPosition().step << " (--max-steps "
                 << maxSteps.getValue() << "): nothing to train\n";
  else if (*end == FitEnd::AlreadyDone)
    llvm::outs() << "gnn-train: the state has finished "
                 << t.getPosition().epoch << " epoch(s) (--epochs "
                 << epochs.getValue() << "): nothing to train\n";
  else if (parallel())
    exchange.print();
  if (device == "cuda")
    // What benchmarks set beside other systems' peak device memory.
    llvm::outs() << llvm::format("gnn-train: peak device memory %.1f MiB "
                                 "(unified and device memory held)\n",
                                 double(gnn_cuda_peak_memory_bytes()) /
                                     double(1 << 20));
  return 0;
}

/// The first line: the data, the program and, data-parallel, the ranks.
void printStart(const Trainer &t, size_t train, size_t valid,
                double compileSeconds) {
  llvm::outs() << llvm::format(
      "gnn-train: %lld training pairs, %lld validation pairs, %zu "
      "parameter tensors; compiled in %.2f s%s",
      (long long)train, (long long)valid, t.getParameterNames().size(),
      compileSeconds,
      t.getCompileInfo().cacheHit ? " (compile cache hit)" : "");
  if (parallel())
    llvm::outs() << "; " << world->size() << " ranks over " << world->describe()
                 << (gpuTensors ? ", gradients over NCCL" : "") << ", "
                 << t.getOptions().threads << " thread(s) each, "
                 << t.getOptions().gradAccum << " batches per update, sums "
                 << (t.getOptions().announceGradients ? "during" : "after")
                 << " the backward";
  llvm::outs() << "\n";
  llvm::outs().flush();
}

/// Builds the trainer and runs what the flags ask for.
int train(MLIRContext &context, const ModelConfig &config,
          llvm::ArrayRef<TrainingExample> train,
          llvm::ArrayRef<TrainingExample> valid, TensorMap weights,
          const TrainerOptions &options) {
  if (emitIR) {
    auto text = Trainer::emitIR(context, config, weights, options);
    if (!text)
      return fail(text.takeError());
    llvm::outs() << *text;
    return 0;
  }
  auto start = std::chrono::steady_clock::now();
  auto trainer = Trainer::create(context, config, std::move(weights), options);
  if (llvm::Error e = agreed(trainer.takeError()))
    return fail(std::move(e));
  Trainer &t = **trainer;
  double compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!gradsOut.empty()) {
    if (llvm::Error e = writeGradients(t, train))
      return fail(std::move(e));
    return 0;
  }
  // A data-parallel run's state is rank 0's: fit() broadcasts it.
  if (resume)
    if (llvm::Error e =
            agreed(leader() ? resumeFrom(t, outDir) : llvm::Error::success()))
      return fail(std::move(e));
  if (leader())
    printStart(t, train.size(), valid.size(), compileSeconds);
  return trainEpochs(t, context, config, train, valid, options.compile);
}

/// A digest of the file at `path` (empty: not given), for comparing ranks.
std::string fileDigest(const std::string &path) {
  if (path.empty())
    return "";
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return "unreadable";
  return llvm::utohexstr(
      llvm::xxh3_64bits(llvm::arrayRefFromStringRef((*buffer)->getBuffer())));
}

/// What every rank of a data-parallel run must share: the binary, the
/// command line and the contents of the files it names.
std::vector<Setting> sharedSettings(int argc, char **argv) {
  std::vector<Setting> settings;
  settings.push_back({"the gnn-train binary",
                      fileDigest(llvm::sys::fs::getMainExecutable(
                          argv[0], reinterpret_cast<void *>(&fileDigest)))});
  settings.push_back({"the number of arguments", std::to_string(argc - 1)});
  for (int i = 1; i < argc; ++i) {
    std::string name = "argument " + std::to_string(i);
    if (i > 1 && argv[i - 1][0] == '-' && !std::strchr(argv[i - 1], '='))
      name += std::string(" (after ") + argv[i - 1] + ")";
    settings.push_back({name, argv[i]});
  }
  for (const auto &[flag, path] : {std::pair{"--config", &configFile},
                                   {"--train-src", &trainSrc},
                                   {"--train-tgt", &trainTgt},
                                   {"--valid-src", &validSrc},
                                   {"--valid-tgt", &validTgt},
                                   {"--init", &initFile}})
    settings.push_back({std::string("the contents of ") + flag + "'s file",
                        fileDigest(*path)});
  return settings;
}

/// Checks that hold across ranks: the same settings everywhere, and no
/// flag that means one process.
llvm::Error checkRanks(int argc, char **argv) {
  if (!parallel())
    return llvm::Error::success();
  if (llvm::Error e = checkSameSettings(*world, sharedSettings(argc, argv)))
    return e;
  llvm::Error e = llvm::Error::success();
  if (!gradsOut.empty() || emitIR)
    e = llvm::createStringError(llvm::inconvertibleErrorCode(),
                                "--grads-out and --emit-ir run in one "
                                "process, not under an MPI launcher of %d",
                                world->size());
  return agreed(std::move(e));
}

/// The config, the data, the output directory (rank 0's) and the initial
/// weights.
llvm::Error prepare(std::optional<ModelConfig> &config,
                    std::vector<TrainingExample> &trainPairs,
                    std::vector<TrainingExample> &validPairs,
                    std::optional<TensorMap> &weights) {
  auto read = readModelConfig(configFile);
  if (!read)
    return read.takeError();
  config = std::move(*read);
  if (llvm::Error e = readData(*config, trainPairs, validPairs))
    return e;
  if (!outDir.empty() && leader())
    if (llvm::Error e = prepareRunDirectory(outDir, "--out-dir"))
      return e;
  auto initial =
      initialTrainingWeights(*config, initFile, "--init", seed, tieWeights);
  if (!initial)
    return initial.takeError();
  weights = std::move(*initial);
  return llvm::Error::success();
}

/// --threads, or the cores shared among the ranks on this machine.
int threadsPerProcess(int threads) {
  if (threads > 0 || !parallel())
    return threads;
  int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / std::max(1, world->localSize()));
}

/// --overlap-exchange, or where it is not given, whether each rank leaves
/// a core of its machine to the exchange thread: on the cores that compute,
/// the exchange costs the backward about what it hides (measured, see
/// docs/performance/distributed.md). On CPUs only, where MPI takes calls
/// from the exchange thread (MPI_THREAD_SERIALIZED). Every rank takes the
/// same answer (machines may differ), since the ranks' exchanges must
/// match.
bool exchangesDuringBackward(int threads) {
  // Every rank gathers (no early return where ranks may differ).
  if (!parallel() || device != "cpu")
    return false;
  int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  char mine = world->callableFromAnyThread() &&
              (overlapExchange.getNumOccurrences()
                   ? overlapExchange
                   : threads * world->localSize() < cores);
  std::vector<char> all(size_t(world->size()));
  world->allGather(&mine, all.data(), 1);
  return llvm::all_of(all, [](char yes) { return yes != 0; });
}

/// Makes the CUDA device usable (a rank takes its local rank's device).
llvm::Error initDevice() {
  if (device != "cuda")
    return llvm::Error::success();
  if (world)
    gnn_cuda_use_device(world->localRank());
  char why[256];
  if (!gnn_cuda_init(why, sizeof(why)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--device cuda: %s; run with --device cpu",
                                   static_cast<const char *>(why));
  return llvm::Error::success();
}
} // namespace

static int run(int argc, char **argv) {
  const EnvironmentOptions environment = readEnvironment();
  prepareProcess(environment);
  std::unique_ptr<Communicator> joined;
  if (environment.mpiLaunched) {
    auto opened = openMPIWorld(argc, argv);
    if (!opened)
      return fail(opened.takeError());
    joined = std::move(*opened);
    world = joined.get();
  }
  // libLLVM registers an option named "threads" of its own; --threads is
  // part of gnn-train's interface, so LLVM's is renamed first.
  auto &registered = cl::getRegisteredOptions();
  if (auto it = registered.find("threads"); it != registered.end())
    it->second->setArgStr("llvm-threads");
  cl::opt<int> threadsFlag("threads", cl::cat(category), cl::init(0),
                           cl::desc("threads (default: all cores)"));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "train Transformers with compiled steps\n");
  if (llvm::Error e = agreed(checkOptions(threadsFlag)))
    return fail(std::move(e));
  if (llvm::Error e = checkRanks(argc, argv))
    return fail(std::move(e));
  if (llvm::Error e = agreed(initDevice()))
    return fail(std::move(e));
  std::unique_ptr<Communicator> nccl;
  if (ncclOneRank && (!world || device != "cuda" || !haveNCCL()))
    return fail(llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "--nccl needs --device cuda, an MPI launcher and NCCL (libnccl.so.2)"));
  if ((parallel() || ncclOneRank) && device == "cuda" && haveNCCL()) {
    auto opened = openNCCLWorld(*world);
    if (llvm::Error e = agreed(opened.takeError()))
      return fail(std::move(e));
    nccl = std::move(*opened);
    gpuTensors = nccl.get();
  }
  std::optional<ModelConfig> config;
  std::vector<TrainingExample> trainPairs, validPairs;
  std::optional<TensorMap> weights;
  if (llvm::Error e = agreed(prepare(config, trainPairs, validPairs, weights)))
    return fail(std::move(e));

  int threads = threadsPerProcess(threadsFlag);
  CompileThreads compileThreads{environment.compileThreads(unsigned(threads))};
  DialectRegistry registry;
  registerAllDialectsAndExtensions(registry);
  MLIRContext context(registry);
  compileThreads.attach(context);
  context.loadAllAvailableDialects();
  std::optional<CompileCache> cache;
  std::string cachePath = defaultCompileCacheDirectory();
  if (!cachePath.empty())
    cache.emplace(cachePath);
  gnn_rt_settings settings = environment.runtime;
  settings.threads = threads;
  llvm::Expected<RuntimeInstance> runtime = createRuntime(settings);
  if (!runtime)
    return fail(runtime.takeError());
  CompileOptions compile;
  compile.cache = cache ? &*cache : nullptr;
  compile.compileThreads = compileThreads.count();
  compile.runtime = runtime->get();
  compile.asyncLaunches = environment.asyncLaunches;
  compile.deviceBuffers = environment.deviceBuffers;
  compile.perfMap = environment.perfMap;
  TrainerOptions options = trainerOptions(threads, compile);
  // K ranks, each summing --grad-accum batches: K x A batches an update.
  if (world)
    options.gradAccum *= world->size();
  options.announceGradients = exchangesDuringBackward(threads);
  return train(context, *config, trainPairs, validPairs, std::move(*weights),
               options);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::gnn::installFatalErrorHandlers("gnn-train");
  return mlir::gnn::finishStandardOutput("gnn-train", run(argc, argv));
}
