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

#include "GNN/IR/GNNOps.h"
#include "GNN/InitAll.h"
#include "GNN/Runner/CompileThreads.h"
#include "GNN/Runner/JitRunner.h"
#include "GNN/Support/CompileCache.h"
#include "GNN/Support/FatalErrors.h"
#include "GNN/Support/HeapSettings.h"
#include "GNN/Support/InputFile.h"
#include "GNN/Support/OutputFile.h"
#include "GNN/Support/ParserHazards.h"
#include "GNN/Support/ParserQuarantine.h"
#include "GNN/Support/SafeTensors.h"
#include "GNN/Transforms/Differentiate.h"
#include "GNN/Transforms/Passes.h"
#include "ModelMode.h"

#include "gnnc/cuda.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/SourceMgr.h"
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

/// --checked, or GNNC_CHECKED=1 in the environment: the sanitizer job runs
/// whole test suites with every access of compiled code checked.
static bool checkedMode() {
  const char *env = std::getenv("GNNC_CHECKED");
  return checked || (env && llvm::StringRef(env) == "1");
}

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

/// The names the entry function's arguments are bound by: their gnn.name
/// attributes, else their SSA names as written.
static std::vector<std::string> argumentNames(func::FuncOp fn,
                                              const AsmParserState &state) {
  std::vector<std::string> names;
  const AsmParserState::BlockDefinition *def =
      fn.isExternal() ? nullptr : state.getBlockDef(&fn.getBody().front());
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    std::string name;
    // An explicit name first: a program gnn-opt printed calls its
    // arguments %arg0, %arg1, ... but keeps their gnn.name attributes.
    if (auto attr =
            fn.getArgAttrOfType<StringAttr>(i, gnn::GNNDialect::kNameAttrName))
      name = attr.str();
    else if (def && i < def->arguments.size()) {
      llvm::SMRange loc = def->arguments[i].loc;
      name = std::string(loc.Start.getPointer(), loc.End.getPointer());
      if (!name.empty() && name[0] == '%')
        name.erase(0, 1);
    }
    names.push_back(name);
  }
  return names;
}

/// Reads a count stored as an int64 scalar or one-element tensor.
static llvm::Expected<int64_t> readCount(const TensorMap &tensors,
                                         const std::string &name) {
  auto it = tensors.find(name);
  if (it == tensors.end())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "graph file has no tensor '" + name + "'");
  const HostTensor &t = it->second;
  if (t.dtype != DType::I64 || t.numElements() != 1 || t.shape.size() > 1)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "graph tensor '" + name + "' must be one int64, got " + t.describe());
  return t.as<int64_t>()[0];
}

/// Rows that the program requires of its tensor arguments in terms of one
/// graph's counts: checked against the graph file's counts before the graph
/// is built, so that a bad count is an error before anything large is
/// allocated.
struct CountCheck {
  RowRequirement::Kind kind;
  std::string tensor;
  int64_t rows;
};

static llvm::Expected<gnn_graph *>
buildGraph(const TensorMap &tensors, const std::string &prefix,
           const std::string &graphName, llvm::ArrayRef<CountCheck> checks) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  const HostTensor *lists[2];
  const char *keys[2] = {"src", "dst"};
  for (int i = 0; i < 2; ++i) {
    auto it = tensors.find(prefix + keys[i]);
    if (it == tensors.end())
      return error("graph file has no tensor '" + prefix + keys[i] + "'");
    lists[i] = &it->second;
    if (lists[i]->dtype != DType::I64 || lists[i]->shape.size() != 1)
      return error("graph tensor '" + prefix + keys[i] +
                   "' must be a 1-D int64 tensor, got " + lists[i]->describe());
  }
  if (lists[0]->shape[0] != lists[1]->shape[0])
    return error("graph has " + llvm::Twine(lists[0]->shape[0]) +
                 " source ids but " + llvm::Twine(lists[1]->shape[0]) +
                 " destination ids");
  int64_t numSrc, numDst;
  if (tensors.count(prefix + "num_nodes")) {
    auto n = readCount(tensors, prefix + "num_nodes");
    if (!n)
      return n.takeError();
    numSrc = numDst = *n;
  } else {
    auto s = readCount(tensors, prefix + "num_src");
    if (!s)
      return s.takeError();
    auto d = readCount(tensors, prefix + "num_dst");
    if (!d)
      return d.takeError();
    numSrc = *s;
    numDst = *d;
  }
  for (const CountCheck &c : checks) {
    if (c.kind == RowRequirement::EdgeIds)
      continue;
    int64_t count = c.kind == RowRequirement::SrcRows   ? numSrc
                    : c.kind == RowRequirement::DstRows ? numDst
                                                        : lists[0]->shape[0];
    const char *what = c.kind == RowRequirement::SrcRows   ? "source nodes"
                       : c.kind == RowRequirement::DstRows ? "destination nodes"
                                                           : "edges";
    if (count != c.rows)
      return error("argument '" + c.tensor + "' has " + llvm::Twine(c.rows) +
                   " rows, but graph '" + graphName + "' has " +
                   llvm::Twine(count) + " " + what);
  }
  gnn_graph *graph = nullptr;
  char message[512];
  if (gnn_graph_from_coo(numSrc, numDst, lists[0]->shape[0],
                         lists[0]->as<int64_t>(), lists[1]->as<int64_t>(),
                         &graph, message, sizeof(message)))
    return error("graph" + (prefix.empty() ? "" : " '" + prefix + "'") + ": " +
                 message);
  return graph;
}

static int run(int argc, char **argv) {
  keepFreedHeapForReuse();
  // libLLVM registers an option named "threads" of its own; gnn-run's
  // --threads is part of its interface, so LLVM's is renamed first.
  auto &registered = cl::getRegisteredOptions();
  if (auto it = registered.find("threads"); it != registered.end())
    it->second->setArgStr("llvm-threads");
  // Likewise LLVM's statistics option "stats-json".
  if (auto it = registered.find("stats-json"); it != registered.end())
    it->second->setArgStr("llvm-stats-json");
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
  if (checkedMode()) {
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
  CompileThreads compileThreads(cores);
  DialectRegistry registry;
  gnn::registerAllDialectsAndExtensions(registry);
  MLIRContext context(registry);
  compileThreads.attach(context);
  context.loadAllAvailableDialects();

  if (repeat < 1 || repeat > 1000)
    return fail("--repeat must be between 1 and 1000");
  Device target = Device::CPU;
  if (device == "cuda") {
    char why[256];
    if (!gnn_cuda_init(why, sizeof(why)))
      return fail("--device cuda: " + llvm::Twine(why) +
                  "; run with --device cpu");
    target = Device::CUDA;
  } else if (device != "cpu") {
    return fail("--device must be cpu or cuda, not '" + device + "'");
  }
  if (cacheMaxMB < 1 || cacheMaxMB > (int64_t(1) << 30))
    return fail("--cache-max-mb must be between 1 and 2^30");
  std::string cachePath =
      cacheDir.empty() ? defaultCompileCacheDirectory() : cacheDir.getValue();
  std::optional<CompileCache> cache;
  if (!noCache && !cachePath.empty())
    cache.emplace(cachePath, uint64_t(cacheMaxMB) << 20);
  CompileCache *compileCache = cache ? &*cache : nullptr;
  if (grad && !configFile.empty())
    return fail("--grad differentiates a program, not a model (--config)");
  if (deviceLoops && (!configFile.empty() || target != Device::CPU))
    return fail("--device-loops runs a program (not a model) on the CPU");
  if (!configFile.empty()) {
    gnnrun::ModelRunOptions o;
    o.config = configFile;
    o.weights = weightsFile;
    o.ir = programFile;
    o.src = srcFile;
    o.tgt = tgtFile;
    o.out = outFile;
    o.device = target;
    o.ids = idsInput;
    o.emitIR = emitIR;
    o.fuse = !noFuse;
    o.incremental = incremental;
    o.mode = mode;
    o.beamSize = beamSize;
    // Left out, the config's max_len; 0 is not a limit of its own.
    if (maxLen.getNumOccurrences() && maxLen == 0)
      return fail("--max-len must be at least 1 (without it: the config's "
                  "max_len)");
    o.maxLen = maxLen;
    o.batchSize = batchSize;
    // --serial is --threads 1; any other --threads with it is a mistake
    // (and is still range-checked).
    if (serial && threads != 0 && threads != 1)
      return fail("--serial runs on one core; it contradicts --threads " +
                  llvm::Twine(threads.getValue()));
    o.threads = serial ? 1 : threads.getValue();
    o.compileThreads = compileThreads.count();
    o.alpha = alpha;
    o.repeat = repeat;
    o.cache = compileCache;
    o.checked = checkedMode();
    o.truncate = truncateInputs;
    o.quiet = quiet;
    o.statsJson = statsJson;
    o.attentionOut = attentionOut;
    o.attentionSeqs = attentionSeqs;
    return gnnrun::runModel(context, o);
  }
  if (!attentionOut.empty())
    return fail("--attention-out needs a model (--config)");
  if (programFile.empty())
    return fail("give a program (PROGRAM.mlir) or a model (--config)");
  if (outFile.empty())
    return fail("running a program needs --out");

  auto buffer = readInputFile(programFile, /*isText=*/true);
  if (!buffer)
    return fail("cannot read '" + programFile +
                "': " + llvm::toString(buffer.takeError()));
  if (reportParserHazard((*buffer)->getMemBufferRef()))
    return 1;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module(ModuleOp::create(UnknownLoc::get(&context)));
  AsmParserState parserState;
  LogicalResult parsed = failure();
  {
    // A failed parse can write into memory the parser freed
    // (ParserQuarantine.h).
    ParserQuarantine quarantine;
    parsed = parseAsmSourceFile(sourceMgr, module->getBody(),
                                ParserConfig(&context), &parserState);
  }
  if (failed(parsed) || failed(verify(*module)))
    return 1;
  // A program written as one `module { ... }` (as gnn-opt prints it) is
  // that module.
  if (Block *body = module->getBody(); llvm::hasSingleElement(*body))
    if (auto inner = dyn_cast<ModuleOp>(body->front())) {
      inner->remove();
      module = OwningOpRef<ModuleOp>(inner);
    }
  // The program is compiled into this process: it may not call or write
  // the process's own symbols. (The errors point at the source line; the
  // op's whole text would only repeat it.)
  context.printOpOnDiagnostic(false);
  PassManager admit(&context);
  admit.addPass(gnn::createCheckSelfContainedPass());
  // Nor may it take LLVM hours to compile.
  admit.addPass(gnn::createCheckVectorSizesPass());
  // Its large stack buffers go to the heap: a thread's stack is a few MiB.
  admit.addPass(gnn::createHeapLargeAllocasPass());
  if (failed(admit.run(*module)))
    return 1;
  auto fn = module->lookupSymbol<func::FuncOp>(entryName);
  if (!fn)
    return fail("the program has no function '" + entryName + "'");
  std::vector<std::string> names = argumentNames(fn, parserState);
  if (grad) {
    // Gradients are named after the arguments as --inputs names them.
    SmallVector<unsigned> wrt;
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
      if (!names[i].empty())
        fn.setArgAttr(i, gnn::GNNDialect::kNameAttrName,
                      StringAttr::get(&context, names[i]));
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (tensor && isa<FloatType>(tensor.getElementType()))
        wrt.push_back(i);
    }
    // Attention written the DGL way is fused first, so that its backward
    // is the fused one too.
    if (!noFuse) {
      PassManager pm(&context);
      pm.addNestedPass<func::FuncOp>(gnn::createFuseAttentionPass());
      if (failed(pm.run(*module)))
        return fail("fusing attention before differentiating failed");
    }
    std::string gradName = entryName + "_grad";
    for (int i = 1; module->lookupSymbol(gradName); ++i)
      gradName = entryName + "_grad" + std::to_string(i);
    FailureOr<func::FuncOp> differentiated =
        gnn::differentiateFunction(fn, wrt, gradName);
    if (failed(differentiated))
      return 1;
    entryName = gradName;
  }

  // Programs without graph arguments need no graph file, and programs
  // whose arguments are all graphs no inputs file.
  TensorMap graphs, inputs;
  for (auto [file, tensors] :
       {std::pair{&graphFile, &graphs}, std::pair{&inputsFile, &inputs}}) {
    if (file->empty())
      continue;
    auto read = readSafeTensors(*file);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    *tensors = std::move(*read);
  }

  CompileOptions options;
  options.fuse = !noFuse;
  options.parallel = !serial;
  options.device = target;
  options.cache = compileCache;
  options.compileThreads = compileThreads.count();
  options.checked = checkedMode();
  options.deviceLoops = deviceLoops;
  auto start = std::chrono::steady_clock::now();
  auto program =
      JitProgram::compile(std::move(module), entryName, names, options);
  if (!program)
    return fail(llvm::toString(program.takeError()));
  auto compiled = std::chrono::steady_clock::now();

  // Bind arguments by name.
  const std::vector<Parameter> &params = (*program)->getParameters();
  unsigned graphParams =
      llvm::count_if(params, [](const Parameter &p) { return p.isGraph; });
  std::vector<std::unique_ptr<gnn_graph, void (*)(gnn_graph *)>> owned;
  std::vector<Argument> args;
  const EntryPoint &entry = *(*program)->lookup(entryName);
  for (auto [i, p] : llvm::enumerate(params)) {
    if (p.isGraph) {
      if (graphFile.empty())
        return fail("'" + entryName + "' takes a graph ('" + p.name +
                    "'): give it with --graph");
      std::string prefix = p.name + ".";
      if (graphParams == 1 && !graphs.count(prefix + "src"))
        prefix.clear();
      std::vector<CountCheck> checks;
      for (const RowRequirement &r : entry.requirements) {
        auto input = inputs.find(params[r.arg].name);
        if (r.graphArg == i && input != inputs.end() &&
            !input->second.shape.empty())
          checks.push_back({r.kind, input->first, input->second.shape[0]});
      }
      auto graph = buildGraph(graphs, prefix, p.name, checks);
      if (!graph)
        return fail(llvm::toString(graph.takeError()));
      owned.emplace_back(*graph, gnn_graph_free);
      args.push_back({*graph, nullptr});
      continue;
    }
    auto it = inputs.find(p.name);
    if (it == inputs.end())
      return fail("no input tensor named '" + p.name + "'" +
                  (inputsFile.empty() ? " (no --inputs file given)" : ""));
    args.push_back({nullptr, &it->second});
  }
  for (const auto &[name, tensor] : inputs)
    if (llvm::none_of(params, [&](const Parameter &p) {
          return !p.isGraph && p.name == name;
        }))
      return fail("input tensor '" + name + "' is not an argument of '" +
                  entryName + "'");

  std::vector<double> runMs;
  llvm::Expected<std::vector<HostTensor>> results = std::vector<HostTensor>();
  // With --repeat, one untimed warm-up run first (caches, thread pools).
  int64_t warmUp = repeat > 1 ? 1 : 0;
  for (int64_t r = 0; r < repeat + warmUp; ++r) {
    auto runStart = std::chrono::steady_clock::now();
    results = (*program)->run(args);
    if (!results)
      return fail(llvm::toString(results.takeError()));
    if (r >= warmUp)
      runMs.push_back(std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - runStart)
                          .count());
  }
  std::sort(runMs.begin(), runMs.end());

  TensorMap out;
  for (auto [i, r] : llvm::enumerate(*results))
    out[(*program)->getResults()[i].name] = std::move(r);
  if (auto e = writeSafeTensors(outFile, out))
    return fail(llvm::toString(std::move(e)));
  auto ms = [](auto a, auto b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  if (quiet)
    return 0;
  llvm::errs() << "gnn-run: compiled @" << entryName << " in "
               << llvm::format("%.1f", ms(start, compiled)) << " ms ("
               << ((*program)->getCompileInfo().cacheHit ? "compile cache hit"
                                                         : "compiled")
               << "), ran in " << llvm::format("%.3f", runMs[runMs.size() / 2])
               << " ms (" << (noFuse ? "unfused" : "fused");
  if (repeat > 1)
    llvm::errs() << "; median of " << repeat << " runs, min "
                 << llvm::format("%.3f", runMs.front()) << " ms, max "
                 << llvm::format("%.3f", runMs.back()) << " ms";
  llvm::errs() << "), wrote " << out.size() << " result(s) to " << outFile
               << "\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  mlir::gnn::installFatalErrorHandlers("gnn-run");
  return mlir::gnn::finishStandardOutput("gnn-run", run(argc, argv));
}
