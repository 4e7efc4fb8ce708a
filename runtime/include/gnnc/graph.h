/*===- graph.h - graphs for compiled gnn programs (C ABI) ----------*- C -*-===*
 *
 * Part of gnnc's runtime, which does not link MLIR.
 *
 * A gnn_graph holds what a compiled program receives for a `!gnn.graph`
 * value: node and edge counts, the source and destination of every edge
 * (indexed by edge id), and a CSR by destination through which destinations
 * receive: in_ptr[v]..in_ptr[v+1] are the slots of v's in-edges, in_src and
 * in_eid give each slot's source node and edge id. Within a destination,
 * slots follow increasing edge id.
 *
 *===----------------------------------------------------------------------===*/

#ifndef GNNC_GRAPH_H
#define GNNC_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define GNNC_EXPORT __attribute__((visibility("default")))
#else
#define GNNC_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Mirrors GraphStructure in the gnn dialect. */
typedef enum gnn_structure {
  GNN_STRUCTURE_GENERAL = 0,
  GNN_STRUCTURE_COMPLETE = 1,
  GNN_STRUCTURE_CAUSAL = 2,
  GNN_STRUCTURE_BIPARTITE = 3
} gnn_structure;

/* The values a `!gnn.graph` is passed as to, from and within compiled code,
 * in this order: the number of source nodes (an index), then the arrays
 * src, dst, in_ptr, in_src and in_eid of a gnn_graph (1-D index memrefs).
 * The number of destinations is in_ptr's length - 1, the number of edges
 * src's length. The compiler's graph type conversion and the runner's
 * argument packing both follow this list. */
typedef enum gnn_graph_part {
  GNN_GRAPH_PART_NUM_SRC = 0,
  GNN_GRAPH_PART_SRC = 1,
  GNN_GRAPH_PART_DST = 2,
  GNN_GRAPH_PART_IN_PTR = 3,
  GNN_GRAPH_PART_IN_SRC = 4,
  GNN_GRAPH_PART_IN_EID = 5,
  GNN_GRAPH_NUM_PARTS = 6
} gnn_graph_part;

typedef struct gnn_graph {
  gnn_structure structure;
  int64_t num_src;
  int64_t num_dst;
  int64_t num_edges;
  int64_t *src;    /* [num_edges] */
  int64_t *dst;    /* [num_edges] */
  int64_t *in_ptr; /* [num_dst + 1] */
  int64_t *in_src; /* [num_edges] */
  int64_t *in_eid; /* [num_edges] */
} gnn_graph;

/* The most nodes (sources or destinations) or edges a graph may have: 2^40.
 * Larger counts are errors, so no array size computed from a count can
 * overflow; counts below it whose arrays do not fit in memory are
 * "out of memory" errors. */
#define GNN_GRAPH_MAX_COUNT (INT64_C(1) << 40)

/* Every function returns 0 on success. On failure it returns non-zero,
 * writes a message into err (if err_size > 0) and sets *out to NULL. */

/* A general graph from edge lists; O(num_edges + num_dst). */
GNNC_EXPORT int gnn_graph_from_coo(int64_t num_src, int64_t num_dst,
                                   int64_t num_edges, const int64_t *src,
                                   const int64_t *dst, gnn_graph **out,
                                   char *err, size_t err_size);

/* A batch of complete graphs (self-loops included): block b has sizes[b]
 * nodes, blocks are consecutive in one node space. */
GNNC_EXPORT int gnn_graph_complete_blocks(const int64_t *sizes, int64_t count,
                                          gnn_graph **out, char *err,
                                          size_t err_size);

/* A batch of causal graphs: in each block, node i sends to node j iff
 * i <= j. */
GNNC_EXPORT int gnn_graph_causal_blocks(const int64_t *sizes, int64_t count,
                                        gnn_graph **out, char *err,
                                        size_t err_size);

/* A batch of complete bipartite graphs from src_sizes[b] source nodes to
 * dst_sizes[b] destination nodes of the same block. */
GNNC_EXPORT int gnn_graph_bipartite_blocks(const int64_t *src_sizes,
                                           const int64_t *dst_sizes,
                                           int64_t count, gnn_graph **out,
                                           char *err, size_t err_size);

GNNC_EXPORT void gnn_graph_free(gnn_graph *graph);

#ifdef __cplusplus
}
#endif

#endif /* GNNC_GRAPH_H */
