//===- TimedRuns.h - gnn-run's --repeat --------------------------*- C++
//-*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUN_TIMEDRUNS_H
#define GNN_RUN_TIMEDRUNS_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace gnnrun {
/// Calls `run` `repeat` times, after one untimed warm-up call when
/// repeating (caches, thread pools); the timed calls' seconds, sorted. The
/// first error stops it.
inline llvm::Expected<std::vector<double>>
timeRuns(int64_t repeat, llvm::function_ref<llvm::Error()> run) {
  std::vector<double> seconds;
  int64_t warmUp = repeat > 1 ? 1 : 0;
  for (int64_t r = 0; r < repeat + warmUp; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error e = run())
      return std::move(e);
    if (r >= warmUp)
      seconds.push_back(std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds;
}
} // namespace gnnrun

#endif // GNN_RUN_TIMEDRUNS_H
