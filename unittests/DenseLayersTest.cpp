//===- DenseLayersTest.cpp - dense node-wise layers against naive loops ---===//
//
// Part of gnnc. gnn.linear (OpenBLAS through the runtime), gnn.layer_norm,
// its backward gnn.layer_norm_grad and gnn.log_softmax run JIT-compiled on
// random inputs of several shapes,
// zero rows included, and are compared with naive double-precision loops.
// Tolerance: |got - want| <= 1e-5 * max(1, |want|), plus, where a float
// dot product feeds the value, 1e-6 * sum |x_i w_i| (its rounding bound).
//
//===----------------------------------------------------------------------===//

#include "GNN/InitAll.h"
#include "GNN/Runner/JitRunner.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// y = linear(x, w, b); n = layer_norm(y, g, h); l = log_softmax(n), and
/// the linear layer without a bias.
constexpr const char *kProgram = R"mlir(
func.func @main(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %b: tensor<?xf32>,
                %g: tensor<?xf32>, %h: tensor<?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %y = gnn.linear %x, %w, %b : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %u = gnn.linear %x, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %n = gnn.layer_norm %y, %g, %h eps(1.0e-05) : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %l = gnn.log_softmax %n : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y, %u, %n, %l : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}
)mlir";

class DenseLayersTest : public ::testing::Test {
protected:
  DenseLayersTest() {
    DialectRegistry registry;
    gnn::registerAllDialectsAndExtensions(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(kProgram, ParserConfig(&context));
    EXPECT_TRUE(module);
    auto compiled = JitProgram::compile(std::move(module), "main", {}, {});
    if (!compiled)
      ADD_FAILURE() << llvm::toString(compiled.takeError());
    else
      program = std::move(*compiled);
  }

  HostTensor random(std::vector<int64_t> shape, float mean = 0.0f) {
    HostTensor t;
    t.shape = std::move(shape);
    t.allocate();
    std::normal_distribution<float> dist(mean, 1.0f);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.as<float>()[i] = dist(rng);
    return t;
  }

  static void expectNear(const HostTensor &got, const std::vector<double> &want,
                         const std::vector<double> &slack, const char *what) {
    ASSERT_EQ(got.numElements(), int64_t(want.size())) << what;
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_LE(std::fabs(got.as<float>()[i] - want[i]),
                1e-5 * std::max(1.0, std::fabs(want[i])) + slack[i])
          << what << " element " << i;
  }

  void check(int64_t rows, int64_t in, int64_t out) {
    SCOPED_TRACE("rows " + std::to_string(rows) + ", in " + std::to_string(in) +
                 ", out " + std::to_string(out));
    HostTensor x = random({rows, in}), w = random({out, in}), b = random({out}),
               g = random({out}, 1.0f), h = random({out});
    auto results = program->run({{nullptr, &x},
                                 {nullptr, &w},
                                 {nullptr, &b},
                                 {nullptr, &g},
                                 {nullptr, &h}});
    ASSERT_TRUE(bool(results)) << llvm::toString(results.takeError());
    std::vector<double> y(rows * out), u(rows * out), n(rows * out),
        l(rows * out), slack(rows * out);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t o = 0; o < out; ++o) {
        double acc = 0.0, magnitude = 0.0;
        for (int64_t i = 0; i < in; ++i) {
          double term =
              double(x.as<float>()[r * in + i]) * w.as<float>()[o * in + i];
          acc += term;
          magnitude += std::fabs(term);
        }
        u[r * out + o] = acc;
        slack[r * out + o] = 1e-6 * magnitude;
        y[r * out + o] = acc + b.as<float>()[o];
      }
      double mean = 0.0, var = 0.0;
      for (int64_t o = 0; o < out; ++o)
        mean += y[r * out + o] / double(out);
      for (int64_t o = 0; o < out; ++o)
        var += (y[r * out + o] - mean) * (y[r * out + o] - mean) / double(out);
      double max = -INFINITY, sum = 0.0;
      for (int64_t o = 0; o < out; ++o) {
        n[r * out + o] =
            (y[r * out + o] - mean) / std::sqrt(var + 1e-5) * g.as<float>()[o] +
            h.as<float>()[o];
        max = std::max(max, n[r * out + o]);
      }
      for (int64_t o = 0; o < out; ++o)
        sum += std::exp(n[r * out + o] - max);
      for (int64_t o = 0; o < out; ++o)
        l[r * out + o] = n[r * out + o] - max - std::log(sum);
    }
    // Normalized rows carry the dot products' rounding relative to the
    // row's spread; log_softmax adds its own.
    expectNear((*results)[0], y, slack, "linear");
    expectNear((*results)[1], u, slack, "linear without bias");
    std::vector<double> relative(rows * out);
    for (int64_t r = 0; r < rows; ++r) {
      double worst = 0.0, spread = 0.0, mean = 0.0;
      for (int64_t o = 0; o < out; ++o) {
        worst = std::max(worst, slack[r * out + o]);
        mean += y[r * out + o] / double(out);
      }
      for (int64_t o = 0; o < out; ++o)
        spread += (y[r * out + o] - mean) * (y[r * out + o] - mean);
      spread = std::sqrt(spread / double(out) + 1e-5);
      for (int64_t o = 0; o < out; ++o)
        relative[r * out + o] =
            4 * worst / spread * std::fabs(g.as<float>()[o]) + 1e-6;
    }
    expectNear((*results)[2], n, relative, "layer_norm");
    expectNear((*results)[3], l, relative, "log_softmax");
  }

  MLIRContext context;
  std::unique_ptr<JitProgram> program;
  std::mt19937 rng{7};
};

TEST_F(DenseLayersTest, MatchesNaiveLoops) {
  ASSERT_TRUE(program);
  for (auto [rows, in, out] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                               {7, 5, 3},
                               {300, 64, 29},
                               {33, 128, 512},
                               {2, 512, 128}})
    check(rows, in, out);
}

TEST_F(DenseLayersTest, ZeroRows) {
  ASSERT_TRUE(program);
  check(0, 8, 4);
}

TEST_F(DenseLayersTest, MismatchedSizesAreErrors) {
  ASSERT_TRUE(program);
  HostTensor x = random({4, 8}), w = random({3, 7}), b = random({3}),
             g = random({3}), h = random({3});
  auto results = program->run({{nullptr, &x},
                               {nullptr, &w},
                               {nullptr, &b},
                               {nullptr, &g},
                               {nullptr, &h}});
  ASSERT_FALSE(bool(results));
  EXPECT_NE(llvm::toString(results.takeError()).find("size 8"),
            std::string::npos);
  HostTensor w2 = random({3, 8}), g2 = random({5});
  results = program->run({{nullptr, &x},
                          {nullptr, &w2},
                          {nullptr, &b},
                          {nullptr, &g2},
                          {nullptr, &h}});
  ASSERT_FALSE(bool(results));
  EXPECT_NE(llvm::toString(results.takeError()).find("size 5"),
            std::string::npos);
}
} // namespace

/// layer_norm and log_softmax over rows of a static width: 8-wide pieces up
/// to the last whole one, then single elements (widths below 8: only
/// those); both match a double-precision reference.
TEST_F(DenseLayersTest, StaticWidthRows) {
  for (int64_t width : {3, 8, 12, 16, 29, 128, 136}) {
    SCOPED_TRACE("width " + std::to_string(width));
    std::string row = "tensor<?x" + std::to_string(width) + "xf32>";
    std::string vec = "tensor<" + std::to_string(width) + "xf32>";
    std::string source =
        "func.func @main(%y: " + row + ", %g: " + vec + ", %h: " + vec +
        ") -> (" + row + ", " + row +
        ") {\n  %n = gnn.layer_norm %y, %g, %h eps(1.0e-05) : (" + row + ", " +
        vec + ", " + vec + ") -> " + row + "\n  %l = gnn.log_softmax %n : (" +
        row + ") -> " + row + "\n  return %n, %l : " + row + ", " + row +
        "\n}\n";
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, ParserConfig(&context));
    ASSERT_TRUE(module);
    auto compiled = JitProgram::compile(std::move(module), "main", {}, {});
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    for (int64_t rows : {0, 1, 37}) {
      // Rows offset from zero: the variance is the difference of large sums.
      HostTensor y = random({rows, width}, 3.0f), g = random({width}, 1.0f),
                 h = random({width});
      auto results =
          (*compiled)->run({{nullptr, &y}, {nullptr, &g}, {nullptr, &h}});
      ASSERT_TRUE(bool(results)) << llvm::toString(results.takeError());
      std::vector<double> norm(rows * width), logProbs(rows * width),
          slack(rows * width, 1e-5);
      for (int64_t r = 0; r < rows; ++r) {
        const float *x = y.as<float>() + r * width;
        double *n = norm.data() + r * width;
        double mean = 0.0, var = 0.0, max = -INFINITY, sum = 0.0;
        for (int64_t i = 0; i < width; ++i)
          mean += x[i] / double(width);
        for (int64_t i = 0; i < width; ++i)
          var += (x[i] - mean) * (x[i] - mean) / double(width);
        for (int64_t i = 0; i < width; ++i) {
          n[i] = (x[i] - mean) / std::sqrt(var + 1e-5) * g.as<float>()[i] +
                 h.as<float>()[i];
          max = std::max(max, n[i]);
        }
        for (int64_t i = 0; i < width; ++i)
          sum += std::exp(n[i] - max);
        for (int64_t i = 0; i < width; ++i)
          logProbs[r * width + i] = n[i] - max - std::log(sum);
      }
      expectNear((*results)[0], norm, slack, "layer_norm");
      expectNear((*results)[1], logProbs, slack, "log_softmax");
    }
  }
}

/// layer_norm_grad against the backward of layer_norm in double precision,
/// for static widths (8-wide pieces, a tail, widths below 8) and a dynamic
/// one. Tolerance: 1e-5 * max(1, |want|) plus 1e-5 * r * max |dy * w| of
/// the row (the float sums of the row's terms, scaled by 1 / sigma).
TEST_F(DenseLayersTest, LayerNormGradMatchesDoubleBackward) {
  for (std::string width : {"3", "8", "29", "128", "136", "?"}) {
    SCOPED_TRACE("width " + width);
    int64_t n = width == "?" ? 20 : std::stoll(width);
    std::string row = "tensor<?x" + width + "xf32>";
    std::string vec = "tensor<" + width + "xf32>";
    std::string source = "func.func @main(%x: " + row + ", %w: " + vec +
                         ", %dy: " + row + ") -> (" + row + ", " + row +
                         ") {\n  %dx, %dxh = gnn.layer_norm_grad %x, %w, %dy "
                         "eps(1.0e-05) : (" +
                         row + ", " + vec + ", " + row + ") -> (" + row + ", " +
                         row + ")\n  return %dx, %dxh : " + row + ", " + row +
                         "\n}\n";
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, ParserConfig(&context));
    ASSERT_TRUE(module);
    auto compiled = JitProgram::compile(std::move(module), "main", {}, {});
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    for (int64_t rows : {0, 1, 37}) {
      HostTensor x = random({rows, n}, 3.0f), w = random({n}, 1.0f),
                 dy = random({rows, n});
      auto results =
          (*compiled)->run({{nullptr, &x}, {nullptr, &w}, {nullptr, &dy}});
      ASSERT_TRUE(bool(results)) << llvm::toString(results.takeError());
      std::vector<double> dx(rows * n), dxh(rows * n), slack(rows * n);
      for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x.as<float>() + r * n, *dyr = dy.as<float>() + r * n;
        double mean = 0.0, var = 0.0, meanG = 0.0, meanGX = 0.0, maxG = 0.0;
        for (int64_t i = 0; i < n; ++i)
          mean += xr[i] / double(n);
        for (int64_t i = 0; i < n; ++i)
          var += (xr[i] - mean) * (xr[i] - mean) / double(n);
        double inv = 1.0 / std::sqrt(var + 1e-5);
        std::vector<double> xh(n), g(n);
        for (int64_t i = 0; i < n; ++i) {
          xh[i] = (xr[i] - mean) * inv;
          g[i] = double(dyr[i]) * w.as<float>()[i];
          meanG += g[i] / double(n);
          meanGX += g[i] * xh[i] / double(n);
          maxG = std::max(maxG, std::fabs(g[i]));
        }
        for (int64_t i = 0; i < n; ++i) {
          dx[r * n + i] = inv * (g[i] - meanG - xh[i] * meanGX);
          dxh[r * n + i] = dyr[i] * xh[i];
          slack[r * n + i] = 1e-5 * inv * maxG;
        }
      }
      expectNear((*results)[0], dx, slack, "input gradient");
      expectNear((*results)[1], dxh, slack, "dy * xh");
    }
  }
}

/// A gradient whose rows or width differ from the input's is a run-time
/// error, not a read past its end.
TEST_F(DenseLayersTest, LayerNormGradSizesAreChecked) {
  const char *source = R"mlir(
func.func @main(%x: tensor<?x?xf32>, %w: tensor<?xf32>, %dy: tensor<?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %dx, %dxh = gnn.layer_norm_grad %x, %w, %dy eps(1.0e-05) : (tensor<?x?xf32>, tensor<?xf32>, tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>)
  return %dx, %dxh : tensor<?x?xf32>, tensor<?x?xf32>
}
)mlir";
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context));
  ASSERT_TRUE(module);
  auto compiled = JitProgram::compile(std::move(module), "main", {}, {});
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  HostTensor x = random({4, 6}), w = random({6});
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{3, 6}, std::vector<int64_t>{4, 5}}) {
    HostTensor dy = random(shape);
    auto results =
        (*compiled)->run({{nullptr, &x}, {nullptr, &w}, {nullptr, &dy}});
    EXPECT_FALSE(bool(results));
    if (!results)
      llvm::consumeError(results.takeError());
  }
  HostTensor shortWeight = random({5}), dy = random({4, 6});
  auto results = (*compiled)->run(
      {{nullptr, &x}, {nullptr, &shortWeight}, {nullptr, &dy}});
  EXPECT_FALSE(bool(results));
  if (!results)
    llvm::consumeError(results.takeError());
}
