/*===- runtime.h - runtime instances: settings, pool, errors (C ABI) -*- C -*-=*
 *
 * Part of gnnc's runtime. A host creates a runtime instance with its
 * settings and runs programs with it: each run reports into a context of
 * the instance (gnnc/errors.h), and buffers come from the instance's pool
 * (gnnc/memory.h). Two instances in one process (a training and a
 * decoding, two ranks in a test) keep their settings, pools and errors
 * apart. The runtime reads no environment variable: hosts pass settings in
 * (the tools read theirs from the environment in one place).
 *
 *===----------------------------------------------------------------------===*/

#ifndef GNNC_RUNTIME_H
#define GNNC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "gnnc/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* pool_limit_bytes: the default bound (512 MB, or a quarter of physical
 * memory if less). */
#define GNN_RT_DEFAULT_POOL_LIMIT UINT64_MAX

typedef struct gnn_rt_settings {
  /* Threads of a program's parallel loops and dense layers: > 0, or 0 for
   * all cores (OpenMP's default). */
  int32_t threads;
  /* Non-zero: large freed blocks are kept for reuse (gnn_rt_free). Builds
   * with AddressSanitizer never keep them, so that it sees every use of a
   * freed buffer. */
  int32_t keep_freed_blocks;
  /* Bytes kept for reuse beyond what the peak allows (gnnc/memory.h), or
   * GNN_RT_DEFAULT_POOL_LIMIT; 0 keeps nothing. */
  uint64_t pool_limit_bytes;
  /* The most bytes the tapes of one run may keep (gnnc/tape.h): > 0, or 0
   * for half of gnn_rt_allocation_limit_bytes. */
  int64_t tape_budget_bytes;
  /* Non-zero: attention tiles multiply on libxsmm's small-GEMM kernels;
   * zero: on OpenBLAS, as dense layers do. */
  int32_t small_gemm;
} gnn_rt_settings;

/* The defaults: all cores, freed blocks kept within the default bound, the
 * default tape budget, small-GEMM kernels on. */
GNNC_EXPORT void gnn_rt_settings_init(gnn_rt_settings *settings);

/* NULL if every setting is in range, else what is wrong (a static string:
 * "a runtime's thread count must not be negative", ...). */
GNNC_EXPORT const char *
gnn_rt_settings_problem(const gnn_rt_settings *settings);

typedef struct gnn_rt_runtime gnn_rt_runtime;

/* A new instance with `settings` (NULL: the defaults); NULL if memory is
 * exhausted or a setting is out of range (gnn_rt_settings_problem). */
GNNC_EXPORT gnn_rt_runtime *
gnn_rt_runtime_create(const gnn_rt_settings *settings);

/* Returns the instance's kept blocks to the system. Buffers it handed out
 * and that are still live stay valid: gnn_rt_free takes them back later.
 * The default instance is never destroyed (a no-op). */
GNNC_EXPORT void gnn_rt_runtime_destroy(gnn_rt_runtime *runtime);

/* The instance of hosts that create none, with the default settings;
 * contexts from gnn_rt_context_create belong to it. */
GNNC_EXPORT gnn_rt_runtime *gnn_rt_default_runtime(void);

/* The instance's settings (NULL: the default instance's). */
GNNC_EXPORT void gnn_rt_runtime_settings(const gnn_rt_runtime *runtime,
                                         gnn_rt_settings *settings);

/* A context for one run with `runtime` (NULL: the default instance): its
 * own error slot, the instance's settings and pool. Destroy it with
 * gnn_rt_context_destroy. NULL if memory is exhausted. */
GNNC_EXPORT gnn_rt_context *gnn_rt_context_create_in(gnn_rt_runtime *runtime);

/* The instance a context belongs to (NULL: the default context's). */
GNNC_EXPORT gnn_rt_runtime *gnn_rt_context_runtime(gnn_rt_context *context);

/* Binds the calling thread to `context` (NULL: none) and returns the
 * context bound before. While bound, the runtime's failures in calls that
 * take no context (gnn_rt_report: a library that cannot be loaded, a
 * failed GPU driver call) go into it rather than the process-wide context,
 * and gnn_rt_alloc (gnn_cuda_alloc: unified memory) draws from its
 * instance's pool. A host binds the context of a run around the call. */
GNNC_EXPORT gnn_rt_context *gnn_rt_context_bind(gnn_rt_context *context);

/* Results announced early: code compiled from gnn.result_ready (placed by
 * gnn-announce-results) calls gnn_rt_result_ready when a result of the
 * running function is final, before the function returns. A host that sets
 * a hook on the run's context gets each such result there, on the thread
 * that runs the program, as `bytes` dense bytes at `data` (the result's
 * elements in row-major order), valid during the call only; `slot` is the
 * result's number. A data-parallel trainer passes a layer's gradients on
 * while the layers below are differentiated. */
typedef void (*gnn_rt_result_hook)(void *user, int64_t slot, const void *data,
                                   int64_t bytes);

/* Sets (NULL: removes) the hook of `context`, with the `user` pointer that
 * it is passed. */
GNNC_EXPORT void gnn_rt_context_set_result_hook(gnn_rt_context *context,
                                                gnn_rt_result_hook hook,
                                                void *user);

/* Called by compiled code: hands result `slot` to the context's hook, if
 * it has one. */
GNNC_EXPORT void gnn_rt_result_ready(gnn_rt_context *context, int64_t slot,
                                     const void *data, int64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* GNNC_RUNTIME_H */
