//===- gnn-run.cpp - run compiled gnn programs ----------------------------===//
//
// Part of gnnc.
//
//   gnn-run PROGRAM.mlir --graph G.safetensors --inputs X.safetensors
//           --out Y.safetensors [--entry NAME] [--no-fuse] [--grad]
//   gnn-run [IR.mlir] --config MODEL.json --src FILE [--tgt FILE] ...
//   gnn-run --config MODEL.json --emit-ir
//
// Without --config: compiles one function of a gnn program for the CPU and
// runs it on a user's graph (source/destination id arrays and node counts; a
// batch of graphs is one graph) with the features named after the
// function's arguments, and writes its results by name (with --grad, also
// the first result's gradients, from gnn-differentiate). With --config: runs
// a Transformer model (ModelMode.cpp).
//
//===----------------------------------------------------------------------===//

#include "GNN/InitAll.h"
#include "GNN/Runner/CompileThreads.h"
#include "GNN/Runner/JitRunner.h"
#include "GNN/Runner/Program.h"
#include "GNN/Support/CompileCache.h"
#include "GNN/Support/Environment.h"
#include "GNN/Support/FatalErrors.h"
#include "GNN/Support/OutputFile.h"
#include "GNN/Support/SafeTensors.h"
#include "ModelMode.h"
#include "TimedRuns.h"

#include "gnnc/cuda.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::gnn;
namespace cl = llvm::cl;

static cl::OptionCategory category("gnn-run options");
static cl::opt<std::string>
    programFile(cl::Positional, cl::desc("<program.mlir>"), cl::cat(category));
static cl::opt<std::string>
    graphFile("graph", cl::cat(category),
              cl::desc("safetensors file with the graph: 'src' and 'dst' "
                       "(int64 edge lists) and 'num_nodes' or 'num_src' and "
                       "'num_dst'; with several graph arguments, each "
                       "prefixed by its argument name ('g.src', ...)"));
static cl::opt<std::string>
    inputsFile("inputs", cl::cat(category),
               cl::desc("safetensors file with one tensor per non-graph "
                        "argument, named after it"));
static cl::opt<std::string>
    outFile("out", cl::cat(category),
            cl::desc("output file: the program's results (safetensors); with "
                     "--config, log_probs (forward) or decoded lines"));
static cl::opt<std::string>
    entryName("entry", cl::init("main"), cl::cat(category),
              cl::desc("function to run (default main)"));
static cl::opt<bool>
    grad("grad", cl::cat(category),
         cl::desc("differentiate the entry function (its first result is the "
                  "loss) and also write grad.<name>: the loss's gradient "
                  "with respect to each float argument"));
static cl::opt<int64_t> tapeBudgetMB(
    "tape-budget-mb", cl::init(0), cl::cat(category),
    cl::desc("with --grad: the most memory, in MiB, the backward of the "
             "program's loops may keep (default: half of the machine's)"));
static cl::opt<std::string>
    device("device", cl::init("cpu"), cl::cat(category),
           cl::desc("where compiled code runs: cpu or cuda (an NVIDIA GPU; "
                    "default cpu)"));
static cl::opt<bool> noFuse("no-fuse", cl::cat(category),
                            cl::desc("run the unfused lowering"));
static cl::opt<bool> serial("serial", cl::cat(category),
                            cl::desc("run on one core"));
static cl::opt<bool> deviceLoops(
    "device-loops", cl::cat(category), cl::Hidden,
    cl::desc("(programs, --device cpu) lower the ops whose GPU form is plain "
             "loops as for a GPU and run that form here: tests check the GPU "
             "lowering's arithmetic without a GPU"));
static cl::opt<bool> quiet("quiet", cl::cat(category),
                           cl::desc("no progress or summary lines on stderr "
                                    "(errors and warnings still)"));
static cl::opt<bool>
    checked("checked", cl::cat(category),
            cl::desc("check every memory access of compiled code against "
                     "its buffer's bounds (slow; a failed check names the op "
                     "and aborts)"));

static cl::opt<int64_t>
    repeat("repeat", cl::init(1), cl::cat(category),
           cl::desc("run this many times after an untimed warm-up run and "
                    "report the median time (benchmarking; the last run's "
                    "results are written)"));

static cl::opt<std::string>
    cacheDir("cache-dir", cl::cat(category),
             cl::desc("compile cache directory (default: $GNNC_CACHE_DIR, else "
                      "$XDG_CACHE_HOME/gnnc, else ~/.cache/gnnc)"));
static cl::opt<bool> noCache("no-cache", cl::cat(category),
                             cl::desc("compile without the compile cache"));
static cl::opt<int64_t> cacheMaxMB(
    "cache-max-mb", cl::init(CompileCache::kDefaultMaxBytes >> 20),
    cl::cat(category),
    cl::desc("size limit of the compile cache; least recently used entries "
             "go first (default 512)"));

static cl::OptionCategory modelCategory("model options (with --config)");
static cl::opt<std::string>
    configFile("config", cl::cat(modelCategory),
               cl::desc("model config JSON: run a Transformer model"));
static cl::opt<std::string>
    weightsFile("weights", cl::cat(modelCategory),
                cl::desc("weights (safetensors); default: the config's"));
static cl::opt<std::string> srcFile("src", cl::cat(modelCategory),
                                    cl::desc("source sequences, one per line"));
static cl::opt<std::string>
    tgtFile("tgt", cl::cat(modelCategory),
            cl::desc("decoder inputs (from <sos>), one per line; forward"));
static cl::opt<bool>
    idsInput("ids", cl::cat(modelCategory),
             cl::desc("sequences are integer ids, not tokens"));
static cl::opt<gnnrun::Mode> mode(
    "mode", cl::cat(modelCategory), cl::init(gnnrun::Mode::Greedy),
    cl::desc("what to compute (default greedy)"),
    cl::values(clEnumValN(gnnrun::Mode::Forward, "forward",
                          "teacher-forced log-probs of the decoder inputs"),
               clEnumValN(gnnrun::Mode::Greedy, "greedy", "greedy decoding"),
               clEnumValN(gnnrun::Mode::Beam, "beam", "beam search")));
static cl::opt<int64_t> beamSize("beam-size", cl::init(4),
                                 cl::cat(modelCategory),
                                 cl::desc("beam width (default 4)"));
static cl::opt<double> alpha("alpha", cl::init(0.6), cl::cat(modelCategory),
                             cl::desc("length penalty exponent (default 0.6)"));
static cl::opt<int64_t>
    maxLen("max-len", cl::init(0), cl::cat(modelCategory),
           cl::desc("decoding limit: at most N-1 output tokens (default: "
                    "the config's max_len)"));
static cl::opt<int64_t> batchSize("batch-size", cl::init(64),
                                  cl::cat(modelCategory),
                                  cl::desc("sequences per batch (default 64)"));
static cl::opt<bool>
    truncateInputs("truncate", cl::cat(modelCategory),
                   cl::desc("cut sequences longer than the config's max_len "
                            "to it (as DGL's example does) instead of "
                            "rejecting them"));
static cl::opt<bool> emitIR("emit-ir", cl::cat(modelCategory),
                            cl::desc("print the model as gnn IR and exit"));
static cl::opt<bool> incremental(
    "incremental", cl::cat(modelCategory),
    cl::desc("forward: compute one decoder position per step, as decoding "
             "does (through the k/v cache; a universal_transformer "
             "recomputes each prefix)"));

static cl::opt<bool> allowNonFinite(
    "allow-nonfinite", cl::cat(modelCategory),
    cl::desc("run weights that hold NaN or infinity (refused by default)"));
static cl::opt<std::string> attentionOut(
    "attention-out", cl::cat(modelCategory),
    cl::desc("forward: also write every layer's attention weights of the "
             "--attention-seqs sequences to this safetensors file"));
static cl::opt<std::string> attentionSeqs(
    "attention-seqs", cl::cat(modelCategory), cl::init("0"),
    cl::desc("comma-separated input line numbers (from 0) whose attention "
             "--attention-out writes (default 0)"));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "gnn-run") << message << "\n";
  return 1;
}

/// --graph and --inputs as tensors (none where not given: programs without
/// graph arguments need no graph file, and programs whose arguments are
/// all graphs no inputs file).
static llvm::Error readArgumentFiles(TensorMap &graphs, TensorMap &inputs) {
  for (auto [file, tensors] :
       {std::pair{&graphFile, &graphs}, std::pair{&inputsFile, &inputs}}) {
    if (file->empty())
      continue;
    auto read = readSafeTensors(*file);
    if (!read)
      return read.takeError();
    *tensors = std::move(*read);
  }
  return llvm::Error::success();
}

/// A binding error in the words of the flags.
static int failBinding(llvm::Error error) {
  std::string message;
  llvm::handleAllErrors(
      std::move(error),
      [&](const MissingArgument &missing) {
        message =
            missing.isGraph
                ? "'" + missing.entry + "' takes a graph ('" + missing.name +
                      "'): give it with --graph"
                : "no input tensor named '" + missing.name + "'" +
                      (inputsFile.empty() ? " (no --inputs file given)" : "");
      },
      [&](const llvm::ErrorInfoBase &other) { message = other.message(); });
  return fail(message);
}

/// The summary line on stderr.
static void printSummary(const Program &program, double compileMs,
                         llvm::ArrayRef<double> runMs, size_t written) {
  llvm::errs() << "gnn-run: compiled @" << program.getEntry() << " in "
               << llvm::format("%.1f", compileMs) << " ms ("
               << (program.getCompileInfo().cacheHit ? "compile cache hit"
                                                     : "compiled")
               << "), ran in " << llvm::format("%.3f", runMs[runMs.size() / 2])
               << " ms (" << (noFuse ? "unfused" : "fused");
  if (repeat > 1)
    llvm::errs() << "; median of " << repeat << " runs, min "
                 << llvm::format("%.3f", runMs.front()) << " ms, max "
                 << llvm::format("%.3f", runMs.back()) << " ms";
  llvm::errs() << "), wrote " << written << " result(s) to " << outFile << "\n";
}

/// PROGRAM.mlir: compiles the entry (or its gradient), binds --graph and
/// --inputs, runs it and writes the results.
static int runProgram(MLIRContext &context, const CompileOptions &compile) {
  if (!attentionOut.empty())
    return fail("--attention-out needs a model (--config)");
  if (programFile.empty())
    return fail("give a program (PROGRAM.mlir) or a model (--config)");
  if (outFile.empty())
    return fail("running a program needs --out");
  ProgramOptions options;
  options.entry = entryName;
  options.grad = grad;
  if (tapeBudgetMB.getNumOccurrences()) {
    if (!grad)
      return fail("--tape-budget-mb applies to --grad");
    if (tapeBudgetMB <= 0 || tapeBudgetMB > (int64_t(1) << 40))
      return fail("--tape-budget-mb must be between 1 and 2^40, not " +
                  std::to_string(tapeBudgetMB));
    options.tapeBudget = tapeBudgetMB * (int64_t(1) << 20);
  }
  options.compile = compile;
  auto start = std::chrono::steady_clock::now();
  auto program = Program::compileFile(context, programFile, options);
  if (!program) {
    if (program.errorIsA<ReportedError>()) {
      llvm::consumeError(program.takeError());
      return 1;
    }
    return fail(llvm::toString(program.takeError()));
  }
  auto compiled = std::chrono::steady_clock::now();
  TensorMap graphs, inputs;
  if (llvm::Error e = readArgumentFiles(graphs, inputs))
    return fail(llvm::toString(std::move(e)));
  auto args = (*program)->bind(graphFile.empty() ? nullptr : &graphs, inputs);
  if (!args)
    return failBinding(args.takeError());
  llvm::Expected<TensorMap> results = TensorMap();
  auto seconds = gnnrun::timeRuns(repeat, [&] {
    results = (*program)->run(*args);
    return results ? llvm::Error::success() : results.takeError();
  });
  if (!seconds)
    return fail(llvm::toString(seconds.takeError()));
  std::vector<double> runMs;
  for (double s : *seconds)
    runMs.push_back(s * 1000);
  if (auto e = writeSafeTensors(outFile, *results))
    return fail(llvm::toString(std::move(e)));
  if (!quiet)
    printSummary(
        **program,
        std::chrono::duration<double, std::milli>(compiled - start).count(),
        runMs, results->size());
  return 0;
}

/// Whether paths `a` and `b` (neither empty nor "-") name one file,
/// existing or not.
static bool sameFile(llvm::StringRef a, llvm::StringRef b) {
  if (a.empty() || b.empty() || a == "-" || b == "-")
    return false;
  if (a == b || llvm::sys::fs::equivalent(a, b))
    return true;
  // Not yet written: the same name in the same directory.
  auto resolved = [](llvm::StringRef path) {
    llvm::SmallString<256> dir(llvm::sys::path::parent_path(path)), real;
    if (dir.empty())
      dir = ".";
    if (llvm::sys::fs::real_path(dir, real))
      return std::string();
    llvm::sys::path::append(real, llvm::sys::path::filename(path));
    return real.str().str();
  };
  std::string ra = resolved(a);
  return !ra.empty() && ra == resolved(b);
}

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The model mode's options from the flags.
static llvm::Expected<gnnrun::ModelRunOptions>
modelRunOptions(int64_t threads, const CompileOptions &compile,
                const std::string &statsJson) {
  gnnrun::ModelRunOptions o;
  o.config = configFile;
  o.weights = weightsFile;
  o.ir = programFile;
  o.src = srcFile;
  o.tgt = tgtFile;
  o.out = outFile;
  o.compile = compile;
  o.ids = idsInput;
  o.emitIR = emitIR;
  o.incremental = incremental;
  o.mode = mode;
  o.beamSize = beamSize;
  // Left out, the config's max_len; 0 is not a limit of its own.
  if (maxLen.getNumOccurrences() && maxLen == 0)
    return error("--max-len must be at least 1 (without it: the config's "
                 "max_len)");
  o.maxLen = maxLen;
  o.batchSize = batchSize;
  // --serial is --threads 1; any other --threads with it is a mistake (and
  // is still range-checked).
  if (serial && threads != 0 && threads != 1)
    return error("--serial runs on one core; it contradicts --threads " +
                 llvm::Twine(threads));
  o.threads = serial ? 1 : threads;
  o.alpha = alpha;
  o.repeat = repeat;
  o.truncate = truncateInputs;
  o.quiet = quiet;
  o.statsJson = statsJson;
  o.attentionOut = attentionOut;
  o.attentionSeqs = attentionSeqs;
  o.allowNonFinite = allowNonFinite;
  // Two outputs into one file would keep only the one written last.
  using Output = std::pair<const char *, std::string>;
  Output outputs[] = {{"--out", outFile},
                      {"--attention-out", attentionOut},
                      {"--stats-json", statsJson}};
  for (size_t i = 0; i < std::size(outputs); ++i)
    for (size_t j = i + 1; j < std::size(outputs); ++j)
      if (sameFile(outputs[i].second, outputs[j].second))
        return error(llvm::Twine(outputs[i].first) + " and " +
                     outputs[j].first + " name the same file '" +
                     outputs[j].second + "'");
  return o;
}

/// libLLVM registers options named "threads" and "stats-json" of its own;
/// gnn-run's are part of its interface, so LLVM's are renamed first.
static void renameLLVMOptions() {
  auto &registered = cl::getRegisteredOptions();
  // setArgStr keeps the string it is given: literals.
  for (auto [name, renamed] : {std::pair{"threads", "llvm-threads"},
                               std::pair{"stats-json", "llvm-stats-json"}})
    if (auto it = registered.find(name); it != registered.end())
      it->second->setArgStr(renamed);
}

/// The device --device names.
static llvm::Expected<Device> chosenDevice() {
  if (device == "cpu")
    return Device::CPU;
  if (device != "cuda")
    return error("--device must be cpu or cuda, not '" + device + "'");
  char why[256];
  if (!gnn_cuda_init(why, sizeof(why)))
    return error("--device cuda: " + llvm::Twine(why) +
                 "; run with --device cpu");
  return Device::CUDA;
}

/// How programs and models compile and run, from the flags and the
/// environment; `cache` is made here when the flags ask for one.
static llvm::Expected<CompileOptions>
compileOptions(const EnvironmentOptions &environment,
               std::optional<CompileCache> &cache) {
  if (repeat < 1 || repeat > 1000)
    return error("--repeat must be between 1 and 1000");
  llvm::Expected<Device> target = chosenDevice();
  if (!target)
    return target.takeError();
  if (cacheMaxMB < 1 || cacheMaxMB > (int64_t(1) << 30))
    return error("--cache-max-mb must be between 1 and 2^30");
  std::string cachePath =
      cacheDir.empty() ? defaultCompileCacheDirectory() : cacheDir.getValue();
  if (!noCache && !cachePath.empty())
    cache.emplace(cachePath, uint64_t(cacheMaxMB) << 20);
  if (grad && !configFile.empty())
    return error("--grad differentiates a program, not a model (--config)");
  if (deviceLoops && (!configFile.empty() || *target != Device::CPU))
    return error("--device-loops runs a program (not a model) on the CPU");
  CompileOptions options;
  options.fuse = !noFuse;
  options.parallel = !serial;
  options.device = *target;
  options.cache = cache ? &*cache : nullptr;
  // The sanitizer job runs whole test suites with every access of compiled
  // code checked (GNNC_CHECKED=1).
  options.checked = checked || environment.checked;
  options.deviceLoops = deviceLoops;
  options.asyncLaunches = environment.asyncLaunches;
  options.deviceBuffers = environment.deviceBuffers;
  options.perfMap = environment.perfMap;
  return options;
}

static int run(int argc, char **argv) {
  const EnvironmentOptions environment = readEnvironment();
  prepareProcess(environment);
  renameLLVMOptions();
  cl::opt<int64_t> threads("threads", cl::init(0), cl::cat(modelCategory),
                           cl::desc("threads (default: all cores)"));
  cl::opt<std::string> statsJson(
      "stats-json", cl::cat(modelCategory),
      cl::desc("write the run's summary (tokens, tokens/s, times, compile "
               "cache hit) to this file as JSON"));
  cl::HideUnrelatedOptions({&category, &modelCategory});
  cl::ParseCommandLineOptions(argc, argv, "run compiled gnn programs\n");
  // A failed check prints its message through C's stdout and aborts, which
  // would lose a buffered message when stdout is a pipe or a file.
  // LLVM's crash banner would call that a bug in gnn-run.
  if (checked || environment.checked) {
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    llvm::setBugReportMsg("gnn-run: aborted; in checked mode, the message "
                          "above names the access that failed.\n");
  }

  // Compiling stays on the cores a model run is given (a bad --threads is
  // reported with the model's other options), and on one with --serial.
  unsigned cores = 0;
  if (serial)
    cores = 1;
  else if (!configFile.empty() && threads > 0 && threads <= gnnrun::kMaxThreads)
    cores = unsigned(threads);
  CompileThreads compileThreads(environment.compileThreads(cores));
  DialectRegistry registry;
  gnn::registerAllDialectsAndExtensions(registry);
  MLIRContext context(registry);
  compileThreads.attach(context);
  context.loadAllAvailableDialects();

  std::optional<CompileCache> cache;
  llvm::Expected<CompileOptions> options = compileOptions(environment, cache);
  if (!options)
    return fail(llvm::toString(options.takeError()));
  options->compileThreads = compileThreads.count();
  // Programs run on all cores, or one with --serial; a model's calls name
  // their threads themselves.
  gnn_rt_settings settings = environment.runtime;
  settings.threads = serial ? 1 : 0;
  llvm::Expected<RuntimeInstance> runtime = createRuntime(settings);
  if (!runtime)
    return fail(llvm::toString(runtime.takeError()));
  options->runtime = runtime->get();
  if (!configFile.empty()) {
    auto o = modelRunOptions(threads, *options, statsJson);
    if (!o)
      return fail(llvm::toString(o.takeError()));
    return gnnrun::runModel(context, *o);
  }
  return runProgram(context, *options);
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  mlir::gnn::installFatalErrorHandlers("gnn-run");
  return mlir::gnn::finishStandardOutput("gnn-run", run(argc, argv));
}
