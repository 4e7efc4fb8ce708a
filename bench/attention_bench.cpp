//===- attention_bench.cpp - fused vs unfused vs naive attention ----------===//
//
// Part of gnnc. Times one attention layer (the tutorial's propagate_attention:
// score, scaled exp, two sums, division) compiled fused and unfused, and a
// naive C++ loop, on the workloads of the project's benchmark plan; then its
// forward and backward (the gradients of q, k and v from gnn-differentiate:
// gnn.fused_attention_grad when fused, the adjoints of the DGL-form ops when
// not) against a naive C++ backward. Measures this machine's peak with an
// OpenBLAS sgemm in the same run. With --device cuda, forward and backward
// rows give device time from CUDA events, and the naive loops only check
// the results.
//
//   build/bin/gnn-bench-attention [--repeats N] [--quick] [--workloads abcd]
//                                 [--no-backward]
//
//===----------------------------------------------------------------------===//

#include "BenchUtil.h"
#include "GNN/InitAll.h"
#include "GNN/Runner/JitRunner.h"
#include "GNN/Transforms/Differentiate.h"
#include "GNN/Transforms/Passes.h"
#include "gnnc/cuda.h"
#include "gnnc/dense.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
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
static llvm::cl::opt<bool> noBackward("no-backward",
                                      llvm::cl::desc("time the forward only"),
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
      [&] {
        _mlir_ciface_gnn_rt_gemm(benchContext(), &x, &y, &z, 0, 1.0f, 0.0f);
      },
      3);
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

/// The attention layer with a loss, sum(o * w): the gradient of o is w.
std::string attentionLossSource(llvm::StringRef structure) {
  std::string s = attentionSource(structure);
  const char *feat = "tensor<?x8x64xf32>";
  auto replace = [&](const std::string &from, const std::string &to) {
    size_t at = s.find(from);
    assert(at != std::string::npos);
    s.replace(at, from.size(), to);
  };
  std::string graph = ("!gnn.graph<" + structure + ">").str();
  replace("%v: " + std::string(feat) + ") -> " + feat,
          "%v: " + std::string(feat) + ", %w: " + feat + ") -> tensor<f32>");
  replace("  return %o : " + std::string(feat),
          "  %t = gnn.apply_nodes(%o, %w) {\n  ^bb0(%a: f32, %b: f32):\n"
          "    %m = arith.mulf %a, %b : f32\n    gnn.yield %m : f32\n  } : (" +
              std::string(feat) + ", " + feat + ") -> " + feat +
              "\n  %l = gnn.sum_to %t : " + feat +
              " -> tensor<f32>\n  return %l : tensor<f32>");
  return s;
}

/// The naive backward of naiveAttention with dout = w: per destination, the
/// weights, output and D = dout . out, then every edge's ds (zero where the
/// clamp is active) into dq, dk, dv (single thread).
void naiveAttentionGrad(const gnn_graph &g, const float *q, const float *k,
                        const float *v, const float *w, float *dq, float *dk,
                        float *dv) {
  std::fill(dq, dq + g.num_dst * kHeads * kDk, 0.0f);
  std::fill(dk, dk + g.num_src * kHeads * kDk, 0.0f);
  std::fill(dv, dv + g.num_src * kHeads * kDk, 0.0f);
  std::vector<float> e, s, o(kDk);
  for (int64_t d = 0; d < g.num_dst; ++d)
    for (int h = 0; h < kHeads; ++h) {
      const float *qv = q + (d * kHeads + h) * kDk;
      const float *dO = w + (d * kHeads + h) * kDk;
      int64_t first = g.in_ptr[d], last = g.in_ptr[d + 1];
      e.assign(last - first, 0.0f);
      s.assign(last - first, 0.0f);
      std::fill(o.begin(), o.end(), 0.0f);
      float z = 0;
      for (int64_t i = first; i < last; ++i) {
        const float *ku = k + (g.in_src[i] * kHeads + h) * kDk;
        const float *vu = v + (g.in_src[i] * kHeads + h) * kDk;
        float dot = 0;
        for (int j = 0; j < kDk; ++j)
          dot += ku[j] * qv[j];
        s[i - first] = dot * 0.125f;
        e[i - first] = std::exp(std::min(std::max(s[i - first], -5.0f), 5.0f));
        z += e[i - first];
        for (int j = 0; j < kDk; ++j)
          o[j] += e[i - first] * vu[j];
      }
      if (z == 0)
        continue;
      float D = 0;
      for (int j = 0; j < kDk; ++j)
        D += dO[j] * o[j] / z;
      for (int64_t i = first; i < last; ++i) {
        int64_t u = g.in_src[i];
        const float *ku = k + (u * kHeads + h) * kDk;
        const float *vu = v + (u * kHeads + h) * kDk;
        float p = e[i - first] / z, dP = 0;
        for (int j = 0; j < kDk; ++j)
          dP += dO[j] * vu[j];
        float ds = std::fabs(s[i - first]) <= 5.0f ? p * (dP - D) : 0.0f;
        float *dqv = dq + (d * kHeads + h) * kDk;
        float *dku = dk + (u * kHeads + h) * kDk;
        float *dvu = dv + (u * kHeads + h) * kDk;
        for (int j = 0; j < kDk; ++j) {
          dqv[j] += ds * 0.125f * ku[j];
          dku[j] += ds * 0.125f * qv[j];
          dvu[j] += p * dO[j];
        }
      }
    }
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

  // Options for the device as the tools set them from the environment
  // (the GPU's launches and buffers), with the benchmark's runtime.
  auto setOptions = [&](CompileOptions &options) {
    options.device = onGPU ? Device::CUDA : Device::CPU;
    options.asyncLaunches = benchEnvironment().asyncLaunches;
    options.deviceBuffers = benchEnvironment().deviceBuffers;
    options.runtime = benchRuntime();
  };
  auto compile = [&](bool fuse,
                     llvm::StringRef structure) -> std::unique_ptr<JitProgram> {
    auto context = new MLIRContext(registry); // lives as long as the program
    context->loadAllAvailableDialects();
    auto module = parseSourceString<ModuleOp>(attentionSource(structure),
                                              ParserConfig(context));
    CompileOptions options;
    options.fuse = fuse;
    setOptions(options);
    auto program = JitProgram::compile(std::move(module), "main", {}, options);
    if (!program) {
      llvm::errs() << llvm::toString(program.takeError()) << "\n";
      std::exit(1);
    }
    return std::move(*program);
  };
  // The layer's loss differentiated with respect to q, k and v; fused, its
  // DGL form is fused first and differentiated as one op.
  auto compileGrad =
      [&](bool fuse, llvm::StringRef structure) -> std::unique_ptr<JitProgram> {
    auto context = new MLIRContext(registry); // lives as long as the program
    context->loadAllAvailableDialects();
    auto module = parseSourceString<ModuleOp>(attentionLossSource(structure),
                                              ParserConfig(context));
    if (fuse) {
      PassManager pm(context);
      pm.addNestedPass<func::FuncOp>(gnn::createFuseAttentionPass());
      if (failed(pm.run(*module)))
        std::exit(1);
    }
    auto fn = module->lookupSymbol<func::FuncOp>("main");
    if (failed(differentiateFunction(fn, {1, 2, 3}, "main_grad")))
      std::exit(1);
    CompileOptions options;
    options.fuse = fuse;
    setOptions(options);
    auto program =
        JitProgram::compile(std::move(module), {"main_grad"}, options);
    if (!program) {
      llvm::errs() << llvm::toString(program.takeError()) << "\n";
      std::exit(1);
    }
    return std::move(*program);
  };
  std::map<std::string,
           std::pair<std::unique_ptr<JitProgram>, std::unique_ptr<JitProgram>>>
      gradPrograms;
  // Before compiling: parallel CPU programs make OpenBLAS single-threaded.
  double peak = measurePeakGflops();
  // Fused and unfused programs per graph structure, compiled on first use.
  std::map<std::string,
           std::pair<std::unique_ptr<JitProgram>, std::unique_ptr<JitProgram>>>
      programs;
  const char *core = gnn_rt_blas_core();
  const char *small = gnn_rt_small_gemm_target(benchRuntime());
  fmt::print("machine: {} hardware threads; OpenBLAS ({} kernels) sgemm "
             "peak {:.1f} GFLOP/s; tiles' small GEMMs: {}\n",
             std::thread::hardware_concurrency(), core ? core : "?", peak,
             small ? fmt::format("libxsmm ({})", small)
                   : std::string("OpenBLAS (GNNC_SMALL_GEMM=off)"));
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
  // On the GPU: the median whole call, and the median device time of its
  // kernels (without the first call, a warm-up), as one row.
  auto timeOnGPU = [&](JitProgram &program, llvm::ArrayRef<Argument> args,
                       const Workload &w, const char *kernel, double flops) {
    std::vector<double> kernelMs;
    double run = medianSeconds(
        [&] {
          (void)gnn_cuda_take_kernel_ms();
          (void)llvm::cantFail(program.run(args));
          kernelMs.push_back(gnn_cuda_take_kernel_ms());
        },
        repeats);
    kernelMs.erase(kernelMs.begin());
    std::sort(kernelMs.begin(), kernelMs.end());
    double seconds = kernelMs[kernelMs.size() / 2] / 1e3;
    fmt::print("{:<30} {:>9} | {:<8} {:>10.3f} {:>10.3f} {:>10.1f} {:>8.1f}\n",
               w.name, w.graph->num_edges, kernel, run * 1e3, seconds * 1e3,
               w.graph->num_edges / seconds / 1e6, flops / seconds / 1e9);
    return seconds;
  };
  // Forward + backward rows; GFLOP counts 12*dk per edge and head (4 for
  // the forward, 8 for dq, dk, dv and dout . v), not the recomputation.
  // On the GPU, kernel times; the naive backward only checks the results.
  auto backward = [&](Workload &w, HostTensor &q, HostTensor &k,
                      HostTensor &v) {
    const gnn_graph &g = *w.graph;
    auto &[fused, unfused] = gradPrograms[w.structure];
    if (!fused) {
      fused = compileGrad(true, w.structure);
      unfused = compileGrad(false, w.structure);
    }
    HostTensor up;
    up.shape = q.shape;
    up.allocate();
    for (int64_t i = 0; i < up.numElements(); ++i)
      up.as<float>()[i] = dist(rng);
    std::vector<Argument> args = {{w.graph.get(), nullptr},
                                  {nullptr, &q},
                                  {nullptr, &k},
                                  {nullptr, &v},
                                  {nullptr, &up}};
    double flops = 12.0 * kDk * kHeads * double(g.num_edges);
    auto report = [&](const char *kernel, double seconds) {
      double gflops = flops / seconds / 1e9;
      fmt::print(
          "{:<30} {:>9} | {:<8} {:>10.2f} {:>10.1f} {:>8.2f} {:>6.1f}%\n",
          w.name, g.num_edges, kernel, seconds * 1e3,
          g.num_edges / seconds / 1e6, gflops, 100.0 * gflops / peak);
    };
    auto time = [&](JitProgram &program, const char *kernel) {
      if (onGPU)
        return timeOnGPU(program, args, w, kernel, flops);
      double seconds = medianSeconds(
          [&] { (void)llvm::cantFail(program.run(args)); }, repeats);
      report(kernel, seconds);
      return seconds;
    };
    double tFused = time(*fused, "f+b fused");
    double tUnfused = time(*unfused, "f+b unfused");
    std::vector<float> dq(q.numElements()), dk(k.numElements()),
        dv(v.numElements());
    if (onGPU) {
      naiveAttentionGrad(g, q.as<float>(), k.as<float>(), v.as<float>(),
                         up.as<float>(), dq.data(), dk.data(), dv.data());
      fmt::print("{:<30} {:>9} | fused forward+backward kernels are {:.2f}x "
                 "unfused\n",
                 "", "", tUnfused / tFused);
    } else {
      double tNaive = medianSeconds(
          [&] {
            naiveAttentionGrad(g, q.as<float>(), k.as<float>(), v.as<float>(),
                               up.as<float>(), dq.data(), dk.data(), dv.data());
          },
          std::max(1, repeats / 2));
      report("f+b naive", tNaive);
      fmt::print("{:<30} {:>9} | fused forward+backward is {:.2f}x unfused, "
                 "{:.2f}x naive\n",
                 "", "", tUnfused / tFused, tNaive / tFused);
    }
    // Gradients against the naive backward (relative to the largest).
    bool ok = true;
    for (auto [name, program] : {std::make_pair("fused", fused.get()),
                                 std::make_pair("unfused", unfused.get())}) {
      std::vector<HostTensor> r = llvm::cantFail(program->run(args));
      double worst = 0;
      for (auto [i, want] : llvm::enumerate(
               std::vector<const std::vector<float> *>{&dq, &dk, &dv})) {
        double scale = 1e-30;
        for (float x : *want)
          scale = std::max(scale, double(std::fabs(x)));
        const HostTensor &got = r[i + 1];
        for (int64_t j = 0; j < got.numElements(); ++j) {
          double d = std::fabs(got.as<float>()[j] - (*want)[j]) / scale;
          worst = std::isnan(d) ? INFINITY : std::max(worst, d);
        }
      }
      fmt::print("{:<30} {:>9} | max |{} - naive| / max |naive| {:.1e}\n", "",
                 "", name, worst);
      ok = ok && worst <= 1e-4;
    }
    return ok;
  };
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
      double tFused = timeOnGPU(*fused, args, w, "fused", flops);
      double tUnfused = timeOnGPU(*unfused, args, w, "unfused", flops);
      fmt::print("{:<30} {:>9} | fused kernels are {:.2f}x unfused\n", "", "",
                 tUnfused / tFused);
      std::vector<float> out(q.numElements());
      naiveAttention(g, q.as<float>(), k.as<float>(), v.as<float>(),
                     out.data());
      if (!agree(*fused, *unfused, args, out, w.name))
        failed = true;
      if (!noBackward && !backward(w, q, k, v))
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
    if (!noBackward && !backward(w, q, k, v))
      failed = true;
  }
  if (failed) {
    fmt::print(stderr, "gnn-bench-attention: results disagree with the naive "
                       "loop (see above)\n");
    return 1;
  }
  return 0;
}
