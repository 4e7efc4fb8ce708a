//===- Dense.cpp - dense layers on OpenBLAS -------------------------------===//
//
// Part of gnnc's runtime.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dense.h"
#include "LinearShapes.h"
#include "gnnc/errors.h"

#include <cblas.h>

namespace {
using namespace gnnc;

void linear(const gnn_memref2d_f32 *input, const gnn_memref2d_f32 *weight,
            const gnn_memref1d_f32 *bias, gnn_memref2d_f32 *out) {
  Matrix x, w, y;
  bool dense = view(input, x) & view(weight, w) & view(out, y);
  if (!linearSizesFit(x, w, y, bias))
    return;
  if (y.rows == 0 || y.cols == 0)
    return;
  const float *b = bias ? bias->aligned + bias->offset : nullptr;
  int64_t bs = bias ? bias->strides[0] : 0;
  if (!dense) {
    // Strided views: a plain loop (lowered code never produces them today).
    for (int64_t n = 0; n < x.rows; ++n)
      for (int64_t o = 0; o < w.rows; ++o) {
        float acc = b ? b[o * bs] : 0.0f;
        for (int64_t i = 0; i < x.cols; ++i)
          acc += input->aligned[input->offset + n * input->strides[0] +
                                i * input->strides[1]] *
                 weight->aligned[weight->offset + o * weight->strides[0] +
                                 i * weight->strides[1]];
        out->aligned[out->offset + n * out->strides[0] + o * out->strides[1]] =
            acc;
      }
    return;
  }
  float beta = 0.0f;
  if (b) {
    for (int64_t n = 0; n < y.rows; ++n)
      for (int64_t o = 0; o < y.cols; ++o)
        y.data[n * y.ld + o] = b[o * bs];
    beta = 1.0f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(x.rows), int(w.rows),
              int(x.cols), 1.0f, x.data, int(x.ld), w.data, int(w.ld), beta,
              y.data, int(y.ld));
}

/// Element (i, j) of a memref matrix, any strides.
float &at(const gnn_memref2d_f32 *m, int64_t i, int64_t j) {
  return m->aligned[m->offset + i * m->strides[0] + j * m->strides[1]];
}

void gemm(const gnn_memref2d_f32 *a, const gnn_memref2d_f32 *b,
          gnn_memref2d_f32 *c, bool transposeB, float alpha, float beta) {
  Matrix x, y, z;
  bool dense = view(a, x) & view(b, y) & view(c, z);
  int64_t inner = transposeB ? y.cols : y.rows;
  int64_t cols = transposeB ? y.rows : y.cols;
  if (x.cols != inner)
    return gnn_rt_rows_mismatch(x.cols, inner, kItemSizeCode);
  if (z.rows != x.rows)
    return gnn_rt_rows_mismatch(z.rows, x.rows, kInputRowsCode);
  if (z.cols != cols)
    return gnn_rt_rows_mismatch(z.cols, cols, kItemSizeCode);
  if (z.rows == 0 || z.cols == 0)
    return;
  if (!dense) {
    // Strided views: a plain loop (lowered code never produces them today).
    for (int64_t i = 0; i < z.rows; ++i)
      for (int64_t j = 0; j < z.cols; ++j) {
        float acc = 0.0f;
        for (int64_t l = 0; l < inner; ++l)
          acc += at(a, i, l) * (transposeB ? at(b, j, l) : at(b, l, j));
        float &out = at(c, i, j);
        out = alpha * acc + (beta == 0.0f ? 0.0f : beta * out);
      }
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans,
              transposeB ? CblasTrans : CblasNoTrans, int(z.rows), int(z.cols),
              int(inner), alpha, x.data, int(x.ld), y.data, int(y.ld), beta,
              z.data, int(z.ld));
}
} // namespace

extern "C" void _mlir_ciface_gnn_rt_gemm(gnn_memref2d_f32 *a,
                                         gnn_memref2d_f32 *b,
                                         gnn_memref2d_f32 *c,
                                         int32_t transpose_b, float alpha,
                                         float beta) {
  gemm(a, b, c, transpose_b != 0, alpha, beta);
}

extern "C" void _mlir_ciface_gnn_rt_linear(gnn_memref2d_f32 *input,
                                           gnn_memref2d_f32 *weight,
                                           gnn_memref1d_f32 *bias,
                                           gnn_memref2d_f32 *out) {
  linear(input, weight, bias, out);
}

extern "C" void _mlir_ciface_gnn_rt_linear_nobias(gnn_memref2d_f32 *input,
                                                  gnn_memref2d_f32 *weight,
                                                  gnn_memref2d_f32 *out) {
  linear(input, weight, nullptr, out);
}

extern "C" void gnn_rt_set_dense_threads(int threads) {
  if (threads > 0)
    openblas_set_num_threads(threads);
}
