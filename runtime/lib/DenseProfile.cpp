//===- DenseProfile.cpp - time of the host's dense products --------------===//
//
// Part of gnnc's runtime. See DenseProfile.h.
//
//===----------------------------------------------------------------------===//

#include "DenseProfile.h"
#include "ExitReport.h"
#include "gnnc/dense.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

using namespace gnnc::dense_profile;

namespace {
/// A product shape: its kind, transposes and the sides that do not vary
/// (-1 where a side varies).
using Shape = std::tuple<Kind, bool, bool, int64_t, int64_t, int64_t>;

struct Row {
  long long calls = 0;
  double seconds = 0, flops = 0;
  /// The varying side summed over the calls (a tile's rows).
  double varying = 0;
};

/// "a @ b^T"-style text of a product's operands.
std::string operands(bool transposeA, bool transposeB) {
  return std::string(transposeA ? "a^T" : "a") + " @ " +
         (transposeB ? "b^T" : "b");
}

std::string describe(const Shape &shape) {
  auto [kind, transposeA, transposeB, rows, cols, inner] = shape;
  std::string ops = operands(transposeA, transposeB);
  if (kind == Kind::Tile)
    return "tiles  c[n x *] = " + ops;
  if (!transposeA)
    return "layer  c[n x " + std::to_string(cols) + "] = " + ops + ", inner " +
           std::to_string(inner);
  return "layer  c[" + std::to_string(rows) + " x " + std::to_string(cols) +
         "] = " + ops + ", summed over n";
}

struct Profile {
  std::mutex mutex;
  /// When the first product started.
  std::chrono::steady_clock::time_point start;
  std::map<Shape, Row> rows;

  void report() {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<std::pair<Shape, Row>> sorted(rows.begin(), rows.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
      return a.second.seconds > b.second.seconds;
    });
    Row total;
    for (const auto &[shape, row] : sorted) {
      total.calls += row.calls;
      total.seconds += row.seconds;
      total.flops += row.flops;
    }
    double wall = rows.empty() ? 0.0
                               : std::chrono::duration<double>(
                                     std::chrono::steady_clock::now() - start)
                                     .count();
    auto rate = [](const Row &r) {
      return r.seconds > 0 ? r.flops / r.seconds * 1e-9 : 0.0;
    };
    std::fprintf(stderr,
                 "GNNC_DENSE_PROFILE: %.3f s in %lld dense products (summed "
                 "over threads), %.1f GFLOP/s a call; %.3f s from the first "
                 "product to exit\n",
                 total.seconds, total.calls, rate(total), wall);
    std::fprintf(stderr, "%10s %6s %9s %8s %9s  %s\n", "seconds", "share",
                 "calls", "GFLOP/s", "mean n", "product");
    for (const auto &[shape, row] : sorted)
      std::fprintf(stderr, "%10.3f %5.1f%% %9lld %8.1f %9.1f  %s\n",
                   row.seconds,
                   total.seconds > 0 ? 100 * row.seconds / total.seconds : 0.0,
                   row.calls, rate(row), row.varying / double(row.calls),
                   describe(shape).c_str());
  }
};

Profile &profileState() {
  static Profile p;
  return p;
}

gnnc::ExitReport<profileState> exitReport;
} // namespace

bool gnnc::dense_profile::enabled() { return exitReport.enabled(); }

extern "C" void gnn_rt_dense_profile_enable(void) { exitReport.enable(); }

Product::Product(Kind kind, bool transposeA, bool transposeB, int64_t rows,
                 int64_t cols, int64_t inner)
    : on(enabled()), kind(kind), transposeA(transposeA), transposeB(transposeB),
      rows(rows), cols(cols), inner(inner) {
  if (on)
    start = std::chrono::steady_clock::now();
}

Product::~Product() {
  if (!on)
    return;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  // A layer's rows (its weight gradient's summed rows) vary with the batch;
  // a tile's every side does.
  bool sumsRows = transposeA;
  Shape shape =
      kind == Kind::Tile ? Shape{kind, transposeA, transposeB, -1, -1, -1}
      : sumsRows         ? Shape{kind, transposeA, transposeB, rows, cols, -1}
                         : Shape{kind, transposeA, transposeB, -1, cols, inner};
  double varying = kind == Kind::Layer && sumsRows ? inner : rows;
  Profile &p = profileState();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.rows.empty() || start < p.start)
    p.start = start;
  Row &row = p.rows[shape];
  ++row.calls;
  row.seconds += seconds;
  row.flops += 2.0 * double(rows) * double(cols) * double(inner);
  row.varying += varying;
}
