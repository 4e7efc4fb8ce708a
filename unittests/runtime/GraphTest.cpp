//===- GraphTest.cpp - the runtime's graph builders -----------------------===//
//
// Part of gnnc. Every builder is checked against a naive construction of the
// same edge set: per destination, its in-edges in increasing edge id.
//
//===----------------------------------------------------------------------===//

#include "gnnc/graph.h"

#include "gtest/gtest.h"

#include <limits>

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {
struct GraphDeleter {
  void operator()(gnn_graph *g) const { gnn_graph_free(g); }
};
using GraphPtr = std::unique_ptr<gnn_graph, GraphDeleter>;

using EdgeList = std::vector<std::pair<int64_t, int64_t>>; // (src, dst)

/// Checks the arrays of `g` against an edge list in edge id order.
void expectGraph(const gnn_graph *g, int64_t numSrc, int64_t numDst,
                 const EdgeList &edges) {
  ASSERT_NE(g, nullptr);
  ASSERT_EQ(g->num_src, numSrc);
  ASSERT_EQ(g->num_dst, numDst);
  ASSERT_EQ(g->num_edges, static_cast<int64_t>(edges.size()));
  for (size_t e = 0; e < edges.size(); ++e) {
    EXPECT_EQ(g->src[e], edges[e].first) << "edge " << e;
    EXPECT_EQ(g->dst[e], edges[e].second) << "edge " << e;
  }
  // Naive CSR: for each destination, edges in increasing id.
  std::vector<std::vector<int64_t>> in(numDst);
  for (size_t e = 0; e < edges.size(); ++e)
    in[edges[e].second].push_back(static_cast<int64_t>(e));
  int64_t slot = 0;
  for (int64_t v = 0; v < numDst; ++v) {
    ASSERT_EQ(g->in_ptr[v], slot) << "destination " << v;
    for (int64_t e : in[v]) {
      EXPECT_EQ(g->in_eid[slot], e);
      EXPECT_EQ(g->in_src[slot], edges[e].first);
      ++slot;
    }
  }
  EXPECT_EQ(g->in_ptr[numDst], slot);
}

GraphPtr fromCoo(int64_t numSrc, int64_t numDst, const EdgeList &edges,
                 std::string *message = nullptr) {
  std::vector<int64_t> src, dst;
  for (auto [u, v] : edges) {
    src.push_back(u);
    dst.push_back(v);
  }
  gnn_graph *g = reinterpret_cast<gnn_graph *>(0x1);
  char err[256] = "";
  int rc =
      gnn_graph_from_coo(numSrc, numDst, static_cast<int64_t>(edges.size()),
                         src.data(), dst.data(), &g, err, sizeof(err));
  if (message)
    *message = err;
  EXPECT_EQ(rc != 0, g == nullptr);
  return GraphPtr(g);
}

TEST(RuntimeGraph, FromCooRandom) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 50; ++trial) {
    int64_t numSrc = 1 + rng() % 40, numDst = 1 + rng() % 40;
    int64_t count = rng() % 300;
    EdgeList edges;
    for (int64_t e = 0; e < count; ++e)
      edges.emplace_back(rng() % numSrc, rng() % numDst);
    GraphPtr g = fromCoo(numSrc, numDst, edges);
    expectGraph(g.get(), numSrc, numDst, edges);
    EXPECT_EQ(g->structure, GNN_STRUCTURE_GENERAL);
  }
}

TEST(RuntimeGraph, FromCooZeroInDegreeAndEmpty) {
  // Node 1 receives nothing, node 3 is isolated, edges repeat.
  EdgeList edges = {{0, 2}, {2, 0}, {0, 2}, {2, 2}};
  GraphPtr g = fromCoo(4, 4, edges);
  expectGraph(g.get(), 4, 4, edges);
  EXPECT_EQ(g->in_ptr[1], g->in_ptr[2]);
  EXPECT_EQ(g->in_ptr[3], g->in_ptr[4]);

  GraphPtr empty = fromCoo(0, 0, {});
  expectGraph(empty.get(), 0, 0, {});
  GraphPtr noEdges = fromCoo(3, 5, {});
  expectGraph(noEdges.get(), 3, 5, {});
}

TEST(RuntimeGraph, FromCooRejectsBadIds) {
  std::string message;
  EXPECT_EQ(fromCoo(3, 3, {{0, 1}, {3, 1}}, &message), nullptr);
  EXPECT_EQ(message, "edge 1: source node 3 is out of range [0, 3)");
  EXPECT_EQ(fromCoo(3, 2, {{0, -1}}, &message), nullptr);
  EXPECT_EQ(message, "edge 0: destination node -1 is out of range [0, 2)");
  gnn_graph *g = nullptr;
  char err[128];
  EXPECT_NE(
      gnn_graph_from_coo(-1, 2, 0, nullptr, nullptr, &g, err, sizeof(err)), 0);
  EXPECT_EQ(g, nullptr);
  EXPECT_NE(std::string(err).find("negative count"), std::string::npos);
  EXPECT_NE(gnn_graph_from_coo(2, 2, 3, nullptr, nullptr, &g, err, sizeof(err)),
            0);
  EXPECT_NE(std::string(err).find("missing edge arrays"), std::string::npos);
  // No error buffer is fine too.
  EXPECT_NE(gnn_graph_from_coo(2, 2, 3, nullptr, nullptr, &g, nullptr, 0), 0);
}

TEST(RuntimeGraph, HugeCountsAreErrorsNotOverflows) {
  // (2^61 + 1) * 8 wraps to 8 bytes: such counts must be refused before
  // anything is allocated from them.
  std::vector<int64_t> src = {0, 1}, dst = {1, 0};
  gnn_graph *g = nullptr;
  char err[256];
  for (int64_t n : {int64_t(1) << 61, GNN_GRAPH_MAX_COUNT + 1,
                    std::numeric_limits<int64_t>::max()}) {
    EXPECT_NE(gnn_graph_from_coo(2, n, 2, src.data(), dst.data(), &g, err,
                                 sizeof(err)),
              0);
    EXPECT_EQ(g, nullptr);
    EXPECT_NE(std::string(err).find("exceed the limit"), std::string::npos)
        << err;
    EXPECT_NE(gnn_graph_from_coo(n, 2, 2, src.data(), dst.data(), &g, err,
                                 sizeof(err)),
              0);
    EXPECT_NE(gnn_graph_from_coo(2, 2, n, src.data(), dst.data(), &g, err,
                                 sizeof(err)),
              0);
  }
  // A count at the limit that does not fit in memory is an out-of-memory
  // error, not a crash.
  EXPECT_NE(gnn_graph_from_coo(2, GNN_GRAPH_MAX_COUNT, 2, src.data(),
                               dst.data(), &g, err, sizeof(err)),
            0);
  EXPECT_EQ(g, nullptr);
  EXPECT_NE(std::string(err).find("out of memory"), std::string::npos) << err;
  // Blocks whose total passes the limit.
  std::vector<int64_t> sizes = {GNN_GRAPH_MAX_COUNT, 1};
  std::vector<int64_t> none = {0, 0};
  EXPECT_NE(gnn_graph_bipartite_blocks(sizes.data(), none.data(), 2, &g, err,
                                       sizeof(err)),
            0);
  EXPECT_NE(std::string(err).find("exceed the limit"), std::string::npos)
      << err;
}

/// The edges of a block-diagonal structure in CSR order.
EdgeList blockEdges(const std::vector<int64_t> &srcSizes,
                    const std::vector<int64_t> &dstSizes, bool causal) {
  EdgeList edges;
  int64_t srcBase = 0, dstBase = 0;
  for (size_t b = 0; b < srcSizes.size(); ++b) {
    for (int64_t j = 0; j < dstSizes[b]; ++j)
      for (int64_t i = 0; i < srcSizes[b]; ++i)
        if (!causal || i <= j)
          edges.emplace_back(srcBase + i, dstBase + j);
    srcBase += srcSizes[b];
    dstBase += dstSizes[b];
  }
  return edges;
}

int64_t sum(const std::vector<int64_t> &v) {
  int64_t s = 0;
  for (int64_t x : v)
    s += x;
  return s;
}

TEST(RuntimeGraph, TransformerBlocks) {
  std::mt19937 rng(7);
  std::normal_distribution<double> length(15.0, 3.0);
  for (int trial = 0; trial < 20; ++trial) {
    size_t count = 1 + rng() % 12;
    std::vector<int64_t> enc, dec;
    for (size_t b = 0; b < count; ++b) {
      enc.push_back(std::max<int64_t>(1, static_cast<int64_t>(length(rng))));
      dec.push_back(std::max<int64_t>(1, static_cast<int64_t>(length(rng))));
    }
    gnn_graph *g = nullptr;
    ASSERT_EQ(gnn_graph_complete_blocks(enc.data(), count, &g, nullptr, 0), 0);
    GraphPtr ee(g);
    expectGraph(ee.get(), sum(enc), sum(enc), blockEdges(enc, enc, false));
    EXPECT_EQ(ee->structure, GNN_STRUCTURE_COMPLETE);

    ASSERT_EQ(gnn_graph_causal_blocks(dec.data(), count, &g, nullptr, 0), 0);
    GraphPtr dd(g);
    expectGraph(dd.get(), sum(dec), sum(dec), blockEdges(dec, dec, true));
    EXPECT_EQ(dd->structure, GNN_STRUCTURE_CAUSAL);

    ASSERT_EQ(gnn_graph_bipartite_blocks(enc.data(), dec.data(), count, &g,
                                         nullptr, 0),
              0);
    GraphPtr ed(g);
    expectGraph(ed.get(), sum(enc), sum(dec), blockEdges(enc, dec, false));
    EXPECT_EQ(ed->structure, GNN_STRUCTURE_BIPARTITE);
  }
}

TEST(RuntimeGraph, BlocksEdgeCases) {
  // Empty blocks, one-node blocks, an empty batch.
  std::vector<int64_t> sizes = {0, 1, 3, 0};
  gnn_graph *g = nullptr;
  ASSERT_EQ(gnn_graph_causal_blocks(sizes.data(), 4, &g, nullptr, 0), 0);
  GraphPtr causal(g);
  expectGraph(causal.get(), 4, 4, blockEdges(sizes, sizes, true));
  EXPECT_EQ(causal->num_edges, 1 + 6);

  ASSERT_EQ(gnn_graph_complete_blocks(nullptr, 0, &g, nullptr, 0), 0);
  GraphPtr none(g);
  expectGraph(none.get(), 0, 0, {});

  char err[128];
  std::vector<int64_t> bad = {2, -1};
  EXPECT_NE(gnn_graph_complete_blocks(bad.data(), 2, &g, err, sizeof(err)), 0);
  EXPECT_EQ(g, nullptr);
  EXPECT_EQ(std::string(err), "complete graph: block 1 has negative size -1");
  std::vector<int64_t> huge = {int64_t(1) << 40};
  EXPECT_NE(gnn_graph_complete_blocks(huge.data(), 1, &g, err, sizeof(err)), 0);
  EXPECT_EQ(std::string(err), "complete graph: too many edges");
  EXPECT_NE(
      gnn_graph_bipartite_blocks(nullptr, nullptr, 2, &g, err, sizeof(err)), 0);
  EXPECT_EQ(std::string(err), "bipartite graph sources: invalid block list");
}
} // namespace
