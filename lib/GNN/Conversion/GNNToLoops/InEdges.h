//===- InEdges.h - the in-edge index of an edge list ------------*- C++ -*-===//
//
// Part of gnnc. The CSR a graph keeps of its edges: per destination, its
// in-edges in edge id order (in_ptr, in_src, in_eid), built in O(edges +
// nodes) by counting and then placing chunks of edges in parallel, each
// chunk with its own count per destination (no atomics; the order follows
// the edge ids whatever the thread count). gnn.graph_from_coo builds one for
// a new graph; the fused attention backward builds the reversal of its graph
// when it takes a pass over sources, on GPU threads by passes over the
// edges where each destination's sources are a range that edge ids follow
// (the model graphs' blocks), the chunks only where they are not.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOLOOPS_INEDGES_H
#define GNN_CONVERSION_GNNTOLOOPS_INEDGES_H

#include "Lowering.h"

namespace mlir::gnn::loops {

/// A buffer with its element count (an empty buffer may be null).
using SizedBuffer = std::pair<Value, Value>;

/// How many chunks of edges are counted and placed in parallel: at most
/// `maxChunks`, and few enough that the counts (chunks x destinations) take
/// at most `countsPerEdge` slots per edge.
struct Chunking {
  int64_t maxChunks, countsPerEdge;
};
/// A chunk per CPU thread.
constexpr Chunking kThreadChunks{16, 1};
/// A chunk per GPU thread: a thread walks its chunk's edges one by one, so
/// a GPU wants many short chunks.
constexpr Chunking kDeviceChunks{4096, 4};
/// The chunks that suit `target`'s threads.
inline Chunking chunksFor(const LoopTarget &target) {
  return target.elementPerThread() ? kDeviceChunks : kThreadChunks;
}

/// The buffers of an in-edge index and the scratch that filling it needs.
struct InEdgeIndex {
  /// [destinations + 1], [edges], [edges].
  Value inPtr, inSrc, inEid;
  /// Chunks of edges, and their counts per destination ([chunks x
  /// destinations]).
  Value chunks, counts;
};

/// Allocates an index of `numEdges` edges into `numDst` destinations; each
/// buffer, with its element count, is appended to `buffers`.
InEdgeIndex allocateInEdges(Lowering &l, Value numEdges, Value numDst,
                            SmallVectorImpl<SizedBuffer> &buffers,
                            Chunking chunking);

/// Whether every buffer was allocated (the runtime's allocator gives null
/// when memory runs out). If not, reports so (gnn_rt_bad_coo of `badCooKind`
/// with `nodes` and `edges`) and gives `index` a one-element in_ptr (even an
/// empty graph has in_ptr[0]) in place of one that may be missing.
Value checkAllocated(Lowering &l, ArrayRef<SizedBuffer> buffers,
                     InEdgeIndex &index, int64_t badCooKind, Value nodes,
                     Value edges);

/// Running totals of `buffer`'s elements 1..n, element 0 set to 0: the
/// target's kernel (LoopTarget::runningTotals) where it has one, else a
/// serial loop.
void runningTotals(Lowering &l, const LoopTarget &target, Value buffer,
                   Value n);

/// Fills `index` with the edges (src[e], dst[e]), e in [0, numEdges), whose
/// destinations all lie in [0, numDst); `perEdge` also runs on each edge id
/// in the counting sweep.
void fillInEdges(Lowering &l, const LoopTarget &target, Value src, Value dst,
                 Value numEdges, Value numDst, const InEdgeIndex &index,
                 function_ref<void(Value)> perEdge = nullptr);

/// The reversal of `g`: every edge turned around, with the same id, so that
/// a source's out-edges are its in-edges. The edge lists are `g`'s own;
/// the index is new (freed by the deallocation pipeline). When memory runs
/// out it reports so (gnn_rt_bad_coo, GNN_RT_COO_NO_MEMORY_REVERSAL) and the
/// reversal has no destinations and no edges. Chunks and running totals
/// suit `target`.
GraphParts reverseGraph(Lowering &l, const GraphParts &g,
                        const LoopTarget &target);

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOLOOPS_INEDGES_H
