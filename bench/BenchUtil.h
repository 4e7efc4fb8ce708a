//===- BenchUtil.h - helpers shared by the benchmarks -----------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_BENCH_BENCHUTIL_H
#define GNN_BENCH_BENCHUTIL_H

#include "gnnc/graph.h"

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
