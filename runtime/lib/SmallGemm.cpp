//===- SmallGemm.cpp - small GEMMs on JIT-compiled kernels ----------------===//
//
// Part of gnnc's runtime. libxsmm's kernels are column-major: the row-major
// c = op(a) @ op(b) is the column-major c^T = op(b)^T @ op(a)^T, so b comes
// first and a transposed a (b) is libxsmm's transposed second (first)
// operand. libxsmm 1.17 compiles no kernel for a transposed first operand:
// b transposed is copied, transposed back, into a buffer first (a tile's
// keys or values, or a layer's weight: kilobytes against the product's
// millions of operations). A dense layer's rows (or, for its weight
// gradient, the rows it sums over) go in fixed blocks, so that the kernels
// compiled depend on the layer's widths, not on the batch.
//
//===----------------------------------------------------------------------===//

#include "SmallGemm.h"

#include "gnnc/dense.h"
#include "gnnc/runtime.h"

#include <libxsmm.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace {
// Initialized with the runtime, while the process has one thread.
[[gnu::constructor]] void loadWithTheRuntime() { libxsmm_init(); }

/// b as the kernels read it: where it lies, or transposed into a buffer of
/// its own (on the stack up to kOnStack floats, else on the heap).
class RightOperand {
public:
  static constexpr size_t kOnStack = 256 * 64;

  /// False if the heap has no room for the transposed copy.
  bool take(const gnnc::Matrix &b, bool transposed) {
    if (!transposed) {
      data = b.data;
      ld = b.ld;
      return true;
    }
    size_t size = size_t(b.rows) * size_t(b.cols);
    float *copy = onStack;
    if (size > kOnStack) {
      onHeap.reset(new (std::nothrow) float[size]);
      if (!(copy = onHeap.get()))
        return false;
    }
    gnnc::transpose(b, {copy, b.cols, b.rows, b.rows});
    data = copy;
    ld = b.rows;
    return true;
  }
  const float *data = nullptr;
  int64_t ld = 0;

private:
  alignas(64) float onStack[kOnStack];
  std::unique_ptr<float[]> onHeap;
};

bool kernelApplies(float alpha, float beta) {
  return alpha == 1.0f && (beta == 0.0f || beta == 1.0f);
}

/// The row-major c[rows x cols] = op(a)[rows x k] @ b[k x cols] + beta * c
/// kernel, op(a) = transpose(a) with `transposeA`; null if none.
libxsmm_smmfunction kernelFor(int64_t rows, int64_t cols, int64_t k,
                              int64_t lda, int64_t ldb, int64_t ldc,
                              bool transposeA, float beta) {
  libxsmm_blasint m = cols, n = rows, kk = k;
  libxsmm_blasint la = lda, lb = ldb, lc = ldc;
  int flags = transposeA ? LIBXSMM_GEMM_FLAG_TRANS_B : 0;
  int prefetch = LIBXSMM_PREFETCH_NONE;
  float alpha = 1.0f;
  return libxsmm_smmdispatch(m, n, kk, &lb, &la, &lc, &alpha, &beta, &flags,
                             &prefetch);
}
} // namespace

bool gnnc::smallGemm(const Matrix &a, const Matrix &b, const Matrix &c,
                     bool transposeA, bool transposeB, float alpha,
                     float beta) {
  int64_t inner = transposeA ? a.rows : a.cols;
  if (!kernelApplies(alpha, beta) || c.rows > kSmallGemmMaxSide ||
      c.cols > kSmallGemmMaxSide || inner > kSmallGemmMaxSide ||
      c.rows % kSmallGemmQuantum || c.cols % kSmallGemmQuantum ||
      inner % kSmallGemmQuantum)
    return false;
  RightOperand right;
  if (!right.take(b, transposeB))
    return false;
  libxsmm_smmfunction kernel =
      kernelFor(c.rows, c.cols, inner, a.ld, right.ld, c.ld, transposeA, beta);
  if (!kernel)
    return false;
  kernel(right.data, a.data, c.data);
  return true;
}

bool gnnc::layerGemm(const Matrix &a, const Matrix &b, const Matrix &c,
                     bool transposeA, bool transposeB, float alpha,
                     float beta) {
  int64_t inner = transposeA ? a.rows : a.cols;
  if (!kernelApplies(alpha, beta) || (transposeA && transposeB) ||
      c.rows == 0 || c.cols == 0 || inner == 0)
    return false;
  if (transposeA) {
    // c += a[i:i+k]^T b[i:i+k] for blocks of kLayerInner rows of a and b,
    // the first with c's own beta.
    if (c.rows > kLayerMaxWidth || c.cols > kLayerMaxWidth)
      return false;
    int64_t last = (inner - 1) % kLayerInner + 1;
    auto kernel = [&](int64_t k, float kBeta) {
      return kernelFor(c.rows, c.cols, k, a.ld, b.ld, c.ld, true, kBeta);
    };
    bool several = inner > kLayerInner;
    libxsmm_smmfunction first = kernel(std::min(inner, kLayerInner), beta),
                        full = several ? kernel(kLayerInner, 1.0f) : nullptr,
                        tail = several ? kernel(last, 1.0f) : nullptr;
    if (!first || (several && (!full || !tail)))
      return false;
    for (int64_t i = 0; i < inner; i += kLayerInner) {
      libxsmm_smmfunction f = i == 0                     ? first
                              : i + kLayerInner <= inner ? full
                                                         : tail;
      f(b.data + i * b.ld, a.data + i * a.ld, c.data);
    }
    return true;
  }
  // c[i:i+r] = a[i:i+r] @ op(b) for blocks of kLayerRows rows.
  if (c.cols > kLayerMaxWidth || inner > kLayerMaxWidth)
    return false;
  RightOperand right;
  if (!right.take(b, transposeB))
    return false;
  int64_t last = (c.rows - 1) % kLayerRows + 1;
  auto kernel = [&](int64_t rows) {
    return kernelFor(rows, c.cols, inner, a.ld, right.ld, c.ld, false, beta);
  };
  libxsmm_smmfunction full =
                          c.rows >= kLayerRows ? kernel(kLayerRows) : nullptr,
                      tail = kernel(last);
  if (!tail || (c.rows >= kLayerRows && !full))
    return false;
  for (int64_t i = 0; i < c.rows; i += kLayerRows)
    (i + kLayerRows <= c.rows ? full : tail)(right.data, a.data + i * a.ld,
                                             c.data + i * c.ld);
  return true;
}

void gnnc::transpose(const Matrix &in, const Matrix &out) {
  if (in.rows == 0 || in.cols == 0)
    return;
  // Row-major `in` is column-major cols x rows; so is `out`, rows x cols.
  libxsmm_otrans(out.data, in.data, sizeof(float), in.cols, in.rows, in.ld,
                 out.ld);
}

extern "C" const char *gnn_rt_small_gemm_target(const gnn_rt_runtime *runtime) {
  gnn_rt_settings settings;
  gnn_rt_runtime_settings(runtime, &settings);
  return settings.small_gemm ? libxsmm_get_target_arch() : nullptr;
}
