/*===- errors.h - errors raised by compiled gnn programs (C ABI) ---*- C -*-===*
 *
 * Part of gnnc's runtime. Compiled code cannot return an error, so it
 * reports one here and keeps running on safe, empty data; the caller takes
 * the error after the call and discards the results.
 *
 *===----------------------------------------------------------------------===*/

#ifndef GNNC_ERRORS_H
#define GNNC_ERRORS_H

#include <stddef.h>
#include <stdint.h>

#include "gnnc/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where errors go: compiled programs receive a context as their first
 * argument and report into it, so that programs running in one process (a
 * training step and an evaluation, two threads) keep their errors apart.
 * Each context holds at most one error: the first report wins. */
typedef struct gnn_rt_context gnn_rt_context;

/* A new context without an error, of the default runtime instance
 * (gnnc/runtime.h has contexts of others); NULL if memory is exhausted. */
GNNC_EXPORT gnn_rt_context *gnn_rt_context_create(void);
GNNC_EXPORT void gnn_rt_context_destroy(gnn_rt_context *context);

/* The process-wide context: reports with a NULL context, and the runtime's
 * own failures (a library that cannot be loaded, a failed GPU driver call),
 * which are not tied to one program, go here. */
GNNC_EXPORT gnn_rt_context *gnn_rt_default_context(void);

/* Reports an error in words. Thread-safe; the context's first report wins. */
GNNC_EXPORT void gnn_rt_context_report(gnn_rt_context *context,
                                       const char *message);

/* The most bytes the tapes of one run may keep for the backward of its
 * loops (gnnc/tape.h): `bytes` > 0, or 0 for the context's runtime
 * instance's setting (gnnc/runtime.h), by default half of the machine's
 * physical memory. A tape that would pass it keeps nothing more and
 * reports the error. */
GNNC_EXPORT void gnn_rt_context_set_tape_budget(gnn_rt_context *context,
                                                int64_t bytes);
GNNC_EXPORT int64_t gnn_rt_context_tape_budget(gnn_rt_context *context);

/* Returns non-zero if an error was reported into the context since the last
 * call, writes its message into err (if err_size > 0) and clears it. */
GNNC_EXPORT int gnn_rt_context_take_error(gnn_rt_context *context, char *err,
                                          size_t err_size);

/* Called by code lowered from gnn.graph_from_coo: edge `edge` names node
 * `node`, outside [0, bound) of the source (is_source != 0) or destination
 * nodes. */
GNNC_EXPORT void gnn_rt_edge_out_of_range(gnn_rt_context *context, int64_t edge,
                                          int64_t node, int64_t bound,
                                          int64_t is_source);

/* What gnn_rt_rows_mismatch compared a feature's size with. */
typedef enum gnn_rt_size_target {
  GNN_RT_SIZE_SRC_NODES = 0,  /* rows: the graph's source nodes */
  GNN_RT_SIZE_DST_NODES = 1,  /* rows: the graph's destination nodes */
  GNN_RT_SIZE_EDGES = 2,      /* rows: the graph's edges */
  GNN_RT_SIZE_INPUT_ROWS = 3, /* rows: those of the op's other inputs */
  GNN_RT_SIZE_ITEM = 4        /* a per-row dimension */
} gnn_rt_size_target;

/* Called by lowered gnn ops: a feature has size `rows` (in its row
 * dimension, or in a per-row dimension for GNN_RT_SIZE_ITEM) where the op
 * needs `expected`; `target` is a gnn_rt_size_target. The op computes
 * nothing. */
GNNC_EXPORT void gnn_rt_rows_mismatch(gnn_rt_context *context, int64_t rows,
                                      int64_t expected, int64_t target);

/* What gnn_rt_bad_coo reports, and what its a and b are. */
typedef enum gnn_rt_coo_error {
  /* The edge lists differ in length (a source ids, b destination ids). */
  GNN_RT_COO_LENGTHS = 0,
  /* The source or destination node count a is outside [0, b]. */
  GNN_RT_COO_SRC_COUNT = 1,
  GNN_RT_COO_DST_COUNT = 2,
  /* No memory for a graph of a nodes and b edges. */
  GNN_RT_COO_NO_MEMORY = 3,
  /* No memory for the reversal of a graph of a nodes and b edges, which a
   * lowered op builds for itself. */
  GNN_RT_COO_NO_MEMORY_REVERSAL = 4
} gnn_rt_coo_error;

/* Called by code lowered from gnn.graph_from_coo before it allocates
 * anything, `kind` a gnn_rt_coo_error: the graph comes out empty (an op
 * whose reversal failed skips the work that needed it). */
GNNC_EXPORT void gnn_rt_bad_coo(gnn_rt_context *context, int64_t kind,
                                int64_t a, int64_t b);

/* Called by lowered gnn ops that take id lists (gather_rows, scatter_rows,
 * in_subgraph): entry `position` of the list is `id`, outside [0, bound).
 * The entry is skipped. */
GNNC_EXPORT void gnn_rt_id_out_of_range(gnn_rt_context *context,
                                        int64_t position, int64_t id,
                                        int64_t bound);

/* What a check's slot holds while no entry failed (the kernels lower it
 * to the first failing entry's position). */
#define GNN_RT_NO_ENTRY INT64_MAX

/* A memref<?xi64> (or of index) as compiled code passes one. */
typedef struct {
  int64_t *allocated;
  int64_t *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} gnn_memref1d_i64;

/* The device form of an id list's check (kernels cannot call the runtime):
 * the kernels lowered `slot[0]` to the first bad entry's position (it
 * holds GNN_RT_NO_ENTRY if none was bad); reports that entry of `ids` as
 * gnn_rt_id_out_of_range does. Called once those kernels are done; the GPU
 * runtime's gnn_cuda_check_bad_id_queued calls it when its stream gets
 * there. */
GNNC_EXPORT void _mlir_ciface_gnn_rt_check_bad_id(gnn_rt_context *context,
                                                  gnn_memref1d_i64 *slot,
                                                  gnn_memref1d_i64 *ids,
                                                  int64_t bound);

/* The device form of a scatter's distinct-id check: the kernels lowered
 * `slot[0]` to the first entry whose id an earlier entry names
 * (GNN_RT_NO_ENTRY: none), and `first[id]` holds the first entry naming row
 * `id`; reports GNN_RT_REPEATED_ID through gnn_rt_bad_value at the op's line
 * and column. Called (or queued) like gnn_rt_check_bad_id. */
GNNC_EXPORT void _mlir_ciface_gnn_rt_check_repeated_id(
    gnn_rt_context *context, gnn_memref1d_i64 *slot, gnn_memref1d_i64 *ids,
    gnn_memref1d_i64 *first, int64_t line, int64_t column);

/* What gnn_rt_bad_value reports, and what its a, b, c, d and e are. */
typedef enum gnn_rt_value_error {
  /* An integer division or remainder of a by zero. */
  GNN_RT_DIVISION_BY_ZERO = 0,
  /* A signed division whose quotient does not fit: a (the smallest value
   * of its type) by b = -1. */
  GNN_RT_DIVISION_OVERFLOW = 1,
  /* tensor.extract or tensor.insert at index a in dimension c, whose size
   * is b. */
  GNN_RT_INDEX_OUT_OF_RANGE = 2,
  /* A slice of b elements from offset a with stride e in dimension d, whose
   * size is c. */
  GNN_RT_SLICE_OUT_OF_RANGE = 3,
  /* tensor.insert_slice of a source of size a into a slice of size b in
   * dimension c. */
  GNN_RT_SLICE_SOURCE_SIZE = 4,
  /* tensor.reshape to a shape of a elements (-1: a negative size, or 2^63
   * elements or more) from a tensor of b elements. */
  GNN_RT_RESHAPE_COUNT = 5,
  /* A new tensor of a elements (-1: a negative size, or 2^63 elements or
   * more) of b bytes each, more
   * than the c bytes one allocation may take
   * (gnn_rt_allocation_limit_bytes, gnnc/memory.h). */
  GNN_RT_ALLOCATION_TOO_LARGE = 6,
  /* tensor.dim at index a of a tensor of rank b. */
  GNN_RT_DIM_OUT_OF_RANGE = 7,
  /* gnn.scatter_rows (without add): id a at entries b and c of the list. */
  GNN_RT_REPEATED_ID = 8
} gnn_rt_value_error;

/* Called by code that gnn-guard-runtime-values adds (and the lowering of
 * gnn.scatter_rows, for repeated ids) where an operation is
 * valid only for some values that are known at run time (integer division,
 * indices, slices, reshapes, sizes of new tensors): `kind` a
 * gnn_rt_value_error, its values, then the operation's line and column in
 * the program (0 when unknown). The operation computes a stand-in that is
 * safe to run on (a zero, an empty tensor, the destination unchanged). */
GNNC_EXPORT void gnn_rt_bad_value(gnn_rt_context *context, int64_t kind,
                                  int64_t a, int64_t b, int64_t c, int64_t d,
                                  int64_t e, int64_t line, int64_t column);

/* gnn_rt_context_report into the context bound to the calling thread
 * (gnnc/runtime.h), else the default context; gnn_rt_context_take_error on
 * the default context. */
GNNC_EXPORT void gnn_rt_report(const char *message);
GNNC_EXPORT int gnn_rt_take_error(char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* GNNC_ERRORS_H */
