//===- Dense.cpp - dense layers on OpenBLAS -------------------------------===//
//
// Part of gnnc's runtime.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dense.h"
#include "Blas.h"
#include "DenseProfile.h"
#include "LinearShapes.h"
#include "RuntimeInstance.h"
#include "SmallGemm.h"
#include "gnnc/errors.h"

namespace {
using namespace gnnc;

/// Whether the run's instance lets products go to libxsmm's kernels.
bool smallKernels(gnn_rt_context *context) {
  return runtimeOf(context).settings.small_gemm != 0;
}

/// Element (i, j) of a memref matrix, any strides.
float &at(const gnn_memref2d_f32 *m, int64_t i, int64_t j) {
  return m->aligned[m->offset + i * m->strides[0] + j * m->strides[1]];
}

/// c = alpha * op(a) @ op(b) + beta * c for sizes that fit: one OpenBLAS
/// sgemm for row-major views, a plain loop for strided ones (lowered code
/// never produces them today).
void multiply(gnn_rt_context *context, const gnn_memref2d_f32 *a,
              const gnn_memref2d_f32 *b, gnn_memref2d_f32 *c, bool transposeB,
              float alpha, float beta, bool transposeA = false) {
  Matrix x, y, z;
  bool dense = view(a, x) & view(b, y) & view(c, z);
  int64_t inner = transposeA ? x.rows : x.cols;
  if (dense) {
    const Blas *api = blas(context);
    if (!api)
      return;
    api->sgemm(CblasRowMajor, transposeA ? CblasTrans : CblasNoTrans,
               transposeB ? CblasTrans : CblasNoTrans, int(z.rows), int(z.cols),
               int(inner), alpha, x.data, int(x.ld), y.data, int(y.ld), beta,
               z.data, int(z.ld));
    return;
  }
  for (int64_t i = 0; i < z.rows; ++i)
    for (int64_t j = 0; j < z.cols; ++j) {
      float acc = 0.0f;
      for (int64_t l = 0; l < inner; ++l)
        acc += (transposeA ? at(a, l, i) : at(a, i, l)) *
               (transposeB ? at(b, j, l) : at(b, l, j));
      float &out = at(c, i, j);
      out = alpha * acc + (beta == 0.0f ? 0.0f : beta * out);
    }
}

void linear(gnn_rt_context *context, const gnn_memref2d_f32 *input,
            const gnn_memref2d_f32 *weight, const gnn_memref1d_f32 *bias,
            gnn_memref2d_f32 *out) {
  Matrix x, w, y;
  bool dense = view(input, x) & view(weight, w) & view(out, y);
  if (!linearSizesFit(context, x, w, y, bias))
    return;
  if (y.rows == 0 || y.cols == 0)
    return;
  dense_profile::Product timed(dense_profile::Kind::Layer,
                               /*transposeA=*/false, /*transposeB=*/true,
                               y.rows, y.cols, x.cols);
  // The bias goes into out first, which the product then adds to.
  float beta = 0.0f;
  if (bias) {
    const float *b = bias->aligned + bias->offset;
    for (int64_t n = 0; n < y.rows; ++n)
      for (int64_t o = 0; o < y.cols; ++o)
        at(out, n, o) = b[o * bias->strides[0]];
    beta = 1.0f;
  }
  if (!dense || !smallKernels(context) ||
      !layerGemm(x, w, y, /*transposeA=*/false,
                 /*transposeB=*/true, 1.0f, beta))
    multiply(context, input, weight, out, /*transposeB=*/true, 1.0f, beta);
}

/// Where a product may go besides OpenBLAS.
enum class Kernels {
  /// One of many small products on this thread (the attention tiles).
  Small,
  /// A dense layer's, on this thread.
  Layer,
};

void gemm(gnn_rt_context *context, const gnn_memref2d_f32 *a,
          const gnn_memref2d_f32 *b, gnn_memref2d_f32 *c, bool transposeA,
          bool transposeB, float alpha, float beta, Kernels kernels) {
  Matrix x, y, z;
  bool dense = view(a, x) & view(b, y) & view(c, z);
  if (!gemmSizesFit(context, x, y, z, transposeA, transposeB))
    return;
  int64_t inner = transposeA ? x.rows : x.cols;
  if (z.rows == 0 || z.cols == 0)
    return;
  if (inner == 0) {
    // An empty sum: BLAS would not scale c by beta for k = 0 everywhere.
    for (int64_t i = 0; i < z.rows; ++i)
      for (int64_t j = 0; j < z.cols; ++j) {
        float &out = at(c, i, j);
        out = beta == 0.0f ? 0.0f : beta * out;
      }
    return;
  }
  dense_profile::Product timed(kernels == Kernels::Small
                                   ? dense_profile::Kind::Tile
                                   : dense_profile::Kind::Layer,
                               transposeA, transposeB, z.rows, z.cols, inner);
  if (dense && smallKernels(context) &&
      (kernels == Kernels::Small
           ? smallGemm(x, y, z, transposeA, transposeB, alpha, beta)
           : layerGemm(x, y, z, transposeA, transposeB, alpha, beta)))
    return;
  multiply(context, a, b, c, transposeB, alpha, beta, transposeA);
}
} // namespace

extern "C" void _mlir_ciface_gnn_rt_gemm_at(gnn_rt_context *context,
                                            gnn_memref2d_f32 *a,
                                            gnn_memref2d_f32 *b,
                                            gnn_memref2d_f32 *c, float alpha,
                                            float beta) {
  gemm(context, a, b, c, /*transposeA=*/true, /*transposeB=*/false, alpha, beta,
       Kernels::Layer);
}

extern "C" void _mlir_ciface_gnn_rt_gemm(gnn_rt_context *context,
                                         gnn_memref2d_f32 *a,
                                         gnn_memref2d_f32 *b,
                                         gnn_memref2d_f32 *c, int32_t transpose,
                                         float alpha, float beta) {
  gemm(context, a, b, c, (transpose & GNN_GEMM_TRANSPOSE_A) != 0,
       (transpose & GNN_GEMM_TRANSPOSE_B) != 0, alpha, beta,
       (transpose & GNN_GEMM_LAYER) != 0 ? Kernels::Layer : Kernels::Small);
}

extern "C" void _mlir_ciface_gnn_rt_transpose(gnn_rt_context *context,
                                              gnn_memref2d_f32 *a,
                                              gnn_memref2d_f32 *out) {
  Matrix x, y;
  bool dense = view(a, x) & view(out, y);
  if (y.rows != x.cols)
    return (void)gnn_rt_rows_mismatch(context, y.rows, x.cols,
                                      GNN_RT_SIZE_ITEM);
  if (y.cols != x.rows)
    return (void)gnn_rt_rows_mismatch(context, y.cols, x.rows,
                                      GNN_RT_SIZE_INPUT_ROWS);
  if (dense)
    return gnnc::transpose(x, y);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < x.cols; ++j)
      at(out, j, i) = at(a, i, j);
}

extern "C" void _mlir_ciface_gnn_rt_linear(gnn_rt_context *context,
                                           gnn_memref2d_f32 *input,
                                           gnn_memref2d_f32 *weight,
                                           gnn_memref1d_f32 *bias,
                                           gnn_memref2d_f32 *out) {
  linear(context, input, weight, bias, out);
}

extern "C" void _mlir_ciface_gnn_rt_linear_nobias(gnn_rt_context *context,
                                                  gnn_memref2d_f32 *input,
                                                  gnn_memref2d_f32 *weight,
                                                  gnn_memref2d_f32 *out) {
  linear(context, input, weight, nullptr, out);
}

extern "C" void gnn_rt_set_dense_threads(int threads) {
  if (const Blas *api = threads > 0 ? blas(nullptr) : nullptr)
    api->setNumThreads(threads);
}
