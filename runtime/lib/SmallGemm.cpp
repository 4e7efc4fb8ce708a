//===- SmallGemm.cpp - small GEMMs on JIT-compiled kernels ----------------===//
//
// Part of gnnc's runtime. libxsmm's kernels are column-major: the row-major
// c = op(a) @ op(b) is the column-major c^T = op(b)^T @ op(a)^T, so b comes
// first and a transposed a (b) is libxsmm's transposed second (first)
// operand. libxsmm 1.17 compiles no kernel for a transposed first operand:
// b transposed is copied, transposed back, into a buffer first (a tile's
// keys or values, kilobytes against the product's millions of operations).
//
//===----------------------------------------------------------------------===//

#include "SmallGemm.h"

#include "gnnc/dense.h"

#include <libxsmm.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace {
struct Settings {
  bool enabled = true;
};

Settings load() {
  Settings s;
  const char *setting = std::getenv("GNNC_SMALL_GEMM");
  s.enabled = !(setting && std::strcmp(setting, "off") == 0);
  if (s.enabled)
    libxsmm_init();
  return s;
}

const Settings &settings() {
  static const Settings s = load();
  return s;
}

// Read and initialized with the runtime, while the process has one thread.
[[gnu::constructor]] void loadWithTheRuntime() { (void)settings(); }
} // namespace

bool gnnc::smallGemm(const Matrix &a, const Matrix &b, const Matrix &c,
                     bool transposeA, bool transposeB, float alpha,
                     float beta) {
  int64_t inner = transposeA ? a.rows : a.cols;
  if (!settings().enabled || alpha != 1.0f || (beta != 0.0f && beta != 1.0f) ||
      c.rows > kSmallGemmMaxSide || c.cols > kSmallGemmMaxSide ||
      inner > kSmallGemmMaxSide || c.rows % kSmallGemmQuantum ||
      c.cols % kSmallGemmQuantum || inner % kSmallGemmQuantum)
    return false;
  libxsmm_blasint m = c.cols, n = c.rows, k = inner;
  libxsmm_blasint ldb = b.ld, lda = a.ld, ldc = c.ld;
  int flags = transposeA ? LIBXSMM_GEMM_FLAG_TRANS_B : 0;
  int prefetch = LIBXSMM_PREFETCH_NONE;
  libxsmm_smmfunction kernel =
      libxsmm_smmdispatch(m, n, k, transposeB ? &m : &ldb, &lda, &ldc, &alpha,
                          &beta, &flags, &prefetch);
  if (!kernel)
    return false;
  if (!transposeB) {
    kernel(b.data, a.data, c.data);
    return true;
  }
  // b is [c.cols, inner]; the kernel reads its transpose, [inner, c.cols]
  // (on the stack up to a tile of 256 keys of 64).
  constexpr size_t kOnStack = 256 * 64;
  alignas(64) float onStack[kOnStack];
  std::unique_ptr<float[]> onHeap;
  float *bT = onStack;
  if (size_t(k) * size_t(m) > kOnStack) {
    onHeap.reset(new (std::nothrow) float[size_t(k) * size_t(m)]);
    if (!(bT = onHeap.get()))
      return false;
  }
  transpose(b, {bT, k, m, m});
  kernel(bT, a.data, c.data);
  return true;
}

void gnnc::transpose(const Matrix &in, const Matrix &out) {
  if (in.rows == 0 || in.cols == 0)
    return;
  // Row-major `in` is column-major cols x rows; so is `out`, rows x cols.
  libxsmm_otrans(out.data, in.data, sizeof(float), in.cols, in.rows, in.ld,
                 out.ld);
}

extern "C" const char *gnn_rt_small_gemm_target(void) {
  return settings().enabled ? libxsmm_get_target_arch() : nullptr;
}
