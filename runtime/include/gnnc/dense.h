/*===- dense.h - dense layers for compiled gnn programs (C ABI) ----*- C -*-===*
 *
 * Part of gnnc's runtime. Code lowered from gnn.linear calls these through
 * MLIR's C interface: every memref is passed as a pointer to its descriptor.
 * Each call multiplies on its calling thread (compiled code splits a
 * layer's rows over its threads): layers up to 256 wide (inputs and
 * outputs) on libxsmm's kernels, 64 rows at a time, others through one
 * OpenBLAS sgemm (all of them where the runtime instance's settings turn
 * small kernels off). Each takes the
 * calling program's gnn_rt_context first (gnn-pass-runtime-context passes
 * it), which receives the reports of sizes that do not fit.
 *
 *===----------------------------------------------------------------------===*/

#ifndef GNNC_DENSE_H
#define GNNC_DENSE_H

#include <stdint.h>

#include "gnnc/errors.h"
#include "gnnc/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The descriptor of a float32 memref of rank 2 / rank 1. */
typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[2];
  int64_t strides[2];
} gnn_memref2d_f32;

typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} gnn_memref1d_f32;

/* out[n] = weight @ input[n] + bias for every row n; weight is [out, in].
 * Sizes that do not fit are reported into `context` through
 * gnn_rt_rows_mismatch and out is left untouched. */
GNNC_EXPORT void _mlir_ciface_gnn_rt_linear(gnn_rt_context *context,
                                            gnn_memref2d_f32 *input,
                                            gnn_memref2d_f32 *weight,
                                            gnn_memref1d_f32 *bias,
                                            gnn_memref2d_f32 *out);

/* The same without a bias. */
GNNC_EXPORT void _mlir_ciface_gnn_rt_linear_nobias(gnn_rt_context *context,
                                                   gnn_memref2d_f32 *input,
                                                   gnn_memref2d_f32 *weight,
                                                   gnn_memref2d_f32 *out);

/* Flags of gnn_rt_gemm's `transpose`; GNN_GEMM_LAYER: the product of a
 * dense layer (its kernels as gnn_rt_linear's) rather than an attention
 * tile. */
enum { GNN_GEMM_TRANSPOSE_B = 1, GNN_GEMM_TRANSPOSE_A = 2, GNN_GEMM_LAYER = 4 };

/* c = alpha * op(a) @ op(b) + beta * c on the calling thread, where op(a)
 * is a transposed if `transpose` has GNN_GEMM_TRANSPOSE_A and op(b) is b
 * transposed if it has GNN_GEMM_TRANSPOSE_B: the block tiles of the fused
 * attention and of its backward (scores of a tile of destinations against
 * a chunk of sources, the weighted sum of the chunk's value rows, the
 * sources' gradients from a tile's transposed weights). Products whose
 * sides are multiples of 8 up to 512, with alpha 1 and beta 0 or 1, run on
 * libxsmm's kernels compiled for their shape (no packed copies of the
 * operands, no clearing of c for beta 0), others on OpenBLAS. With
 * GNN_GEMM_LAYER, a dense layer's product (x @ weight, the layer's input
 * gradient), on gnn_rt_linear's kernels. Sizes that do not fit are
 * reported into `context` through gnn_rt_rows_mismatch and c is left untouched.
 */
GNNC_EXPORT void
_mlir_ciface_gnn_rt_gemm(gnn_rt_context *context, gnn_memref2d_f32 *a,
                         gnn_memref2d_f32 *b, gnn_memref2d_f32 *c,
                         int32_t transpose, float alpha, float beta);

/* c = alpha * transpose(a) @ b + beta * c: the weight gradient of a dense
 * layer (the sum over rows n of the outer products of a[n] and b[n]); c up
 * to 256 x 256 on libxsmm's kernels, 128 rows n at a time. Sizes that do not
 * fit are reported into `context` through gnn_rt_rows_mismatch and c is left
 * untouched. */
GNNC_EXPORT void _mlir_ciface_gnn_rt_gemm_at(gnn_rt_context *context,
                                             gnn_memref2d_f32 *a,
                                             gnn_memref2d_f32 *b,
                                             gnn_memref2d_f32 *c, float alpha,
                                             float beta);

/* The instruction set libxsmm compiles gnn_rt_gemm's small kernels for
 * ("skx", "clx", "cpx" for AVX-512, "hsw" for AVX2, ...), or null where
 * the settings of `runtime` (NULL: the default instance) leave every
 * product to OpenBLAS (small_gemm = 0, gnnc/runtime.h). */
GNNC_EXPORT const char *
gnn_rt_small_gemm_target(const struct gnn_rt_runtime *runtime);

/* out = transpose(a) on the calling thread: a block's keys and values
 * once for all its tiles' products. Sizes that do not fit are reported
 * into `context` through gnn_rt_rows_mismatch and out is left untouched. */
GNNC_EXPORT void _mlir_ciface_gnn_rt_transpose(gnn_rt_context *context,
                                               gnn_memref2d_f32 *a,
                                               gnn_memref2d_f32 *out);

/* Sets the number of threads the dense layers use (OpenBLAS). */
GNNC_EXPORT void gnn_rt_set_dense_threads(int threads);

/* The name of the OpenBLAS kernels the dense layers run ("SkylakeX",
 * "Haswell", ...), or null if OpenBLAS cannot be loaded. The runtime opens
 * OpenBLAS on first use; OpenBLAS then picks its kernels from
 * OPENBLAS_CORETYPE, else from the CPU model (falling back to its generic
 * ones on models newer than its release), and starts OPENBLAS_NUM_THREADS
 * threads, else one per core. */
GNNC_EXPORT const char *gnn_rt_blas_core(void);

/* Turns on the profile of the host's dense products: from now on each is
 * timed, and a table of them by shape goes to stderr when the process
 * exits. */
GNNC_EXPORT void gnn_rt_dense_profile_enable(void);

/* The OpenBLAS kernels for this CPU's vector features ("SkylakeX", "Zen",
 * "Haswell", "Sandybridge"), or null where its generic ones are right: what
 * a host sets OPENBLAS_CORETYPE to before the first use. */
GNNC_EXPORT const char *gnn_rt_blas_core_for_cpu(void);

#ifdef __cplusplus
}
#endif

#endif /* GNNC_DENSE_H */
