//===- CudaDense.cpp - dense layers on cuBLAS -----------------------------===//
//
// Part of gnnc's runtime. The GPU forms of gnn_rt_linear and gnn_rt_gemm:
// the JIT binds the lowered calls here when a program runs on a GPU. cuBLAS is
// opened with dlopen like the driver. out (row-major [rows, out]) is, for
// column-major cuBLAS, out^T = weight * input^T, with the bias broadcast first
// by a rank-1 product bias * ones^T. Buffers are unified or device memory;
// products run on the host thread's stream, after the kernels launched
// there before them, and each layer completes before it returns, as on the
// CPU (the queued forms leave that to the program's next wait).
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"
#include "CudaProfile.h"
#include "DynamicLibrary.h"
#include "LinearShapes.h"
#include "gnnc/cuda.h"
#include "gnnc/dense.h"
#include "gnnc/errors.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <string>

using namespace gnnc;

namespace {
using cublasStatus = int;
using cublasHandle = void *;
constexpr int kOpN = 0, kOpT = 1;

struct Blas {
  cublasStatus (*create)(cublasHandle *);
  cublasStatus (*setStream)(cublasHandle, void *);
  cublasStatus (*sgemm)(cublasHandle, int, int, int, int, int, const float *,
                        const float *, int, const float *, int, const float *,
                        float *, int);
  cublasHandle handle = nullptr;
  /// A column of ones for broadcasting the bias, grown on demand.
  float *ones = nullptr;
  size_t onesSize = 0;
};

std::once_flag blasOnce;
Blas blasState;
std::string blasWhy;
std::mutex blasMutex;

void openBlas() {
  void *library = openFirst({"libcublas.so.13", "libcublas.so.12",
                             "libcublas.so.11", "libcublas.so"});
  if (!library) {
    blasWhy = "cuBLAS (libcublas.so) cannot be loaded";
    return;
  }
  Symbols symbols(library);
  symbols.need("cublasCreate_v2", blasState.create);
  symbols.need("cublasSgemm_v2", blasState.sgemm);
  symbols.need("cublasSetStream_v2", blasState.setStream);
  if (symbols.missing()) {
    blasWhy = "cuBLAS lacks cublasCreate_v2, cublasSgemm_v2 or "
              "cublasSetStream_v2";
    return;
  }
  if (!cuda::driver()) // reported
    return;
  if (cublasStatus s = blasState.create(&blasState.handle); s != 0) {
    blasWhy = "cublasCreate failed with status " + std::to_string(s);
    blasState.handle = nullptr;
  }
}

/// cuBLAS with a handle on device 0, its work on the calling thread's
/// stream (after the kernels launched there, which may still run), or null
/// after a report.
Blas *blas() {
  std::call_once(blasOnce, openBlas);
  if (!blasState.handle) {
    gnn_rt_report(blasWhy.empty() ? "cuBLAS is not available"
                                  : blasWhy.c_str());
    return nullptr;
  }
  void *stream = gnn_cuda_stream_create();
  if (!stream)
    return nullptr; // reported
  if (cublasStatus s = blasState.setStream(blasState.handle, stream); s != 0) {
    gnn_rt_report(
        ("cublasSetStream failed with status " + std::to_string(s)).c_str());
    return nullptr;
  }
  return &blasState;
}

/// A device column of at least n ones.
const float *ones(Blas &b, int64_t n) {
  if (size_t(n) <= b.onesSize)
    return b.ones;
  const cuda::Driver *d = cuda::driver();
  auto *grown = static_cast<float *>(gnn_cuda_alloc(n * sizeof(float)));
  if (!d || !grown)
    return nullptr;
  const float one = 1.0f;
  unsigned bits;
  static_assert(sizeof(bits) == sizeof(one));
  std::memcpy(&bits, &one, sizeof(bits));
  if (!cuda::ok(d->memsetD32(reinterpret_cast<cuda::CUdeviceptr>(grown), bits,
                             size_t(n)),
                "cuMemsetD32")) {
    gnn_cuda_free(grown);
    return nullptr;
  }
  gnn_cuda_free(b.ones);
  b.ones = grown;
  b.onesSize = size_t(n);
  return grown;
}

/// Whether the host can touch every one of `pointers` (unified memory),
/// as the host's fallback of a product must; else it is reported.
bool hostCanTouch(std::initializer_list<const void *> pointers) {
  for (const void *p : pointers)
    if (p && !gnn_cuda_is_unified(p)) {
      gnn_rt_report("a dense product whose layout or sizes cuBLAS cannot "
                    "take runs on the host, which cannot read device memory");
      return false;
    }
  return true;
}

bool sgemmOk(cublasStatus status) {
  if (status == 0)
    return true;
  gnn_rt_report(
      ("cublasSgemm failed with status " + std::to_string(status)).c_str());
  return false;
}

void linear(gnn_rt_context *context, gnn_memref2d_f32 *input,
            gnn_memref2d_f32 *weight, gnn_memref1d_f32 *bias,
            gnn_memref2d_f32 *out, bool wait) {
  Matrix x, w, y;
  bool dense = view(input, x) & view(weight, w) & view(out, y);
  if (!linearSizesFit(context, x, w, y, bias) || y.rows == 0 || y.cols == 0)
    return;
  cuda::profile::HostCall timed(wait ? "cuBLAS linear layer (waited for)"
                                     : "cuBLAS linear layer (queued)");
  // Layouts cuBLAS cannot take (never produced by lowered code today) and
  // sizes beyond its int arguments run on the host.
  bool fits = x.rows < (1ll << 31) && x.ld < (1ll << 31) &&
              w.ld < (1ll << 31) && y.ld < (1ll << 31);
  if (!dense || !fits || (bias && bias->strides[0] != 1 && w.rows > 1)) {
    if (!hostCanTouch({x.data, w.data, y.data, bias ? bias->aligned : nullptr}))
      return;
    // The host reads what kernels launched without waiting may still write.
    gnn_cuda_wait_for_launches();
    if (bias)
      _mlir_ciface_gnn_rt_linear(context, input, weight, bias, out);
    else
      _mlir_ciface_gnn_rt_linear_nobias(context, input, weight, out);
    return;
  }
  std::lock_guard<std::mutex> lock(blasMutex);
  Blas *b = blas();
  const cuda::Driver *d = cuda::driver();
  if (!b || !d)
    return;
  // Without `wait` the program waits before it reads memory: the product
  // is queued work until then (also if a call below fails after queueing).
  if (!wait)
    cuda::noteQueuedWork();
  const float one = 1.0f, zero = 0.0f;
  float beta = 0.0f;
  if (bias) {
    const float *column = ones(*b, x.rows);
    if (!column ||
        !sgemmOk(b->sgemm(b->handle, kOpN, kOpN, int(w.rows), int(x.rows), 1,
                          &one, bias->aligned + bias->offset, int(w.rows),
                          column, 1, &zero, y.data, int(y.ld))))
      return;
    beta = 1.0f;
  }
  if (!sgemmOk(b->sgemm(b->handle, kOpT, kOpN, int(w.rows), int(x.rows),
                        int(x.cols), &one, w.data, int(w.ld), x.data, int(x.ld),
                        &beta, y.data, int(y.ld))))
    return;
  if (wait)
    (void)gnn_cuda_synchronize(); // host code may read the result next
}

/// c = alpha * op(a) @ op(b) + beta * c on cuBLAS. Row-major c is, for
/// column-major cuBLAS, c^T = op(b)^T op(a)^T, so the operands swap and each
/// keeps its own transposition.
void gemm(gnn_rt_context *context, gnn_memref2d_f32 *a, gnn_memref2d_f32 *b,
          gnn_memref2d_f32 *c, int32_t transpose, float alpha, float beta,
          bool wait) {
  bool transposeA = (transpose & GNN_GEMM_TRANSPOSE_A) != 0,
       transposeB = (transpose & GNN_GEMM_TRANSPOSE_B) != 0;
  Matrix x, y, z;
  bool dense = view(a, x) & view(b, y) & view(c, z);
  if (!gemmSizesFit(context, x, y, z, transposeA, transposeB) || z.rows == 0 ||
      z.cols == 0)
    return;
  int64_t inner = transposeA ? x.rows : x.cols;
  // Empty sums (the weight gradients of an empty batch), strided layouts
  // (never produced by lowered code today) and sizes beyond cuBLAS's int
  // arguments run on the host.
  bool fits = z.rows < (1ll << 31) && z.cols < (1ll << 31) &&
              inner < (1ll << 31) && x.ld < (1ll << 31) && y.ld < (1ll << 31) &&
              z.ld < (1ll << 31);
  // An empty sum on device memory goes to cuBLAS (which scales c by beta
  // and reads neither operand; their leading dimensions need only be
  // valid), as the host cannot touch it.
  bool emptyOnDevice =
      dense && fits && inner == 0 && !gnn_cuda_is_unified(z.data);
  if (emptyOnDevice) {
    x.ld = std::max<int64_t>({x.ld, x.rows, x.cols, 1});
    y.ld = std::max<int64_t>({y.ld, y.rows, y.cols, 1});
  }
  if ((!dense || !fits || inner == 0) && !emptyOnDevice) {
    if (!hostCanTouch({x.data, y.data, z.data}))
      return;
    gnn_cuda_wait_for_launches(); // the host reads and writes (see above)
    _mlir_ciface_gnn_rt_gemm(
        context, a, b, c,
        transpose & (GNN_GEMM_TRANSPOSE_A | GNN_GEMM_TRANSPOSE_B), alpha, beta);
    return;
  }
  cuda::profile::HostCall timed(wait ? "cuBLAS gemm (waited for)"
                                     : "cuBLAS gemm (queued)");
  std::lock_guard<std::mutex> lock(blasMutex);
  Blas *blas = ::blas();
  if (!blas || !cuda::driver())
    return;
  if (!wait)
    cuda::noteQueuedWork(); // see linear
  if (!sgemmOk(blas->sgemm(blas->handle, transposeB ? kOpT : kOpN,
                           transposeA ? kOpT : kOpN, int(z.cols), int(z.rows),
                           int(inner), &alpha, y.data, int(y.ld), x.data,
                           int(x.ld), &beta, z.data, int(z.ld))))
    return;
  if (wait)
    (void)gnn_cuda_synchronize(); // host code may read the result next
}
} // namespace

extern "C" void gnn_cuda_linear(gnn_rt_context *context,
                                gnn_memref2d_f32 *input,
                                gnn_memref2d_f32 *weight,
                                gnn_memref1d_f32 *bias, gnn_memref2d_f32 *out) {
  linear(context, input, weight, bias, out, /*wait=*/true);
}

extern "C" void gnn_cuda_linear_nobias(gnn_rt_context *context,
                                       gnn_memref2d_f32 *input,
                                       gnn_memref2d_f32 *weight,
                                       gnn_memref2d_f32 *out) {
  linear(context, input, weight, nullptr, out, /*wait=*/true);
}

extern "C" void gnn_cuda_gemm(gnn_rt_context *context, gnn_memref2d_f32 *a,
                              gnn_memref2d_f32 *b, gnn_memref2d_f32 *c,
                              int32_t transpose, float alpha, float beta) {
  gemm(context, a, b, c, transpose, alpha, beta, /*wait=*/true);
}

extern "C" void gnn_cuda_gemm_at(gnn_rt_context *context, gnn_memref2d_f32 *a,
                                 gnn_memref2d_f32 *b, gnn_memref2d_f32 *c,
                                 float alpha, float beta) {
  gemm(context, a, b, c, GNN_GEMM_TRANSPOSE_A, alpha, beta, /*wait=*/true);
}

extern "C" void gnn_cuda_linear_queued(gnn_rt_context *context,
                                       gnn_memref2d_f32 *input,
                                       gnn_memref2d_f32 *weight,
                                       gnn_memref1d_f32 *bias,
                                       gnn_memref2d_f32 *out) {
  linear(context, input, weight, bias, out, /*wait=*/false);
}

extern "C" void gnn_cuda_linear_nobias_queued(gnn_rt_context *context,
                                              gnn_memref2d_f32 *input,
                                              gnn_memref2d_f32 *weight,
                                              gnn_memref2d_f32 *out) {
  linear(context, input, weight, nullptr, out, /*wait=*/false);
}

extern "C" void gnn_cuda_gemm_queued(gnn_rt_context *context,
                                     gnn_memref2d_f32 *a, gnn_memref2d_f32 *b,
                                     gnn_memref2d_f32 *c, int32_t transpose,
                                     float alpha, float beta) {
  gemm(context, a, b, c, transpose, alpha, beta, /*wait=*/false);
}

extern "C" void gnn_cuda_gemm_at_queued(gnn_rt_context *context,
                                        gnn_memref2d_f32 *a,
                                        gnn_memref2d_f32 *b,
                                        gnn_memref2d_f32 *c, float alpha,
                                        float beta) {
  gemm(context, a, b, c, GNN_GEMM_TRANSPOSE_A, alpha, beta, /*wait=*/false);
}
