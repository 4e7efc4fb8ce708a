/*===- tape.h - per-iteration storage of compiled loops (C ABI) ----*- C -*-===*
 *
 * Part of gnnc's runtime. The backward of a differentiated loop reads what
 * each forward iteration kept (its state and its body's residuals), last
 * iteration first. Compiled code keeps them on a tape: a stack of buffers
 * of any shape, which the forward pushes copies onto and the backward pops
 * in reverse order. The number of iterations is known only at run time,
 * so the compiled program is the same for any trip count.
 *
 * Buffers are passed as MLIR memref descriptors: { allocated, aligned,
 * offset, sizes[rank], strides[rank] } (pointers, then int64_t values).
 *
 * A program that pops more often than it pushed, or pops another shape of
 * value than it pushed, reports the error into the tape's context (as bad
 * input does, gnnc/errors.h) and goes on with zeros.
 *
 *===----------------------------------------------------------------------===*/

#ifndef GNNC_TAPE_H
#define GNNC_TAPE_H

#include <stdint.h>

#include "gnnc/errors.h"
#include "gnnc/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gnn_rt_tape gnn_rt_tape;

/* The most dimensions of a buffer on a tape. */
#define GNN_TAPE_MAX_RANK 8

/* An empty tape whose buffers come from gnn_rt_alloc (CPU programs), or
 * from unified memory (gnn_cuda_alloc, copied by the copy engines) for
 * programs that run on a GPU; errors go to `context`. Null (reported) when
 * out of memory: pushes onto a null tape keep nothing, pops give zeros. */
GNNC_EXPORT gnn_rt_tape *gnn_rt_tape_create(gnn_rt_context *context);
GNNC_EXPORT gnn_rt_tape *gnn_cuda_tape_create(gnn_rt_context *context);
/* A GPU program's tape when its kernels run without a wait after each: a
 * push queues its copy on the thread's stream after them
 * (gnn_cuda_copy_queued) rather than waiting for them, except for a value
 * that is not dense, which it gathers on the host after waiting. */
GNNC_EXPORT gnn_rt_tape *gnn_cuda_tape_create_queued(gnn_rt_context *context);

/* Frees the tape and the buffers still on it; null is a no-op. */
GNNC_EXPORT void gnn_rt_tape_free(gnn_rt_tape *tape);

/* Pushes a dense row-major copy of the strided buffer `descriptor` of rank
 * `rank` whose elements take `element_bytes` bytes each (nothing, reported,
 * when out of memory). */
GNNC_EXPORT void gnn_rt_tape_push(gnn_rt_tape *tape, int64_t rank,
                                  const void *descriptor,
                                  int64_t element_bytes);

/* Pops the buffer pushed last into the descriptor `result` of rank `rank`
 * (row-major strides, offset 0). The caller owns the buffer: it frees it
 * with the allocator's free function (gnn_rt_free, or gnn_cuda_free).
 * `shape` (a memref<8xi64> descriptor) holds the caller's type's sizes
 * (-1 where dynamic; entries past the rank are ignored). When the tape is
 * empty or its last buffer has another rank, element size or static size,
 * the error is reported, the buffer stays, and the result is zeros of the
 * caller's static sizes (0 where dynamic). */
typedef struct {
  int64_t *allocated;
  int64_t *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} gnn_tape_shape;

GNNC_EXPORT void gnn_rt_tape_pop(void *result, gnn_rt_tape *tape, int64_t rank,
                                 int64_t element_bytes,
                                 const gnn_tape_shape *shape);

/* Non-zero once the tape has refused a value (past its budget, or out of
 * memory; a null tape keeps nothing): the call fails, and the loop that
 * fills the tape can stop. */
GNNC_EXPORT int32_t gnn_rt_tape_refused(const gnn_rt_tape *tape);

/* The number of buffers on the tape, and their bytes (for tests). */
GNNC_EXPORT int64_t gnn_rt_tape_size(const gnn_rt_tape *tape);
GNNC_EXPORT int64_t gnn_rt_tape_bytes(const gnn_rt_tape *tape);

#ifdef __cplusplus
}
#endif

#endif /* GNNC_TAPE_H */
