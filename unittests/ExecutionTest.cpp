//===- ExecutionTest.cpp - compiled gnn kernels against a naive reference -===//
//
// Part of gnnc. Every kernel runs JIT-compiled, fused and unfused, on random
// features over complete, causal and bipartite batches, random sparse graphs
// with zero-in-degree nodes and one-node graphs, and is compared with a
// naive double-precision loop. Tolerance: |got - want| <= 1e-5 * max(1,
// |want|).
//
//===----------------------------------------------------------------------===//

#include "GNN/InitAll.h"
#include "GNN/Runner/JitRunner.h"
#include "GNN/Runner/UnifiedMemory.h"
#include "gnnc/cuda.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

using namespace mlir;
using namespace mlir::gnn;

namespace {
struct GraphDeleter {
  void operator()(gnn_graph *g) const { gnn_graph_free(g); }
};
using GraphPtr = std::unique_ptr<gnn_graph, GraphDeleter>;

class ExecutionTest : public ::testing::Test {
protected:
  ExecutionTest() {
    DialectRegistry registry;
    gnn::registerAllDialectsAndExtensions(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  std::unique_ptr<JitProgram> compile(const std::string &source, bool fuse,
                                      Device device = Device::CPU) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, ParserConfig(&context));
    EXPECT_TRUE(module);
    if (!module)
      return nullptr;
    CompileOptions options;
    options.fuse = fuse;
    options.device = device;
    auto program = JitProgram::compile(std::move(module), "main", {}, options);
    if (!program) {
      ADD_FAILURE() << llvm::toString(program.takeError());
      return nullptr;
    }
    return std::move(*program);
  }

  HostTensor random(std::vector<int64_t> shape, float scale = 1.0f) {
    HostTensor t;
    t.shape = std::move(shape);
    t.allocate();
    std::normal_distribution<float> dist(0.0f, scale);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.as<float>()[i] = dist(rng);
    return t;
  }

  /// A 1-D I64 tensor (an id list) of `values`.
  HostTensor randomIntegers(std::vector<int64_t> shape, int bound) {
    HostTensor t;
    t.shape = std::move(shape);
    t.allocate();
    std::uniform_int_distribution<int> dist(-bound, bound);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.as<float>()[i] = float(dist(rng));
    return t;
  }

  static void expectClose(const HostTensor &got,
                          const std::vector<double> &want,
                          const std::string &what) {
    ASSERT_EQ(got.numElements(), int64_t(want.size())) << what;
    int reported = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      double g = got.as<float>()[i];
      double tolerance = 1e-5 * std::max(1.0, std::abs(want[i]));
      if (!(std::abs(g - want[i]) <= tolerance) && reported++ < 5)
        ADD_FAILURE() << what << ": element " << i << " is " << g
                      << ", expected " << want[i];
    }
  }

  /// Graphs of every shape the kernels must handle.
  std::vector<std::pair<std::string, GraphPtr>> graphs() {
    std::vector<std::pair<std::string, GraphPtr>> out;
    gnn_graph *g = nullptr;
    std::normal_distribution<double> length(15.0, 3.0);
    std::vector<int64_t> sizes, other;
    for (int b = 0; b < 6; ++b) {
      sizes.push_back(std::max<int64_t>(1, int64_t(length(rng))));
      other.push_back(std::max<int64_t>(1, int64_t(length(rng))));
    }
    gnn_graph_complete_blocks(sizes.data(), sizes.size(), &g, nullptr, 0);
    out.emplace_back("complete batch", GraphPtr(g));
    gnn_graph_causal_blocks(sizes.data(), sizes.size(), &g, nullptr, 0);
    out.emplace_back("causal batch", GraphPtr(g));
    gnn_graph_bipartite_blocks(sizes.data(), other.data(), sizes.size(), &g,
                               nullptr, 0);
    out.emplace_back("bipartite batch", GraphPtr(g));
    int64_t one = 1;
    gnn_graph_complete_blocks(&one, 1, &g, nullptr, 0);
    out.emplace_back("one node", GraphPtr(g));
    // Sparse: some nodes receive nothing, some are isolated.
    int64_t n = 57, m = 200;
    std::vector<int64_t> src, dst;
    for (int64_t e = 0; e < m; ++e) {
      src.push_back(rng() % n);
      dst.push_back(rng() % (n - 10)); // the last 10 nodes receive nothing
    }
    gnn_graph_from_coo(n, n, m, src.data(), dst.data(), &g, nullptr, 0);
    out.emplace_back("random sparse", GraphPtr(g));
    return out;
  }

  MLIRContext context;
  std::mt19937 rng{1234};
};

/// The tutorial's attention layer, DGL style, for a given shape and clamp.
std::string attentionSource(int heads, int dk, double scale, double clamp) {
  std::string feat =
      "tensor<?x" + std::to_string(heads) + "x" + std::to_string(dk) + "xf32>";
  std::string score = "tensor<?x" + std::to_string(heads) + "x1xf32>";
  return "func.func @main(%g: !gnn.graph<general>, %q: " + feat +
         ", %k: " + feat + ", %v: " + feat + ") -> " + feat +
         " {\n"
         "  %s = gnn.apply_edges %g, u_dot_v(%k, %q) : (!gnn.graph<general>, " +
         feat + ", " + feat + ") -> " + score +
         "\n"
         "  %e = gnn.apply_edges %g, copy_e(%s) then [scale(" +
         std::to_string(scale) + "), clamp(" + std::to_string(-clamp) + ", " +
         std::to_string(clamp) + "), exp] : (!gnn.graph<general>, " + score +
         ") -> " + score +
         "\n"
         "  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, "
         "copy_e(%e) -> sum] : (!gnn.graph<general>, " +
         feat + ", " + score + ", " + score + ") -> (" + feat + ", " + score +
         ")\n"
         "  %o = gnn.apply_nodes(%wv, %z) {\n"
         "  ^bb0(%a: f32, %b: f32):\n"
         "    %d = arith.divf %a, %b : f32\n"
         "    gnn.yield %d : f32\n"
         "  } : (" +
         feat + ", " + score + ") -> " + feat +
         "\n"
         "  return %o : " +
         feat + "\n}\n";
}

/// Naive attention in double precision; clamp < 0 means exact softmax.
std::vector<double> referenceAttention(const gnn_graph &g, const HostTensor &q,
                                       const HostTensor &k, const HostTensor &v,
                                       int heads, int dk, double scale,
                                       double clamp, bool normalize = true,
                                       int dv = 0) {
  dv = dv > 0 ? dv : dk;
  std::vector<double> out(g.num_dst * heads * dv, 0.0);
  for (int64_t d = 0; d < g.num_dst; ++d)
    for (int h = 0; h < heads; ++h) {
      std::vector<double> scores;
      std::vector<int64_t> sources;
      for (int64_t e = 0; e < g.num_edges; ++e) {
        if (g.dst[e] != d)
          continue;
        double s = 0;
        for (int i = 0; i < dk; ++i)
          s += double(k.as<float>()[(g.src[e] * heads + h) * dk + i]) *
               q.as<float>()[(d * heads + h) * dk + i];
        s *= scale;
        if (clamp >= 0)
          s = std::min(std::max(s, -clamp), clamp);
        scores.push_back(s);
        sources.push_back(g.src[e]);
      }
      if (scores.empty())
        continue;
      double shift = 0;
      if (clamp < 0)
        for (double s : scores)
          shift = std::max(shift == 0 ? s : shift, s);
      double z = 0;
      std::vector<double> acc(dv, 0.0);
      for (size_t j = 0; j < scores.size(); ++j) {
        double w = std::exp(scores[j] - shift);
        z += w;
        for (int i = 0; i < dv; ++i)
          acc[i] += w * v.as<float>()[(sources[j] * heads + h) * dv + i];
      }
      for (int i = 0; i < dv; ++i)
        out[(d * heads + h) * dv + i] = normalize ? acc[i] / z : acc[i];
    }
  return out;
}

TEST_F(ExecutionTest, AttentionFusedAndUnfusedMatchReference) {
  // dk of 12 takes the per-edge dot products, multiples of 8 chunkDots.
  for (auto [heads, dk] : {std::pair{1, 8}, {2, 12}, {4, 16}, {8, 64}}) {
    double scale = 1.0 / std::sqrt(double(dk));
    std::string source = attentionSource(heads, dk, scale, 5.0);
    auto fused = compile(source, true);
    auto unfused = compile(source, false);
    ASSERT_TRUE(fused && unfused);
    for (auto &[name, g] : graphs()) {
      HostTensor q = random({g->num_dst, heads, dk}, 2.0f);
      HostTensor k = random({g->num_src, heads, dk}, 2.0f);
      HostTensor v = random({g->num_src, heads, dk});
      std::vector<double> want =
          referenceAttention(*g, q, k, v, heads, dk, scale, 5.0);
      std::vector<Argument> args = {
          {g.get(), nullptr}, {nullptr, &q}, {nullptr, &k}, {nullptr, &v}};
      for (auto *program : {fused.get(), unfused.get()}) {
        auto out = program->run(args);
        ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
        std::string what = name + ", " + std::to_string(heads) + " heads x " +
                           std::to_string(dk) +
                           (program == fused.get() ? ", fused" : ", unfused");
        // Nodes without in-edges divide 0 by 0 in the unfused form (as in
        // DGL); the fused op defines them as 0. Compare the rest.
        std::vector<double> expected = want;
        HostTensor got = (*out)[0];
        for (int64_t d = 0; d < g->num_dst; ++d)
          if (g->in_ptr[d] == g->in_ptr[d + 1])
            for (int64_t i = 0; i < heads * dk; ++i) {
              if (program == fused.get()) {
                EXPECT_EQ(got.as<float>()[d * heads * dk + i], 0.0f) << what;
              }
              got.as<float>()[d * heads * dk + i] = 0.0f;
            }
        expectClose(got, expected, what);
      }
    }
  }
}

/// gnn.fused_attention over a graph declared `structure` (q/k rows of 2 x
/// 16, v rows of 2 x 8); `attrs` are the op's scale/clamp/normalize.
std::string structuredSource(const std::string &structure,
                             const std::string &attrs, bool normalize) {
  std::string graph = "!gnn.graph<" + structure + ">";
  std::string qk = "tensor<?x2x16xf32>", v = "tensor<?x2x8xf32>",
              z = "tensor<?x2x1xf32>";
  std::string results = normalize ? v : "(" + v + ", " + z + ")";
  std::string values = normalize ? "%o" : "%o, %z";
  return "func.func @main(%g: " + graph + ", %q: " + qk + ", %k: " + qk +
         ", %v: " + v + ") -> " + results + " {\n  " + values +
         " = gnn.fused_attention %g, %q, %k, %v " + attrs + " : (" + graph +
         ", " + qk + ", " + qk + ", " + v + ") -> " + results + "\n  return " +
         values + " : " + (normalize ? v : v + ", " + z) + "\n}\n";
}

TEST_F(ExecutionTest, StructuredGraphsTakeBlockTilesExactly) {
  // Blocks long enough for tiles of destinations against chunks of sources
  // (and ragged ends), short ones for the per-destination kernel.
  std::vector<int64_t> sizes = {1, 17, 64, 65, 200, 300, 3, 129};
  std::vector<int64_t> srcSizes = {5, 130, 1, 300, 64, 0, 20, 257};
  std::vector<GraphPtr> owned;
  std::vector<std::pair<std::string, gnn_graph *>> cases;
  auto add = [&](std::string name, gnn_graph *g) {
    ASSERT_NE(g, nullptr) << name;
    owned.emplace_back(g);
    cases.emplace_back(std::move(name), g);
  };
  gnn_graph *g = nullptr;
  gnn_graph_complete_blocks(sizes.data(), sizes.size(), &g, nullptr, 0);
  add("complete", g);
  gnn_graph_causal_blocks(sizes.data(), sizes.size(), &g, nullptr, 0);
  add("causal", g);
  gnn_graph_bipartite_blocks(srcSizes.data(), sizes.data(), sizes.size(), &g,
                             nullptr, 0);
  add("bipartite (an empty source block)", g);
  // Broken promises, which the kernel must notice: a block of 150 without
  // the edge 5 -> 70 (a gap in one row), and a block of 100 whose rows list
  // their sources backwards.
  {
    std::vector<int64_t> src, dst;
    for (int64_t v = 0; v < 150; ++v)
      for (int64_t u = 0; u < 150; ++u)
        if (!(u == 5 && v == 70)) {
          src.push_back(u);
          dst.push_back(v);
        }
    for (int64_t v = 0; v < 100; ++v)
      for (int64_t u = 99; u >= 0; --u) {
        src.push_back(150 + u);
        dst.push_back(150 + v);
      }
    gnn_graph_from_coo(250, 250, src.size(), src.data(), dst.data(), &g,
                       nullptr, 0);
    add("complete with a gap and a reversed block", g);
  }

  struct Variant {
    std::string attrs;
    double clamp; // < 0: exact softmax
    bool normalize;
  };
  for (const Variant &variant :
       {Variant{"scale(0.25) normalize", -1.0, true},
        Variant{"scale(0.25) clamp(-5.0, 5.0) normalize", 5.0, true},
        Variant{"scale(0.25) clamp(-5.0, 5.0)", 5.0, false}}) {
    for (const char *structure : {"complete", "causal", "bipartite"}) {
      auto program = compile(
          structuredSource(structure, variant.attrs, variant.normalize), true);
      ASSERT_TRUE(program);
      for (auto &[name, graph] : cases) {
        HostTensor q = random({graph->num_dst, 2, 16}, 2.0f);
        HostTensor k = random({graph->num_src, 2, 16}, 2.0f);
        HostTensor v = random({graph->num_src, 2, 8});
        auto out = program->run(
            {{graph, nullptr}, {nullptr, &q}, {nullptr, &k}, {nullptr, &v}});
        ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
        std::string what =
            name + " declared " + structure + ", " + variant.attrs;
        HostTensor got = (*out)[0];
        if (!variant.normalize) {
          // z is a sum of positive weights: compared as it is. wv / z is
          // compared with the normalized reference (wv alone cancels, its
          // rounding is relative to the sum of |w v|).
          HostTensor ones;
          ones.shape = {graph->num_src, 2, 1};
          ones.allocate();
          for (int64_t i = 0; i < ones.numElements(); ++i)
            ones.as<float>()[i] = 1.0f;
          const HostTensor &z = (*out)[1];
          expectClose(z,
                      referenceAttention(*graph, q, k, ones, 2, 16, 0.25,
                                         variant.clamp, false, /*dv=*/1),
                      what + ", z");
          for (int64_t i = 0; i < got.numElements(); ++i) {
            float zi = z.as<float>()[i / 8];
            got.as<float>()[i] = zi > 0 ? got.as<float>()[i] / zi : 0.0f;
          }
        }
        expectClose(got,
                    referenceAttention(*graph, q, k, v, 2, 16, 0.25,
                                       variant.clamp, true, /*dv=*/8),
                    what);
      }
    }
  }
}

TEST_F(ExecutionTest, ExactSoftmaxStaysFiniteForHugeScores) {
  std::string source = R"mlir(
    func.func @main(%g: !gnn.graph<general>, %q: tensor<?x2x4xf32>,
                    %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>)
        -> tensor<?x2x4xf32> {
      %o = gnn.fused_attention %g, %q, %k, %v scale(1.0) normalize
          : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>,
             tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
      return %o : tensor<?x2x4xf32>
    })mlir";
  auto program = compile(source, true);
  ASSERT_TRUE(program);
  for (auto &[name, g] : graphs()) {
    // Scores in the thousands: exp overflows without the running maximum.
    // Integer features keep the float32 scores exact, so that the comparison
    // measures the softmax and not the rounding of huge dot products.
    HostTensor q = randomIntegers({g->num_dst, 2, 4}, 30);
    HostTensor k = randomIntegers({g->num_src, 2, 4}, 30);
    HostTensor v = random({g->num_src, 2, 4});
    auto out = program->run(
        {{g.get(), nullptr}, {nullptr, &q}, {nullptr, &k}, {nullptr, &v}});
    ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
    expectClose((*out)[0], referenceAttention(*g, q, k, v, 2, 4, 1.0, -1.0),
                name);
  }
}

TEST_F(ExecutionTest, DynamicSizesUnnormalized) {
  // Dynamic feature sizes take the scalar kernel; wv and z come back apart.
  std::string source = R"mlir(
    func.func @main(%g: !gnn.graph<general>, %q: tensor<?x3x?xf32>,
                    %k: tensor<?x3x?xf32>, %v: tensor<?x3x?xf32>)
        -> (tensor<?x3x?xf32>, tensor<?x3x1xf32>) {
      %wv, %z = gnn.fused_attention %g, %q, %k, %v scale(0.25) clamp(-5.0, 5.0)
          : (!gnn.graph<general>, tensor<?x3x?xf32>, tensor<?x3x?xf32>,
             tensor<?x3x?xf32>) -> (tensor<?x3x?xf32>, tensor<?x3x1xf32>)
      return %wv, %z : tensor<?x3x?xf32>, tensor<?x3x1xf32>
    })mlir";
  auto program = compile(source, true);
  ASSERT_TRUE(program);
  for (auto &[name, g] : graphs()) {
    HostTensor q = random({g->num_dst, 3, 16}), k = random({g->num_src, 3, 16}),
               v = random({g->num_src, 3, 16});
    auto out = program->run(
        {{g.get(), nullptr}, {nullptr, &q}, {nullptr, &k}, {nullptr, &v}});
    ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
    HostTensor &wv = (*out)[0], &z = (*out)[1];
    ASSERT_EQ(wv.shape, (std::vector<int64_t>{g->num_dst, 3, 16}));
    for (int64_t i = 0; i < wv.numElements(); ++i) {
      float zi = z.as<float>()[i / 16];
      wv.as<float>()[i] = zi > 0 ? wv.as<float>()[i] / zi : 0.0f;
    }
    expectClose(wv, referenceAttention(*g, q, k, v, 3, 16, 0.25, 5.0), name);

    // Dynamic sizes that disagree are caught by the compiled code.
    HostTensor narrowK = random({g->num_src, 3, 8});
    auto bad = program->run({{g.get(), nullptr},
                             {nullptr, &q},
                             {nullptr, &narrowK},
                             {nullptr, &v}});
    ASSERT_FALSE(bool(bad)) << name;
    EXPECT_EQ(llvm::toString(bad.takeError()),
              "a feature has size 8 in a per-row dimension, but the op needs "
              "16");
  }
}

TEST_F(ExecutionTest, ReducersAndSubsets) {
  std::string source = R"mlir(
    func.func @main(%g: !gnn.graph<general>, %x: tensor<?x3xf32>,
                    %w: tensor<?x1xf32>, %eids: tensor<?xindex>)
        -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x1xf32>) {
      %mx, %mn, %mean = gnn.send_and_recv %g, [copy_u(%x) -> max, u_mul_e(%x, %w) -> min, u_add_v(%x, %x) -> mean]
          : (!gnn.graph<general>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x1xf32>, tensor<?x3xf32>, tensor<?x3xf32>)
          -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>)
      %s = gnn.reduce %g, sum(%w) edges(%eids)
          : (!gnn.graph<general>, tensor<?x1xf32>, tensor<?xindex>) -> tensor<?x1xf32>
      return %mx, %mn, %mean, %s : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x1xf32>
    })mlir";
  auto program = compile(source, false);
  ASSERT_TRUE(program);
  for (auto &[name, g] : graphs()) {
    if (g->num_src != g->num_dst)
      continue; // u_add_v(x, x) needs one node space
    HostTensor x = random({g->num_src, 3});
    HostTensor w = random({g->num_edges, 1});
    HostTensor eids;
    eids.dtype = DType::I64;
    eids.shape = {(g->num_edges + 2) / 3}; // every third edge
    eids.allocate();
    for (int64_t i = 0; i < eids.numElements(); ++i)
      eids.as<int64_t>()[i] = 3 * i;
    auto out = program->run(
        {{g.get(), nullptr}, {nullptr, &x}, {nullptr, &w}, {nullptr, &eids}});
    ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
    std::vector<double> mx(g->num_dst * 3), mn(g->num_dst * 3),
        mean(g->num_dst * 3), s(g->num_dst, 0.0);
    for (int64_t d = 0; d < g->num_dst; ++d)
      for (int i = 0; i < 3; ++i) {
        double hi = -INFINITY, lo = INFINITY, sum = 0;
        int count = 0;
        for (int64_t e = 0; e < g->num_edges; ++e) {
          if (g->dst[e] != d)
            continue;
          double xu = x.as<float>()[g->src[e] * 3 + i];
          hi = std::max(hi, xu);
          lo = std::min(lo, double(float(xu * w.as<float>()[e])));
          sum += double(float(xu + x.as<float>()[d * 3 + i]));
          ++count;
        }
        mx[d * 3 + i] = count ? hi : 0.0;
        mn[d * 3 + i] = count ? lo : 0.0;
        mean[d * 3 + i] = count ? sum / count : 0.0;
      }
    for (int64_t e = 0; e < g->num_edges; e += 3)
      s[g->dst[e]] += w.as<float>()[e];
    expectClose((*out)[0], mx, name + " max");
    expectClose((*out)[1], mn, name + " min");
    expectClose((*out)[2], mean, name + " mean");
    expectClose((*out)[3], s, name + " subset sum");
  }
}

TEST_F(ExecutionTest, Filters) {
  // Active nodes among candidates, then edges into active nodes whose
  // weight is positive (the Universal Transformer's active sets).
  std::string source = R"mlir(
    func.func @main(%g: !gnn.graph<general>, %x: tensor<?x1xf32>,
                    %cand: tensor<?xindex>, %w: tensor<?xf32>)
        -> (tensor<?xindex>, tensor<?xindex>) {
      %nodes = gnn.filter_nodes(%x) from %cand {
      ^bb0(%a: f32):
        %zero = arith.constant 0.0 : f32
        %p = arith.cmpf ogt, %a, %zero : f32
        gnn.yield %p : i1
      } : (tensor<?x1xf32>, tensor<?xindex>) -> tensor<?xindex>
      %edges = gnn.filter_edges %g, (v %x, e %w) {
      ^bb0(%a: f32, %b: f32):
        %zero = arith.constant 0.0 : f32
        %p = arith.cmpf ogt, %a, %zero : f32
        %q = arith.cmpf ogt, %b, %zero : f32
        %r = arith.andi %p, %q : i1
        gnn.yield %r : i1
      } : (!gnn.graph<general>, tensor<?x1xf32>, tensor<?xf32>) -> tensor<?xindex>
      return %nodes, %edges : tensor<?xindex>, tensor<?xindex>
    })mlir";
  auto program = compile(source, false);
  ASSERT_TRUE(program);
  for (auto &[name, g] : graphs()) {
    if (g->num_src != g->num_dst)
      continue;
    HostTensor x = random({g->num_dst, 1}), w = random({g->num_edges});
    HostTensor cand;
    cand.dtype = DType::I64;
    cand.shape = {g->num_dst / 2 + 1};
    cand.allocate();
    for (int64_t i = 0; i < cand.numElements(); ++i)
      cand.as<int64_t>()[i] = i * 2 < g->num_dst ? i * 2 : g->num_dst + 5;
    auto out = program->run(
        {{g.get(), nullptr}, {nullptr, &x}, {nullptr, &cand}, {nullptr, &w}});
    ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
    std::vector<int64_t> nodes, edges;
    for (int64_t i = 0; i < cand.numElements(); ++i) {
      int64_t c = cand.as<int64_t>()[i];
      if (c < g->num_dst && x.as<float>()[c] > 0)
        nodes.push_back(c);
    }
    for (int64_t e = 0; e < g->num_edges; ++e)
      if (x.as<float>()[g->dst[e]] > 0 && w.as<float>()[e] > 0)
        edges.push_back(e);
    const HostTensor &gotNodes = (*out)[0], &gotEdges = (*out)[1];
    EXPECT_EQ(
        std::vector<int64_t>(gotNodes.as<int64_t>(),
                             gotNodes.as<int64_t>() + gotNodes.numElements()),
        nodes)
        << name;
    EXPECT_EQ(
        std::vector<int64_t>(gotEdges.as<int64_t>(),
                             gotEdges.as<int64_t>() + gotEdges.numElements()),
        edges)
        << name;
  }
}

TEST_F(ExecutionTest, GraphFromCooAndRuntimeChecks) {
  // A graph built inside the program: compiled code checks what the runner
  // cannot (ids against node counts, feature rows against the graph) and
  // reports through the runtime instead of reading out of bounds.
  std::string source = R"mlir(
    func.func @main(%src: tensor<?xindex>, %dst: tensor<?xindex>,
                    %count: tensor<1xindex>, %x: tensor<?x2xf32>)
        -> tensor<?x2xf32> {
      %c0 = arith.constant 0 : index
      %n = tensor.extract %count[%c0] : tensor<1xindex>
      %g = gnn.graph_from_coo %src, %dst, %n, %n
          : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
      %s = gnn.send_and_recv %g, [copy_u(%x) -> sum]
          : (!gnn.graph<general>, tensor<?x2xf32>) -> tensor<?x2xf32>
      return %s : tensor<?x2xf32>
    })mlir";
  auto program = compile(source, false);
  ASSERT_TRUE(program);
  HostTensor src = HostTensor::ids({0, 1, 3, 3, 2}),
             dst = HostTensor::ids({1, 1, 0, 2, 2}),
             count = HostTensor::ids({4}), x = random({4, 2});
  auto out = program->run(
      {{nullptr, &src}, {nullptr, &dst}, {nullptr, &count}, {nullptr, &x}});
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  std::vector<double> want(8, 0.0);
  for (int e = 0; e < 5; ++e)
    for (int i = 0; i < 2; ++i)
      want[dst.as<int64_t>()[e] * 2 + i] +=
          x.as<float>()[src.as<int64_t>()[e] * 2 + i];
  expectClose((*out)[0], want, "graph_from_coo");

  HostTensor badSrc = HostTensor::ids({0, 9, 3, 3, 2});
  auto bad = program->run(
      {{nullptr, &badSrc}, {nullptr, &dst}, {nullptr, &count}, {nullptr, &x}});
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "edge 1: source node 9 is out of range [0, 4)");

  HostTensor shortX = random({3, 2});
  auto rows = program->run({{nullptr, &src},
                            {nullptr, &dst},
                            {nullptr, &count},
                            {nullptr, &shortX}});
  ASSERT_FALSE(bool(rows));
  EXPECT_EQ(llvm::toString(rows.takeError()),
            "a feature has 3 rows, but the op needs 4 (source nodes)");

  // The next good run is not affected by the earlier reports.
  auto again = program->run(
      {{nullptr, &src}, {nullptr, &dst}, {nullptr, &count}, {nullptr, &x}});
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  expectClose((*again)[0], want, "graph_from_coo again");
}

TEST_F(ExecutionTest, BadArgumentsAreErrors) {
  auto program = compile(attentionSource(2, 4, 0.5, 5.0), true);
  ASSERT_TRUE(program);
  int64_t sizes[] = {3, 2};
  gnn_graph *raw = nullptr;
  ASSERT_EQ(gnn_graph_complete_blocks(sizes, 2, &raw, nullptr, 0), 0);
  GraphPtr g(raw);
  HostTensor q = random({5, 2, 4}), k = random({4, 2, 4}),
             wrong = random({5, 3, 4});
  auto rows = program->run(
      {{g.get(), nullptr}, {nullptr, &q}, {nullptr, &k}, {nullptr, &q}});
  ASSERT_FALSE(bool(rows));
  EXPECT_EQ(llvm::toString(rows.takeError()),
            "argument 'arg2' has 4 rows, but graph 'arg0' has 5 source nodes");
  auto shape = program->run(
      {{g.get(), nullptr}, {nullptr, &wrong}, {nullptr, &q}, {nullptr, &q}});
  ASSERT_FALSE(bool(shape));
  EXPECT_EQ(llvm::toString(shape.takeError()),
            "argument 'arg1' has size 3 in dimension 1, expected 2");
  auto count = program->run({{g.get(), nullptr}});
  ASSERT_FALSE(bool(count));
  EXPECT_EQ(llvm::toString(count.takeError()), "expected 4 arguments, got 1");
}
} // namespace

TEST_F(ExecutionTest, ScatterRowsReplacesListedRowsOnly) {
  // Rows of a static shape are written into the destination as slices (in
  // place where bufferization allows); dynamic rows take the element loop.
  // Neither may write into the caller's buffers, and a scatter of a tensor into
  // itself reads every row before overwriting it.
  std::string source = R"mlir(
    func.func @main(%x: tensor<?x2x3xf32>, %s: tensor<?x2x3xf32>,
                    %y: tensor<?x?xf32>,
                    %t: tensor<?x?xf32>, %ids: tensor<?xindex>,
                    %perm: tensor<?xindex>)
        -> (tensor<?x2x3xf32>, tensor<?x2x3xf32>, tensor<?x?xf32>,
            tensor<?x2x3xf32>) {
      %slices = gnn.scatter_rows %s into %x[%ids]
          : (tensor<?x2x3xf32>, tensor<?x2x3xf32>, tensor<?xindex>) -> tensor<?x2x3xf32>
      %self = gnn.scatter_rows %x into %x[%perm]
          : (tensor<?x2x3xf32>, tensor<?x2x3xf32>, tensor<?xindex>) -> tensor<?x2x3xf32>
      %dyn = gnn.scatter_rows %t into %y[%ids]
          : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xindex>) -> tensor<?x?xf32>
      %twice = gnn.scatter_rows %s into %slices[%ids]
          : (tensor<?x2x3xf32>, tensor<?x2x3xf32>, tensor<?xindex>) -> tensor<?x2x3xf32>
      return %slices, %self, %dyn, %twice
          : tensor<?x2x3xf32>, tensor<?x2x3xf32>, tensor<?x?xf32>,
            tensor<?x2x3xf32>
    })mlir";
  auto program = compile(source, false);
  ASSERT_TRUE(program);
  for (std::vector<int64_t> list :
       {std::vector<int64_t>{4, 0, 2}, {}, {1}, {0, 1, 2, 3, 4}}) {
    int64_t n = 5, m = int64_t(list.size());
    HostTensor x = random({n, 2, 3}), s = random({m, 2, 3}), y = random({n, 7}),
               t = random({m, 7});
    HostTensor idList = HostTensor::ids(list);
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    HostTensor perm = HostTensor::ids(order);
    HostTensor xBefore = x, yBefore = y;
    auto out = program->run({{nullptr, &x},
                             {nullptr, &s},
                             {nullptr, &y},
                             {nullptr, &t},
                             {nullptr, &idList},
                             {nullptr, &perm}});
    ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
    std::string what = "ids of " + std::to_string(m);
    // The inputs are as they were.
    EXPECT_EQ(std::memcmp(x.data(), xBefore.data(), x.numBytes()), 0) << what;
    EXPECT_EQ(std::memcmp(y.data(), yBefore.data(), y.numBytes()), 0) << what;

    auto scattered = [&](const HostTensor &dest, const HostTensor &rows,
                         const std::vector<int64_t> &at, int64_t width) {
      std::vector<double> want(dest.as<float>(),
                               dest.as<float>() + dest.numElements());
      for (size_t i = 0; i < at.size(); ++i)
        for (int64_t j = 0; j < width; ++j)
          want[at[i] * width + j] = rows.as<float>()[i * width + j];
      return want;
    };
    std::vector<double> slices = scattered(x, s, list, 6);
    expectClose((*out)[0], slices, what + ", slices");
    expectClose((*out)[1], scattered(x, x, order, 6), what + ", self");
    expectClose((*out)[2], scattered(y, t, list, 7), what + ", dynamic");
    expectClose((*out)[3], slices, what + ", twice");
  }

  // A bad id is reported and nothing is written out of bounds.
  HostTensor x = random({2, 2, 3}), s = random({1, 2, 3}), y = random({2, 7}),
             t = random({1, 7});
  HostTensor bad = HostTensor::ids({2}), perm = HostTensor::ids({1, 0});
  auto out = program->run({{nullptr, &x},
                           {nullptr, &s},
                           {nullptr, &y},
                           {nullptr, &t},
                           {nullptr, &bad},
                           {nullptr, &perm}});
  ASSERT_FALSE(bool(out));
  EXPECT_EQ(llvm::toString(out.takeError()),
            "id list entry 0: id 2 is out of range [0, 2)");
}

TEST_F(ExecutionTest, ProgramsLeaveTheirInputsAlone) {
  // The scatter's destination is an argument read nowhere else: updating it
  // in place would write into the caller's buffer (gnn-read-only-arguments
  // makes bufferization copy it first).
  std::string source = R"mlir(
    func.func @main(%x: tensor<?x2x3xf32>, %s: tensor<?x2x3xf32>,
                    %ids: tensor<?xindex>) -> tensor<?x2x3xf32> {
      %r = gnn.scatter_rows %s into %x[%ids]
          : (tensor<?x2x3xf32>, tensor<?x2x3xf32>, tensor<?xindex>) -> tensor<?x2x3xf32>
      return %r : tensor<?x2x3xf32>
    })mlir";
  auto program = compile(source, false);
  ASSERT_TRUE(program);
  HostTensor x = random({4, 2, 3}), s = random({2, 2, 3}),
             list = HostTensor::ids({3, 1});
  HostTensor before = x;
  auto out = program->run({{nullptr, &x}, {nullptr, &s}, {nullptr, &list}});
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  EXPECT_EQ(std::memcmp(x.data(), before.data(), x.numBytes()), 0);
  EXPECT_EQ(std::memcmp((*out)[0].as<float>() + 6, s.as<float>() + 6,
                        6 * sizeof(float)),
            0);
}

TEST_F(ExecutionTest, AnnouncedResultsReachTheListenerAsTheyAreComputed) {
  // Result 1 is computed and announced first, then result 0 (from it), an
  // argument returned as is, a scalar of 8-byte elements; slot 7 is no
  // result of @main and is not passed on.
  std::string source = R"mlir(
    func.func @main(%x: tensor<?x3xf32>, %i: tensor<i64>)
        -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<i64>) {
      gnn.result_ready %x, 2 : tensor<?x3xf32>
      %a = gnn.apply_nodes(%x) {
      ^bb0(%e: f32):
        %m = arith.mulf %e, %e : f32
        gnn.yield %m : f32
      } : (tensor<?x3xf32>) -> tensor<?x3xf32>
      gnn.result_ready %a, 1 : tensor<?x3xf32>
      gnn.result_ready %a, 7 : tensor<?x3xf32>
      %b = gnn.apply_nodes(%a) {
      ^bb0(%e: f32):
        %m = arith.addf %e, %e : f32
        gnn.yield %m : f32
      } : (tensor<?x3xf32>) -> tensor<?x3xf32>
      gnn.result_ready %b, 0 : tensor<?x3xf32>
      gnn.result_ready %i, 3 : tensor<i64>
      return %b, %a, %x, %i
          : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<i64>
    })mlir";
  auto program = compile(source, false);
  ASSERT_TRUE(program);
  HostTensor x = random({5, 3}), i = HostTensor::ids({-42});
  i.shape = {};
  std::vector<std::pair<size_t, std::vector<char>>> seen;
  auto listener = [&](size_t result, const void *data, size_t bytes) {
    const char *p = static_cast<const char *>(data);
    seen.emplace_back(result, std::vector<char>(p, p + bytes));
  };
  auto out = program->runNamed(
      "main",
      [&](const Parameter &, size_t n) -> llvm::Expected<Argument> {
        return Argument{nullptr, n == 0 ? &x : &i};
      },
      JitProgram::kInstanceThreads, listener);
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  ASSERT_EQ(seen.size(), 4u);
  const std::vector<Parameter> &results = program->getResults();
  size_t expected[] = {2, 1, 0, 3};
  for (auto [k, slot] : llvm::enumerate(expected)) {
    EXPECT_EQ(seen[k].first, slot);
    const HostTensor &final = out->at(results[slot].name);
    ASSERT_EQ(seen[k].second.size(), final.numBytes()) << "result " << slot;
    EXPECT_EQ(
        std::memcmp(seen[k].second.data(), final.data(), final.numBytes()), 0)
        << "result " << slot;
  }
  // Without a listener the announcements do nothing.
  auto plain = program->run({{nullptr, &x}, {nullptr, &i}});
  ASSERT_TRUE(bool(plain)) << llvm::toString(plain.takeError());
  EXPECT_EQ(std::memcmp((*plain)[0].data(), out->at(results[0].name).data(),
                        (*plain)[0].numBytes()),
            0);
}

TEST_F(ExecutionTest, OnlyWhatTheEntryReachesIsCompiled) {
  // @helper is public and called: it stays. @unused is public and called by
  // no entry: it is dropped before lowering, so the external function it
  // calls, which nothing defines, is never looked for.
  std::string source = R"mlir(
    func.func private @undefined_elsewhere(f32) -> f32
    func.func @unused(%x: tensor<2xf32>) -> f32 {
      %c0 = arith.constant 0 : index
      %e = tensor.extract %x[%c0] : tensor<2xf32>
      %r = func.call @undefined_elsewhere(%e) : (f32) -> f32
      return %r : f32
    }
    func.func @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = arith.addf %x, %x : tensor<2xf32>
      return %r : tensor<2xf32>
    }
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = func.call @helper(%x) : (tensor<2xf32>) -> tensor<2xf32>
      return %r : tensor<2xf32>
    })mlir";
  auto program = compile(source, false);
  ASSERT_TRUE(program);
  HostTensor x = random({2});
  auto out = program->run({{nullptr, &x}});
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ((*out)[0].as<float>()[i], 2 * x.as<float>()[i]);
}

/// A writable argument updated in place (rows `ids` of the cache replaced
/// by `s`), and a result read from the update.
const char *const kCacheUpdate = R"mlir(
  func.func @main(%c: tensor<?x2x3xf32> {bufferization.writable = true, gnn.name = "cache"},
                  %s: tensor<?x2x3xf32>, %ids: tensor<?xindex>)
      -> (tensor<?x2x3xf32> {gnn.updates = "cache", gnn.name = "cache"},
          tensor<?x2x3xf32> {gnn.name = "rows"}) {
    %r = gnn.scatter_rows %s into %c[%ids]
        : (tensor<?x2x3xf32>, tensor<?x2x3xf32>, tensor<?xindex>) -> tensor<?x2x3xf32>
    %g = gnn.gather_rows %r[%ids]
        : (tensor<?x2x3xf32>, tensor<?xindex>) -> tensor<?x2x3xf32>
    return %r, %g : tensor<?x2x3xf32>, tensor<?x2x3xf32>
  })mlir";

TEST_F(ExecutionTest, WritableArgumentsAreUpdatedInPlace) {
  // A writable argument and the result marked as its update: handed over
  // (`updated`), the caller's storage receives the update and the result is a
  // view of it; given read-only (`tensor`), a private copy is updated and the
  // caller's tensor stays as it was. Other results are unaffected.
  auto program = compile(kCacheUpdate, false);
  ASSERT_TRUE(program);
  ASSERT_EQ(program->getResults()[0].updates, 0u);
  HostTensor s = random({2, 2, 3}), list = HostTensor::ids({3, 1});
  auto want = [&](const HostTensor &before) {
    std::vector<double> w(before.as<float>(),
                          before.as<float>() + before.numElements());
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 6; ++j)
        w[list.as<int64_t>()[i] * 6 + j] = s.as<float>()[i * 6 + j];
    return w;
  };
  std::vector<double> gathered(s.as<float>(), s.as<float>() + s.numElements());

  HostTensor cache = random({4, 2, 3});
  std::vector<double> updatedCache = want(cache);
  Argument handedOver;
  handedOver.updated = &cache;
  auto out = program->run({handedOver, {nullptr, &s}, {nullptr, &list}});
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  EXPECT_EQ((*out)[0].data(), cache.data());
  expectClose(cache, updatedCache, "handed over");
  expectClose((*out)[1], gathered, "gathered rows");

  HostTensor readOnly = random({4, 2, 3}), before = readOnly;
  out = program->run({{nullptr, &readOnly}, {nullptr, &s}, {nullptr, &list}});
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  EXPECT_EQ(std::memcmp(readOnly.data(), before.data(), before.numBytes()), 0);
  EXPECT_NE((*out)[0].data(), readOnly.data());
  expectClose((*out)[0], want(before), "private copy");
  expectClose((*out)[1], gathered, "gathered rows");
}

TEST_F(ExecutionTest, UnifiedMemoryIsUpdatedOnTheDevice) {
  // A GPU program takes storage in unified memory as it is: a writable
  // argument there is updated in place on the device (a trainer's
  // parameters and moments), and a read-only one is read where it lies.
  HostTensor cache = random({4, 2, 3});
  if (!gnn_cuda_init(nullptr, 0)) {
    auto none = unifiedCopy(cache);
    ASSERT_FALSE(bool(none));
    EXPECT_NE(llvm::toString(none.takeError())
                  .find("cannot keep a tensor in unified memory: "),
              std::string::npos);
    EXPECT_EQ(gnn_cuda_is_unified(cache.data()), 0);
    GTEST_SKIP() << "no CUDA device";
  }
  auto program = compile(kCacheUpdate, false, Device::CUDA);
  ASSERT_TRUE(program);
  HostTensor s = random({2, 2, 3}), list = HostTensor::ids({3, 1});
  std::vector<double> want(cache.as<float>(),
                           cache.as<float>() + cache.numElements());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 6; ++j)
      want[list.as<int64_t>()[i] * 6 + j] = s.as<float>()[i * 6 + j];
  std::vector<double> gathered(s.as<float>(), s.as<float>() + s.numElements());

  auto unified = unifiedCopy(cache);
  ASSERT_TRUE(bool(unified)) << llvm::toString(unified.takeError());
  EXPECT_EQ(gnn_cuda_is_unified(unified->data()), 1);
  auto rows = unifiedCopy(s);
  ASSERT_TRUE(bool(rows)) << llvm::toString(rows.takeError());
  void *storage = unified->data();
  Argument handedOver;
  handedOver.updated = &*unified;
  for (int call = 0; call < 2; ++call) {
    auto out = program->run({handedOver, {nullptr, &*rows}, {nullptr, &list}});
    ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
    EXPECT_EQ(unified->data(), storage);
    EXPECT_EQ((*out)[0].data(), storage);
    expectClose(*unified, want, "updated in unified memory");
    expectClose((*out)[1], gathered, "gathered rows");
  }
}

TEST_F(ExecutionTest, ResultsKeptOnTheDevice) {
  // Results a GPU call keeps on the device come back in unified memory with
  // the values the host's copy has; a later call takes them as they are
  // (the decoder's cross-attention k/v). A CPU call's results are host
  // memory whatever is asked. Unified tensors are zeroed and copied on the
  // device.
  HostTensor s = random({2, 2, 3}), list = HostTensor::ids({1, 0});
  auto keepRows = [](const Parameter &p) { return p.name == "rows"; };
  // The cache is `s` (a private copy is updated), then `s`, then `list`.
  auto bind = [&](const Parameter &, size_t i) -> llvm::Expected<Argument> {
    Argument a;
    a.tensor = i < 2 ? &s : &list;
    return a;
  };
  auto cpu = compile(kCacheUpdate, false);
  ASSERT_TRUE(cpu);
  auto onHost = cpu->runNamed("main", bind, 1, {}, keepRows);
  ASSERT_TRUE(bool(onHost)) << llvm::toString(onHost.takeError());
  EXPECT_EQ(gnn_cuda_is_unified(onHost->at("rows").data()), 0);
  if (!gnn_cuda_init(nullptr, 0)) {
    auto none = unifiedZeros(DType::F32, {2, 3});
    ASSERT_FALSE(bool(none));
    EXPECT_NE(llvm::toString(none.takeError())
                  .find("cannot make a zeroed tensor in unified memory: "),
              std::string::npos);
    GTEST_SKIP() << "no CUDA device";
  }
  auto gpu = compile(kCacheUpdate, false, Device::CUDA);
  ASSERT_TRUE(gpu);
  auto kept = gpu->runNamed("main", bind, 1, {}, keepRows);
  ASSERT_TRUE(bool(kept)) << llvm::toString(kept.takeError());
  HostTensor &rows = kept->at("rows");
  EXPECT_EQ(gnn_cuda_is_unified(rows.data()), 1);
  EXPECT_EQ(gnn_cuda_is_unified(kept->at("cache").data()), 0);
  EXPECT_EQ(
      std::memcmp(rows.data(), onHost->at("rows").data(), rows.numBytes()), 0);
  // Passed back as inputs, read where they lie: the same rows again.
  auto again = gpu->run({{nullptr, &rows}, {nullptr, &rows}, {nullptr, &list}});
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(std::memcmp((*again)[1].data(), s.data(), s.numBytes()), 0);

  auto zeros = unifiedZeros(DType::I8, {5});
  ASSERT_TRUE(bool(zeros)) << llvm::toString(zeros.takeError());
  EXPECT_EQ(gnn_cuda_is_unified(zeros->data()), 1);
  auto copy = unifiedCopy(s);
  ASSERT_TRUE(bool(copy)) << llvm::toString(copy.takeError());
  HostTensor back = s;
  std::memset(back.data(), 0, back.numBytes());
  ASSERT_FALSE(bool(unifiedMemcpy(back.data(), copy->data(), s.numBytes())));
  EXPECT_EQ(std::memcmp(back.data(), s.data(), s.numBytes()), 0);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(zeros->as<int8_t>()[i], 0);
}

TEST_F(ExecutionTest, StagedInputsCrossAheadOfTheCall) {
  // Inputs staged for a GPU program are copies in unified memory with the
  // inputs' bytes, which a call takes as they are and computes with as with
  // the originals; a CPU program's are the inputs themselves. Constants
  // stay the caller's; writable arguments cannot be staged.
  std::vector<int64_t> sizes = {3, 1, 4};
  gnn_graph *built = nullptr;
  ASSERT_EQ(
      gnn_graph_complete_blocks(sizes.data(), sizes.size(), &built, nullptr, 0),
      0);
  GraphPtr g(built);
  HostTensor q = random({8, 2, 4}), k = random({8, 2, 4}),
             v = random({8, 2, 4});
  std::vector<Argument> inputs = {
      {g.get()}, {nullptr, &q}, {nullptr, &k}, {nullptr, &v}};
  inputs[3].constant = true;
  std::string source = attentionSource(2, 4, 0.5, 5);

  auto cpu = compile(source, true);
  ASSERT_TRUE(cpu);
  auto onHost = cpu->stage(inputs);
  ASSERT_TRUE(bool(onHost)) << llvm::toString(onHost.takeError());
  ASSERT_EQ((*onHost)->size(), inputs.size());
  EXPECT_EQ((**onHost)[0].graph, g.get());
  for (size_t i = 1; i < inputs.size(); ++i)
    EXPECT_EQ((**onHost)[i].tensor, inputs[i].tensor);
  Argument writable;
  writable.updated = &q;
  auto refused = cpu->stage({writable});
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(llvm::toString(refused.takeError()),
            "only graphs and read-only tensors can be staged");

  if (!gnn_cuda_init(nullptr, 0))
    GTEST_SKIP() << "no CUDA device";
  auto gpu = compile(source, true, Device::CUDA);
  ASSERT_TRUE(gpu);
  auto staged = gpu->stage(inputs);
  ASSERT_TRUE(bool(staged)) << llvm::toString(staged.takeError());
  const StagedInputs &on = **staged;
  const gnn_graph &sg = *on[0].graph;
  EXPECT_NE(&sg, g.get());
  EXPECT_EQ(sg.structure, g->structure);
  EXPECT_EQ(sg.num_src, g->num_src);
  EXPECT_EQ(sg.num_dst, g->num_dst);
  EXPECT_EQ(sg.num_edges, g->num_edges);
  std::pair<const int64_t *, const int64_t *> arrays[] = {
      {sg.src, g->src},
      {sg.dst, g->dst},
      {sg.in_src, g->in_src},
      {sg.in_eid, g->in_eid}};
  for (auto [copy, original] : arrays) {
    EXPECT_EQ(gnn_cuda_is_unified(copy), 1);
    EXPECT_EQ(std::memcmp(copy, original, g->num_edges * sizeof(int64_t)), 0);
  }
  EXPECT_EQ(
      std::memcmp(sg.in_ptr, g->in_ptr, (g->num_dst + 1) * sizeof(int64_t)), 0);
  for (size_t i : {1, 2}) {
    EXPECT_NE(on[i].tensor, inputs[i].tensor);
    EXPECT_EQ(on[i].tensor->shape, inputs[i].tensor->shape);
    EXPECT_EQ(gnn_cuda_is_unified(on[i].tensor->data()), 1);
    EXPECT_EQ(std::memcmp(on[i].tensor->data(), inputs[i].tensor->data(),
                          inputs[i].tensor->numBytes()),
              0);
  }
  EXPECT_EQ(on[3].tensor, &v);
  // Staged and handed over: the results of the originals.
  auto want = gpu->run(inputs);
  ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());
  std::vector<Argument> handed(on.size());
  for (size_t i = 0; i < on.size(); ++i)
    handed[i] = on[i];
  auto got = gpu->run(handed);
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
  EXPECT_EQ(
      std::memcmp((*got)[0].data(), (*want)[0].data(), (*want)[0].numBytes()),
      0);
}

TEST_F(ExecutionTest, OnlyWritableArgumentsCanBeUpdated) {
  std::string source = R"mlir(
    func.func @main(%x: tensor<?x2xf32>) -> tensor<?x2xf32> {
      return %x : tensor<?x2xf32>
    })mlir";
  auto program = compile(source, false);
  ASSERT_TRUE(program);
  HostTensor x = random({3, 2});
  Argument a;
  a.updated = &x;
  auto out = program->run({a});
  ASSERT_FALSE(bool(out));
  EXPECT_EQ(llvm::toString(out.takeError()),
            "argument 'arg0' is read-only; it cannot be updated in place");

  // A result may only update a writable argument of its type.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      R"mlir(
    func.func @main(%x: tensor<?x2xf32> {gnn.name = "x"})
        -> (tensor<?x2xf32> {gnn.updates = "x"}) {
      return %x : tensor<?x2xf32>
    })mlir",
      ParserConfig(&context));
  ASSERT_TRUE(module);
  auto bad = JitProgram::compile(std::move(module), "main", {}, {});
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "result 'result0' of 'main' updates 'x', which is not a writable "
            "argument of its type");
}
