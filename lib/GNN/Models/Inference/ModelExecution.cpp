//===- ModelExecution.cpp - encoding, decoding steps, forward ------------===//
//
// Part of gnnc. Runs the compiled entry points on batches: @encode and
// @cross_kv over the sources, @decode one step (with the k/v caches) or over
// whole targets (teacher-forced forward).
//
//===----------------------------------------------------------------------===//

#include "InferenceDetail.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::detail;

Expected<Outputs> TransformerModel::run(const char *entry, const Inputs &inputs,
                                        int64_t rows,
                                        JitProgram::ResultPlacement keep) {
  const std::vector<const HostTensor *> &weights = bound[entry];
  auto missing = [&](const Parameter &p) {
    return fail(llvm::Twine("@") + entry + " has an argument '" + p.name +
                "' that the runner does not provide");
  };
  return program->runNamed(
      entry,
      [&](const Parameter &p, size_t i) -> Expected<Argument> {
        Argument a;
        if (weights[i]) {
          a.tensor = weights[i];
          a.constant = true;
        } else if (p.isGraph) {
          auto it = inputs.graphs.find(p.name);
          if (it == inputs.graphs.end())
            return missing(p);
          a.graph = it->second;
        } else if (auto updated = inputs.updated.find(p.name);
                   updated != inputs.updated.end()) {
          a.updated = updated->second;
        } else {
          auto it = inputs.tensors.find(p.name);
          if (it == inputs.tensors.end())
            return missing(p);
          a.tensor = it->second;
        }
        return a;
      },
      rows >= kParallelRows ? threads : 1, /*onResult=*/{}, keep);
}

Expected<TransformerModel::Encoded>
TransformerModel::encode(llvm::ArrayRef<Sequence> sources) {
  Encoded enc;
  std::vector<int64_t> tokens, positions;
  for (const Sequence &s : sources) {
    enc.offsets.push_back(int64_t(tokens.size()));
    enc.lengths.push_back(int64_t(s.size()));
    for (auto [pos, t] : llvm::enumerate(s)) {
      tokens.push_back(t);
      positions.push_back(int64_t(pos));
    }
  }
  enc.numSrc = int64_t(tokens.size());
  gnn_graph *g = nullptr;
  char err[256] = {0};
  int status = gnn_graph_complete_blocks(
      enc.lengths.data(), int64_t(enc.lengths.size()), &g, err, sizeof(err));
  Expected<GraphPtr> ee = built(status, g, err);
  if (!ee)
    return ee.takeError();
  HostTensor tokenIds = ids(tokens), positionIds = ids(positions);
  Inputs in;
  in.graphs[model::kEE] = ee->get();
  in.tensors[model::kSrcTokens] = &tokenIds;
  in.tensors[model::kSrcPositions] = &positionIds;
  // On a GPU, the encoder's output stays there for @cross_kv, and its k/v
  // for every @decode.
  Expected<Outputs> encoded =
      run(model::kEncode, in, enc.numSrc,
          [](const Parameter &p) { return p.name == model::kMemory; });
  if (!encoded)
    return encoded.takeError();
  Expected<HostTensor> memory = take(*encoded, model::kMemory, model::kEncode);
  if (!memory)
    return memory.takeError();
  if (attentionWeights) {
    enc.ee = std::move(*ee);
    for (auto &[name, t] : *encoded)
      if (llvm::StringRef(name).starts_with("attn."))
        enc.encAttention[name] = std::move(t);
  }
  if (universal()) {
    Expected<HostTensor> steps =
        take(*encoded, model::kEncSteps, model::kEncode);
    if (!steps)
      return steps.takeError();
    enc.encSteps = std::move(*steps);
  }
  Inputs kvIn;
  kvIn.tensors[model::kMemory] = &*memory;
  Expected<Outputs> kv = run(model::kCrossKV, kvIn, enc.numSrc,
                             [](const Parameter &) { return true; });
  if (!kv)
    return kv.takeError();
  // A universal_transformer's one shared layer has one cross k/v.
  int64_t layers = universal() ? 1 : config.layers;
  if (Error e = takeLayers(*kv, layers, model::crossK, model::crossV,
                           model::kCrossKV, enc.crossK, enc.crossV))
    return std::move(e);
  for (int64_t i = 0; i < layers; ++i) {
    enc.selfK.emplace_back(cacheRowShape(), onDevice);
    enc.selfV.emplace_back(cacheRowShape(), onDevice);
  }
  return enc;
}

/// Runs @decode on every live hypothesis's next node: it attends to the
/// hypothesis's cached nodes and itself, and to its example's encoder nodes.
/// `live` is in example order, so the encoder-decoder graph is the
/// bipartite blocks @decode's argument type promises.
Expected<TensorMap>
TransformerModel::decodeStep(Encoded &enc, std::vector<Hypothesis *> &live) {
  int64_t fresh = int64_t(live.size()), cached = enc.cacheRows;
  std::vector<int64_t> tokens, positions, slots, ddSrc, ddDst, edSrc, edDst;
  for (auto [j, h] : llvm::enumerate(live)) {
    int64_t pos = int64_t(h->rows.size());
    tokens.push_back(h->tokens[pos]);
    positions.push_back(pos);
    slots.push_back(cached + int64_t(j));
    for (int64_t r : h->rows) {
      ddSrc.push_back(r);
      ddDst.push_back(int64_t(j));
    }
    ddSrc.push_back(cached + int64_t(j));
    ddDst.push_back(int64_t(j));
    int64_t begin = enc.offsets[h->example];
    for (int64_t s = begin; s < begin + enc.lengths[h->example]; ++s) {
      edSrc.push_back(s);
      edDst.push_back(int64_t(j));
    }
  }
  Expected<GraphPtr> dd = fromCoo(cached + fresh, fresh, ddSrc, ddDst);
  if (!dd)
    return dd.takeError();
  Expected<GraphPtr> ed = fromCoo(enc.numSrc, fresh, edSrc, edDst);
  if (!ed)
    return ed.takeError();
  HostTensor tokenIds = ids(tokens), positionIds = ids(positions),
             slotIds = ids(slots);
  std::vector<HostTensor *> selfK, selfV;
  if (Error e = appendRows(enc.selfK, fresh, selfK))
    return std::move(e);
  if (Error e = appendRows(enc.selfV, fresh, selfV))
    return std::move(e);
  Expected<Outputs> out = run(model::kDecode,
                              decoderInputs(enc, dd->get(), ed->get(), tokenIds,
                                            positionIds, slotIds, selfK, selfV),
                              fresh);
  if (!out)
    return out.takeError();
  for (size_t i = 0; i < enc.selfK.size(); ++i)
    for (auto [name, cache] : {std::pair(model::selfK(i), &enc.selfK[i]),
                               std::pair(model::selfV(i), &enc.selfV[i])}) {
      Expected<HostTensor> result = take(*out, name, model::kDecode);
      if (!result)
        return result.takeError();
      if (Error e = cache->store(*result, name))
        return std::move(e);
    }
  enc.cacheRows = cached + fresh;
  for (auto [j, h] : llvm::enumerate(live))
    h->rows.push_back(cached + int64_t(j));
  return decoderResults(*out);
}

std::vector<int64_t> TransformerModel::cacheRowShape() const {
  if (universal())
    return {config.maxDepth, config.heads, config.dk()};
  return {config.heads, config.dk()};
}

Expected<TensorMap> TransformerModel::decoderResults(Outputs &out) const {
  TensorMap result;
  std::vector<const char *> names = {model::kLogProbs};
  if (universal())
    names.push_back(model::kDecSteps);
  for (const char *name : names) {
    Expected<HostTensor> t = take(out, name, model::kDecode);
    if (!t)
      return t.takeError();
    result[name] = std::move(*t);
  }
  return result;
}

TransformerModel::Inputs TransformerModel::decoderInputs(
    const Encoded &enc, const gnn_graph *dd, const gnn_graph *ed,
    const HostTensor &tokens, const HostTensor &positions,
    const HostTensor &slots, llvm::ArrayRef<HostTensor *> selfK,
    llvm::ArrayRef<HostTensor *> selfV) const {
  Inputs in;
  in.graphs[model::kDD] = dd;
  in.graphs[model::kED] = ed;
  in.tensors[model::kTgtTokens] = &tokens;
  in.tensors[model::kTgtPositions] = &positions;
  in.tensors[model::kCacheSlots] = &slots;
  for (size_t i = 0; i < enc.crossK.size(); ++i) {
    in.tensors[model::crossK(i)] = &enc.crossK[i];
    in.tensors[model::crossV(i)] = &enc.crossV[i];
  }
  for (size_t i = 0; i < selfK.size(); ++i) {
    in.updated[model::selfK(i)] = selfK[i];
    in.updated[model::selfV(i)] = selfV[i];
  }
  return in;
}

Expected<TensorMap> TransformerModel::forward(llvm::ArrayRef<Sequence> sources,
                                              llvm::ArrayRef<Sequence> targets,
                                              AttentionMaps *maps) {
  if (maps && !attentionWeights)
    return fail("attention maps need a model loaded with attention weights");
  Expected<Encoded> enc = encode(sources);
  if (!enc)
    return enc.takeError();
  std::vector<int64_t> lengths, tokens, positions;
  for (const Sequence &t : targets) {
    lengths.push_back(int64_t(t.size()));
    for (auto [pos, id] : llvm::enumerate(t)) {
      tokens.push_back(id);
      positions.push_back(int64_t(pos));
    }
  }
  int64_t rows = int64_t(tokens.size());
  gnn_graph *g = nullptr;
  char err[256] = {0};
  int status = gnn_graph_causal_blocks(lengths.data(), int64_t(lengths.size()),
                                       &g, err, sizeof(err));
  Expected<GraphPtr> dd = built(status, g, err);
  if (!dd)
    return dd.takeError();
  status =
      gnn_graph_bipartite_blocks(enc->lengths.data(), lengths.data(),
                                 int64_t(lengths.size()), &g, err, sizeof(err));
  Expected<GraphPtr> ed = built(status, g, err);
  if (!ed)
    return ed.takeError();
  std::vector<int64_t> slotValues(rows);
  std::iota(slotValues.begin(), slotValues.end(), 0);
  HostTensor tokenIds = ids(tokens), positionIds = ids(positions),
             slots = ids(slotValues);
  // The whole targets at once: caches of their rows, filled in place.
  std::vector<RowCache> kCaches, vCaches;
  std::vector<HostTensor *> selfK, selfV;
  for (size_t i = 0; i < enc->selfK.size(); ++i) {
    kCaches.emplace_back(cacheRowShape(), onDevice);
    vCaches.emplace_back(cacheRowShape(), onDevice);
  }
  if (Error e = appendRows(kCaches, rows, selfK))
    return std::move(e);
  if (Error e = appendRows(vCaches, rows, selfV))
    return std::move(e);
  Expected<Outputs> out =
      run(model::kDecode,
          decoderInputs(*enc, dd->get(), ed->get(), tokenIds, positionIds,
                        slots, selfK, selfV),
          rows);
  if (!out)
    return out.takeError();
  if (maps)
    if (Error e =
            collectAttention(*enc, **dd, **ed, sources, targets, *out, *maps))
      return std::move(e);
  Expected<TensorMap> result = decoderResults(*out);
  if (!result)
    return result.takeError();
  if (enc->encSteps)
    (*result)[model::kEncSteps] = std::move(*enc->encSteps);
  return result;
}

Expected<TensorMap>
TransformerModel::forwardIncremental(llvm::ArrayRef<Sequence> sources,
                                     llvm::ArrayRef<Sequence> targets) {
  Expected<Encoded> enc = encode(sources);
  if (!enc)
    return enc.takeError();
  int64_t vocab = config.tgtVocab;
  std::vector<Hypothesis> hyps(targets.size());
  std::vector<int64_t> firstRow;
  int64_t total = 0;
  for (auto [b, t] : llvm::enumerate(targets)) {
    hyps[b].example = int64_t(b);
    hyps[b].tokens = t;
    firstRow.push_back(total);
    total += int64_t(t.size());
  }
  TensorMap result;
  result[model::kLogProbs] = zeros({total, vocab});
  if (universal()) {
    HostTensor steps;
    steps.dtype = DType::I32;
    steps.shape = {total};
    steps.allocate();
    result[model::kDecSteps] = std::move(steps);
    result[model::kEncSteps] = std::move(*enc->encSteps);
  }
  for (;;) {
    std::vector<Hypothesis *> live;
    for (Hypothesis &h : hyps)
      if (h.rows.size() < h.tokens.size())
        live.push_back(&h);
    if (live.empty())
      break;
    Expected<TensorMap> step = decodeStep(*enc, live);
    if (!step)
      return step.takeError();
    // Each live hypothesis's new row goes to its place in the output.
    for (auto &[name, t] : *step) {
      HostTensor &into = result[name];
      size_t rowBytes = t.shape[0] ? t.numBytes() / size_t(t.shape[0]) : 0;
      for (auto [j, h] : llvm::enumerate(live)) {
        int64_t row = firstRow[h->example] + int64_t(h->rows.size()) - 1;
        std::memcpy(static_cast<char *>(into.data()) + row * rowBytes,
                    static_cast<const char *>(t.data()) + j * rowBytes,
                    rowBytes);
      }
    }
  }
  return result;
}
