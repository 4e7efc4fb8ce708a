//===- Errors.cpp - errors raised by compiled gnn programs ----------------===//
//
// Part of gnnc's runtime.
//
//===----------------------------------------------------------------------===//

#include "gnnc/errors.h"

#include <cstdio>
#include <mutex>
#include <string>

namespace {
std::mutex mutex;
std::string pending; // empty: no error
} // namespace

extern "C" void gnn_rt_report(const char *message) {
  std::lock_guard<std::mutex> lock(mutex);
  if (pending.empty())
    pending = message && *message ? message : "unknown error";
}

extern "C" void gnn_rt_edge_out_of_range(int64_t edge, int64_t node,
                                         int64_t bound, int64_t isSource) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!pending.empty())
    return;
  char text[256];
  std::snprintf(
      text, sizeof(text), "edge %lld: %s node %lld is out of range [0, %lld)",
      static_cast<long long>(edge), isSource ? "source" : "destination",
      static_cast<long long>(node), static_cast<long long>(bound));
  pending = text;
}

extern "C" void gnn_rt_rows_mismatch(int64_t rows, int64_t expected,
                                     int64_t target) {
  static const char *what[] = {"source nodes", "destination nodes", "edges",
                               "rows of the op's inputs"};
  std::lock_guard<std::mutex> lock(mutex);
  if (!pending.empty())
    return;
  char text[256];
  if (target == 4)
    std::snprintf(text, sizeof(text),
                  "a feature has size %lld in a per-row dimension, but the op "
                  "needs %lld",
                  static_cast<long long>(rows),
                  static_cast<long long>(expected));
  else
    std::snprintf(text, sizeof(text),
                  "a feature has %lld rows, but the op needs %lld (%s)",
                  static_cast<long long>(rows),
                  static_cast<long long>(expected),
                  what[target >= 0 && target < 4 ? target : 3]);
  pending = text;
}

extern "C" void gnn_rt_id_out_of_range(int64_t position, int64_t id,
                                       int64_t bound) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!pending.empty())
    return;
  char text[256];
  std::snprintf(text, sizeof(text),
                "id list entry %lld: id %lld is out of range [0, %lld)",
                static_cast<long long>(position), static_cast<long long>(id),
                static_cast<long long>(bound));
  pending = text;
}

extern "C" int gnn_rt_take_error(char *err, size_t errSize) {
  std::lock_guard<std::mutex> lock(mutex);
  if (pending.empty())
    return 0;
  if (errSize > 0)
    std::snprintf(err, errSize, "%s", pending.c_str());
  pending.clear();
  return 1;
}
