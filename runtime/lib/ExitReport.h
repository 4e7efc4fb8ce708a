//===- ExitReport.h - profiles printed when the process exits ---*- C++ -*-===//
//
// Part of gnnc's runtime (internal). The runtime's profiles (of dense
// products, of CUDA calls) are turned on by the host and print their
// tables at exit.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_EXITREPORT_H
#define GNNC_RUNTIME_EXITREPORT_H

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace gnnc {
/// A profile that records once turned on and prints `state()`'s report()
/// when the process exits (the state is constructed first, so that it is
/// destroyed after the report).
template <auto &state> class ExitReport {
public:
  bool enabled() const { return on.load(std::memory_order_relaxed); }
  void enable() {
    std::call_once(once, [this] {
      state();
      std::atexit([] { state().report(); });
      on.store(true);
    });
  }

private:
  std::atomic<bool> on{false};
  std::once_flag once;
};
} // namespace gnnc

#endif // GNNC_RUNTIME_EXITREPORT_H
