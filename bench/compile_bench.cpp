//===- compile_bench.cpp - compile time of models against depth -----------===//
//
// Part of gnnc. Builds the model modules gnn-run compiles (Transformer and
// Universal Transformer, d_model 512, 8 heads, d_ff 2048: DGL's default
// model) for several layer counts and times JitProgram::compile:
//
//   cold   no compile cache: gnn-level passes, lowering, LLVM -O2, code
//          generation, linking (with the time of each)
//   store  the same into an empty cache (also writes the entry)
//   warm   the next compile of the same module: a cache hit
//
// and, with --training, gnn-train's whole training program (forward, loss,
// backward, Adam) of the Transformer per layer count and of the Universal
// Transformer per ACT depth (max_depth), cold.
//
//   build/bin/gnn-bench-compile [--layers 1,2,6,12] [--runs 3] [--quick]
//       [--training [--depths 2,8,16,32]]
//
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"
#include "GNN/InitAll.h"
#include "GNN/Models/ModelConfig.h"
#include "GNN/Models/Trainer.h"
#include "GNN/Models/TransformerBuilder.h"
#include "GNN/Runner/JitRunner.h"
#include "GNN/Support/CompileCache.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <set>

using namespace mlir;
using namespace mlir::gnn;

static llvm::cl::OptionCategory category("compile benchmark options");
static llvm::cl::list<int64_t>
    layerCounts("layers", llvm::cl::CommaSeparated,
                llvm::cl::desc("layer counts (default 1,2,6,12)"),
                llvm::cl::cat(category));
static llvm::cl::opt<int> runs("runs", llvm::cl::init(3),
                               llvm::cl::desc("cold compiles per row (median)"),
                               llvm::cl::cat(category));
static llvm::cl::opt<int64_t> dModel("d-model", llvm::cl::init(512),
                                     llvm::cl::desc("model width"),
                                     llvm::cl::cat(category));
static llvm::cl::opt<bool>
    quick("quick", llvm::cl::desc("one run, layers 1 and 2 (smoke run)"),
          llvm::cl::cat(category));
static llvm::cl::opt<bool>
    training("training",
             llvm::cl::desc("also the training programs (Transformer per "
                            "layer count, Universal Transformer per depth)"),
             llvm::cl::cat(category));
static llvm::cl::list<int64_t>
    depths("depths", llvm::cl::CommaSeparated,
           llvm::cl::desc("ACT depths of the training table (default "
                          "2,8,16,32)"),
           llvm::cl::cat(category));

namespace {
ModelConfig configFor(Architecture architecture, int64_t layers) {
  ModelConfig c;
  c.architecture = architecture;
  c.layers = layers;
  c.dModel = dModel;
  c.heads = 8;
  c.dFF = 4 * dModel;
  c.srcVocab = c.tgtVocab = 32;
  return c;
}

/// How compiling the model module of `config` went.
CompileInfo compileOnce(MLIRContext &context, const ModelConfig &config,
                        CompileCache *cache) {
  std::set<std::string> weights;
  for (const WeightSpec &w : expectedWeights(config))
    weights.insert(w.name);
  OwningOpRef<ModuleOp> module =
      buildModelModule(context, config, [&](llvm::StringRef n) {
        return weights.count(n.str()) > 0;
      });
  if (!module) {
    llvm::errs() << "the model builder failed\n";
    std::exit(1);
  }
  std::vector<std::string> entries;
  for (auto fn : module->getOps<func::FuncOp>())
    if (fn.isPublic() && !fn.isExternal())
      entries.push_back(fn.getSymName().str());
  CompileOptions options;
  options.cache = cache;
  options.runtime = gnnbench::benchRuntime();
  auto program = JitProgram::compile(std::move(module), entries, options);
  if (!program) {
    llvm::errs() << llvm::toString(program.takeError()) << "\n";
    std::exit(1);
  }
  return (*program)->getCompileInfo();
}

/// How compiling gnn-train's training program of `config` went (no cache).
CompileInfo compileTraining(MLIRContext &context, const ModelConfig &config) {
  TrainerOptions options;
  options.compile.cache = nullptr;
  auto trainer = Trainer::create(
      context, config,
      Trainer::initialWeights(config, /*seed=*/1, /*tieWeights=*/false),
      options);
  if (!trainer) {
    llvm::errs() << llvm::toString(trainer.takeError()) << "\n";
    std::exit(1);
  }
  return (*trainer)->getCompileInfo();
}

/// The median of `n` cold compiles.
CompileInfo medianOf(int n, llvm::function_ref<CompileInfo()> compile) {
  std::vector<CompileInfo> cold;
  for (int i = 0; i < n; ++i)
    cold.push_back(compile());
  std::sort(cold.begin(), cold.end(),
            [](auto &a, auto &b) { return a.seconds < b.seconds; });
  return cold[cold.size() / 2];
}

void printTrainingTable(MLIRContext &context, llvm::ArrayRef<int64_t> counts,
                        int n) {
  std::vector<int64_t> actDepths(depths.begin(), depths.end());
  if (actDepths.empty())
    actDepths =
        quick ? std::vector<int64_t>{2, 8} : std::vector<int64_t>{2, 8, 16, 32};
  fmt::print("\ntraining programs (forward, loss, backward, Adam), cold "
             "compile (seconds; median of {})\n\n",
             n);
  fmt::print("| model | layers | ACT depth | cold | MLIR passes | LLVM | "
             "link |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|\n");
  auto row = [&](const char *model, std::string layers, std::string depth,
                 const CompileInfo &c) {
    fmt::print("| {} | {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |\n", model,
               layers, depth, c.seconds, c.passSeconds, c.llvmSeconds,
               c.linkSeconds);
  };
  for (int64_t layers : counts) {
    ModelConfig config = configFor(Architecture::Transformer, layers);
    row("transformer", std::to_string(layers), "-",
        medianOf(n, [&] { return compileTraining(context, config); }));
  }
  for (int64_t depth : actDepths) {
    ModelConfig config = configFor(Architecture::UniversalTransformer, 1);
    config.maxDepth = depth;
    row("universal_transformer", "shared", std::to_string(depth),
        medianOf(n, [&] { return compileTraining(context, config); }));
  }
}
} // namespace

int main(int argc, char **argv) {
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "compile time of models against depth\n");
  std::vector<int64_t> counts(layerCounts.begin(), layerCounts.end());
  if (counts.empty())
    counts =
        quick ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{1, 2, 6, 12};
  int n = quick ? 1 : std::max(1, runs.getValue());
  if (llvm::any_of(counts, [](int64_t c) { return c < 1 || c > 64; }) ||
      llvm::any_of(depths, [](int64_t d) { return d < 1 || d > 256; }) ||
      dModel < 8 || dModel % 8 != 0) {
    llvm::errs() << "gnn-bench-compile: --layers must be in 1..64, --depths "
                    "in 1..256, --d-model a positive multiple of 8\n";
    return 1;
  }
  DialectRegistry registry;
  registerAllDialectsAndExtensions(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  llvm::SmallString<128> cacheDir;
  if (llvm::sys::fs::createUniqueDirectory("gnnc-bench-cache", cacheDir)) {
    llvm::errs() << "cannot create a temporary cache directory\n";
    return 1;
  }
  fmt::print("compile time, d_model {}, 8 heads, d_ff {} (seconds; cold: "
             "median of {})\n\n",
             dModel.getValue(), 4 * dModel, n);
  fmt::print("| model | layers | cold | MLIR passes | LLVM | link | store | "
             "warm (cache hit) |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (Architecture a :
       {Architecture::Transformer, Architecture::UniversalTransformer}) {
    // The Universal Transformer has one shared layer: its depth is the ACT
    // loop's, and its module does not change with `layers`.
    bool universal = a == Architecture::UniversalTransformer;
    for (int64_t layers : universal ? std::vector<int64_t>{1} : counts) {
      ModelConfig config = configFor(a, layers);
      CompileInfo mid =
          medianOf(n, [&] { return compileOnce(context, config, nullptr); });
      CompileCache cache{std::string(cacheDir)};
      CompileInfo store = compileOnce(context, config, &cache);
      CompileInfo warm = compileOnce(context, config, &cache);
      if (store.cacheHit || !warm.cacheHit) {
        llvm::errs() << "unexpected cache behaviour (store hit "
                     << store.cacheHit << ", warm hit " << warm.cacheHit
                     << ")\n";
        return 1;
      }
      fmt::print("| {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | "
                 "{:.3f} |\n",
                 universal ? "universal_transformer" : "transformer",
                 universal ? "shared" : std::to_string(layers), mid.seconds,
                 mid.passSeconds, mid.llvmSeconds, mid.linkSeconds,
                 store.seconds, warm.seconds);
    }
  }
  (void)llvm::sys::fs::remove_directories(cacheDir);
  if (training)
    printTrainingTable(context, counts, n);
  return 0;
}
