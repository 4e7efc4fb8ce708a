//===- dense_bench.cpp - dense layers' products, libxsmm vs OpenBLAS ------===//
//
// Part of gnnc. Times the three products of a dense layer on one thread, as
// compiled programs call them on each thread's block of rows: x Wᵀ
// (gnn_rt_linear), x W (its input gradient, gnn_rt_gemm with
// GNN_GEMM_LAYER) and xᵀ dy (its weight gradient, gnn_rt_gemm_at), through
// the runtime's entry points. Each row runs twice: in this process (libxsmm
// where the runtime takes it) and in a child process started with
// GNNC_SMALL_GEMM=off (OpenBLAS for every product). With --concurrent T, T
// threads time the same product at once, each on operands of its own, as
// the threads of a step do; with --cold, each run takes the next of enough
// operand sets that its operands come from memory, not cache, as in a step
// whose activations exceed the caches.
//
//   build/bin/gnn-bench-dense [--rows N] [--widths 29x128,128x128,...]
//                             [--repeats N] [--concurrent T] [--cold]
//
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"
#include "gnnc/dense.h"
#include "gnnc/errors.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <fmt/core.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace gnnbench;

static llvm::cl::OptionCategory category("dense benchmark options");
static llvm::cl::opt<int64_t>
    rows("rows", llvm::cl::init(950),
         llvm::cl::desc("rows of x (one thread's share of a batch)"),
         llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    widths("widths", llvm::cl::init("128x29,128x128,256x256,512x512,512x2048"),
           llvm::cl::desc("layers as INxOUT, comma-separated"),
           llvm::cl::cat(category));
static llvm::cl::opt<int> repeats("repeats", llvm::cl::init(20),
                                  llvm::cl::desc("timed runs (median kept)"),
                                  llvm::cl::cat(category));
static llvm::cl::opt<int>
    threads("concurrent", llvm::cl::init(1),
            llvm::cl::desc("threads timing the same product at once, each on "
                           "operands of its own (rates are per thread)"),
            llvm::cl::cat(category));
static llvm::cl::opt<bool>
    cold("cold",
         llvm::cl::desc("operands from memory: each run takes the next of "
                        "operand sets larger together than the caches"),
         llvm::cl::cat(category));
static llvm::cl::opt<bool>
    child("child", llvm::cl::Hidden,
          llvm::cl::desc("print 'layer product seconds' lines only"),
          llvm::cl::cat(category));

namespace {
struct Layer {
  int64_t in, out;
};

const char *const kProducts[] = {"x Wt", "x W", "xt dy"};

gnn_memref2d_f32 matrix(std::vector<float> &m, int64_t r, int64_t c) {
  return {m.data(), m.data(), 0, {r, c}, {c, 1}};
}

/// Operand sets of one thread rotate over at least this many bytes with
/// --cold: four times a 32 MiB L3.
constexpr size_t kColdBytes = size_t(128) << 20;

/// The operands of a layer's three products.
struct Operands {
  std::vector<float> x, w, dy, y, dx, dw;
  gnn_memref2d_f32 xm, wm, dym, ym, dxm, dwm;

  Operands(const Layer &layer, int64_t n, std::mt19937 &rng) {
    std::normal_distribution<float> dist;
    auto filled = [&](std::vector<float> &v, int64_t size) {
      v.resize(static_cast<size_t>(size));
      for (float &e : v)
        e = dist(rng);
    };
    filled(x, n * layer.in);
    filled(w, layer.out * layer.in);
    filled(dy, n * layer.out);
    y.resize(size_t(n * layer.out));
    dx.resize(size_t(n * layer.in));
    dw.resize(size_t(layer.in * layer.out));
    xm = matrix(x, n, layer.in);
    wm = matrix(w, layer.out, layer.in);
    dym = matrix(dy, n, layer.out);
    ym = matrix(y, n, layer.out);
    dxm = matrix(dx, n, layer.in);
    dwm = matrix(dw, layer.in, layer.out);
  }

  /// Reports of sizes that do not fit go to the benchmark's context, which
  /// timeProduct checks.
  void run(int p) {
    gnn_rt_context *context = gnnbench::benchContext();
    if (p == 0)
      _mlir_ciface_gnn_rt_linear_nobias(context, &xm, &wm, &ym);
    else if (p == 1)
      _mlir_ciface_gnn_rt_gemm(context, &dym, &wm, &dxm, GNN_GEMM_LAYER, 1.0f,
                               0.0f);
    else
      _mlir_ciface_gnn_rt_gemm_at(context, &xm, &dym, &dwm, 1.0f, 0.0f);
  }
};

/// Holds each of `count` threads until all have arrived.
class StartTogether {
public:
  explicit StartTogether(int count) : waiting(count) {}
  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex);
    if (--waiting == 0)
      allHere.notify_all();
    else
      allHere.wait(lock, [&] { return waiting == 0; });
  }

private:
  std::mutex mutex;
  std::condition_variable allHere;
  int waiting;
};

/// The median seconds of product `p` of `layer` on the calling thread,
/// once `ready` has every thread's arrival.
double timeOnThisThread(const Layer &layer, int p, unsigned seed,
                        StartTogether &ready) {
  std::mt19937 rng(seed);
  int64_t n = rows;
  size_t setBytes = sizeof(float) * size_t(2 * n * (layer.in + layer.out) +
                                           2 * layer.in * layer.out);
  size_t sets = cold ? std::max<size_t>(2, kColdBytes / setBytes + 1) : 1;
  std::vector<Operands> operands;
  operands.reserve(sets);
  for (size_t i = 0; i < sets; ++i)
    operands.emplace_back(layer, n, rng);
  size_t next = 0;
  ready.arriveAndWait();
  return medianSeconds([&] { operands[next++ % sets].run(p); }, repeats);
}

/// The mean over --concurrent threads of each one's median seconds for
/// product `p` of `layer`, all timing at once.
double timeProduct(const Layer &layer, int p) {
  StartTogether ready(threads);
  std::vector<double> seconds(size_t(threads.getValue()));
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t)
    others.emplace_back(
        [&, t] { seconds[t] = timeOnThisThread(layer, p, 7 + t, ready); });
  seconds[0] = timeOnThisThread(layer, p, 7, ready);
  for (std::thread &t : others)
    t.join();
  char err[256];
  if (gnn_rt_context_take_error(gnnbench::benchContext(), err, sizeof(err))) {
    fmt::print(stderr, "gnn-bench-dense: {}\n", err);
    std::exit(1);
  }
  double sum = 0;
  for (double s : seconds)
    sum += s;
  return sum / double(threads);
}

/// The same products timed by a child process on OpenBLAS alone, by layer
/// and product; empty (with a message) if the child failed.
std::map<std::pair<std::string, int>, double> openBlasTimes(const char *argv0) {
  std::map<std::pair<std::string, int>, double> times;
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&openBlasTimes));
  llvm::SmallString<64> output;
  if (llvm::sys::fs::createTemporaryFile("gnn-bench-dense", "txt", output)) {
    fmt::print(stderr, "gnn-bench-dense: no temporary file\n");
    return times;
  }
  std::string rowsArg = "--rows=" + std::to_string(rows),
              widthsArg = "--widths=" + widths,
              repeatsArg = "--repeats=" + std::to_string(repeats),
              threadsArg = "--concurrent=" + std::to_string(threads);
  llvm::SmallVector<llvm::StringRef> args = {self,      "--child",  rowsArg,
                                             widthsArg, repeatsArg, threadsArg};
  if (cold)
    args.push_back("--cold");
  std::vector<std::string> envStrings;
  for (char **e = environ; *e; ++e)
    if (!llvm::StringRef(*e).starts_with("GNNC_SMALL_GEMM="))
      envStrings.push_back(*e);
  envStrings.push_back("GNNC_SMALL_GEMM=off");
  llvm::SmallVector<llvm::StringRef> env(envStrings.begin(), envStrings.end());
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(output), std::nullopt};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(self, args,
                                     llvm::ArrayRef<llvm::StringRef>(env),
                                     redirects, 0, 0, &error);
  if (rc != 0) {
    fmt::print(stderr, "gnn-bench-dense: the OpenBLAS run failed: {}\n",
               error.empty() ? "exit " + std::to_string(rc) : error);
  } else if (FILE *f = std::fopen(output.c_str(), "r")) {
    char name[64];
    int p;
    double seconds;
    while (std::fscanf(f, "%63s %d %lf", name, &p, &seconds) == 3)
      times[{name, p}] = seconds;
    std::fclose(f);
  }
  llvm::sys::fs::remove(output);
  return times;
}

std::string name(const Layer &layer) {
  return std::to_string(layer.in) + "x" + std::to_string(layer.out);
}
} // namespace

int main(int argc, char **argv) {
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "dense layers' products: libxsmm against OpenBLAS\n");
  std::vector<Layer> layers;
  llvm::SmallVector<llvm::StringRef> items;
  llvm::StringRef(widths).split(items, ',', -1, false);
  for (llvm::StringRef item : items) {
    auto [in, out] = item.split('x');
    Layer layer;
    if (in.getAsInteger(10, layer.in) || out.getAsInteger(10, layer.out) ||
        layer.in <= 0 || layer.out <= 0) {
      fmt::print(stderr, "gnn-bench-dense: bad layer '{}' (want INxOUT)\n",
                 item.str());
      return 1;
    }
    layers.push_back(layer);
  }
  if (repeats < 1) {
    fmt::print(stderr, "gnn-bench-dense: --repeats must be at least 1\n");
    return 1;
  }
  if (rows < 1) {
    fmt::print(stderr, "gnn-bench-dense: --rows must be at least 1\n");
    return 1;
  }
  if (threads < 1 || threads > 1024) {
    fmt::print(stderr, "gnn-bench-dense: --concurrent must be 1 to 1024\n");
    return 1;
  }
  // Each matrix at most 1 GiB of floats.
  constexpr int64_t kMaxElements = int64_t(1) << 28;
  for (const Layer &layer : layers)
    if (std::max({layer.in, layer.out, int64_t(rows)}) > kMaxElements ||
        rows * std::max(layer.in, layer.out) > kMaxElements ||
        layer.in * layer.out > kMaxElements) {
      fmt::print(stderr,
                 "gnn-bench-dense: layer {} with {} rows needs a matrix over "
                 "1 GiB\n",
                 name(layer), int64_t(rows));
      return 1;
    }
  // Every call on this thread, as compiled programs make them.
  gnn_rt_runtime *runtime = gnnbench::benchRuntime();
  gnn_rt_set_dense_threads(1);
  if (child) {
    for (const Layer &layer : layers)
      for (int p = 0; p < 3; ++p)
        fmt::print("{} {} {:.9f}\n", name(layer), p, timeProduct(layer, p));
    return 0;
  }

  const char *target = gnn_rt_small_gemm_target(runtime);
  const char *core = gnn_rt_blas_core();
  fmt::print("{} rows a thread, {} at once, operands {}; libxsmm target {}, "
             "OpenBLAS {} kernels; median of {} runs (per-thread rates)\n\n",
             int64_t(rows),
             threads == 1 ? "one thread" : std::to_string(threads) + " threads",
             cold ? "from memory (--cold)" : "warm in cache",
             target ? target : "none (GNNC_SMALL_GEMM=off)", core ? core : "?",
             int(repeats));
  std::map<std::pair<std::string, int>, double> blas = openBlasTimes(argv[0]);
  fmt::print("{:>10} {:>7} | {:>10} {:>8} | {:>11} {:>8} | {:>7}\n", "layer",
             "product", "runtime us", "GFLOP/s", "OpenBLAS us", "GFLOP/s",
             "speedup");
  for (const Layer &layer : layers)
    for (int p = 0; p < 3; ++p) {
      double seconds = timeProduct(layer, p);
      double flop = 2.0 * double(rows) * double(layer.in) * double(layer.out);
      auto it = blas.find({name(layer), p});
      if (it == blas.end()) {
        fmt::print("{:>10} {:>7} | {:>10.1f} {:>8.1f} | {:>11} {:>8} | {:>7}\n",
                   name(layer), kProducts[p], seconds * 1e6,
                   flop / seconds / 1e9, "-", "-", "-");
        continue;
      }
      fmt::print("{:>10} {:>6} | {:>10.1f} {:>8.1f} | {:>10.1f} {:>8.1f} | "
                 "{:>6.2f}x\n",
                 name(layer), kProducts[p], seconds * 1e6, flop / seconds / 1e9,
                 it->second * 1e6, flop / it->second / 1e9,
                 it->second / seconds);
    }
  return 0;
}
