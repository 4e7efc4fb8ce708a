//===- GemmTest.cpp - the runtime's GEMM against naive loops --------------===//
//
// Part of gnnc. gnn_rt_gemm on views like those the attention tiles pass
// (rows of a wider buffer, one column, one row, no rows), strided views
// (the plain-loop path) and mismatched sizes, on both of its paths: small
// kernels (alpha 1, beta 0 or 1, sides up to 512; dense layers' in blocks
// of rows) and OpenBLAS. Tolerance: 1e-5 * (1 + sum of |terms|).
//
//===----------------------------------------------------------------------===//

#include "gnnc/dense.h"
#include "gnnc/errors.h"
#include "gnnc/runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <initializer_list>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {
/// The context of the program the products run for: their reports of sizes
/// that do not fit go there.
gnn_rt_context *program() {
  static gnn_rt_context *context = gnn_rt_context_create();
  return context;
}

int takeProgramError(char *err, size_t size) {
  return gnn_rt_context_take_error(program(), err, size);
}

/// A rows x cols view into `storage` with the given strides and offset.
gnn_memref2d_f32 view(std::vector<float> &storage, int64_t offset, int64_t rows,
                      int64_t cols, int64_t rowStride, int64_t colStride = 1) {
  return {storage.data(),
          storage.data(),
          offset,
          {rows, cols},
          {rowStride, colStride}};
}

float at(const gnn_memref2d_f32 &m, int64_t i, int64_t j) {
  return m.aligned[m.offset + i * m.strides[0] + j * m.strides[1]];
}

struct Case {
  int64_t m, n, k;
  bool transposeA, transposeB;
  /// Extra row stride beyond the width (views into wider buffers), and a
  /// column stride of 2 for the strided path.
  int64_t pad;
  bool strided;
  float alpha = 0.5f, beta = 1.0f;
  /// Passed as a dense layer's product (GNN_GEMM_LAYER).
  bool layer = false;
};

void runCase(const Case &c, std::mt19937 &rng) {
  SCOPED_TRACE(
      "m " + std::to_string(c.m) + ", n " + std::to_string(c.n) + ", k " +
      std::to_string(c.k) + (c.transposeA ? ", a transposed" : "") +
      (c.transposeB ? ", b transposed" : "") + (c.strided ? ", strided" : "") +
      (c.layer ? ", layer" : "") + ", alpha " + std::to_string(c.alpha) +
      ", beta " + std::to_string(c.beta));
  int64_t cs = c.strided ? 2 : 1;
  auto make = [&](int64_t rows, int64_t cols, std::vector<float> &storage) {
    int64_t stride = cols * cs + c.pad;
    storage.assign(size_t(3 + std::max<int64_t>(rows, 1) * stride), 0.0f);
    std::normal_distribution<float> dist;
    for (float &x : storage)
      x = dist(rng);
    return view(storage, 3, rows, cols, stride, cs);
  };
  std::vector<float> as, bs, cStore;
  gnn_memref2d_f32 a = c.transposeA ? make(c.k, c.m, as) : make(c.m, c.k, as);
  gnn_memref2d_f32 b = c.transposeB ? make(c.n, c.k, bs) : make(c.k, c.n, bs);
  gnn_memref2d_f32 out = make(c.m, c.n, cStore);
  // beta 0 overwrites c whatever it held, NaN included.
  if (c.beta == 0.0f)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j)
        cStore[out.offset + i * out.strides[0] + j * out.strides[1]] = NAN;
  std::vector<float> before = cStore;
  gnn_memref2d_f32 old =
      view(before, out.offset, c.m, c.n, out.strides[0], out.strides[1]);
  int32_t flags = (c.transposeA ? GNN_GEMM_TRANSPOSE_A : 0) |
                  (c.transposeB ? GNN_GEMM_TRANSPOSE_B : 0) |
                  (c.layer ? GNN_GEMM_LAYER : 0);
  _mlir_ciface_gnn_rt_gemm(program(), &a, &b, &out, flags, c.alpha, c.beta);
  ASSERT_EQ(takeProgramError(nullptr, 0), 0);
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double want = c.beta == 0.0f ? 0.0 : c.beta * at(old, i, j),
             magnitude = std::fabs(want);
      for (int64_t l = 0; l < c.k; ++l) {
        double term = c.alpha *
                      double(c.transposeA ? at(a, l, i) : at(a, i, l)) *
                      (c.transposeB ? at(b, j, l) : at(b, l, j));
        want += term;
        magnitude += std::fabs(term);
      }
      ASSERT_NEAR(at(out, i, j), want, 1e-5 * (1 + magnitude))
          << "element " << i << ", " << j;
    }
  // Nothing outside the view is written.
  for (size_t i = 0; i < cStore.size(); ++i) {
    int64_t rel = int64_t(i) - out.offset;
    bool inside =
        rel >= 0 && c.m > 0 && c.n > 0 && rel / out.strides[0] < c.m &&
        rel % out.strides[0] < c.n * cs && (rel % out.strides[0]) % cs == 0;
    if (!inside) {
      ASSERT_EQ(cStore[i], before[i]) << "outside the view at " << i;
    }
  }
}

TEST(RuntimeGemm, MatchesNaiveLoops) {
  std::mt19937 rng(11);
  for (bool transposeA : {false, true})
    for (bool transposeB : {true, false})
      for (bool strided : {false, true})
        for (Case c : {Case{64, 128, 64, false, false, 448, false},
                       Case{37, 1, 16, false, false, 127, false},
                       Case{1, 1, 1, false, false, 5, false},
                       Case{1, 70, 9, false, false, 0, false},
                       Case{5, 3, 0, false, false, 2, false},
                       Case{0, 4, 3, false, false, 0, false},
                       Case{20, 8, 129, false, false, 0, false}}) {
          c.transposeA = transposeA;
          c.transposeB = transposeB;
          c.strided = strided;
          runCase(c, rng);
        }
}

/// Every case with both operands transposed or not, alpha 1 and beta 0 or
/// 1 (what the kernels take), as a dense layer's product with `layer`.
void runKernelCases(std::initializer_list<Case> cases, bool layer,
                    std::mt19937 &rng) {
  for (bool transposeA : {false, true})
    for (bool transposeB : {true, false})
      for (float beta : {0.0f, 1.0f})
        for (Case c : cases) {
          c.transposeA = transposeA;
          c.transposeB = transposeB;
          c.alpha = 1.0f;
          c.beta = beta;
          c.layer = layer;
          runCase(c, rng);
        }
}

// The shapes of the attention tiles (64 destinations against 128 or 256
// sources, heads of 64 or 32, inside wider rows of all heads), small
// multiples of 8, sizes that are not (OpenBLAS's) and sides past the small
// kernels' bound, with the alphas and betas the tiles pass.
TEST(RuntimeGemm, SmallKernelsMatchNaiveLoops) {
  std::mt19937 rng(12);
  runKernelCases({Case{64, 256, 64, false, false, 448, false},
                  Case{64, 64, 256, false, false, 0, false},
                  Case{256, 64, 64, false, false, 192, false},
                  Case{64, 128, 32, false, false, 224, false},
                  Case{8, 16, 24, false, false, 5, false},
                  Case{40, 8, 48, false, false, 0, false},
                  Case{13, 29, 7, false, false, 3, false},
                  Case{1, 17, 33, false, false, 0, false},
                  Case{33, 1, 5, false, false, 0, false},
                  Case{40, 513, 8, false, false, 0, false},
                  Case{3, 4, 600, false, false, 0, false}},
                 /*layer=*/false, rng);
}

// Dense layers' products: rows in blocks of 64 (op(a) = a) or summed 128
// at a time (op(a) = transpose(a)), with a last partial block or none, a
// single row or block, widths that are not multiples of 8 (a vocabulary of
// 29), and layers past the kernels' 256 (OpenBLAS's).
TEST(RuntimeGemm, LayerKernelsMatchNaiveLoops) {
  std::mt19937 rng(13);
  runKernelCases({Case{200, 128, 128, false, false, 0, false},
                  Case{65, 29, 128, false, false, 3, false},
                  Case{64, 128, 29, false, false, 0, false},
                  Case{63, 256, 256, false, false, 0, false},
                  Case{1, 128, 128, false, false, 0, false},
                  Case{128, 128, 300, false, false, 0, false},
                  Case{29, 128, 129, false, false, 5, false},
                  Case{128, 29, 127, false, false, 0, false},
                  Case{16, 16, 1, false, false, 0, false},
                  Case{130, 257, 16, false, false, 0, false},
                  Case{40, 8, 300, false, false, 0, false}},
                 /*layer=*/true, rng);
}

// gnn_rt_linear (x Wᵀ + b): rows in blocks of 64 and a partial block,
// widths on libxsmm (up to 256, not multiples of 8 included) and past it
// (OpenBLAS), with and without a bias, and a column-strided input (the
// plain loop).
TEST(RuntimeLinear, MatchesNaiveLoops) {
  std::mt19937 rng(14);
  std::normal_distribution<float> dist;
  struct Shape {
    int64_t rows, in, out;
  };
  for (Shape shape : {Shape{200, 128, 128}, Shape{65, 128, 29},
                      Shape{1, 29, 256}, Shape{70, 300, 16}, Shape{3, 16, 257}})
    for (bool withBias : {false, true})
      for (int64_t colStride : {1, 2}) {
        SCOPED_TRACE(std::to_string(shape.rows) + " x " +
                     std::to_string(shape.in) + " -> " +
                     std::to_string(shape.out) + (withBias ? ", bias" : "") +
                     (colStride > 1 ? ", strided input" : ""));
        std::vector<float> xs(shape.rows * shape.in * colStride),
            ws(shape.out * shape.in), bs(shape.out),
            ys(shape.rows * shape.out, NAN);
        for (std::vector<float> *v : {&xs, &ws, &bs})
          for (float &e : *v)
            e = dist(rng);
        gnn_memref2d_f32 x = view(xs, 0, shape.rows, shape.in,
                                  shape.in * colStride, colStride),
                         w = view(ws, 0, shape.out, shape.in, shape.in),
                         y = view(ys, 0, shape.rows, shape.out, shape.out);
        gnn_memref1d_f32 bias = {bs.data(), bs.data(), 0, {shape.out}, {1}};
        if (withBias)
          _mlir_ciface_gnn_rt_linear(program(), &x, &w, &bias, &y);
        else
          _mlir_ciface_gnn_rt_linear_nobias(program(), &x, &w, &y);
        ASSERT_EQ(takeProgramError(nullptr, 0), 0);
        for (int64_t n = 0; n < shape.rows; ++n)
          for (int64_t o = 0; o < shape.out; ++o) {
            double want = withBias ? bs[o] : 0.0, magnitude = std::fabs(want);
            for (int64_t i = 0; i < shape.in; ++i) {
              double term = double(at(x, n, i)) * ws[o * shape.in + i];
              want += term;
              magnitude += std::fabs(term);
            }
            ASSERT_NEAR(ys[n * shape.out + o], want, 1e-5 * (1 + magnitude))
                << "element " << n << ", " << o;
          }
      }
}

// Where libxsmm compiles kernels for this CPU's vector units, the runtime
// uses them, unless the runtime instance's settings turn them off.
TEST(RuntimeGemm, SmallKernelsTargetTheCpusVectorUnits) {
  gnn_rt_settings settings;
  gnn_rt_settings_init(&settings);
  settings.small_gemm = 0;
  gnn_rt_runtime *openBlasOnly = gnn_rt_runtime_create(&settings);
  ASSERT_NE(openBlasOnly, nullptr);
  EXPECT_EQ(gnn_rt_small_gemm_target(openBlasOnly), nullptr);
  gnn_rt_runtime_destroy(openBlasOnly);
  const char *target = gnn_rt_small_gemm_target(nullptr);
  ASSERT_NE(target, nullptr);
#if defined(__x86_64__)
  // libxsmm's names: skx, clx, cpx (AVX-512 Xeons, and AMD's Zen 4 with
  // AVX-512), knl, knm (Xeon Phi), hsw (AVX2).
  __builtin_cpu_init();
  std::string arch = target;
  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_TRUE(arch == "skx" || arch == "clx" || arch == "cpx" ||
                arch == "knl" || arch == "knm")
        << arch;
  } else if (__builtin_cpu_supports("avx2")) {
    EXPECT_EQ(arch, "hsw");
  }
#endif
}

// An instance without small kernels multiplies on OpenBLAS alone: the same
// products within float rounding, while another instance's calls keep
// theirs.
TEST(RuntimeGemm, AnInstanceWithoutSmallKernelsGivesTheSameProducts) {
  gnn_rt_settings settings;
  gnn_rt_settings_init(&settings);
  settings.small_gemm = 0;
  gnn_rt_runtime *openBlasOnly = gnn_rt_runtime_create(&settings);
  ASSERT_NE(openBlasOnly, nullptr);
  gnn_rt_context *plain = gnn_rt_context_create_in(openBlasOnly),
                 *small = gnn_rt_context_create();
  std::mt19937 rng(5);
  std::normal_distribution<float> dist;
  for (int64_t n : {8, 64, 128}) {
    std::vector<float> as(n * n), bs(n * n), c1(n * n), c2(n * n);
    for (float &v : as)
      v = dist(rng);
    for (float &v : bs)
      v = dist(rng);
    gnn_memref2d_f32 a = view(as, 0, n, n, n), b = view(bs, 0, n, n, n),
                     x = view(c1, 0, n, n, n), y = view(c2, 0, n, n, n);
    _mlir_ciface_gnn_rt_gemm(small, &a, &b, &x, GNN_GEMM_TRANSPOSE_B, 1.0f,
                             0.0f);
    _mlir_ciface_gnn_rt_gemm(plain, &a, &b, &y, GNN_GEMM_TRANSPOSE_B, 1.0f,
                             0.0f);
    EXPECT_EQ(gnn_rt_context_take_error(small, nullptr, 0), 0);
    EXPECT_EQ(gnn_rt_context_take_error(plain, nullptr, 0), 0);
    for (int64_t i = 0; i < n * n; ++i)
      ASSERT_NEAR(c1[i], c2[i], 1e-4f * (1.0f + std::fabs(c1[i]))) << n;
  }
  gnn_rt_context_destroy(plain);
  gnn_rt_context_destroy(small);
  gnn_rt_runtime_destroy(openBlasOnly);
}

// gnn_rt_transpose on dense views into wider buffers (libxsmm) and on
// strided ones (a loop); nothing outside the output view is written.
TEST(RuntimeGemm, TransposeMatchesItsDefinition) {
  std::mt19937 rng(13);
  std::normal_distribution<float> dist;
  for (int64_t colStride : {1, 2})
    for (auto [rows, cols, pad] : {std::tuple{256, 64, 448},
                                   {64, 40, 0},
                                   {17, 1, 3},
                                   {1, 33, 0},
                                   {0, 5, 0},
                                   {130, 160, 96}}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols) +
                   ", column stride " + std::to_string(colStride));
      int64_t inStride = cols * colStride + pad, outStride = rows + 5;
      std::vector<float> in(size_t(2 + std::max<int64_t>(rows, 1) * inStride)),
          out(size_t(1 + std::max<int64_t>(cols, 1) * outStride), -7.0f);
      for (float &x : in)
        x = dist(rng);
      gnn_memref2d_f32 a = view(in, 2, rows, cols, inStride, colStride),
                       t = view(out, 1, cols, rows, outStride);
      _mlir_ciface_gnn_rt_transpose(program(), &a, &t);
      ASSERT_EQ(takeProgramError(nullptr, 0), 0);
      for (int64_t i = 0; i < cols; ++i)
        for (int64_t j = 0; j < outStride; ++j) {
          float got = out[1 + i * outStride + j];
          if (j < rows) {
            ASSERT_EQ(got, at(a, j, i)) << i << ", " << j;
          } else {
            ASSERT_EQ(got, -7.0f) << "outside the view at " << i << ", " << j;
          }
        }
    }
  // Sizes that do not fit are reported; out is left alone.
  std::vector<float> in(12, 1.0f), out(12, 7.0f);
  gnn_memref2d_f32 a = view(in, 0, 3, 4, 4), t = view(out, 0, 3, 4, 4);
  _mlir_ciface_gnn_rt_transpose(program(), &a, &t);
  ASSERT_NE(takeProgramError(nullptr, 0), 0);
  for (float x : out)
    EXPECT_EQ(x, 7.0f);
}

TEST(RuntimeGemm, MismatchedSizesAreReported) {
  std::vector<float> as(64, 1.0f), bs(64, 1.0f), cs(64, 7.0f);
  gnn_memref2d_f32 a = view(as, 0, 4, 3, 3), b = view(bs, 0, 5, 2, 2),
                   c = view(cs, 0, 4, 5, 5);
  // a is 4 x 3 but b^T has 2 rows.
  _mlir_ciface_gnn_rt_gemm(program(), &a, &b, &c, 1, 1.0f, 0.0f);
  char err[256];
  ASSERT_NE(takeProgramError(err, sizeof(err)), 0);
  EXPECT_NE(std::string(err).find("size 2"), std::string::npos) << err;
  EXPECT_NE(std::string(err).find("needs 3"), std::string::npos) << err;
  for (float x : cs)
    EXPECT_EQ(x, 7.0f);
  // c has the wrong number of columns.
  gnn_memref2d_f32 b2 = view(bs, 0, 6, 3, 3);
  _mlir_ciface_gnn_rt_gemm(program(), &a, &b2, &c, 1, 1.0f, 0.0f);
  ASSERT_NE(takeProgramError(err, sizeof(err)), 0);
  for (float x : cs)
    EXPECT_EQ(x, 7.0f);
}

TEST(RuntimeGemm, ReportsGoToTheCallersContextAlone) {
  // Two programs' contexts and the process-wide one: a product's mismatch
  // is its caller's error, not another program's and not the process's.
  std::vector<float> as(64, 1.0f), bs(64, 1.0f), cs(64, 7.0f);
  gnn_memref2d_f32 a = view(as, 0, 4, 3, 3), b = view(bs, 0, 5, 2, 2),
                   c = view(cs, 0, 4, 5, 5);
  gnn_rt_context *mine = gnn_rt_context_create(),
                 *other = gnn_rt_context_create();
  ASSERT_TRUE(mine && other);
  (void)gnn_rt_take_error(nullptr, 0);
  char err[256];
  auto onlyMineFailed = [&] {
    EXPECT_NE(gnn_rt_context_take_error(mine, err, sizeof(err)), 0);
    EXPECT_EQ(gnn_rt_context_take_error(other, nullptr, 0), 0);
    EXPECT_EQ(gnn_rt_take_error(nullptr, 0), 0);
  };
  _mlir_ciface_gnn_rt_gemm(mine, &a, &b, &c, GNN_GEMM_TRANSPOSE_B, 1.0f, 0.0f);
  onlyMineFailed();
  _mlir_ciface_gnn_rt_gemm_at(mine, &a, &b, &c, 1.0f, 0.0f);
  onlyMineFailed();
  _mlir_ciface_gnn_rt_linear_nobias(mine, &a, &b, &c);
  onlyMineFailed();
  std::vector<float> bias(2, 0.0f);
  gnn_memref1d_f32 biasView = {bias.data(), bias.data(), 0, {2}, {1}};
  _mlir_ciface_gnn_rt_linear(mine, &a, &b, &biasView, &c);
  onlyMineFailed();
  _mlir_ciface_gnn_rt_transpose(mine, &a, &c);
  onlyMineFailed();
  for (float x : cs)
    EXPECT_EQ(x, 7.0f);
  gnn_rt_context_destroy(mine);
  gnn_rt_context_destroy(other);
}

TEST(RuntimeGemm, TransposedLeftSumsOuterProductsOfRows) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t rows : {0, 1, 7, 300}) {
    const int64_t p = 5, q = 3;
    std::vector<float> as(rows * p), bs(rows * q), cs(p * q, 9.0f);
    for (float &x : as)
      x = dist(rng);
    for (float &x : bs)
      x = dist(rng);
    gnn_memref2d_f32 a = view(as, 0, rows, p, p), b = view(bs, 0, rows, q, q),
                     c = view(cs, 0, p, q, q);
    _mlir_ciface_gnn_rt_gemm_at(program(), &a, &b, &c, 2.0f, 0.5f);
    for (int64_t i = 0; i < p; ++i)
      for (int64_t j = 0; j < q; ++j) {
        double want = 0.5 * 9.0;
        for (int64_t n = 0; n < rows; ++n)
          want += 2.0 * as[n * p + i] * bs[n * q + j];
        EXPECT_NEAR(cs[i * q + j], want, 1e-4 * std::max(1.0, std::abs(want)))
            << rows << " rows, (" << i << ", " << j << ")";
      }
  }
  // Rows that differ are reported; c is left alone.
  std::vector<float> as(12, 1.0f), bs(12, 1.0f), cs(6, 7.0f);
  gnn_memref2d_f32 a = view(as, 0, 4, 3, 3), b = view(bs, 0, 6, 2, 2),
                   c = view(cs, 0, 3, 2, 2);
  _mlir_ciface_gnn_rt_gemm_at(program(), &a, &b, &c, 1.0f, 0.0f);
  char err[256];
  ASSERT_NE(takeProgramError(err, sizeof(err)), 0);
  for (float x : cs)
    EXPECT_EQ(x, 7.0f);
}
} // namespace
