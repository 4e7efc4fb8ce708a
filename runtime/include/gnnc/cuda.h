/*===- cuda.h - gnnc's CUDA runtime (C ABI) ------------------------*- C -*-===*
 *
 * Part of gnnc's runtime. Loads the CUDA driver (libcuda.so.1) when first
 * needed, so the same binaries run on machines without one, and provides
 * what host code lowered by gnn-lower-to-nvvm calls: module loading, kernel
 * launches and streams (the functions gpu-to-llvm emits calls to, under
 * gnn_cuda_* names that the JIT binds to them) and unified-memory buffers.
 * Failed driver calls are reported through gnn_rt_report.
 *
 *===----------------------------------------------------------------------===*/

#ifndef GNNC_CUDA_H
#define GNNC_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "gnnc/dense.h"
#include "gnnc/errors.h"
#include "gnnc/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Before gnn_cuda_init: use device index modulo the number of devices
 * (a data-parallel rank takes its local rank's), not device 0. */
GNNC_EXPORT void gnn_cuda_use_device(int index);

/* Non-zero if the driver loads and the device (0, or gnn_cuda_use_device's)
 * can be used (its primary
 * context is made current). Otherwise writes why into why (if why_size >
 * 0). */
GNNC_EXPORT int gnn_cuda_init(char *why, size_t why_size);

/* The compute capability of device 0 (after gnn_cuda_init), e.g. 9 and 0. */
GNNC_EXPORT int gnn_cuda_compute_capability(int *major, int *minor);

/* The device's name (after gnn_cuda_init). */
GNNC_EXPORT int gnn_cuda_device_name(char *name, size_t name_size);

/* Unified memory, accessible from the host and the device; its pages are
 * placed on the device when handed out. Freed blocks are kept for reuse
 * (see runtime/lib/CudaPool.h), one pool per runtime instance. gnn_cuda_free
 * frees these and the blocks of gnn_cuda_alloc_device and _host. */
GNNC_EXPORT void *gnn_cuda_alloc(size_t bytes);
GNNC_EXPORT void *gnn_cuda_aligned_alloc(size_t alignment, size_t bytes);
GNNC_EXPORT void gnn_cuda_free(void *pointer);

/* The alignment of every block the runtime hands a GPU program (unified,
 * device and host: cuMemAlloc's and cuMemAllocManaged's guarantee). */
#define GNN_CUDA_BLOCK_ALIGNMENT 256

/* A memref<?xi8> as compiled code passes one. */
typedef struct {
  int8_t *allocated;
  int8_t *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} gnn_memref1d_i8;

/* A block of `bytes` of device memory, which kernels, cuBLAS and the
 * driver's copies touch and the host cannot, or of host memory, which the
 * host touches and kernels cannot (gnn-gpu-place-buffers allocates so the
 * buffers only the device, or only the host, touches), as a memref<?xi8>
 * of 256-byte aligned pointers: null if there is no memory or no device
 * (reported). Freed by gnn_cuda_free; freed blocks are kept for reuse like
 * unified ones, in pools of their own. */
GNNC_EXPORT void _mlir_ciface_gnn_cuda_alloc_device(gnn_memref1d_i8 *result,
                                                    int64_t bytes);
GNNC_EXPORT void _mlir_ciface_gnn_cuda_alloc_host(gnn_memref1d_i8 *result,
                                                  int64_t bytes);

/* The bytes of freed blocks kept beyond the peak's (default 16 MB;
 * 0 keeps nothing). Takes effect for the pools made after it. */
GNNC_EXPORT void gnn_cuda_set_pool_limit(uint64_t bytes);
/* Turns on the GPU profile: from now on kernels and blocking calls are
 * timed, and their tables go to stderr when the process exits. */
GNNC_EXPORT void gnn_cuda_profile_enable(void);
/* Bytes of freed unified, device and host blocks kept for reuse now. */
GNNC_EXPORT uint64_t gnn_cuda_cached_memory_bytes(void);
/* The most unified and device memory the process held from the driver at
 * once, in bytes: every block gnn_cuda_alloc and gnn_cuda_alloc_device
 * took, in use or kept for reuse (its peak footprint on the device,
 * without the driver's and cuBLAS's own). */
GNNC_EXPORT uint64_t gnn_cuda_peak_memory_bytes(void);

/* Whether `pointer` lies in unified memory (gnn_cuda_alloc's, or any other
 * managed allocation): programs compiled for the GPU take such buffers as
 * they are, without copies. 0 for anything else, and without a device (no
 * report in either case). */
GNNC_EXPORT int gnn_cuda_is_unified(const void *pointer);

/* Copies bytes between any two of host memory and unified memory, by the
 * copy engines (not by page faults); waits for it. Returns 0 on failure
 * (reported). */
GNNC_EXPORT int gnn_cuda_copy(void *to, const void *from, size_t bytes);

/* Zeroes `bytes` (a multiple of 4) of unified or device memory on the
 * device, without the host touching its pages; waits for it. Returns 0 on
 * failure (reported). */
GNNC_EXPORT int gnn_cuda_zero(void *pointer, size_t bytes);

/* The same copy queued on the calling thread's stream, after the kernels
 * launched there, without waiting for it (gnn_cuda_wait_for_launches
 * does); while the thread's launches are captured into a graph, or where
 * the driver has no queued copy, it waits for them and copies. Returns 0 on
 * failure (reported). */
GNNC_EXPORT int gnn_cuda_copy_queued(void *to, const void *from, size_t bytes);

/* Kernel timing. While on, every launch is bracketed by device events;
 * gnn_cuda_take_kernel_ms waits for the kernels launched since its last
 * call and returns the milliseconds they ran on the device (0 when off).
 * cuBLAS calls are not counted. */
GNNC_EXPORT void gnn_cuda_time_kernels(int on);
GNNC_EXPORT double gnn_cuda_take_kernel_ms(void);

/* Waits for all work on the device. Returns 0 on failure (reported). */
GNNC_EXPORT int gnn_cuda_synchronize(void);

/* gnn_rt_linear and gnn_rt_linear_nobias (dense.h) on cuBLAS, for
 * programs compiled for the GPU: same arguments, checks and reports. */
GNNC_EXPORT void gnn_cuda_linear(gnn_rt_context *context,
                                 gnn_memref2d_f32 *input,
                                 gnn_memref2d_f32 *weight,
                                 gnn_memref1d_f32 *bias, gnn_memref2d_f32 *out);
GNNC_EXPORT void gnn_cuda_linear_nobias(gnn_rt_context *context,
                                        gnn_memref2d_f32 *input,
                                        gnn_memref2d_f32 *weight,
                                        gnn_memref2d_f32 *out);

/* gnn_rt_gemm and gnn_rt_gemm_at (dense.h) on cuBLAS: the products of the
 * backward pass and the fused attention's block tiles. */
GNNC_EXPORT void gnn_cuda_gemm(gnn_rt_context *context, gnn_memref2d_f32 *a,
                               gnn_memref2d_f32 *b, gnn_memref2d_f32 *c,
                               int32_t transpose, float alpha, float beta);
GNNC_EXPORT void gnn_cuda_gemm_at(gnn_rt_context *context, gnn_memref2d_f32 *a,
                                  gnn_memref2d_f32 *b, gnn_memref2d_f32 *c,
                                  float alpha, float beta);

/* The same four for programs whose kernels are launched without waiting
 * (gnn-gpu-async-launches): the product is queued on the calling thread's
 * stream after its kernels and the call returns without waiting for it;
 * gnn_cuda_wait_for_launches waits for it with them. */
GNNC_EXPORT void gnn_cuda_linear_queued(gnn_rt_context *context,
                                        gnn_memref2d_f32 *input,
                                        gnn_memref2d_f32 *weight,
                                        gnn_memref1d_f32 *bias,
                                        gnn_memref2d_f32 *out);
GNNC_EXPORT void gnn_cuda_linear_nobias_queued(gnn_rt_context *context,
                                               gnn_memref2d_f32 *input,
                                               gnn_memref2d_f32 *weight,
                                               gnn_memref2d_f32 *out);
GNNC_EXPORT void gnn_cuda_gemm_queued(gnn_rt_context *context,
                                      gnn_memref2d_f32 *a, gnn_memref2d_f32 *b,
                                      gnn_memref2d_f32 *c, int32_t transpose,
                                      float alpha, float beta);
GNNC_EXPORT void gnn_cuda_gemm_at_queued(gnn_rt_context *context,
                                         gnn_memref2d_f32 *a,
                                         gnn_memref2d_f32 *b,
                                         gnn_memref2d_f32 *c, float alpha,
                                         float beta);

/* The gpu-to-llvm launch ABI. */
GNNC_EXPORT void *gnn_cuda_module_load(void *data, size_t size);
GNNC_EXPORT void *gnn_cuda_module_load_jit(void *data, int opt_level);
GNNC_EXPORT void gnn_cuda_module_unload(void *module);
GNNC_EXPORT void *gnn_cuda_module_get_function(void *module, const char *name);
GNNC_EXPORT void gnn_cuda_launch_kernel(void *function, intptr_t grid_x,
                                        intptr_t grid_y, intptr_t grid_z,
                                        intptr_t block_x, intptr_t block_y,
                                        intptr_t block_z, int32_t shared_bytes,
                                        void *stream, void **params,
                                        void **extra, size_t param_count);
GNNC_EXPORT void *gnn_cuda_stream_create(void);
GNNC_EXPORT void gnn_cuda_stream_destroy(void *stream);
GNNC_EXPORT void gnn_cuda_stream_synchronize(void *stream);

/* Waits for the kernels this host thread launched asynchronously (see
 * gnn-gpu-async-launches) if any may still run; returns at once otherwise.
 * A failed kernel is reported here. */
GNNC_EXPORT void gnn_cuda_wait_for_launches(void);

/* gnn_rt_check_bad_id (gnnc/errors.h) for programs whose kernels are
 * launched without waiting: queued on the calling thread's stream after
 * them as a host function (captured with them into a graph), so that the
 * host does not wait for the check; its report is the call's error, which
 * the caller reads after synchronizing. Where the driver lacks host
 * functions, or the host may not read unified memory while kernels run,
 * it waits for them and checks. */
GNNC_EXPORT void
_mlir_ciface_gnn_cuda_check_bad_id_queued(gnn_rt_context *context,
                                          gnn_memref1d_i64 *slot,
                                          gnn_memref1d_i64 *ids, int64_t bound);
/* gnn_rt_check_repeated_id, queued the same way. */
GNNC_EXPORT void _mlir_ciface_gnn_cuda_check_repeated_id_queued(
    gnn_rt_context *context, gnn_memref1d_i64 *slot, gnn_memref1d_i64 *ids,
    gnn_memref1d_i64 *first, int64_t line, int64_t column);

/* With `on`, the kernels a host thread launches between two of its waits
 * are captured into a CUDA graph, launched whole at the wait, and kept for
 * the next time the same kernels come in the same order (on other buffers
 * and grids), which then update it instead of launching one by one (see
 * runtime/lib/CudaGraphs.h; for programs compiled with asynchronous launches;
 * off by default, and while kernels are timed or profiled). Set it before the
 * first launch: the threads' streams are made not to synchronize with the
 * legacy stream. */
GNNC_EXPORT void gnn_cuda_use_graphs(int on);

#ifdef __cplusplus
}
#endif

#endif /* GNNC_CUDA_H */
