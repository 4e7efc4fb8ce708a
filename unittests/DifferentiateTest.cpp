//===- DifferentiateTest.cpp - gradients against finite differences -------===//
//
// Part of gnnc. Programs in double precision are differentiated by
// gnn-differentiate, compiled, and their gradient compared with central
// differences of the compiled forward, element by element (within 1e-6
// relative to max(1, |gradient|)), on random graphs: general, bipartite,
// with nodes that have no in-edges, with edge subsets; for every adjoint
// rule (message functions and their chains, sums, means, maxima and minima,
// element bodies over arith and math, fused attention, rows, dropout,
// log-softmax, reshapes, broadcasts).
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Differentiate.h"
#include "GNN/InitAll.h"
#include "GNN/Runner/JitRunner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// The graph arguments every program takes, and the graph they build.
constexpr const char *kGraphArgs =
    "%src: tensor<?xindex>, %dst: tensor<?xindex>, %counts: tensor<2xindex>";
constexpr const char *kBuildGraph = R"mlir(
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ns = tensor.extract %counts[%c0] : tensor<2xindex>
  %nd = tensor.extract %counts[%c1] : tensor<2xindex>
  %g = gnn.graph_from_coo %src, %dst, %ns, %nd
      : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
)mlir";

struct Graph {
  std::vector<int64_t> src, dst;
  int64_t numSrc = 0, numDst = 0;
};

class DifferentiateTest : public ::testing::Test {
protected:
  DifferentiateTest() {
    DialectRegistry registry;
    gnn::registerAllDialectsAndExtensions(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// A random graph; with `everyDstReached`, each destination has an
  /// in-edge, else the last one has none.
  Graph randomGraph(int64_t numSrc, int64_t numDst, bool everyDstReached) {
    Graph g{{}, {}, numSrc, numDst};
    std::uniform_int_distribution<int64_t> src(0, numSrc - 1);
    for (int64_t v = 0; v < numDst; ++v) {
      if (!everyDstReached && v == numDst - 1)
        continue;
      int64_t degree = 1 + rng() % 4;
      for (int64_t i = 0; i < degree; ++i) {
        g.src.push_back(src(rng));
        g.dst.push_back(v);
      }
    }
    return g;
  }

  HostTensor random(std::vector<int64_t> shape, DType dtype = DType::F64) {
    HostTensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.allocate();
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (int64_t i = 0; i < t.numElements(); ++i)
      set(t, i, dist(rng));
    return t;
  }
  static double get(const HostTensor &t, int64_t i) {
    return t.dtype == DType::F64 ? t.as<double>()[i] : t.as<float>()[i];
  }
  static void set(HostTensor &t, int64_t i, double v) {
    if (t.dtype == DType::F64)
      t.as<double>()[i] = v;
    else
      t.as<float>()[i] = float(v);
  }
  static bool isFloat(const HostTensor &t) {
    return t.dtype == DType::F64 || t.dtype == DType::F32;
  }

  /// Differentiates @main of the program with `signature` (after the graph
  /// arguments) and `body` with respect to its float arguments, and
  /// compares its gradient with central differences of @main at `inputs`:
  /// in f64 with step 1e-6 and tolerance 1e-6, or for f32 programs (the
  /// dense layers) with step 1e-2 and tolerance 2e-3, relative to
  /// max(1, |difference quotient|).
  void check(const std::string &signature, const std::string &body,
             const Graph &graph, std::vector<HostTensor> inputs,
             DType dtype = DType::F64) {
    bool wide = dtype == DType::F64;
    std::string source = prelude + "func.func @main(" +
                         std::string(kGraphArgs) + ", " + signature +
                         ") -> tensor<" + (wide ? "f64" : "f32") + "> {" +
                         kBuildGraph + body + "}";
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, ParserConfig(&context));
    ASSERT_TRUE(module) << source;
    auto fn = module->lookupSymbol<func::FuncOp>("main");
    SmallVector<unsigned> wrt;
    for (auto [i, input] : llvm::enumerate(inputs))
      if (isFloat(input))
        wrt.push_back(i + 3);
    ASSERT_TRUE(succeeded(differentiateFunction(fn, wrt, "main_grad")));
    auto program =
        JitProgram::compile(std::move(module), {"main", "main_grad"}, {});
    ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());

    HostTensor src = HostTensor::ids(graph.src),
               dst = HostTensor::ids(graph.dst),
               counts = HostTensor::ids({graph.numSrc, graph.numDst});
    std::vector<Argument> args = {
        {nullptr, &src}, {nullptr, &dst}, {nullptr, &counts}};
    for (HostTensor &t : inputs)
      args.push_back({nullptr, &t});
    auto grads = (*program)->run("main_grad", args);
    ASSERT_TRUE(bool(grads)) << llvm::toString(grads.takeError());
    auto loss = [&]() -> double {
      auto r = (*program)->run("main", args);
      EXPECT_TRUE(bool(r)) << llvm::toString(r.takeError());
      return r ? get((*r)[0], 0) : NAN;
    };
    double base = loss();
    ASSERT_TRUE(std::isfinite(base));
    EXPECT_DOUBLE_EQ(get((*grads)[0], 0), base);

    const double h = wide ? 1e-6 : 1e-2, tolerance = wide ? 1e-6 : 2e-3;
    unsigned gradIndex = 1;
    for (auto [a, input] : llvm::enumerate(inputs)) {
      if (!isFloat(input))
        continue;
      const HostTensor &grad = (*grads)[gradIndex++];
      ASSERT_EQ(grad.shape, input.shape);
      for (int64_t i = 0; i < input.numElements(); ++i) {
        double saved = get(input, i);
        set(input, i, saved + h);
        double up = loss();
        set(input, i, saved - h);
        double down = loss();
        set(input, i, saved);
        double numeric = (up - down) / (2 * h);
        double analytic = get(grad, i);
        EXPECT_NEAR(analytic, numeric,
                    tolerance * std::max(1.0, std::abs(numeric)))
            << "argument " << a << ", element " << i;
      }
    }
  }

  MLIRContext context;
  std::mt19937_64 rng{20261124};
  /// Functions placed before @main (callees).
  std::string prelude;
};

TEST_F(DifferentiateTest, ClampedAttentionInDGLForm) {
  Graph g = randomGraph(6, 5, /*everyDstReached=*/true);
  check("%q: tensor<?x2x3xf64>, %k: tensor<?x2x3xf64>, "
        "%v: tensor<?x2x3xf64>, %w: tensor<?x2x3xf64>",
        R"mlir(
  %e = gnn.apply_edges %g, u_dot_v(%k, %q)
      then [scale(0.9), clamp(-0.3, 0.3), exp]
      : (!gnn.graph<general>, tensor<?x2x3xf64>, tensor<?x2x3xf64>)
      -> tensor<?x2x1xf64>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum]
      : (!gnn.graph<general>, tensor<?x2x3xf64>, tensor<?x2x1xf64>,
         tensor<?x2x1xf64>) -> (tensor<?x2x3xf64>, tensor<?x2x1xf64>)
  %o = gnn.apply_nodes(%wv, %z, %w) {
  ^bb0(%a: f64, %b: f64, %c: f64):
    %d = arith.divf %a, %b : f64
    %t = math.tanh %d : f64
    %m = arith.mulf %t, %c : f64
    gnn.yield %m : f64
  } : (tensor<?x2x3xf64>, tensor<?x2x1xf64>, tensor<?x2x3xf64>)
    -> tensor<?x2x3xf64>
  %l = gnn.sum_to %o : tensor<?x2x3xf64> -> tensor<f64>
  return %l : tensor<f64>
)mlir",
        g,
        {random({5, 2, 3}), random({6, 2, 3}), random({6, 2, 3}),
         random({5, 2, 3})});
}

TEST_F(DifferentiateTest, FusedAttentionExactSoftmax) {
  // Bipartite, and the last destination has no in-edges (its output is 0).
  Graph g = randomGraph(7, 4, /*everyDstReached=*/false);
  HostTensor q = random({4, 2, 3});
  for (int64_t i = 0; i < q.numElements(); ++i)
    q.as<double>()[i] *= 8; // large scores: the shift matters
  check(
      "%q: tensor<?x2x3xf64>, %k: tensor<?x2x3xf64>, "
      "%v: tensor<?x2x3xf64>, %w: tensor<?x2x3xf64>",
      R"mlir(
  %o = gnn.fused_attention %g, %q, %k, %v scale(0.5) normalize
      : (!gnn.graph<general>, tensor<?x2x3xf64>, tensor<?x2x3xf64>,
         tensor<?x2x3xf64>) -> tensor<?x2x3xf64>
  %p = gnn.apply_nodes(%o, %w) {
  ^bb0(%a: f64, %b: f64):
    %m = arith.mulf %a, %b : f64
    gnn.yield %m : f64
  } : (tensor<?x2x3xf64>, tensor<?x2x3xf64>) -> tensor<?x2x3xf64>
  %l = gnn.sum_to %p : tensor<?x2x3xf64> -> tensor<f64>
  return %l : tensor<f64>
)mlir",
      g,
      {std::move(q), random({7, 2, 3}), random({7, 2, 3}), random({4, 2, 3})});
}

TEST_F(DifferentiateTest, FusedAttentionClampedOnEdgeSubset) {
  Graph g = randomGraph(5, 5, /*everyDstReached=*/true);
  HostTensor eids = HostTensor::ids({0, 2, 3, 5, 6});
  check("%q: tensor<?x2x3xf64>, %k: tensor<?x2x3xf64>, "
        "%v: tensor<?x2x3xf64>, %w: tensor<?x2x3xf64>, %eids: tensor<?xindex>",
        R"mlir(
  %wv, %z = gnn.fused_attention %g, %q, %k, %v scale(1.3)
      clamp(-0.4, 0.4) edges(%eids)
      : (!gnn.graph<general>, tensor<?x2x3xf64>, tensor<?x2x3xf64>,
         tensor<?x2x3xf64>, tensor<?xindex>)
      -> (tensor<?x2x3xf64>, tensor<?x2x1xf64>)
  %p = gnn.apply_nodes(%wv, %z, %w) {
  ^bb0(%a: f64, %b: f64, %c: f64):
    %m = arith.mulf %a, %c : f64
    %s = arith.addf %m, %b : f64
    gnn.yield %s : f64
  } : (tensor<?x2x3xf64>, tensor<?x2x1xf64>, tensor<?x2x3xf64>)
    -> tensor<?x2x3xf64>
  %l = gnn.sum_to %p : tensor<?x2x3xf64> -> tensor<f64>
  return %l : tensor<f64>
)mlir",
        g,
        {random({5, 2, 3}), random({5, 2, 3}), random({5, 2, 3}),
         random({5, 2, 3}), std::move(eids)});
}

TEST_F(DifferentiateTest, BuiltinMessagesAndReductions) {
  // 6 sources, 4 destinations; the last destination receives nothing.
  Graph g = randomGraph(6, 4, /*everyDstReached=*/false);
  check("%x: tensor<?x3xf64>, %y: tensor<?x3xf64>, %r: tensor<?x1xf64>, "
        "%w: tensor<?x3xf64>, %unused: tensor<?x3xf64>",
        R"mlir(
  %a = gnn.apply_edges %g, u_add_v(%x, %y)
      : (!gnn.graph<general>, tensor<?x3xf64>, tensor<?x3xf64>)
      -> tensor<?x3xf64>
  %b = gnn.apply_edges %g, u_sub_e(%x, %a) then [scale(2.0), relu, neg]
      : (!gnn.graph<general>, tensor<?x3xf64>, tensor<?x3xf64>)
      -> tensor<?x3xf64>
  %c = gnn.apply_edges %g, e_mul_v(%b, %r)
      : (!gnn.graph<general>, tensor<?x3xf64>, tensor<?x1xf64>)
      -> tensor<?x3xf64>
  %d = gnn.apply_edges %g, (u %x, v %y, e %c) {
  ^bb0(%p: f64, %q: f64, %s: f64):
    %pq = arith.mulf %p, %q : f64
    %one = arith.constant 1.0 : f64
    %ss = arith.mulf %s, %s : f64
    %den = arith.addf %one, %ss : f64
    %o = arith.divf %pq, %den : f64
    gnn.yield %o : f64
  } : (!gnn.graph<general>, tensor<?x3xf64>, tensor<?x3xf64>,
       tensor<?x3xf64>) -> tensor<?x3xf64>
  %m1, %m2, %m3, %m4 = gnn.send_and_recv %g,
      [copy_u(%x) -> mean, u_mul_v(%x, %y) -> max, copy_e(%c) -> min,
       u_div_v(%x, %w) -> sum]
      : (!gnn.graph<general>, tensor<?x3xf64>, tensor<?x3xf64>,
         tensor<?x3xf64>, tensor<?x3xf64>, tensor<?x3xf64>, tensor<?x3xf64>)
      -> (tensor<?x3xf64>, tensor<?x3xf64>, tensor<?x3xf64>,
          tensor<?x3xf64>)
  %r1 = gnn.reduce %g, mean(%d)
      : (!gnn.graph<general>, tensor<?x3xf64>) -> tensor<?x3xf64>
  %r2 = gnn.reduce %g, max(%a)
      : (!gnn.graph<general>, tensor<?x3xf64>) -> tensor<?x3xf64>
  %t = gnn.apply_nodes(%m1, %m2, %m3, %m4, %r1, %r2, %w) {
  ^bb0(%e1: f64, %e2: f64, %e3: f64, %e4: f64, %e5: f64, %e6: f64,
       %e7: f64):
    %s1 = arith.addf %e1, %e2 : f64
    %s2 = arith.mulf %e3, %e7 : f64
    %s3 = arith.addf %s1, %s2 : f64
    %s4 = arith.addf %s3, %e4 : f64
    %s5 = arith.mulf %e5, %e6 : f64
    %s6 = arith.addf %s4, %s5 : f64
    gnn.yield %s6 : f64
  } : (tensor<?x3xf64>, tensor<?x3xf64>, tensor<?x3xf64>, tensor<?x3xf64>,
       tensor<?x3xf64>, tensor<?x3xf64>, tensor<?x3xf64>) -> tensor<?x3xf64>
  %l = gnn.sum_to %t : tensor<?x3xf64> -> tensor<f64>
  return %l : tensor<f64>
)mlir",
        g,
        {random({6, 3}), random({4, 3}), random({4, 1}),
         [&] {
           // Divisors away from 0.
           HostTensor w = random({4, 3});
           for (int64_t i = 0; i < w.numElements(); ++i)
             w.as<double>()[i] = 1.5 + w.as<double>()[i];
           return w;
         }(),
         random({6, 3})});
}

TEST_F(DifferentiateTest, ElementBodiesOverMath) {
  Graph g = randomGraph(3, 3, /*everyDstReached=*/true);
  check("%x: tensor<?x4xf64>, %y: tensor<?x4xf64>",
        R"mlir(
  %o = gnn.apply_nodes(%x, %y) {
  ^bb0(%a: f64, %b: f64):
    %one = arith.constant 1.0 : f64
    %aa = arith.mulf %a, %a : f64
    %bb = arith.mulf %b, %b : f64
    %pa = arith.addf %one, %aa : f64
    %pb = arith.addf %one, %bb : f64
    %t1 = math.exp %a : f64
    %t2 = math.log %pa : f64
    %t3 = math.sqrt %pb : f64
    %t4 = math.tanh %b : f64
    %t5 = math.erf %a : f64
    %t6 = math.atan %b : f64
    %t7 = math.sin %a : f64
    %t8 = math.cos %b : f64
    %t9 = math.powf %pa, %b : f64
    %t10 = math.absf %a : f64
    %t11 = arith.maximumf %a, %b : f64
    %t12 = arith.minimumf %a, %b : f64
    %gt = arith.cmpf ogt, %a, %b : f64
    %t13 = arith.select %gt, %aa, %b : f64
    %t14 = math.fma %a, %b, %t4 : f64
    %t15 = math.rsqrt %pb : f64
    %t16 = math.expm1 %b : f64
    %t17 = math.log1p %aa : f64
    %t18 = math.exp2 %a : f64
    %t19 = math.log2 %pb : f64
    %t20 = arith.negf %t19 : f64
    %t21 = arith.divf %t7, %pb : f64
    %t22 = arith.subf %t8, %t21 : f64
    %s1 = arith.addf %t1, %t2 : f64
    %s2 = arith.mulf %s1, %t3 : f64
    %s3 = arith.addf %s2, %t5 : f64
    %s4 = arith.mulf %s3, %t6 : f64
    %s5 = arith.addf %s4, %t9 : f64
    %s6 = arith.addf %s5, %t10 : f64
    %s7 = arith.mulf %s6, %t11 : f64
    %s8 = arith.addf %s7, %t12 : f64
    %s9 = arith.addf %s8, %t13 : f64
    %s10 = arith.addf %s9, %t14 : f64
    %s11 = arith.mulf %s10, %t15 : f64
    %s12 = arith.addf %s11, %t16 : f64
    %s13 = arith.addf %s12, %t17 : f64
    %s14 = arith.addf %s13, %t18 : f64
    %s15 = arith.addf %s14, %t20 : f64
    %s16 = arith.addf %s15, %t22 : f64
    gnn.yield %s16 : f64
  } : (tensor<?x4xf64>, tensor<?x4xf64>) -> tensor<?x4xf64>
  %l = gnn.sum_to %o : tensor<?x4xf64> -> tensor<f64>
  return %l : tensor<f64>
)mlir",
        g, {random({9, 4}), random({9, 4})});
}

TEST_F(DifferentiateTest, RowsDropoutSoftmaxAndReshapes) {
  Graph g = randomGraph(2, 2, /*everyDstReached=*/true);
  HostTensor ids = HostTensor::ids({3, 0, 3, 1, 3, 4, 0});
  HostTensor first = HostTensor::ids({1, 4, 6});
  HostTensor rows = HostTensor::ids({2, 0, 4});
  check("%t: tensor<?x4xf64>, %h: tensor<?x4xf64>, %w: tensor<?x4xf64>, "
        "%ids: tensor<?xindex>, %first: tensor<?xindex>, "
        "%rows: tensor<?xindex>",
        R"mlir(
  %seed = arith.constant 77 : i64
  %offset = arith.constant 5 : i64
  %e = gnn.gather_rows %t[%ids]
      : (tensor<?x4xf64>, tensor<?xindex>) -> tensor<?x4xf64>
  %s = gnn.apply_nodes(%e, %h) {
  ^bb0(%a: f64, %b: f64):
    %m = arith.mulf %a, %b : f64
    gnn.yield %m : f64
  } : (tensor<?x4xf64>, tensor<?x4xf64>) -> tensor<?x4xf64>
  %d = gnn.dropout %s, %seed, %offset rate(0.3) : tensor<?x4xf64>
  %part = gnn.gather_rows %d[%first]
      : (tensor<?x4xf64>, tensor<?xindex>) -> tensor<?x4xf64>
  %p = gnn.scatter_rows %part into %t[%rows]
      : (tensor<?x4xf64>, tensor<?x4xf64>, tensor<?xindex>) -> tensor<?x4xf64>
  %q = gnn.scatter_rows %d into %p[%ids] add
      : (tensor<?x4xf64>, tensor<?x4xf64>, tensor<?xindex>) -> tensor<?x4xf64>
  %ls = gnn.log_softmax %q : (tensor<?x4xf64>) -> tensor<?x4xf64>
  %n = tensor.dim %ls, %c0 : tensor<?x4xf64>
  %x3 = tensor.expand_shape %ls [[0], [1, 2]] output_shape [%n, 2, 2]
      : tensor<?x4xf64> into tensor<?x2x2xf64>
  %col = gnn.sum_to %x3 : tensor<?x2x2xf64> -> tensor<?x2x1xf64>
  %bc = gnn.broadcast %col like %x3
      : tensor<?x2x1xf64>, tensor<?x2x2xf64> -> tensor<?x2x2xf64>
  %y = tensor.collapse_shape %bc [[0], [1, 2]]
      : tensor<?x2x2xf64> into tensor<?x4xf64>
  %o = gnn.apply_nodes(%y, %ls, %w) {
  ^bb0(%a: f64, %b: f64, %c: f64):
    %m = arith.mulf %a, %c : f64
    %sb = math.sin %b : f64
    %r = arith.addf %m, %sb : f64
    gnn.yield %r : f64
  } : (tensor<?x4xf64>, tensor<?x4xf64>, tensor<?x4xf64>) -> tensor<?x4xf64>
  %l = gnn.sum_to %o : tensor<?x4xf64> -> tensor<f64>
  return %l : tensor<f64>
)mlir",
        g,
        {random({5, 4}), random({7, 4}), random({5, 4}), std::move(ids),
         std::move(first), std::move(rows)});
}

TEST_F(DifferentiateTest, DenseLayersInSinglePrecision) {
  Graph g = randomGraph(2, 2, /*everyDstReached=*/true);
  const DType f32 = DType::F32;
  check("%x: tensor<?x5xf32>, %w1: tensor<6x5xf32>, %b1: tensor<6xf32>, "
        "%w2: tensor<6x4xf32>, %ln_w: tensor<4xf32>, %ln_b: tensor<4xf32>, "
        "%t: tensor<?x4xf32>",
        R"mlir(
  %h = gnn.linear %x, %w1, %b1
      : (tensor<?x5xf32>, tensor<6x5xf32>, tensor<6xf32>) -> tensor<?x6xf32>
  %a = gnn.apply_nodes(%h) {
  ^bb0(%e: f32):
    %r = math.tanh %e : f32
    gnn.yield %r : f32
  } : (tensor<?x6xf32>) -> tensor<?x6xf32>
  %y = gnn.linear %a, %w2 transpose_weight
      : (tensor<?x6xf32>, tensor<6x4xf32>) -> tensor<?x4xf32>
  %n = gnn.layer_norm %y, %ln_w, %ln_b eps(1.0e-05)
      : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %o = gnn.outer_sum %n, %t
      : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<4x4xf32>
  %s = gnn.apply_nodes(%o) {
  ^bb0(%e: f32):
    %r = math.sin %e : f32
    gnn.yield %r : f32
  } : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %l = gnn.sum_to %s : tensor<4x4xf32> -> tensor<f32>
  return %l : tensor<f32>
)mlir",
        g,
        {random({7, 5}, f32), random({6, 5}, f32), random({6}, f32),
         random({6, 4}, f32), random({4}, f32), random({4}, f32),
         random({7, 4}, f32)},
        f32);
}

TEST_F(DifferentiateTest, CallsThroughOneBackwardPerCallee) {
  // A layer function called twice with its own weights, as the model
  // builders write layers; it takes the graph and returns two results.
  Graph g = randomGraph(5, 5, /*everyDstReached=*/true);
  std::string layer = R"mlir(
func.func private @layer(%g: !gnn.graph<general>, %x: tensor<?x2x4xf64>,
                         %w: tensor<?x2x4xf64>)
    -> (tensor<?x2x4xf64>, tensor<?x2x1xf64>) attributes {no_inline} {
  %o = gnn.fused_attention %g, %x, %x, %w scale(0.7) normalize
      : (!gnn.graph<general>, tensor<?x2x4xf64>, tensor<?x2x4xf64>,
         tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
  %t = gnn.apply_nodes(%o, %x) {
  ^bb0(%a: f64, %b: f64):
    %h = math.tanh %a : f64
    %s = arith.addf %h, %b : f64
    gnn.yield %s : f64
  } : (tensor<?x2x4xf64>, tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
  %n = gnn.sum_to %t : tensor<?x2x4xf64> -> tensor<?x2x1xf64>
  return %t, %n : tensor<?x2x4xf64>, tensor<?x2x1xf64>
}
)mlir";
  std::string body = R"mlir(
  %y1, %n1 = func.call @layer(%g, %x, %w1)
      : (!gnn.graph<general>, tensor<?x2x4xf64>, tensor<?x2x4xf64>)
      -> (tensor<?x2x4xf64>, tensor<?x2x1xf64>)
  %y2, %n2 = func.call @layer(%g, %y1, %w2)
      : (!gnn.graph<general>, tensor<?x2x4xf64>, tensor<?x2x4xf64>)
      -> (tensor<?x2x4xf64>, tensor<?x2x1xf64>)
  %t = gnn.apply_nodes(%y2, %n1) {
  ^bb0(%a: f64, %b: f64):
    %m = arith.mulf %a, %b : f64
    gnn.yield %m : f64
  } : (tensor<?x2x4xf64>, tensor<?x2x1xf64>) -> tensor<?x2x4xf64>
  %l = gnn.sum_to %t : tensor<?x2x4xf64> -> tensor<f64>
  return %l : tensor<f64>
)mlir";
  prelude = layer;
  check("%x: tensor<?x2x4xf64>, %w1: tensor<?x2x4xf64>, "
        "%w2: tensor<?x2x4xf64>",
        body, g, {random({5, 2, 4}), random({5, 2, 4}), random({5, 2, 4})});
  prelude.clear();
}

TEST_F(DifferentiateTest, ForLoopsRecomputeTheirIterations) {
  // A shared layer applied repeatedly (weights used from outside the loop,
  // a graph captured too), with loop bounds of several kinds.
  Graph g = randomGraph(6, 6, /*everyDstReached=*/true);
  for (const char *bounds :
       {"%c0 to %c3 step %c1", "%c1 to %c6 step %c2", "%c3 to %c1 step %c1"}) {
    SCOPED_TRACE(bounds);
    check("%x: tensor<?x2x4xf64>, %w: tensor<?x2x4xf64>, "
          "%u: tensor<?x2x4xf64>",
          std::string(R"mlir(
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %r = scf.for %i = )mlir") +
              bounds + R"mlir( iter_args(%a = %x) -> (tensor<?x2x4xf64>) {
    %o = gnn.fused_attention %g, %a, %a, %w scale(0.6) normalize
        : (!gnn.graph<general>, tensor<?x2x4xf64>, tensor<?x2x4xf64>,
           tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
    %b = gnn.apply_nodes(%o, %a, %u) {
    ^bb0(%p: f64, %q: f64, %s: f64):
      %t = math.tanh %p : f64
      %m = arith.mulf %t, %s : f64
      %n = arith.addf %m, %q : f64
      gnn.yield %n : f64
    } : (tensor<?x2x4xf64>, tensor<?x2x4xf64>, tensor<?x2x4xf64>)
      -> tensor<?x2x4xf64>
    scf.yield %b : tensor<?x2x4xf64>
  }
  %sq = gnn.apply_nodes(%r) {
  ^bb0(%p: f64):
    %m = arith.mulf %p, %p : f64
    gnn.yield %m : f64
  } : (tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
  %l = gnn.sum_to %sq : tensor<?x2x4xf64> -> tensor<f64>
  return %l : tensor<f64>
)mlir",
          g, {random({6, 2, 4}), random({6, 2, 4}), random({6, 2, 4})});
  }
}

TEST_F(DifferentiateTest, IfTakesTheBackwardOfTheTakenBranch) {
  // Each branch uses other values from outside (a weight only one branch
  // reads gets gradient only when that branch runs); the condition comes
  // from a run-time value.
  Graph g = randomGraph(5, 5, /*everyDstReached=*/true);
  for (const char *bound : {"%c3", "%c9"}) {
    SCOPED_TRACE(bound);
    check("%x: tensor<?x2x4xf64>, %w: tensor<?x2x4xf64>, "
          "%u: tensor<?x2x4xf64>",
          std::string(R"mlir(
  %c3 = arith.constant 3 : index
  %c9 = arith.constant 9 : index
  %rows = tensor.dim %x, %c0 : tensor<?x2x4xf64>
  %small = arith.cmpi ult, %rows, )mlir") +
              bound + R"mlir( : index
  %r = scf.if %small -> tensor<?x2x4xf64> {
    %a = gnn.apply_nodes(%x, %w) {
    ^bb0(%p: f64, %q: f64):
      %t = math.tanh %p : f64
      %m = arith.mulf %t, %q : f64
      gnn.yield %m : f64
    } : (tensor<?x2x4xf64>, tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
    scf.yield %a : tensor<?x2x4xf64>
  } else {
    %o = gnn.fused_attention %g, %x, %x, %u scale(0.6) normalize
        : (!gnn.graph<general>, tensor<?x2x4xf64>, tensor<?x2x4xf64>,
           tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
    scf.yield %o : tensor<?x2x4xf64>
  }
  %sq = gnn.apply_nodes(%r, %x) {
  ^bb0(%p: f64, %q: f64):
    %m = arith.mulf %p, %q : f64
    gnn.yield %m : f64
  } : (tensor<?x2x4xf64>, tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
  %l = gnn.sum_to %sq : tensor<?x2x4xf64> -> tensor<f64>
  return %l : tensor<f64>
)mlir",
          g, {random({5, 2, 4}), random({5, 2, 4}), random({5, 2, 4})});
  }
}

TEST_F(DifferentiateTest, WhileLoopsThroughBothRegions) {
  // The condition region transforms what it forwards (so both regions have
  // gradients), a counter and a data-dependent test decide the trip count
  // (the data test never ends the loop at these inputs, so finite
  // differences see the same trips), and weights come from outside. The
  // backward reads each iteration's values from the forward's tape.
  Graph g = randomGraph(5, 5, /*everyDstReached=*/true);
  for (const char *trips : {"%c3", "%c1", "%c0"}) {
    SCOPED_TRACE(trips);
    check("%x: tensor<?x2x4xf64>, %w: tensor<?x2x4xf64>, "
          "%u: tensor<?x2x4xf64>",
          std::string(R"mlir(
  %c3 = arith.constant 3 : index
  %n = arith.addi %c0, )mlir") +
              trips +
              R"mlir( : index
  %r:2 = scf.while (%s = %x, %i = %c0)
      : (tensor<?x2x4xf64>, index) -> (tensor<?x2x4xf64>, index) {
    %a = gnn.apply_nodes(%s, %u) {
    ^bb0(%p: f64, %q: f64):
      %t = math.tanh %p : f64
      %m = arith.mulf %t, %q : f64
      gnn.yield %m : f64
    } : (tensor<?x2x4xf64>, tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
    %total = gnn.sum_to %a : tensor<?x2x4xf64> -> tensor<f64>
    %big = arith.constant 1.0e6 : f64
    %v = tensor.extract %total[] : tensor<f64>
    %small = arith.cmpf olt, %v, %big : f64
    %more = arith.cmpi ult, %i, %n : index
    %go = arith.andi %small, %more : i1
    scf.condition(%go) %a, %i : tensor<?x2x4xf64>, index
  } do {
  ^bb0(%a: tensor<?x2x4xf64>, %i: index):
    %o = gnn.fused_attention %g, %a, %a, %w scale(0.6) normalize
        : (!gnn.graph<general>, tensor<?x2x4xf64>, tensor<?x2x4xf64>,
           tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
    %b = gnn.apply_nodes(%o, %a) {
    ^bb0(%p: f64, %q: f64):
      %m = arith.addf %p, %q : f64
      gnn.yield %m : f64
    } : (tensor<?x2x4xf64>, tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
    %j = arith.addi %i, %c1 : index
    scf.yield %b, %j : tensor<?x2x4xf64>, index
  })mlir"
              R"mlir(
  %sq = gnn.apply_nodes(%r#0) {
  ^bb0(%p: f64):
    %m = arith.mulf %p, %p : f64
    gnn.yield %m : f64
  } : (tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
  %l = gnn.sum_to %sq : tensor<?x2x4xf64> -> tensor<f64>
  return %l : tensor<f64>
)mlir",
          g, {random({5, 2, 4}), random({5, 2, 4}), random({5, 2, 4})});
  }
}

TEST_F(DifferentiateTest, WhileLoopsInCalleesAndInsideLoops) {
  // A function holding a while loop, called in straight-line code and from
  // the body of another while loop (whose iteration i runs the inner loop
  // i times, so the inner trip counts differ): the inner loops keep their
  // own tapes, inside the outer loop's backward.
  prelude = R"mlir(
func.func private @iterate(%x: tensor<?x2x4xf64>, %u: tensor<?x2x4xf64>,
                           %n: index) -> tensor<?x2x4xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.while (%s = %x, %i = %c0)
      : (tensor<?x2x4xf64>, index) -> (tensor<?x2x4xf64>, index) {
    %more = arith.cmpi ult, %i, %n : index
    scf.condition(%more) %s, %i : tensor<?x2x4xf64>, index
  } do {
  ^bb0(%s: tensor<?x2x4xf64>, %i: index):
    %b = gnn.apply_nodes(%s, %u) {
    ^bb0(%p: f64, %q: f64):
      %t = math.tanh %p : f64
      %m = arith.mulf %t, %q : f64
      gnn.yield %m : f64
    } : (tensor<?x2x4xf64>, tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
    %j = arith.addi %i, %c1 : index
    scf.yield %b, %j : tensor<?x2x4xf64>, index
  }
  return %r#0 : tensor<?x2x4xf64>
}
)mlir";
  Graph g = randomGraph(5, 5, /*everyDstReached=*/true);
  check("%x: tensor<?x2x4xf64>, %u: tensor<?x2x4xf64>, "
        "%w: tensor<?x2x4xf64>",
        R"mlir(
  %c3 = arith.constant 3 : index
  %y = func.call @iterate(%x, %u, %c3)
      : (tensor<?x2x4xf64>, tensor<?x2x4xf64>, index) -> tensor<?x2x4xf64>
  %r:2 = scf.while (%s = %y, %i = %c0)
      : (tensor<?x2x4xf64>, index) -> (tensor<?x2x4xf64>, index) {
    %more = arith.cmpi ult, %i, %c3 : index
    scf.condition(%more) %s, %i : tensor<?x2x4xf64>, index
  } do {
  ^bb0(%s: tensor<?x2x4xf64>, %i: index):
    %o = gnn.fused_attention %g, %s, %s, %w scale(0.6) normalize
        : (!gnn.graph<general>, tensor<?x2x4xf64>, tensor<?x2x4xf64>,
           tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
    %z = func.call @iterate(%o, %w, %i)
        : (tensor<?x2x4xf64>, tensor<?x2x4xf64>, index) -> tensor<?x2x4xf64>
    %j = arith.addi %i, %c1 : index
    scf.yield %z, %j : tensor<?x2x4xf64>, index
  }
  %sq = gnn.apply_nodes(%r#0) {
  ^bb0(%p: f64):
    %m = arith.mulf %p, %p : f64
    gnn.yield %m : f64
  } : (tensor<?x2x4xf64>) -> tensor<?x2x4xf64>
  %l = gnn.sum_to %sq : tensor<?x2x4xf64> -> tensor<f64>
  return %l : tensor<f64>
)mlir",
        g, {random({5, 2, 4}), random({5, 2, 4}), random({5, 2, 4})});
  prelude.clear();
}

TEST_F(DifferentiateTest, OpWithoutAdjointIsAnError) {
  std::string source = std::string("func.func @main(") + kGraphArgs + R"mlir(,
      %x: tensor<?x4xf32>) -> tensor<f32> {
  %y = gnn.apply_nodes(%x) {
  ^bb0(%e: f32):
    %r = math.cbrt %e : f32
    gnn.yield %r : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %l = gnn.sum_to %y : tensor<?x4xf32> -> tensor<f32>
  return %l : tensor<f32>
})mlir";
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context));
  ASSERT_TRUE(module);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  auto fn = module->lookupSymbol<func::FuncOp>("main");
  EXPECT_TRUE(failed(differentiateFunction(fn, {3}, "main_grad")));
  EXPECT_NE(message.find("'math.cbrt' op has no derivative"), std::string::npos)
      << message;
  // Nothing half-built is left behind.
  EXPECT_FALSE(module->lookupSymbol("main_grad"));
}
} // namespace
