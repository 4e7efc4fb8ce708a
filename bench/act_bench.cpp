//===- act_bench.cpp - attention over a shrinking active set --------------===//
//
// Part of gnnc. One ACT step attends only into the active nodes. This times
// the ways gnn IR can express that, as the active share shrinks:
//
//   compacted  gnn.in_subgraph (the in-edges of the active nodes, compacted
//              destinations) + fused attention of the active queries: the
//              AUT's choice, O(active nodes + active edges)
//   masked     gnn.filter_edges (edges into active destinations) + fused
//              attention with edges(...): every destination row and edge is
//              visited, inactive ones are skipped
//   all        fused attention over every edge, ignoring activity
//
//   build/bin/gnn-bench-act [--repeats N] [--quick]
//
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"
#include "GNN/InitAll.h"
#include "GNN/Runner/JitRunner.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>

using namespace mlir;
using namespace mlir::gnn;
using namespace gnnbench;

static llvm::cl::OptionCategory category("ACT benchmark options");
static llvm::cl::opt<int> repeats("repeats", llvm::cl::init(9),
                                  llvm::cl::desc("timed runs (median kept)"),
                                  llvm::cl::cat(category));
static llvm::cl::opt<bool>
    quick("quick", llvm::cl::desc("smaller workloads (smoke run)"),
          llvm::cl::cat(category));
static llvm::cl::opt<int> threads("num-threads", llvm::cl::init(0),
                                  llvm::cl::desc("threads (0: all cores)"),
                                  llvm::cl::cat(category));

namespace {
constexpr int kHeads = 8, kDk = 16;

/// The three strategies as entries of one module.
std::string source() {
  std::string feat = fmt::format("tensor<?x{}x{}xf32>", kHeads, kDk);
  std::string g = "!gnn.graph<general>", ids = "tensor<?xindex>";
  std::string attention = "scale(0.25) clamp(-10.0, 10.0) normalize";
  std::string s;
  s += fmt::format(
      "func.func @compacted(%g: {1}, %active: {2}, %q: {0}, %k: {0}, %v: {0})"
      " -> {0} {{\n"
      "  %sub, %eids = gnn.in_subgraph %g, %active : ({1}, {2}) -> ({1}, {2})\n"
      "  %qa = gnn.gather_rows %q[%active] : ({0}, {2}) -> {0}\n"
      "  %o = gnn.fused_attention %sub, %qa, %k, %v {3} : ({1}, {0}, {0}, {0})"
      " -> {0}\n"
      "  return %o : {0}\n}}\n",
      feat, g, ids, attention);
  s += fmt::format(
      "func.func @masked(%g: {1}, %mask: tensor<?xi1>, %q: {0}, %k: {0}, "
      "%v: {0}) -> {0} {{\n"
      "  %live = gnn.filter_edges %g, (v %mask) {{\n"
      "  ^bb0(%m: i1):\n    gnn.yield %m : i1\n"
      "  }} : ({1}, tensor<?xi1>) -> {2}\n"
      "  %o = gnn.fused_attention %g, %q, %k, %v {3} edges(%live) : "
      "({1}, {0}, {0}, {0}, {2}) -> {0}\n"
      "  return %o : {0}\n}}\n",
      feat, g, ids, attention);
  s += fmt::format(
      "func.func @all(%g: {1}, %q: {0}, %k: {0}, %v: {0}) -> {0} {{\n"
      "  %o = gnn.fused_attention %g, %q, %k, %v {2} : ({1}, {0}, {0}, {0})"
      " -> {0}\n"
      "  return %o : {0}\n}}\n",
      feat, g, attention);
  return s;
}
} // namespace

int main(int argc, char **argv) {
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(argc, argv, "ACT attention benchmark\n");
  if (repeats < 1) {
    llvm::errs() << "--repeats must be at least 1\n";
    return 1;
  }
  if (threads < 0) {
    llvm::errs() << "--num-threads must be 0 (all cores) or more\n";
    return 1;
  }
  DialectRegistry registry;
  gnn::registerAllDialectsAndExtensions(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto module = parseSourceString<ModuleOp>(source(), ParserConfig(&context));
  if (!module)
    return 1;
  CompileOptions options;
  options.runtime = benchRuntime();
  auto compiled = JitProgram::compile(std::move(module),
                                      {"compacted", "masked", "all"}, options);
  if (!compiled) {
    llvm::errs() << llvm::toString(compiled.takeError()) << "\n";
    return 1;
  }
  JitProgram &program = **compiled;

  std::mt19937 rng(11);
  std::normal_distribution<double> length(15.0, 3.0);
  std::vector<int64_t> lengths;
  for (int b = 0; b < (quick ? 32 : 512); ++b)
    lengths.push_back(std::max<int64_t>(1, std::lround(length(rng))));
  gnn_graph *raw = nullptr;
  gnn_graph_complete_blocks(lengths.data(), int64_t(lengths.size()), &raw,
                            nullptr, 0);
  GraphPtr graph(raw);
  int64_t n = graph->num_dst;

  std::normal_distribution<float> dist(0.0f, 1.0f);
  auto feature = [&](int64_t rows) {
    HostTensor t;
    t.shape = {rows, kHeads, kDk};
    t.allocate();
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.as<float>()[i] = dist(rng);
    return t;
  };
  HostTensor q = feature(n), k = feature(n), v = feature(n);

  fmt::print("ACT attention: {} sequences, lengths N(15, 3), complete "
             "graphs ({} nodes, {} edges), {} heads x {}; median of {} runs\n",
             lengths.size(), n, graph->num_edges, kHeads, kDk, int(repeats));
  fmt::print("{:>7} {:>9} | {:>10} {:>10} {:>10} | {:>12}\n", "active", "edges",
             "compacted", "masked", "all", "ns/edge comp");
  fmt::print("{:>7} {:>9} | {:>10} {:>10} {:>10} | {:>12}\n", "", "", "ms",
             "ms", "ms", "");
  for (double share : {1.0, 0.75, 0.5, 0.25, 0.1, 0.05, 0.01}) {
    std::vector<int64_t> active;
    HostTensor mask;
    mask.dtype = DType::Bool;
    mask.shape = {n};
    mask.allocate();
    std::uniform_real_distribution<double> coin(0.0, 1.0);
    int64_t edges = 0;
    for (int64_t i = 0; i < n; ++i)
      if (coin(rng) < share) {
        active.push_back(i);
        mask.as<uint8_t>()[i] = 1;
        edges += graph->in_ptr[i + 1] - graph->in_ptr[i];
      }
    HostTensor activeIds;
    activeIds.dtype = DType::I64;
    activeIds.shape = {int64_t(active.size())};
    activeIds.allocate();
    std::copy(active.begin(), active.end(), activeIds.as<int64_t>());
    auto time = [&](const char *entry, std::vector<Argument> args) {
      return medianSeconds(
          [&] { (void)llvm::cantFail(program.run(entry, args, threads)); },
          repeats);
    };
    double compacted = time("compacted", {{graph.get(), nullptr},
                                          {nullptr, &activeIds},
                                          {nullptr, &q},
                                          {nullptr, &k},
                                          {nullptr, &v}});
    double masked = time("masked", {{graph.get(), nullptr},
                                    {nullptr, &mask},
                                    {nullptr, &q},
                                    {nullptr, &k},
                                    {nullptr, &v}});
    double all = time(
        "all",
        {{graph.get(), nullptr}, {nullptr, &q}, {nullptr, &k}, {nullptr, &v}});
    fmt::print("{:>6.0f}% {:>9} | {:>10.3f} {:>10.3f} {:>10.3f} | {:>12.2f}\n",
               100.0 * double(active.size()) / double(n), edges,
               compacted * 1e3, masked * 1e3, all * 1e3,
               edges ? compacted * 1e9 / double(edges) : 0.0);
  }
  return 0;
}
