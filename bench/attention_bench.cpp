//===- attention_bench.cpp - fused vs unfused vs naive attention ----------===//
//
// Part of gnnc. Times one attention layer (the tutorial's propagate_attention:
// score, scaled exp, two sums, division) compiled fused and unfused, and a
// naive C++ loop, on the workloads of the project's benchmark plan; measures
// this machine's peak with an OpenBLAS sgemm in the same run.
//
//   build/bin/gnn-bench-attention [--repeats N] [--quick] [--workloads abcd]
//
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"
#include "GNN/InitAll.h"
#include "GNN/Runner/JitRunner.h"
#include "gnnc/cuda.h"
#include "gnnc/dense.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <thread>

using namespace mlir;
using namespace mlir::gnn;
using namespace gnnbench;

static llvm::cl::OptionCategory category("attention benchmark options");
static llvm::cl::opt<int> repeats("repeats", llvm::cl::init(5),
                                  llvm::cl::desc("timed runs (median kept)"),
                                  llvm::cl::cat(category));
static llvm::cl::opt<bool>
    quick("quick", llvm::cl::desc("smaller workloads (smoke run)"),
          llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    device("device", llvm::cl::init("cpu"),
           llvm::cl::desc("where the compiled kernels run: cpu or cuda"),
           llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    only("workloads", llvm::cl::init("abcd"),
         llvm::cl::desc("the workloads to run, by letter (e.g. 'ac')"),
         llvm::cl::cat(category));

namespace {
constexpr int kHeads = 8, kDk = 64;

/// Single-precision GEMM throughput through the runtime's OpenBLAS: this
/// machine's practical peak.
double measurePeakGflops() {
  int64_t n = quick ? 512 : 1536;
  std::vector<float> a(size_t(n) * n, 1.0f), b(size_t(n) * n, 0.5f),
      c(size_t(n) * n);
  auto matrix = [n](std::vector<float> &m) {
    return gnn_memref2d_f32{m.data(), m.data(), 0, {n, n}, {n, 1}};
  };
  gnn_memref2d_f32 x = matrix(a), y = matrix(b), z = matrix(c);
  double seconds = medianSeconds(
      [&] { _mlir_ciface_gnn_rt_gemm(&x, &y, &z, 0, 1.0f, 0.0f); }, 3);
  return 2.0 * n * n * double(n) / seconds / 1e9;
}

/// The tutorial's attention written with DGL's built-ins, on a graph of the
/// given structure (general, complete, causal).
std::string attentionSource(llvm::StringRef structure) {
  const char *feat = "tensor<?x8x64xf32>", *score = "tensor<?x8x1xf32>";
  std::string graph = ("!gnn.graph<" + structure + ">").str();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "func.func @main(%g: " << graph << ", %q: " << feat << ", %k: " << feat
     << ", %v: " << feat << ") -> " << feat << " {\n"
     << "  %s = gnn.apply_edges %g, u_dot_v(%k, %q) : (" << graph << ", "
     << feat << ", " << feat << ") -> " << score << "\n"
     << "  %e = gnn.apply_edges %g, copy_e(%s) then [scale(0.125), "
        "clamp(-5.0, 5.0), exp] : ("
     << graph << ", " << score << ") -> " << score << "\n"
     << "  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, "
        "copy_e(%e) -> sum] : ("
     << graph << ", " << feat << ", " << score << ", " << score << ") -> ("
     << feat << ", " << score << ")\n"
     << "  %o = gnn.apply_nodes(%wv, %z) {\n  ^bb0(%a: f32, %b: f32):\n"
     << "    %d = arith.divf %a, %b : f32\n    gnn.yield %d : f32\n  } : ("
     << feat << ", " << score << ") -> " << feat << "\n  return %o : " << feat
     << "\n}\n";
  return os.str();
}

/// A plain loop over destinations, heads and in-edges: what one writes by
/// hand without a compiler (single thread).
void naiveAttention(const gnn_graph &g, const float *q, const float *k,
                    const float *v, float *out) {
  std::vector<float> w;
  for (int64_t d = 0; d < g.num_dst; ++d)
    for (int h = 0; h < kHeads; ++h) {
      const float *qv = q + (d * kHeads + h) * kDk;
      float *o = out + (d * kHeads + h) * kDk;
      std::fill(o, o + kDk, 0.0f);
      float z = 0;
      for (int64_t s = g.in_ptr[d]; s < g.in_ptr[d + 1]; ++s) {
        const float *ku = k + (g.in_src[s] * kHeads + h) * kDk;
        const float *vu = v + (g.in_src[s] * kHeads + h) * kDk;
        float dot = 0;
        for (int i = 0; i < kDk; ++i)
          dot += ku[i] * qv[i];
        float e = std::exp(std::min(std::max(dot * 0.125f, -5.0f), 5.0f));
        z += e;
        for (int i = 0; i < kDk; ++i)
          o[i] += e * vu[i];
      }
      if (z > 0)
        for (int i = 0; i < kDk; ++i)
          o[i] /= z;
    }
}

/// Prints the largest difference of the fused and unfused results from the
/// naive loop's; false if one exceeds kAgreement.
bool agree(JitProgram &fused, JitProgram &unfused, ArrayRef<Argument> args,
           const std::vector<float> &naive, const std::string &name) {
  constexpr double kAgreement = 1e-4;
  auto difference = [&](JitProgram &program) {
    std::vector<HostTensor> results = llvm::cantFail(program.run(args));
    const HostTensor &out = results[0];
    double worst = 0;
    for (int64_t i = 0; i < out.numElements(); ++i) {
      double got = out.as<float>()[i];
      // The unfused form divides 0 by 0 where nothing is received.
      if (std::isnan(got) && naive[i] == 0.0f)
        continue;
      double d = std::fabs(got - naive[i]);
      worst = std::isnan(d) ? INFINITY : std::max(worst, d);
    }
    return worst;
  };
  double f = difference(fused), u = difference(unfused);
  fmt::print("{:<30} {:>9} | max |fused - naive| {:.1e}, |unfused - naive| "
             "{:.1e}\n",
             "", "", f, u);
  if (f <= kAgreement && u <= kAgreement)
    return true;
  fmt::print(stderr,
             "{}: results differ from the naive loop by more than "
             "{:.0e}\n",
             name, kAgreement);
  return false;
}

struct Workload {
  std::string name;
  GraphPtr graph;
  /// What the program's graph type promises (kernels may exploit it).
  std::string structure;
};

std::vector<Workload> workloads() {
  std::mt19937 rng(7);
  std::vector<Workload> out;
  gnn_graph *g = nullptr;
  std::normal_distribution<double> length(15.0, 3.0);
  std::vector<int64_t> copy;
  for (int b = 0; b < (quick ? 16 : 128); ++b)
    copy.push_back(std::max<int64_t>(1, std::lround(length(rng))));
  gnn_graph_complete_blocks(copy.data(), copy.size(), &g, nullptr, 0);
  out.push_back({"(a) 128 x N(15,3) complete", GraphPtr(g), "complete"});
  std::vector<int64_t> big(quick ? 2 : 16, 256);
  gnn_graph_complete_blocks(big.data(), big.size(), &g, nullptr, 0);
  out.push_back({"(b) 16 x 256 complete", GraphPtr(g), "complete"});
  gnn_graph_causal_blocks(big.data(), big.size(), &g, nullptr, 0);
  out.push_back({"(c) 16 x 256 causal", GraphPtr(g), "causal"});
  int64_t n = quick ? 10000 : 100000, m = n * 16;
  std::vector<int64_t> src(m), dst(m);
  for (int64_t e = 0; e < m; ++e) {
    src[e] = rng() % n;
    dst[e] = rng() % n;
  }
  gnn_graph_from_coo(n, n, m, src.data(), dst.data(), &g, nullptr, 0);
  out.push_back({"(d) 100k nodes, in-degree 16", GraphPtr(g), "general"});
  return out;
}
} // namespace

int main(int argc, char **argv) {
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(argc, argv, "attention benchmark\n");
  if (repeats < 1) {
    llvm::errs() << "--repeats must be at least 1\n";
    return 1;
  }
  DialectRegistry registry;
  gnn::registerAllDialectsAndExtensions(registry);
  bool onGPU = device == "cuda";
  if (!onGPU && device != "cpu") {
    llvm::errs() << "--device must be cpu or cuda\n";
    return 1;
  }
  if (only.empty() || llvm::StringRef(only).find_first_not_of("abcd") !=
                          llvm::StringRef::npos) {
    llvm::errs() << "--workloads takes letters among a, b, c and d\n";
    return 1;
  }
  char gpuName[256] = "";
  if (onGPU && (!gnn_cuda_init(gpuName, sizeof(gpuName)) ||
                !gnn_cuda_device_name(gpuName, sizeof(gpuName)))) {
    llvm::errs() << "--device cuda: " << gpuName << "\n";
    return 1;
  }

  auto compile = [&](bool fuse,
                     llvm::StringRef structure) -> std::unique_ptr<JitProgram> {
    auto context = new MLIRContext(registry); // lives as long as the program
    context->loadAllAvailableDialects();
    auto module = parseSourceString<ModuleOp>(attentionSource(structure),
                                              ParserConfig(context));
    CompileOptions options;
    options.fuse = fuse;
    options.device = onGPU ? Device::CUDA : Device::CPU;
    auto program = JitProgram::compile(std::move(module), "main", {}, options);
    if (!program) {
      llvm::errs() << llvm::toString(program.takeError()) << "\n";
      std::exit(1);
    }
    return std::move(*program);
  };
  // Before compiling: parallel CPU programs make OpenBLAS single-threaded.
  double peak = measurePeakGflops();
  // Fused and unfused programs per graph structure, compiled on first use.
  std::map<std::string,
           std::pair<std::unique_ptr<JitProgram>, std::unique_ptr<JitProgram>>>
      programs;
  const char *core = gnn_rt_blas_core();
  fmt::print("machine: {} hardware threads; OpenBLAS ({} kernels) sgemm "
             "peak {:.1f} GFLOP/s\n",
             std::thread::hardware_concurrency(), core ? core : "?", peak);
  if (onGPU)
    fmt::print("kernels on {}: 'run' is a whole call (q, k, v and the graph "
               "copied in, the result copied out); 'kernels' is the time the "
               "kernels ran on the device, which rates are computed from\n",
               gpuName);
  fmt::print("attention: {} heads x {}, scale 1/8, clamp 5; median of {} "
             "runs; GFLOP counts 4*dk per edge and head\n\n",
             kHeads, kDk, int(repeats));
  if (onGPU)
    fmt::print("{:<30} {:>9} | {:<8} {:>10} {:>10} {:>10} {:>8}\n", "workload",
               "edges", "kernel", "run ms", "kernels ms", "Medges/s",
               "GFLOP/s");
  else
    fmt::print("{:<30} {:>9} | {:<8} {:>10} {:>10} {:>8} {:>7}\n", "workload",
               "edges", "kernel", "time ms", "Medges/s", "GFLOP/s", "% peak");
  if (onGPU)
    gnn_cuda_time_kernels(1);

  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  bool failed = false;
  for (Workload &w : workloads()) {
    if (!llvm::StringRef(only).contains(w.name[1]))
      continue;
    const gnn_graph &g = *w.graph;
    auto &[fused, unfused] = programs[w.structure];
    if (!fused) {
      fused = compile(true, w.structure);
      unfused = compile(false, w.structure);
    }
    auto feature = [&](int64_t rows) {
      HostTensor t;
      t.shape = {rows, kHeads, kDk};
      t.allocate();
      for (int64_t i = 0; i < t.numElements(); ++i)
        t.as<float>()[i] = dist(rng);
      return t;
    };
    HostTensor q = feature(g.num_dst), k = feature(g.num_src),
               v = feature(g.num_src);
    std::vector<Argument> args = {
        {w.graph.get(), nullptr}, {nullptr, &q}, {nullptr, &k}, {nullptr, &v}};
    double flops = 4.0 * kDk * kHeads * double(g.num_edges);
    auto report = [&](const char *kernel, double seconds) {
      double gflops = flops / seconds / 1e9;
      fmt::print(
          "{:<30} {:>9} | {:<8} {:>10.2f} {:>10.1f} {:>8.2f} {:>6.1f}%\n",
          w.name, g.num_edges, kernel, seconds * 1e3,
          g.num_edges / seconds / 1e6, gflops, 100.0 * gflops / peak);
    };
    if (onGPU) {
      // The median whole call, and the median device time of its kernels.
      auto timeOnGPU = [&](JitProgram &program, const char *kernel) {
        std::vector<double> kernelMs;
        double run = medianSeconds(
            [&] {
              (void)gnn_cuda_take_kernel_ms();
              (void)llvm::cantFail(program.run(args));
              kernelMs.push_back(gnn_cuda_take_kernel_ms());
            },
            repeats);
        kernelMs.erase(kernelMs.begin()); // the warm-up call
        std::sort(kernelMs.begin(), kernelMs.end());
        double seconds = kernelMs[kernelMs.size() / 2] / 1e3;
        fmt::print("{:<30} {:>9} | {:<8} {:>10.3f} {:>10.3f} {:>10.1f} "
                   "{:>8.1f}\n",
                   w.name, g.num_edges, kernel, run * 1e3, seconds * 1e3,
                   g.num_edges / seconds / 1e6, flops / seconds / 1e9);
        return seconds;
      };
      double tFused = timeOnGPU(*fused, "fused");
      double tUnfused = timeOnGPU(*unfused, "unfused");
      fmt::print("{:<30} {:>9} | fused kernels are {:.2f}x unfused\n", "", "",
                 tUnfused / tFused);
      std::vector<float> out(q.numElements());
      naiveAttention(g, q.as<float>(), k.as<float>(), v.as<float>(),
                     out.data());
      if (!agree(*fused, *unfused, args, out, w.name))
        failed = true;
      continue;
    }
    double tFused =
        medianSeconds([&] { (void)llvm::cantFail(fused->run(args)); }, repeats);
    report("fused", tFused);
    double tUnfused = medianSeconds(
        [&] { (void)llvm::cantFail(unfused->run(args)); }, repeats);
    report("unfused", tUnfused);
    std::vector<float> out(q.numElements());
    double tNaive = medianSeconds(
        [&] {
          naiveAttention(g, q.as<float>(), k.as<float>(), v.as<float>(),
                         out.data());
        },
        std::max(1, repeats / 2));
    report("naive", tNaive);
    fmt::print("{:<30} {:>9} | fused is {:.2f}x unfused, {:.2f}x naive\n", "",
               "", tUnfused / tFused, tNaive / tFused);
    if (!agree(*fused, *unfused, args, out, w.name))
      failed = true;
  }
  if (failed) {
    fmt::print(stderr, "gnn-bench-attention: results disagree with the naive "
                       "loop (see above)\n");
    return 1;
  }
  return 0;
}
