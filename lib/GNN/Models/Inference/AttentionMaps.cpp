//===- AttentionMaps.cpp - per-sequence attention maps of a forward -------===//
//
// Part of gnnc. A model compiled with attention weights returns, for every
// attention, one weight per edge of the batch's graph (and, for a Universal
// Transformer, per ACT step). This file turns them into the dense
// [heads, destinations, sources] maps of single sequences that
// TransformerModel.h's AttentionMaps describes, walking each sequence's
// destinations through the graph's CSR, so the work is proportional to the
// chosen sequences' edges.
//
//===----------------------------------------------------------------------===//

#include "InferenceDetail.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::detail;

namespace {
/// Where each sequence of a batch lies in one node space.
struct NodeSpace {
  explicit NodeSpace(llvm::ArrayRef<Sequence> sequences) {
    for (const Sequence &s : sequences) {
      offsets.push_back(total);
      lengths.push_back(int64_t(s.size()));
      total += int64_t(s.size());
    }
  }
  std::vector<int64_t> offsets, lengths;
  int64_t total = 0;
};

/// One attention's per-edge weights and the graph they are on.
struct EdgeWeights {
  const gnn_graph *graph;
  const HostTensor *weights; // [edges, h, 1] or [edges, depth, h, 1]
  const NodeSpace *src, *dst;
};

/// Checks that `w` holds one weight per edge of `g` and head (per step when
/// `depth` > 0).
Error checkShape(const HostTensor &w, const gnn_graph &g, int64_t heads,
                 int64_t depth, llvm::StringRef name) {
  std::vector<int64_t> expected = {g.num_edges, heads, 1};
  if (depth > 0)
    expected.insert(expected.begin() + 1, depth);
  if (w.dtype != DType::F32 || w.shape != expected)
    return fail("the program returns '" + name + "' as " + w.describe() +
                ", not one float32 weight per edge and head");
  return Error::success();
}

/// The weights of the edges into sequence `b`'s destinations at ACT step
/// `step` (0 without steps), as [heads, destinations, sources].
Expected<HostTensor> denseMap(const EdgeWeights &e, int64_t b, int64_t heads,
                              int64_t depth, int64_t step) {
  const gnn_graph &g = *e.graph;
  int64_t dstBegin = e.dst->offsets[b], dstLen = e.dst->lengths[b];
  int64_t srcBegin = e.src->offsets[b], srcLen = e.src->lengths[b];
  if (g.num_dst != e.dst->total || g.num_src != e.src->total)
    return fail("an attention graph does not match its batch");
  HostTensor map = zeros({heads, dstLen, srcLen});
  float *out = map.as<float>();
  const float *w = e.weights->as<float>();
  int64_t perEdge = std::max<int64_t>(depth, 1) * heads;
  for (int64_t v = 0; v < dstLen; ++v) {
    int64_t node = dstBegin + v;
    for (int64_t slot = g.in_ptr[node]; slot < g.in_ptr[node + 1]; ++slot) {
      int64_t u = g.in_src[slot] - srcBegin, edge = g.in_eid[slot];
      if (u < 0 || u >= srcLen)
        return fail("an attention edge leaves its sequence");
      const float *row = w + edge * perEdge + step * heads;
      for (int64_t h = 0; h < heads; ++h)
        out[(h * dstLen + v) * srcLen + u] = row[h];
    }
  }
  return map;
}

/// The most ACT steps any node of sequence `b` ran.
int64_t stepsOf(const HostTensor &steps, const NodeSpace &space, int64_t b) {
  const int32_t *s = steps.as<int32_t>() + space.offsets[b];
  int32_t most = 0;
  for (int64_t i = 0; i < space.lengths[b]; ++i)
    most = std::max(most, s[i]);
  return most;
}

HostTensor sliceSteps(const HostTensor &steps, const NodeSpace &space,
                      int64_t b) {
  HostTensor t;
  t.dtype = DType::I32;
  t.shape = {space.lengths[b]};
  t.allocate();
  std::memcpy(t.data(), steps.as<int32_t>() + space.offsets[b], t.numBytes());
  return t;
}

Expected<const HostTensor *>
find(const Outputs &outputs, const std::string &name, llvm::StringRef entry) {
  auto it = outputs.find(name);
  if (it == outputs.end())
    return fail("@" + entry + " returns no '" + name +
                "': the program does not return attention weights");
  return &it->second;
}
} // namespace

Error TransformerModel::collectAttention(
    const Encoded &enc, const gnn_graph &dd, const gnn_graph &ed,
    llvm::ArrayRef<Sequence> sources, llvm::ArrayRef<Sequence> targets,
    Outputs &decoded, AttentionMaps &maps) const {
  if (maps.names.size() != maps.sequences.size())
    return fail("attention maps: one name per sequence is needed");
  NodeSpace srcSpace(sources), tgtSpace(targets);
  int64_t heads = config.heads;
  // Each kind: its weights' entry point and outputs, graph and spaces.
  struct Kind {
    const char *name;
    const char *entry;
    const Outputs *outputs;
    const gnn_graph *graph;
    const NodeSpace *src, *dst;
  };
  Kind kinds[] = {{model::kEncAttention, model::kEncode, &enc.encAttention,
                   enc.ee.get(), &srcSpace, &srcSpace},
                  {model::kDecAttention, model::kDecode, &decoded, &dd,
                   &tgtSpace, &tgtSpace},
                  {model::kCrossAttention, model::kDecode, &decoded, &ed,
                   &srcSpace, &tgtSpace}};
  const HostTensor *decSteps = nullptr;
  if (universal()) {
    Expected<const HostTensor *> steps =
        find(decoded, model::kDecSteps, model::kDecode);
    if (!steps)
      return steps.takeError();
    decSteps = *steps;
  }
  for (auto [b, name] : llvm::zip_equal(maps.sequences, maps.names)) {
    if (b < 0 || b >= int64_t(sources.size()))
      return fail("attention maps: no sequence " + llvm::Twine(b) +
                  " in the batch");
    std::string suffix = "." + std::to_string(name);
    for (const Kind &k : kinds) {
      if (!k.graph)
        return fail("attention maps: @encode's graph was not kept");
      // Layers, or the ACT steps the destinations' side ran.
      int64_t depth = universal() ? config.maxDepth : 0;
      int64_t count = config.layers;
      if (universal())
        count =
            stepsOf(k.dst == &srcSpace ? *enc.encSteps : *decSteps, *k.dst, b);
      for (int64_t l = 0; l < count; ++l) {
        std::string result = universal() ? model::attentionSteps(k.name)
                                         : model::attentionWeights(k.name, l);
        Expected<const HostTensor *> w = find(*k.outputs, result, k.entry);
        if (!w)
          return w.takeError();
        if (Error e = checkShape(**w, *k.graph, heads, depth, result))
          return e;
        Expected<HostTensor> map = denseMap({k.graph, *w, k.src, k.dst}, b,
                                            heads, depth, universal() ? l : 0);
        if (!map)
          return map.takeError();
        std::string layer =
            universal() ? "step" + std::to_string(l) : std::to_string(l);
        maps.tensors["attn." + std::string(k.name) + "." + layer + suffix] =
            std::move(*map);
      }
    }
    maps.tensors["tokens.src" + suffix] = ids(sources[b]);
    maps.tensors["tokens.tgt" + suffix] = ids(targets[b]);
    if (universal()) {
      maps.tensors["steps.enc" + suffix] =
          sliceSteps(*enc.encSteps, srcSpace, b);
      maps.tensors["steps.dec" + suffix] = sliceSteps(*decSteps, tgtSpace, b);
    }
  }
  return Error::success();
}
