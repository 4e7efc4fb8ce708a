//===- Errors.cpp - errors raised by compiled gnn programs ----------------===//
//
// Part of gnnc's runtime. Each context keeps its first report; compiled
// code reports from any of its threads, so a context is guarded by a mutex.
//
//===----------------------------------------------------------------------===//

#include "gnnc/errors.h"
#include "RuntimeInstance.h"
#include "gnnc/memory.h"

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <new>
#include <string>

namespace {
gnn_rt_context *orDefault(gnn_rt_context *context) {
  return context ? context : gnn_rt_default_context();
}

/// Formats a report only when the context has none yet.
template <typename... Args>
void reportf(gnn_rt_context *context, const char *format, Args... args) {
  context = orDefault(context);
  std::lock_guard<std::mutex> lock(context->mutex);
  if (!context->pending.empty())
    return;
  char text[256];
  std::snprintf(text, sizeof(text), format, args...);
  context->pending = text;
}
} // namespace

extern "C" gnn_rt_context *gnn_rt_context_create(void) {
  return gnn_rt_context_create_in(nullptr);
}

extern "C" void gnn_rt_context_destroy(gnn_rt_context *context) {
  if (context != gnn_rt_default_context())
    delete context;
}

extern "C" gnn_rt_context *gnn_rt_default_context(void) {
  static gnn_rt_context *process = new gnn_rt_context(gnn_rt_default_runtime());
  return process;
}

extern "C" void gnn_rt_context_report(gnn_rt_context *context,
                                      const char *message) {
  context = orDefault(context);
  std::lock_guard<std::mutex> lock(context->mutex);
  if (context->pending.empty())
    context->pending = message && *message ? message : "unknown error";
}

extern "C" void gnn_rt_context_set_tape_budget(gnn_rt_context *context,
                                               int64_t bytes) {
  orDefault(context)->tapeBudget = bytes > 0 ? bytes : 0;
}

extern "C" int64_t gnn_rt_context_tape_budget(gnn_rt_context *context) {
  context = orDefault(context);
  int64_t set = context->tapeBudget > 0
                    ? context->tapeBudget
                    : context->runtime->settings.tape_budget_bytes;
  // Half of the machine's memory (the allocation limit).
  return set > 0 ? set : gnn_rt_allocation_limit_bytes() / 2;
}

extern "C" int gnn_rt_context_take_error(gnn_rt_context *context, char *err,
                                         size_t errSize) {
  context = orDefault(context);
  std::lock_guard<std::mutex> lock(context->mutex);
  if (context->pending.empty())
    return 0;
  if (errSize > 0)
    std::snprintf(err, errSize, "%s", context->pending.c_str());
  context->pending.clear();
  return 1;
}

extern "C" void gnn_rt_edge_out_of_range(gnn_rt_context *context, int64_t edge,
                                         int64_t node, int64_t bound,
                                         int64_t isSource) {
  reportf(context, "edge %lld: %s node %lld is out of range [0, %lld)",
          static_cast<long long>(edge), isSource ? "source" : "destination",
          static_cast<long long>(node), static_cast<long long>(bound));
}

extern "C" void gnn_rt_bad_coo(gnn_rt_context *context, int64_t kind, int64_t a,
                               int64_t b) {
  auto la = static_cast<long long>(a), lb = static_cast<long long>(b);
  switch (kind) {
  case GNN_RT_COO_LENGTHS:
    reportf(context,
            "graph_from_coo: the edge lists differ in length (%lld source "
            "ids, %lld destination ids)",
            la, lb);
    return;
  case GNN_RT_COO_SRC_COUNT:
  case GNN_RT_COO_DST_COUNT:
    reportf(context,
            "graph_from_coo: %s node count %lld is out of range [0, %lld]",
            kind == GNN_RT_COO_SRC_COUNT ? "source" : "destination", la, lb);
    return;
  case GNN_RT_COO_NO_MEMORY_REVERSAL:
    reportf(context,
            "out of memory for the reversal of a graph of %lld nodes and "
            "%lld edges",
            la, lb);
    return;
  case GNN_RT_COO_NO_MEMORY:
  default:
    reportf(context,
            "graph_from_coo: out of memory for a graph of %lld nodes and "
            "%lld edges",
            la, lb);
  }
}

extern "C" void gnn_rt_rows_mismatch(gnn_rt_context *context, int64_t rows,
                                     int64_t expected, int64_t target) {
  static const char *what[] = {"source nodes", "destination nodes", "edges",
                               "rows of the op's inputs"};
  if (target == GNN_RT_SIZE_ITEM)
    reportf(context,
            "a feature has size %lld in a per-row dimension, but the op "
            "needs %lld",
            static_cast<long long>(rows), static_cast<long long>(expected));
  else
    reportf(
        context, "a feature has %lld rows, but the op needs %lld (%s)",
        static_cast<long long>(rows), static_cast<long long>(expected),
        what[target >= GNN_RT_SIZE_SRC_NODES && target < GNN_RT_SIZE_INPUT_ROWS
                 ? target
                 : int64_t(GNN_RT_SIZE_INPUT_ROWS)]);
}

namespace {
/// Entry `i` of a list as compiled code passes it.
int64_t entry(const gnn_memref1d_i64 &list, int64_t i) {
  return list.aligned[list.offset + i * list.stride];
}
} // namespace

extern "C" void _mlir_ciface_gnn_rt_check_bad_id(gnn_rt_context *context,
                                                 gnn_memref1d_i64 *slot,
                                                 gnn_memref1d_i64 *ids,
                                                 int64_t bound) {
  // The slot names an entry of the list (the kernels wrote its position).
  int64_t position = entry(*slot, 0);
  if (position != GNN_RT_NO_ENTRY)
    gnn_rt_id_out_of_range(context, position, entry(*ids, position), bound);
}

extern "C" void _mlir_ciface_gnn_rt_check_repeated_id(
    gnn_rt_context *context, gnn_memref1d_i64 *slot, gnn_memref1d_i64 *ids,
    gnn_memref1d_i64 *first, int64_t line, int64_t column) {
  int64_t position = entry(*slot, 0);
  if (position == GNN_RT_NO_ENTRY)
    return;
  int64_t id = entry(*ids, position);
  gnn_rt_bad_value(context, GNN_RT_REPEATED_ID, id, entry(*first, id), position,
                   0, 0, line, column);
}

extern "C" void gnn_rt_id_out_of_range(gnn_rt_context *context,
                                       int64_t position, int64_t id,
                                       int64_t bound) {
  reportf(context, "id list entry %lld: id %lld is out of range [0, %lld)",
          static_cast<long long>(position), static_cast<long long>(id),
          static_cast<long long>(bound));
}

namespace {
/// " (line L, column C)" or nothing when the place is unknown.
std::string placeOf(int64_t line, int64_t column) {
  if (line <= 0)
    return "";
  char text[64];
  std::snprintf(text, sizeof(text), " (line %lld, column %lld)",
                static_cast<long long>(line), static_cast<long long>(column));
  return text;
}
} // namespace

extern "C" void gnn_rt_bad_value(gnn_rt_context *context, int64_t kind,
                                 int64_t a, int64_t b, int64_t c, int64_t d,
                                 int64_t e, int64_t line, int64_t column) {
  auto la = static_cast<long long>(a), lb = static_cast<long long>(b),
       lc = static_cast<long long>(c), ld = static_cast<long long>(d),
       le = static_cast<long long>(e);
  std::string at = placeOf(line, column);
  switch (kind) {
  case GNN_RT_DIVISION_BY_ZERO:
    reportf(context, "integer division of %lld by zero%s", la, at.c_str());
    return;
  case GNN_RT_DIVISION_OVERFLOW:
    reportf(context, "integer division of %lld by %lld overflows%s", la, lb,
            at.c_str());
    return;
  case GNN_RT_INDEX_OUT_OF_RANGE:
    reportf(context,
            "index %lld is out of range for dimension %lld of size %lld%s", la,
            lc, lb, at.c_str());
    return;
  case GNN_RT_SLICE_OUT_OF_RANGE:
    reportf(context,
            "a slice of %lld elements from offset %lld with stride %lld does "
            "not fit in dimension %lld of size %lld%s",
            lb, la, le, ld, lc, at.c_str());
    return;
  case GNN_RT_SLICE_SOURCE_SIZE:
    reportf(context,
            "insert_slice: the source has size %lld in dimension %lld, but "
            "the slice has size %lld%s",
            la, lc, lb, at.c_str());
    return;
  case GNN_RT_RESHAPE_COUNT:
    if (a < 0)
      reportf(context,
              "reshape of %lld elements to a shape with a negative size or "
              "2^63 elements or more%s",
              lb, at.c_str());
    else
      reportf(context, "reshape of %lld elements to a shape of %lld%s", lb, la,
              at.c_str());
    return;
  case GNN_RT_ALLOCATION_TOO_LARGE:
    if (a < 0)
      reportf(context,
              "a new tensor with a negative size or 2^63 elements or more%s",
              at.c_str());
    else
      reportf(context,
              "a new tensor of %lld elements of %lld bytes is more than one "
              "allocation may take (%lld bytes, the machine's memory)%s",
              la, lb, lc, at.c_str());
    return;
  case GNN_RT_REPEATED_ID:
    reportf(context,
            "scatter_rows: id %lld is listed twice (entries %lld and %lld); "
            "the ids of a scatter without add must be distinct%s",
            la, lb, lc, at.c_str());
    return;
  case GNN_RT_DIM_OUT_OF_RANGE:
  default:
    reportf(context,
            "dimension index %lld is out of range for a rank-%lld "
            "tensor%s",
            la, lb, at.c_str());
  }
}

extern "C" void gnn_rt_report(const char *message) {
  gnn_rt_context_report(gnnc::boundContext(), message);
}

extern "C" int gnn_rt_take_error(char *err, size_t errSize) {
  return gnn_rt_context_take_error(nullptr, err, errSize);
}
