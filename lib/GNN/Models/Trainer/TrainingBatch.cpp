//===- TrainingBatch.cpp - a batch's inputs, loss and accuracy -----------===//
//
// Part of gnnc. A batch of pairs as training.md makes it: encoder input =
// source, decoder input = <sos> + target, labels = target + <eos>; one
// block-diagonal graph per edge set, no padding.
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/TrainingBuilder.h"
#include "TrainerDetail.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::detail;

/// <pad>'s id.
static constexpr int64_t kPad = 2;

Expected<Trainer::Batch>
Trainer::makeBatch(llvm::ArrayRef<const TrainingExample *> examples) const {
  if (examples.empty())
    return fail("an empty batch");
  Batch batch;
  std::vector<int64_t> srcLengths, decLengths, srcTokens, srcPositions,
      tgtTokens, tgtPositions;
  for (const TrainingExample *e : examples) {
    srcLengths.push_back(int64_t(e->source.size()));
    decLengths.push_back(int64_t(e->target.size()) + 1);
    for (auto [pos, t] : llvm::enumerate(e->source)) {
      srcTokens.push_back(t);
      srcPositions.push_back(int64_t(pos));
    }
    tgtTokens.push_back(kSos);
    tgtPositions.push_back(0);
    for (auto [pos, t] : llvm::enumerate(e->target)) {
      tgtTokens.push_back(t);
      tgtPositions.push_back(int64_t(pos) + 1);
      batch.labels.push_back(t);
    }
    batch.labels.push_back(kEos);
  }
  int64_t count = int64_t(examples.size());
  char err[256] = {0};
  gnn_graph *g = nullptr;
  int status =
      gnn_graph_complete_blocks(srcLengths.data(), count, &g, err, sizeof(err));
  Expected<GraphPtr> ee = built(status, g, err);
  if (!ee)
    return ee.takeError();
  status =
      gnn_graph_causal_blocks(decLengths.data(), count, &g, err, sizeof(err));
  Expected<GraphPtr> dd = built(status, g, err);
  if (!dd)
    return dd.takeError();
  status = gnn_graph_bipartite_blocks(srcLengths.data(), decLengths.data(),
                                      count, &g, err, sizeof(err));
  Expected<GraphPtr> ed = built(status, g, err);
  if (!ed)
    return ed.takeError();
  batch.ee = std::move(*ee);
  batch.dd = std::move(*dd);
  batch.ed = std::move(*ed);
  batch.srcTokens = ids(srcTokens);
  batch.srcPositions = ids(srcPositions);
  batch.tgtTokens = ids(tgtTokens);
  batch.tgtPositions = ids(tgtPositions);

  // The loss reads log_probs[n, label] and log_probs[n, <pad>] by their
  // index in the flattened [N, V] tensor and weighs node n by 1 / n_tokens.
  int64_t rows = int64_t(batch.labels.size()), vocab = config.tgtVocab;
  std::vector<int64_t> labelIds(rows), padIds(rows);
  batch.labelWeights = zeros({rows, 1});
  float weight = float(1.0 / double(rows));
  for (int64_t n = 0; n < rows; ++n) {
    labelIds[n] = n * vocab + batch.labels[n];
    padIds[n] = n * vocab + kPad;
    batch.labelWeights.as<float>()[n] = batch.labels[n] == kPad ? 0 : weight;
  }
  batch.labelIds = ids(labelIds);
  batch.padIds = ids(padIds);
  if (config.architecture == Architecture::UniversalTransformer) {
    int64_t encoder = int64_t(srcTokens.size());
    float act = float(options.actLossWeight / double(encoder + rows));
    batch.actWeightsEnc = zeros({encoder, 1});
    batch.actWeightsDec = zeros({rows, 1});
    std::fill_n(batch.actWeightsEnc.as<float>(), encoder, act);
    std::fill_n(batch.actWeightsDec.as<float>(), rows, act);
  }
  return batch;
}

Expected<LossTotals> Trainer::totals(const Batch &batch,
                                     Outputs &results) const {
  Expected<HostTensor> loss = take(results, model::kLoss, "train");
  if (!loss)
    return loss.takeError();
  auto lp = results.find(model::kLogProbs);
  if (lp == results.end())
    return fail("the training program returns no log_probs");
  LossTotals t;
  t.tokens = int64_t(batch.labels.size());
  t.loss = double(loss->as<float>()[0]) * double(t.tokens);
  if (!std::isfinite(t.loss))
    return fail("the loss is not finite");
  // ACT: how many nodes entered each step.
  for (const char *name : {model::kEncSteps, model::kDecSteps}) {
    auto steps = results.find(name);
    if (steps == results.end())
      continue;
    const int32_t *s = steps->second.template as<int32_t>();
    for (int64_t i = 0, n = steps->second.numElements(); i < n; ++i) {
      if (t.entered.size() < size_t(s[i]))
        t.entered.resize(s[i]);
      for (int32_t step = 0; step < s[i]; ++step)
        ++t.entered[step];
      ++t.nodes;
    }
  }
  const float *p = lp->second.as<float>();
  int64_t vocab = config.tgtVocab;
  for (int64_t n = 0; n < t.tokens; ++n) {
    const float *row = p + n * vocab;
    int64_t best = std::max_element(row, row + vocab) - row;
    t.correct += best == batch.labels[n];
  }
  return t;
}
