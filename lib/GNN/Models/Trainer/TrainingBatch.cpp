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
#include <optional>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::detail;

/// <pad>'s id.
static constexpr int64_t kPad = 2;

Expected<std::unique_ptr<Trainer::Batch>>
Trainer::makeBatch(llvm::ArrayRef<const TrainingExample *> examples) const {
  if (examples.empty())
    return fail("an empty batch");
  auto made = std::make_unique<Batch>();
  Batch &batch = *made;
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
  return std::move(made);
}

std::vector<std::pair<const char *, Argument>>
Trainer::batchInputs(const Batch &batch) const {
  auto graph = [](const GraphPtr &g) {
    Argument a;
    a.graph = g.get();
    return a;
  };
  auto tensor = [](const HostTensor &t, bool constant = false) {
    Argument a;
    a.tensor = &t;
    a.constant = constant;
    return a;
  };
  // The position tables are the trainer's for its program's life.
  std::vector<std::pair<const char *, Argument>> inputs = {
      {model::kEE, graph(batch.ee)},
      {model::kDD, graph(batch.dd)},
      {model::kED, graph(batch.ed)},
      {model::kSrcTokens, tensor(batch.srcTokens)},
      {model::kSrcPositions, tensor(batch.srcPositions)},
      {model::kTgtTokens, tensor(batch.tgtTokens)},
      {model::kTgtPositions, tensor(batch.tgtPositions)},
      {model::kPE, tensor(pe, /*constant=*/true)},
      {model::kLabelIds, tensor(batch.labelIds)},
      {model::kPadIds, tensor(batch.padIds)},
      {model::kLabelWeights, tensor(batch.labelWeights)}};
  if (universal()) {
    inputs.push_back({model::kTimePE, tensor(timePE, /*constant=*/true)});
    inputs.push_back({model::kActWeightsEnc, tensor(batch.actWeightsEnc)});
    inputs.push_back({model::kActWeightsDec, tensor(batch.actWeightsDec)});
  }
  if (batch.staged)
    for (auto [i, input] : llvm::enumerate(inputs))
      input.second = (*batch.staged)[i];
  return inputs;
}

Expected<Trainer::PreparedBatch>
Trainer::prepareBatch(llvm::ArrayRef<const TrainingExample *> examples) const {
  Expected<std::unique_ptr<Batch>> batch = makeBatch(examples);
  if (!batch)
    return batch.takeError();
  if (options.compile.device == Device::CUDA) {
    std::vector<Argument> inputs;
    for (auto &[name, input] : batchInputs(**batch))
      inputs.push_back(input);
    Expected<std::unique_ptr<StagedInputs>> staged = program->stage(inputs);
    if (!staged)
      return staged.takeError();
    (*batch)->staged = std::move(*staged);
  }
  return PreparedBatch(std::move(*batch));
}

Trainer::PreparedBatch::PreparedBatch(std::unique_ptr<Batch> batch)
    : batch(std::move(batch)) {}
Trainer::PreparedBatch::PreparedBatch(PreparedBatch &&) = default;
Trainer::PreparedBatch &
Trainer::PreparedBatch::operator=(PreparedBatch &&) = default;
Trainer::PreparedBatch::~PreparedBatch() = default;

/// A preparation: its result once there, or what to prepare at take()
/// (the CPU's, prepared on the taking thread).
struct Trainer::BatchAhead::Slot {
  std::optional<Expected<PreparedBatch>> result;
  const Trainer *trainer = nullptr;
  std::vector<const TrainingExample *> examples;
};

Trainer::BatchAhead::BatchAhead(std::shared_ptr<Slot> slot,
                                std::shared_future<void> done)
    : slot(std::move(slot)), done(std::move(done)) {}

Trainer::BatchAhead::~BatchAhead() {
  if (!slot)
    return;
  if (done.valid())
    done.wait();
  if (slot->result)
    consumeError(slot->result->takeError());
}

Expected<Trainer::PreparedBatch> Trainer::BatchAhead::take() {
  if (!slot)
    return fail("a batch prepared ahead was taken twice");
  std::shared_ptr<Slot> taken = std::move(slot);
  if (done.valid())
    done.wait();
  if (!taken->result)
    return taken->trainer->prepareBatch(taken->examples);
  return std::move(*taken->result);
}

Trainer::BatchAhead
Trainer::prepareAhead(std::vector<const TrainingExample *> examples) const {
  auto slot = std::make_shared<BatchAhead::Slot>();
  if (options.compile.device != Device::CUDA) {
    slot->trainer = this;
    slot->examples = std::move(examples);
    return BatchAhead(std::move(slot), {});
  }
  if (!worker)
    worker =
        std::make_unique<llvm::StdThreadPool>(llvm::hardware_concurrency(1));
  std::shared_future<void> done =
      worker->async([this, slot, examples = std::move(examples)] {
        slot->result.emplace(prepareBatch(examples));
      });
  return BatchAhead(std::move(slot), std::move(done));
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
