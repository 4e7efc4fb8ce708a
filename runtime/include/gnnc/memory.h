/*===- memory.h - buffers of compiled CPU programs (C ABI) ---------*- C -*-===*
 *
 * Part of gnnc's runtime. A program allocates the same buffer sizes at every
 * call; keeping large freed blocks for the next allocation of (about) the
 * same size spares the system calls, page faults and page zeroing that
 * fresh memory costs. Code lowered for the CPU calls
 * _mlir_memref_to_llvm_alloc, _mlir_memref_to_llvm_aligned_alloc and
 * _mlir_memref_to_llvm_free; the JIT binds them to these functions.
 *
 *===----------------------------------------------------------------------===*/

#ifndef GNNC_MEMORY_H
#define GNNC_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "gnnc/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Like malloc and aligned_alloc (any alignment that is a power of two);
 * null when out of memory. Thread-safe. Blocks come from the pool of the
 * runtime instance whose context the calling thread is bound to
 * (gnnc/runtime.h), else from the default instance's. */
GNNC_EXPORT void *gnn_rt_alloc(uint64_t bytes);
GNNC_EXPORT void *gnn_rt_aligned_alloc(uint64_t alignment, uint64_t bytes);

/* The most bytes one tensor that a program creates may take: the
 * machine's physical memory (a request above it can only fail, and a null
 * buffer would crash the program). Code that gnn-guard-runtime-values adds
 * compares sizes that come from run-time values with it. */
GNNC_EXPORT int64_t gnn_rt_allocation_limit_bytes(void);

/* Frees a block from the functions above (or from malloc), on any
 * thread; null is a no-op. The pool that handed it out keeps large blocks
 * for reuse (for a request they exceed by at most a quarter, or grown in
 * place of a fresh block for one up to twice their size): as many bytes as
 * were live at the peak and are not now (up to half of physical memory:
 * what the program's next step will need again), or the bound
 * gnn_rt_pool_limit_bytes if that is more. So an instance never holds more
 * than its peak plus that bound; a long-running caller whose peak has
 * passed hands the rest back with gnn_rt_release_cached_memory. */
GNNC_EXPORT void gnn_rt_free(void *ptr);

/* The functions below concern the pool gnn_rt_alloc draws from on the
 * calling thread. */

/* Returns every kept block to the system and forgets the peak (from now
 * on, the peak is what is live now or later). */
GNNC_EXPORT void gnn_rt_release_cached_memory(void);

/* Whether freed large blocks are kept for reuse: yes, unless the
 * instance's settings say otherwise (keep_freed_blocks or
 * pool_limit_bytes 0) or the runtime is built with AddressSanitizer (which
 * then sees every use of a freed buffer). */
GNNC_EXPORT int gnn_rt_pool_recycles(void);

/* Bytes kept for reuse now (for tests and diagnostics). */
GNNC_EXPORT uint64_t gnn_rt_cached_memory_bytes(void);

/* The bytes kept for reuse beyond what the peak allows: the instance's
 * pool_limit_bytes, by default 512 MB (a quarter of physical memory if
 * less); 0 without recycling (then nothing is kept). */
GNNC_EXPORT uint64_t gnn_rt_pool_limit_bytes(void);

#ifdef __cplusplus
}
#endif

#endif /* GNNC_MEMORY_H */
