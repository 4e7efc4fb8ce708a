//===- FuzzGraph.cpp - the runtime's graph builders under libFuzzer -------===//
//
// Part of gnnc. The input is read as int64 values: counts, then edge ids
// or block sizes. Every builder either fails with a message or makes a
// graph whose CSR agrees with its edge lists.
//
//===----------------------------------------------------------------------===//

#include "gnnc/graph.h"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
void checkGraph(const gnn_graph *g) {
  if (g->in_ptr[0] != 0 || g->in_ptr[g->num_dst] != g->num_edges)
    std::abort();
  for (int64_t v = 0; v < g->num_dst; ++v)
    for (int64_t k = g->in_ptr[v]; k < g->in_ptr[v + 1]; ++k) {
      int64_t e = g->in_eid[k];
      if (e < 0 || e >= g->num_edges || g->dst[e] != v ||
          g->src[e] != g->in_src[k] || g->src[e] < 0 || g->src[e] >= g->num_src)
        std::abort();
    }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<int64_t> v(size / 8);
  if (!v.empty())
    std::memcpy(v.data(), data, v.size() * 8);
  if (v.size() < 3)
    return 0;
  // Valid but large sizes would only test malloc: they are skipped, while
  // negative and out-of-limit ones are kept (they must be errors).
  constexpr int64_t kLarge = int64_t(1) << 16, kBlock = 256;
  auto large = [&](int64_t x) {
    return x > kLarge && x <= GNN_GRAPH_MAX_COUNT;
  };
  char err[256];
  gnn_graph *g = nullptr;
  int64_t kind = v[0] & 3, numSrc = v[1], numDst = v[2];
  const int64_t *rest = v.data() + 3;
  int64_t n = int64_t(v.size()) - 3;
  int status = 1;
  if (kind == 0) {
    if (large(numSrc) || large(numDst))
      return 0;
    int64_t edges = n / 2;
    status = gnn_graph_from_coo(numSrc, numDst, edges, rest, rest + edges, &g,
                                err, sizeof(err));
  } else {
    int64_t total = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (rest[i] > kBlock)
        return 0;
      total += rest[i] > 0 ? rest[i] : 0;
    }
    if (total > kLarge)
      return 0;
    if (kind == 1)
      status = gnn_graph_complete_blocks(rest, n, &g, err, sizeof(err));
    else if (kind == 2)
      status = gnn_graph_causal_blocks(rest, n, &g, err, sizeof(err));
    else
      status = gnn_graph_bipartite_blocks(rest, rest + n / 2, n / 2, &g, err,
                                          sizeof(err));
  }
  if (status == 0)
    checkGraph(g);
  else if (g || !std::memchr(err, 0, sizeof(err)))
    std::abort(); // a failure leaves no graph and a terminated message
  gnn_graph_free(g);
  return 0;
}
