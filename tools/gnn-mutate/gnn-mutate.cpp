//===- gnn-mutate.cpp - seeded mutation testing of the gnn front end ------===//
//
// Part of gnnc. Mutates valid gnn IR (the lit inputs) at random, seeded so
// that a failure reproduces, and feeds every mutant through the parser, the
// verifier, canonicalization, the printer and a second parse, the
// differentiation pass and the CPU and GPU lowerings, and some of the lowered
// ones on to host object code. A crash fails the run; so does a module that
// verifies but whose printed form does not parse back (a printer/parser
// mismatch), a differentiation that fails without an error or writes IR that
// does not verify, and a rewrite of host code that leaves invalid LLVM IR.
//
//===----------------------------------------------------------------------===//

#include "GNN/InitAll.h"
#include "GNN/Pipelines/Pipelines.h"
#include "GNN/Runner/ObjectCode.h"
#include "GNN/Support/FatalErrors.h"
#include "GNN/Support/ParserHazards.h"
#include "GNN/Support/ParserQuarantine.h"
#include "GNN/Transforms/Differentiate.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <random>

using namespace mlir;

static llvm::cl::list<std::string> inputFiles(llvm::cl::Positional,
                                              llvm::cl::OneOrMore,
                                              llvm::cl::desc("<seed .mlir>"));
static llvm::cl::opt<unsigned> seed("seed", llvm::cl::desc("random seed"),
                                    llvm::cl::init(1));
static llvm::cl::opt<unsigned>
    iterations("iterations", llvm::cl::desc("number of mutants to try"),
               llvm::cl::init(1000));
static llvm::cl::opt<double>
    maxSeconds("max-seconds",
               llvm::cl::desc("stop after this many seconds (0: no limit)"),
               llvm::cl::init(0));
static llvm::cl::opt<bool>
    dumpFailures("dump-failures",
                 llvm::cl::desc("print every mutant that breaks an invariant"),
                 llvm::cl::init(true));
static llvm::cl::opt<unsigned> fullLoweringEvery(
    "full-lowering-every",
    llvm::cl::desc("run every Nth verified mutant through the whole "
                   "gnn-lower-to-cpu pipeline to LLVM (0: never)"),
    llvm::cl::init(8));
static llvm::cl::opt<unsigned> nvvmLoweringEvery(
    "nvvm-lowering-every",
    llvm::cl::desc("run every Nth verified mutant through gnn-lower-to-nvvm "
                   "(PTX for sm_80; 0: never)"),
    llvm::cl::init(0));
static llvm::cl::opt<unsigned> objectsEvery(
    "objects-every",
    llvm::cl::desc("take every Nth mutant that the CPU pipeline lowered on to "
                   "LLVM IR (checking that the rewrites of host code keep it "
                   "valid) and host object code (0: never)"),
    llvm::cl::init(0));
static llvm::cl::opt<bool>
    showEach("show-each",
             llvm::cl::desc("print every mutant before running it "
                            "(to find a crashing input)"),
             llvm::cl::init(false));

namespace {
/// Splits text into tokens (identifiers, SSA names, numbers, punctuation)
/// that mutations splice between places.
std::vector<std::string> tokenize(StringRef text) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    auto isWord = [](char ch) {
      return isalnum(static_cast<unsigned char>(ch)) || ch == '_' ||
             ch == '%' || ch == '#' || ch == '!' || ch == '.' || ch == '^' ||
             ch == '@' || ch == '-';
    };
    if (isWord(c))
      while (j < text.size() && isWord(text[j]))
        ++j;
    tokens.push_back(text.slice(i, j).str());
    i = j;
  }
  return tokens;
}

class Mutator {
public:
  Mutator(unsigned seed, std::vector<std::string> dictionary)
      : rng(seed), dictionary(std::move(dictionary)) {}

  std::string mutate(std::string text) {
    unsigned count = 1 + pick(3);
    for (unsigned i = 0; i < count && !text.empty(); ++i)
      text = mutateOnce(text);
    return text;
  }

private:
  unsigned pick(unsigned n) {
    return std::uniform_int_distribution<unsigned>(0, n - 1)(rng);
  }

  /// Positions where tokens start, so that edits respect token boundaries.
  std::vector<size_t> tokenStarts(const std::string &text) {
    std::vector<size_t> starts;
    for (size_t i = 0; i < text.size(); ++i)
      if (!isspace(static_cast<unsigned char>(text[i])) &&
          (i == 0 || isspace(static_cast<unsigned char>(text[i - 1])) ||
           ispunct(static_cast<unsigned char>(text[i]))))
        starts.push_back(i);
    return starts;
  }

  std::string mutateOnce(const std::string &text) {
    SmallVector<StringRef> lines;
    StringRef(text).split(lines, '\n');
    std::vector<size_t> starts = tokenStarts(text);
    static const char *numbers[] = {
        "0",        "1",    "-1",         "2",
        "7",        "?",    "4294967296", "9223372036854775807",
        "1.0e+300", "-0.0", "nan"};
    // Values a size or constant may take that stress the lowering: empty,
    // one, wide, past the verifier's row limit, overflowing.
    static const char *extremes[] = {
        "0", "1", "65536", "16777217", "4294967296", "9223372036854775807"};
    switch (pick(10)) {
    case 4: { // replace a number inside a token (a width in a tensor type)
      std::vector<std::pair<size_t, size_t>> runs;
      for (size_t i = 0; i < text.size();) {
        if (!isdigit(static_cast<unsigned char>(text[i]))) {
          ++i;
          continue;
        }
        size_t j = i;
        while (j < text.size() && isdigit(static_cast<unsigned char>(text[j])))
          ++j;
        runs.push_back({i, j});
        i = j;
      }
      if (runs.empty())
        return text;
      auto [at, end] = runs[pick(runs.size())];
      return text.substr(0, at) + extremes[pick(std::size(extremes))] +
             text.substr(end);
    }
    case 0: { // delete a line
      size_t line = pick(lines.size());
      lines.erase(lines.begin() + line);
      return llvm::join(lines, "\n");
    }
    case 1: { // duplicate a line
      size_t line = pick(lines.size());
      lines.insert(lines.begin() + line, lines[line]);
      return llvm::join(lines, "\n");
    }
    case 2: { // swap two lines
      std::swap(lines[pick(lines.size())], lines[pick(lines.size())]);
      return llvm::join(lines, "\n");
    }
    case 3: { // truncate
      return text.substr(0, pick(text.size()));
    }
    default:
      break;
    }
    if (starts.empty())
      return text;
    size_t at = starts[pick(starts.size())];
    size_t end = at + 1;
    while (end < text.size() &&
           !isspace(static_cast<unsigned char>(text[end])) &&
           !ispunct(static_cast<unsigned char>(text[end])))
      ++end;
    std::string replacement;
    switch (pick(5)) {
    case 0: // delete a token
      break;
    case 1: // replace a token by one from the corpus
    case 2:
      replacement = dictionary[pick(dictionary.size())];
      break;
    case 3: // replace a token by a boundary number
      replacement = numbers[pick(std::size(numbers))];
      break;
    case 4: // insert a corpus token before this one
      return text.substr(0, at) + dictionary[pick(dictionary.size())] + " " +
             text.substr(at);
    }
    return text.substr(0, at) + replacement + text.substr(end);
  }

  std::mt19937 rng;
  std::vector<std::string> dictionary;
};

struct Stats {
  unsigned mutants = 0, parsed = 0, verified = 0, failures = 0,
           fullyLowered = 0, nvvmLowered = 0, differentiated = 0, toObjects = 0;
};
} // namespace

/// Runs `module` through the whole CPU pipeline, to the LLVM dialect; it
/// may reject the program, never crash on it.
static LogicalResult lowerToLLVM(MLIRContext &context, ModuleOp module) {
  PassManager lower(&context);
  gnn::LowerToCPUOptions options;
  if (failed(gnn::buildLowerToCPUPipeline(lower, options)))
    return failure();
  return lower.run(module);
}

/// Whether gnn-run would compile `module` (before lowering) at all: it
/// admits only self-contained programs without vectors too wide to compile
/// in reasonable time, and LLVM's code generation aborts on some of what
/// those checks refuse (inline assembly, a vector<100000xi1>).
static bool admittedForCompiling(MLIRContext &context, ModuleOp module) {
  PassManager admit(&context);
  admit.addPass(gnn::createCheckSelfContainedPass());
  admit.addPass(gnn::createCheckVectorSizesPass());
  return succeeded(admit.run(module));
}

/// Takes `module` (lowered to the LLVM dialect) on to object code, which
/// may fail with an error, never crash. Returns false if the rewrite of
/// large results broke the module (emitHostObjects verifies it).
static bool emitObjects(ModuleOp module, Stats &stats) {
  ++stats.toObjects;
  llvm::Expected<std::vector<std::string>> objects =
      gnn::emitHostObjects(module, {}, /*threads=*/1);
  if (objects)
    return true;
  std::string message = llvm::toString(objects.takeError());
  if (!llvm::StringRef(message).starts_with(gnn::kInvalidAfterRewrite))
    return true;
  llvm::errs() << message << "\n";
  return false;
}

/// Differentiates each function of `module` that takes a float tensor with
/// respect to all of them, each in a copy of the module. The pass must
/// either write a gradient function that verifies or reject the function
/// with a diagnostic; every few gradients go down the whole CPU pipeline.
/// Returns false if an invariant broke.
static bool differentiateEach(MLIRContext &context, ModuleOp module,
                              Stats &stats) {
  unsigned errors = 0;
  ScopedDiagnosticHandler count(&context, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    return success();
  });
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    SmallVector<unsigned> wrt;
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes()))
      if (auto tensor = dyn_cast<RankedTensorType>(type);
          tensor && isa<FloatType>(tensor.getElementType()))
        wrt.push_back(i);
    if (wrt.empty())
      continue;
    OwningOpRef<ModuleOp> copy = module.clone();
    auto target = copy->lookupSymbol<func::FuncOp>(fn.getSymName());
    unsigned errorsBefore = errors;
    FailureOr<func::FuncOp> grad = gnn::differentiateFunction(
        target, wrt, (fn.getSymName() + "_mutant_grad").str());
    if (failed(grad)) {
      if (errors != errorsBefore)
        continue;
      if (dumpFailures)
        llvm::errs() << "=== gnn-differentiate failed without an error on @"
                     << fn.getSymName() << " of:\n"
                     << module << "\n";
      return false;
    }
    if (failed(verify(*copy))) {
      if (dumpFailures)
        llvm::errs() << "=== gnn-differentiate wrote IR that does not verify "
                        "for @"
                     << fn.getSymName() << ":\n"
                     << *copy << "\n";
      return false;
    }
    ++stats.differentiated;
    if (fullLoweringEvery && stats.differentiated % fullLoweringEvery == 0)
      (void)lowerToLLVM(context, *copy);
  }
  return true;
}

/// Whether `module`'s custom and generic printed forms parse back into
/// valid IR (`text`: the mutant it came from, for the failure's dump).
static bool printsBack(MLIRContext &context, ModuleOp module, StringRef text) {
  ParserConfig config(&context);
  for (bool generic : {false, true}) {
    std::string printed;
    llvm::raw_string_ostream os(printed);
    OpPrintingFlags flags;
    if (generic)
      flags.printGenericOpForm();
    module->print(os, flags);
    OwningOpRef<ModuleOp> reparsed;
    {
      gnn::ParserQuarantine quarantine;
      reparsed = parseSourceString<ModuleOp>(os.str(), config, "printed");
    }
    if (!reparsed || failed(verify(*reparsed))) {
      if (dumpFailures)
        llvm::errs() << "=== printed form does not parse back ("
                     << (generic ? "generic" : "custom") << "):\n"
                     << os.str() << "\n=== from mutant:\n"
                     << text << "\n";
      return false;
    }
  }
  return true;
}

/// Runs one mutant through the front end, the gnn passes and the lowering.
/// Returns false if an invariant (other than "bad input is rejected") broke.
static bool runOne(MLIRContext &context, StringRef text, Stats &stats) {
  ++stats.mutants;
  // Text that crashes MLIR 19's own parsers is rejected before them, as
  // the tools do.
  if (gnn::findParserHazard(text))
    return true;
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module;
  {
    // Mutants use values before their definitions inside regions that then
    // fail to parse, where MLIR's parser writes into what it freed.
    gnn::ParserQuarantine quarantine;
    module = parseSourceString<ModuleOp>(text, config, "mutant");
  }
  if (!module)
    return true;
  ++stats.parsed;
  if (failed(verify(*module)))
    return true;
  ++stats.verified;

  PassManager pm(&context);
  // Dimension queries outside their operand's rank are undefined behavior
  // that upstream canonicalizations do not guard against (one crashed in
  // a context with every dialect of the lowerings loaded): rejected first,
  // as the tools' pipelines do.
  pm.addPass(gnn::createCheckDimIndicesPass());
  pm.addPass(gnn::createFuseAttentionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (failed(pm.run(*module)))
    return true;

  if (!printsBack(context, *module, text))
    return false;
  if (!differentiateEach(context, *module, stats))
    return false;

  // The CPU lowering must reject what it cannot lower, never crash on it;
  // every few mutants, the whole pipeline down to the LLVM dialect.
  OwningOpRef<ModuleOp> lowered = module->clone();
  if (fullLoweringEvery && stats.verified % fullLoweringEvery == 0) {
    ++stats.fullyLowered;
    if (succeeded(lowerToLLVM(context, *lowered)) && objectsEvery &&
        stats.fullyLowered % objectsEvery == 0 &&
        admittedForCompiling(context, *module) &&
        !emitObjects(*lowered, stats)) {
      if (dumpFailures)
        llvm::errs() << "=== from mutant:\n" << text << "\n";
      return false;
    }
  } else {
    PassManager lower(&context);
    lower.addPass(gnn::createConvertGNNToLoopsPass());
    (void)lower.run(*lowered);
  }

  // Likewise the GPU lowering, to PTX (no device or ptxas needed).
  if (nvvmLoweringEvery && stats.verified % nvvmLoweringEvery == 0) {
    ++stats.nvvmLowered;
    OwningOpRef<ModuleOp> gpu = module->clone();
    PassManager nvvm(&context);
    gnn::LowerToNVVMOptions options;
    options.chip = "sm_80";
    options.format = "isa";
    // Every other one with launches that do not wait.
    options.asyncLaunches = stats.nvvmLowered % 2 == 0;
    // Every third with buffers in device memory.
    options.deviceBuffers = stats.nvvmLowered % 3 == 0;
    if (succeeded(gnn::buildLowerToNVVMPipeline(nvvm, options)))
      (void)nvvm.run(*gpu);
  }
  return true;
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  // A crash is a finding, reported with its stack; the report must end.
  gnn::installCrashReportTimeout(10);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "seeded mutation testing of gnn IR\n");

  std::vector<std::string> seeds;
  std::vector<std::string> dictionary;
  for (const std::string &path : inputFiles) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) {
      llvm::errs() << "gnn-mutate: cannot read '" << path
                   << "': " << buffer.getError().message() << "\n";
      return 2;
    }
    // Each split-input chunk is a seed of its own.
    SmallVector<StringRef> chunks;
    (*buffer)->getBuffer().split(chunks, "// -----");
    for (StringRef chunk : chunks) {
      seeds.push_back(chunk.str());
      for (std::string &token : tokenize(chunk))
        dictionary.push_back(std::move(token));
    }
  }
  if (dictionary.empty()) {
    llvm::errs() << "gnn-mutate: the seed files are empty\n";
    return 2;
  }

  // What gnn-opt registers: without the upstream extensions (the
  // bufferization models of tensor ops among them), the CPU lowering would
  // stop at bufferization on every program.
  DialectRegistry registry;
  gnn::registerAllDialectsAndExtensions(registry);
  registerAllGPUToLLVMIRTranslations(registry);
  registerOpenMPDialectTranslation(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Mutants are mostly invalid; their diagnostics are the expected outcome.
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });

  Mutator mutator(seed, dictionary);
  std::mt19937 choose(seed ^ 0x9e3779b9u);
  Stats stats;
  auto start = std::chrono::steady_clock::now();
  for (unsigned i = 0; i < iterations; ++i) {
    if (maxSeconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                .count() > maxSeconds)
      break;
    const std::string &base = seeds[choose() % seeds.size()];
    std::string mutant = mutator.mutate(base);
    if (showEach)
      llvm::errs() << "=== mutant " << i << ":\n" << mutant << "\n";
    if (!runOne(context, mutant, stats))
      ++stats.failures;
  }
  llvm::outs() << "mutants: " << stats.mutants << ", parsed: " << stats.parsed
               << ", verified: " << stats.verified
               << ", fully lowered: " << stats.fullyLowered
               << ", NVVM lowered: " << stats.nvvmLowered
               << ", differentiated: " << stats.differentiated
               << ", to objects: " << stats.toObjects
               << ", round-trip failures: " << stats.failures << "\n";
  return stats.failures == 0 ? 0 : 1;
}
