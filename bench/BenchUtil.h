//===- BenchUtil.h - helpers shared by the benchmarks -----------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_BENCH_BENCHUTIL_H
#define GNN_BENCH_BENCHUTIL_H

#include "GNN/Support/Environment.h"
#include "gnnc/graph.h"
#include "gnnc/runtime.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

namespace gnnbench {

struct GraphDeleter {
  void operator()(gnn_graph *g) const { gnn_graph_free(g); }
};
using GraphPtr = std::unique_ptr<gnn_graph, GraphDeleter>;

/// What the environment asks of the benchmarks, as of gnnc's tools (read
/// once).
inline const mlir::gnn::EnvironmentOptions &benchEnvironment() {
  static const mlir::gnn::EnvironmentOptions environment =
      mlir::gnn::readEnvironment();
  return environment;
}

/// What gnnc's tools do at start-up, once: the process set up as the
/// environment asks, and a runtime instance with its settings that lives
/// as long as the process.
inline gnn_rt_runtime *benchRuntime() {
  static gnn_rt_runtime *runtime = [] {
    mlir::gnn::prepareProcess(benchEnvironment());
    return gnn_rt_runtime_create(&benchEnvironment().runtime);
  }();
  return runtime;
}

/// A context of benchRuntime() for the runtime's functions that a
/// benchmark calls itself.
inline gnn_rt_context *benchContext() {
  static gnn_rt_context *context = gnn_rt_context_create_in(benchRuntime());
  return context;
}

/// The median wall time of `runs` calls of `fn`, after one warm-up call.
inline double medianSeconds(const std::function<void()> &fn, int runs) {
  fn();
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace gnnbench

#endif // GNN_BENCH_BENCHUTIL_H
