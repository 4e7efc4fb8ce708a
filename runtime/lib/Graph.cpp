//===- Graph.cpp - graphs for compiled gnn programs -----------------------===//
//
// Part of gnnc's runtime. Builds the index arrays behind a !gnn.graph value
// in time linear in the edges: a counting sort for general graphs, direct
// construction in CSR order for the batched Transformer structures.
//
//===----------------------------------------------------------------------===//

#include "gnnc/graph.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>

#include <unistd.h>

namespace {
struct Error {
  char *buffer;
  size_t size;

  int operator()(const char *format, ...) const
      __attribute__((format(printf, 2, 3))) {
    if (size > 0) {
      va_list args;
      va_start(args, format);
      std::vsnprintf(buffer, size, format, args);
      va_end(args);
    }
    return 1;
  }
};

/// Whether node and edge counts are within GNN_GRAPH_MAX_COUNT (so array
/// sizes computed from them cannot overflow).
bool countsFit(int64_t numSrc, int64_t numDst, int64_t numEdges) {
  return numSrc <= GNN_GRAPH_MAX_COUNT && numDst <= GNN_GRAPH_MAX_COUNT &&
         numEdges <= GNN_GRAPH_MAX_COUNT;
}

/// Whether `bytes` fit in the machine's physical memory. Where the kernel
/// overcommits, malloc grants any size and the process is killed when the
/// pages are touched: a graph larger than the memory is refused up front.
bool fitsInMemory(size_t bytes) {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  return pages <= 0 || pageSize <= 0 ||
         bytes / size_t(pageSize) < size_t(pages);
}

/// Allocates a graph with room for its arrays; null if out of memory. The
/// counts are within GNN_GRAPH_MAX_COUNT.
gnn_graph *allocate(gnn_structure structure, int64_t numSrc, int64_t numDst,
                    int64_t numEdges) {
  // Four edge arrays, the row pointers and the counting sort's cursors.
  if (!fitsInMemory((4 * size_t(numEdges) + 2 * size_t(numDst) + 6) *
                    sizeof(int64_t)))
    return nullptr;
  auto *graph = static_cast<gnn_graph *>(std::calloc(1, sizeof(gnn_graph)));
  if (!graph)
    return nullptr;
  graph->structure = structure;
  graph->num_src = numSrc;
  graph->num_dst = numDst;
  graph->num_edges = numEdges;
  size_t edges = static_cast<size_t>(numEdges) + 1; // never malloc(0)
  auto array = [](size_t n) {
    return static_cast<int64_t *>(std::malloc(n * sizeof(int64_t)));
  };
  graph->src = array(edges);
  graph->dst = array(edges);
  graph->in_src = array(edges);
  graph->in_eid = array(edges);
  graph->in_ptr = array(static_cast<size_t>(numDst) + 1);
  if (!graph->src || !graph->dst || !graph->in_src || !graph->in_eid ||
      !graph->in_ptr) {
    gnn_graph_free(graph);
    return nullptr;
  }
  return graph;
}

/// Checks block sizes and returns their sum, or -1 with a message.
int64_t totalSize(const int64_t *sizes, int64_t count, const char *what,
                  const Error &error) {
  if (count < 0 || (count > 0 && !sizes))
    return error("%s: invalid block list", what), -1;
  int64_t total = 0;
  for (int64_t b = 0; b < count; ++b) {
    if (sizes[b] < 0)
      return error("%s: block %lld has negative size %lld", what,
                   static_cast<long long>(b), static_cast<long long>(sizes[b])),
             -1;
    if (sizes[b] > std::numeric_limits<int64_t>::max() - total)
      return error("%s: block sizes overflow", what), -1;
    total += sizes[b];
  }
  return total;
}

/// Multiplies edge counts with an overflow check (and a sanity bound that
/// keeps the arrays addressable).
bool addProduct(int64_t &sum, int64_t a, int64_t b) {
  const int64_t limit = std::numeric_limits<int64_t>::max() / 64;
  if (a != 0 && b > limit / a)
    return false;
  if (a * b > limit - sum)
    return false;
  sum += a * b;
  return true;
}

/// Builds a block-diagonal graph in CSR order: for each block, for each
/// destination j, the sources [first(j), last(j)) of that block.
template <typename SourceRange>
int buildBlocks(gnn_structure structure, const int64_t *srcSizes,
                const int64_t *dstSizes, int64_t count, int64_t numSrc,
                int64_t numDst, int64_t numEdges, SourceRange range,
                gnn_graph **out, const Error &error, const char *what) {
  if (!countsFit(numSrc, numDst, numEdges))
    return error("%s: %lld nodes and %lld edges exceed the limit of %lld", what,
                 static_cast<long long>(std::max(numSrc, numDst)),
                 static_cast<long long>(numEdges),
                 static_cast<long long>(GNN_GRAPH_MAX_COUNT));
  gnn_graph *graph = allocate(structure, numSrc, numDst, numEdges);
  if (!graph)
    return error("%s: out of memory for %lld edges", what,
                 static_cast<long long>(numEdges));
  int64_t edge = 0, srcBase = 0, dstBase = 0;
  for (int64_t b = 0; b < count; ++b) {
    for (int64_t j = 0; j < dstSizes[b]; ++j) {
      graph->in_ptr[dstBase + j] = edge;
      auto [first, last] = range(srcSizes[b], j);
      for (int64_t i = first; i < last; ++i, ++edge) {
        graph->src[edge] = graph->in_src[edge] = srcBase + i;
        graph->dst[edge] = dstBase + j;
        graph->in_eid[edge] = edge;
      }
    }
    srcBase += srcSizes[b];
    dstBase += dstSizes[b];
  }
  graph->in_ptr[numDst] = edge;
  *out = graph;
  return 0;
}
} // namespace

extern "C" int gnn_graph_from_coo(int64_t numSrc, int64_t numDst,
                                  int64_t numEdges, const int64_t *src,
                                  const int64_t *dst, gnn_graph **out,
                                  char *err, size_t errSize) {
  Error error{err, errSize};
  if (!out)
    return error("gnn_graph_from_coo: no output pointer");
  *out = nullptr;
  if (numSrc < 0 || numDst < 0 || numEdges < 0)
    return error("gnn_graph_from_coo: negative count (src %lld, dst %lld, "
                 "edges %lld)",
                 static_cast<long long>(numSrc), static_cast<long long>(numDst),
                 static_cast<long long>(numEdges));
  if (!countsFit(numSrc, numDst, numEdges))
    return error("gnn_graph_from_coo: counts exceed the limit of %lld (src "
                 "%lld, dst %lld, edges %lld)",
                 static_cast<long long>(GNN_GRAPH_MAX_COUNT),
                 static_cast<long long>(numSrc), static_cast<long long>(numDst),
                 static_cast<long long>(numEdges));
  if (numEdges > 0 && (!src || !dst))
    return error("gnn_graph_from_coo: missing edge arrays");
  for (int64_t e = 0; e < numEdges; ++e) {
    if (src[e] < 0 || src[e] >= numSrc)
      return error("edge %lld: source node %lld is out of range [0, %lld)",
                   static_cast<long long>(e), static_cast<long long>(src[e]),
                   static_cast<long long>(numSrc));
    if (dst[e] < 0 || dst[e] >= numDst)
      return error("edge %lld: destination node %lld is out of range [0, "
                   "%lld)",
                   static_cast<long long>(e), static_cast<long long>(dst[e]),
                   static_cast<long long>(numDst));
  }
  gnn_graph *graph = allocate(GNN_STRUCTURE_GENERAL, numSrc, numDst, numEdges);
  if (!graph)
    return error("gnn_graph_from_coo: out of memory for %lld edges",
                 static_cast<long long>(numEdges));
  // Counting sort by destination; stable, so slots follow edge ids.
  int64_t *ptr = graph->in_ptr;
  for (int64_t v = 0; v <= numDst; ++v)
    ptr[v] = 0;
  for (int64_t e = 0; e < numEdges; ++e)
    ++ptr[dst[e] + 1];
  for (int64_t v = 0; v < numDst; ++v)
    ptr[v + 1] += ptr[v];
  for (int64_t e = 0; e < numEdges; ++e) {
    graph->src[e] = src[e];
    graph->dst[e] = dst[e];
  }
  // One cursor per destination places each edge in its slot.
  std::unique_ptr<int64_t[]> cursor(new (std::nothrow) int64_t[numDst + 1]);
  if (!cursor) {
    gnn_graph_free(graph);
    return error("gnn_graph_from_coo: out of memory");
  }
  for (int64_t v = 0; v <= numDst; ++v)
    cursor[v] = ptr[v];
  for (int64_t e = 0; e < numEdges; ++e) {
    int64_t slot = cursor[dst[e]]++;
    graph->in_src[slot] = src[e];
    graph->in_eid[slot] = e;
  }
  *out = graph;
  return 0;
}

extern "C" int gnn_graph_complete_blocks(const int64_t *sizes, int64_t count,
                                         gnn_graph **out, char *err,
                                         size_t errSize) {
  Error error{err, errSize};
  if (!out)
    return error("gnn_graph_complete_blocks: no output pointer");
  *out = nullptr;
  int64_t nodes = totalSize(sizes, count, "complete graph", error);
  if (nodes < 0)
    return 1;
  int64_t edges = 0;
  for (int64_t b = 0; b < count; ++b)
    if (!addProduct(edges, sizes[b], sizes[b]))
      return error("complete graph: too many edges");
  return buildBlocks(
      GNN_STRUCTURE_COMPLETE, sizes, sizes, count, nodes, nodes, edges,
      [](int64_t n, int64_t) { return std::pair<int64_t, int64_t>(0, n); }, out,
      error, "complete graph");
}

extern "C" int gnn_graph_causal_blocks(const int64_t *sizes, int64_t count,
                                       gnn_graph **out, char *err,
                                       size_t errSize) {
  Error error{err, errSize};
  if (!out)
    return error("gnn_graph_causal_blocks: no output pointer");
  *out = nullptr;
  int64_t nodes = totalSize(sizes, count, "causal graph", error);
  if (nodes < 0)
    return 1;
  int64_t edges = 0;
  for (int64_t b = 0; b < count; ++b) {
    // n (n + 1) / 2 edges, computed without overflowing.
    int64_t n = sizes[b];
    if (!addProduct(edges, n % 2 ? n : n / 2, n % 2 ? (n + 1) / 2 : n + 1))
      return error("causal graph: too many edges");
  }
  return buildBlocks(
      GNN_STRUCTURE_CAUSAL, sizes, sizes, count, nodes, nodes, edges,
      [](int64_t, int64_t j) { return std::pair<int64_t, int64_t>(0, j + 1); },
      out, error, "causal graph");
}

extern "C" int gnn_graph_bipartite_blocks(const int64_t *srcSizes,
                                          const int64_t *dstSizes,
                                          int64_t count, gnn_graph **out,
                                          char *err, size_t errSize) {
  Error error{err, errSize};
  if (!out)
    return error("gnn_graph_bipartite_blocks: no output pointer");
  *out = nullptr;
  int64_t numSrc = totalSize(srcSizes, count, "bipartite graph sources", error);
  if (numSrc < 0)
    return 1;
  int64_t numDst =
      totalSize(dstSizes, count, "bipartite graph destinations", error);
  if (numDst < 0)
    return 1;
  int64_t edges = 0;
  for (int64_t b = 0; b < count; ++b)
    if (!addProduct(edges, srcSizes[b], dstSizes[b]))
      return error("bipartite graph: too many edges");
  return buildBlocks(
      GNN_STRUCTURE_BIPARTITE, srcSizes, dstSizes, count, numSrc, numDst, edges,
      [](int64_t n, int64_t) { return std::pair<int64_t, int64_t>(0, n); }, out,
      error, "bipartite graph");
}

extern "C" void gnn_graph_free(gnn_graph *graph) {
  if (!graph)
    return;
  std::free(graph->src);
  std::free(graph->dst);
  std::free(graph->in_ptr);
  std::free(graph->in_src);
  std::free(graph->in_eid);
  std::free(graph);
}
