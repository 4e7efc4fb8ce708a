//===- CudaProfile.cpp - where a GPU program's time goes ------------------===//
//
// Part of gnnc's runtime. See CudaProfile.h.
//
//===----------------------------------------------------------------------===//

#include "CudaProfile.h"
#include "ExitReport.h"
#include "gnnc/cuda.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

using namespace gnnc::cuda;

namespace {
/// Launches whose events are read at once when this many are waiting, so
/// that a long run holds few events.
constexpr size_t kPendingLimit = 4096;

struct Row {
  long long count = 0;
  double ms = 0;
};

struct Profile {
  std::mutex mutex;
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
  const Driver *driver = nullptr;
  std::map<CUfunction, std::string> names;
  std::vector<std::tuple<CUfunction, CUevent, CUevent>> pending;
  std::map<std::string, Row> kernels, hostCalls;

  /// Reads and frees the pending launches' events (lock held).
  void settle() {
    for (auto [function, start, end] : pending) {
      float ms = 0;
      if (driver->eventSynchronize(end) == kSuccess &&
          driver->eventElapsedTime(&ms, start, end) == kSuccess) {
        auto name = names.find(function);
        Row &row =
            kernels[name == names.end() ? "(unnamed kernel)" : name->second];
        ++row.count;
        row.ms += ms;
      }
      driver->eventDestroy(start);
      driver->eventDestroy(end);
    }
    pending.clear();
  }

  void print(const char *title, const std::map<std::string, Row> &rows) {
    std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
      return a.second.ms > b.second.ms;
    });
    double total = 0;
    long long count = 0;
    for (const auto &[name, row] : sorted) {
      total += row.ms;
      count += row.count;
    }
    std::fprintf(stderr, "%s: %.1f ms in %lld\n", title, total, count);
    std::fprintf(stderr, "%12s %9s %10s  %s\n", "ms", "count", "mean us",
                 "name");
    for (const auto &[name, row] : sorted)
      std::fprintf(stderr, "%12.2f %9lld %10.1f  %s\n", row.ms, row.count,
                   1e3 * row.ms / double(row.count), name.c_str());
  }

  void report() {
    std::lock_guard<std::mutex> lock(mutex);
    if (driver)
      settle();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    std::fprintf(stderr,
                 "GNNC_CUDA_PROFILE: %.3f s from the first CUDA call to exit\n",
                 seconds);
    print("kernels (device time)", kernels);
    print("runtime calls (host time)", hostCalls);
  }
};

Profile &profileState() {
  static Profile p;
  return p;
}

gnnc::ExitReport<profileState> exitReport;
} // namespace

bool profile::enabled() { return exitReport.enabled(); }

extern "C" void gnn_cuda_profile_enable(void) { exitReport.enable(); }

void profile::nameFunction(CUfunction function, const char *name) {
  if (!enabled() || !function)
    return;
  Profile &p = profileState();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.names[function] = name;
}

profile::Launch profile::beforeLaunch(const Driver &d, CUstream stream) {
  Launch launch;
  if (!enabled())
    return launch;
  if (d.eventCreate(&launch.start, 0) != kSuccess)
    return {};
  if (d.eventCreate(&launch.end, 0) != kSuccess) {
    d.eventDestroy(launch.start);
    return {};
  }
  d.eventRecord(launch.start, stream);
  return launch;
}

void profile::afterLaunch(const Driver &d, Launch launch, CUfunction function,
                          CUstream stream) {
  if (!launch.start)
    return;
  d.eventRecord(launch.end, stream);
  Profile &p = profileState();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.driver = &d;
  p.pending.emplace_back(function, launch.start, launch.end);
  if (p.pending.size() >= kPendingLimit)
    p.settle();
}

void profile::settle() {
  if (!enabled())
    return;
  Profile &p = profileState();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.driver)
    p.settle();
}

profile::HostCall::HostCall(const char *call)
    : call(enabled() ? call : nullptr),
      start(std::chrono::steady_clock::now()) {}

profile::HostCall::~HostCall() {
  if (!call)
    return;
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  Profile &p = profileState();
  std::lock_guard<std::mutex> lock(p.mutex);
  Row &row = p.hostCalls[call];
  ++row.count;
  row.ms += ms;
}
