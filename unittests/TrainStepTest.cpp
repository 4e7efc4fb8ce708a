//===- TrainStepTest.cpp - the compiled training step ---------------------===//
//
// Part of gnnc. @train_step adds each batch's gradients to the accumulated
// ones, runs Adam from their sum on every grad_accum-th batch and clears
// it, and changes nothing when the objective is not finite: checked
// through the trainer against its own gradients and Adam written here in
// double.
//
//===----------------------------------------------------------------------===//

#include "GNN/InitAll.h"
#include "GNN/Models/Trainer.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include "SameTensors.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using mlir::gnn::testing::sameBytes;

namespace {
ModelConfig tinyConfig() {
  ModelConfig c;
  c.layers = 1;
  c.dModel = 8;
  c.heads = 2;
  c.dFF = 16;
  c.srcVocab = 9;
  c.tgtVocab = 9;
  c.maxLen = 10;
  return c;
}

class TrainStepTest : public ::testing::Test {
protected:
  TrainStepTest() {
    DialectRegistry registry;
    gnn::registerAllDialectsAndExtensions(registry);
    context.appendDialectRegistry(registry);
    examples = {{{3, 4, 5}, {3, 4, 5}}, {{6, 7, 8, 3}, {6, 7, 8, 3}}};
    for (const TrainingExample &e : examples)
      batch.push_back(&e);
  }

  std::unique_ptr<Trainer> create(TensorMap weights, TrainerOptions options) {
    options.dropout = 0;
    options.threads = 1;
    auto trainer =
        Trainer::create(context, config, std::move(weights), options);
    if (!trainer) {
      ADD_FAILURE() << llvm::toString(trainer.takeError());
      return nullptr;
    }
    return std::move(*trainer);
  }

  ModelConfig config = tinyConfig();
  MLIRContext context;
  std::vector<TrainingExample> examples;
  std::vector<const TrainingExample *> batch;
};

/// The trainer's state after its first update from `factor` times the
/// gradients `grads` of parameters `start`: torch.optim.Adam (betas 0.9,
/// 0.98, eps 1e-9) in double, within 1e-5 relative; the sums cleared.
void expectFirstAdamStep(const Trainer &trainer, const TensorMap &start,
                         const TensorMap &grads, double factor) {
  TensorMap state = trainer.state(trainer.getPosition());
  double lr = trainer.learningRate(1);
  int64_t checked = 0;
  for (const std::string &name : trainer.getParameterNames()) {
    const float *g = grads.at("grad." + name).as<float>();
    const float *p0 = start.at(name).as<float>();
    const HostTensor &p = state.at("param." + name);
    const float *m = state.at("adam.m." + name).as<float>();
    const float *v = state.at("adam.v." + name).as<float>();
    // After an update the sum starts again from zero; without accumulation
    // there is none.
    auto kept = state.find("accum." + name);
    EXPECT_EQ(kept != state.end(), trainer.getOptions().accumulates()) << name;
    const float *sum = kept != state.end() ? kept->second.as<float>() : nullptr;
    for (int64_t i = 0; i < p.numElements(); ++i) {
      double total = factor * double(g[i]);
      double m1 = 0.1 * total, v1 = 0.02 * total * total;
      double step = m1 / (std::sqrt(v1) / std::sqrt(1 - 0.98) + 1e-9);
      double p1 = double(p0[i]) - lr / (1 - 0.9) * step;
      EXPECT_NEAR(m[i], m1, 1e-5 * std::abs(m1) + 1e-12) << name << "[" << i;
      EXPECT_NEAR(v[i], v1, 1e-5 * v1 + 1e-18) << name << "[" << i;
      EXPECT_NEAR(p.as<float>()[i], p1, 1e-5 * std::abs(p1) + 1e-7)
          << name << "[" << i;
      if (sum) {
        EXPECT_EQ(sum[i], 0.0f) << name << "[" << i;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000);
}

TEST_F(TrainStepTest, AccumulatesThenUpdatesWithAdam) {
  TrainerOptions options;
  options.gradAccum = 2;
  options.lrFactor = 1;
  options.warmup = 10;
  std::unique_ptr<Trainer> trainer =
      create(Trainer::initialWeights(config, 5, false), options);
  ASSERT_TRUE(trainer);
  TensorMap start = trainer->weights();
  llvm::Expected<TensorMap> grads = trainer->gradients(batch);
  ASSERT_TRUE(bool(grads)) << llvm::toString(grads.takeError());

  // The first batch is only accumulated.
  ASSERT_TRUE(bool(trainer->trainBatch(batch)));
  EXPECT_EQ(trainer->getPosition().step, 0);
  EXPECT_TRUE(sameBytes(trainer->weights(), start));
  TensorMap state = trainer->state(trainer->getPosition());
  for (const std::string &name : trainer->getParameterNames()) {
    const HostTensor &g = grads->at("grad." + name);
    const HostTensor &sum = state.at("accum." + name);
    ASSERT_EQ(g.shape, sum.shape) << name;
    EXPECT_EQ(std::memcmp(g.data(), sum.data(), g.numBytes()), 0) << name;
  }

  // The second (the same batch, the same parameters) updates from the sum
  // of both and clears it.
  ASSERT_TRUE(bool(trainer->trainBatch(batch)));
  EXPECT_EQ(trainer->getPosition().step, 1);
  expectFirstAdamStep(*trainer, start, *grads, 2.0);
}

TEST_F(TrainStepTest, UpdatesEveryBatchWithoutAccumulation) {
  TrainerOptions options;
  options.lrFactor = 2;
  options.warmup = 3;
  std::unique_ptr<Trainer> trainer =
      create(Trainer::initialWeights(config, 9, false), options);
  ASSERT_TRUE(trainer);
  TensorMap start = trainer->weights();
  llvm::Expected<TensorMap> grads = trainer->gradients(batch);
  ASSERT_TRUE(bool(grads)) << llvm::toString(grads.takeError());
  ASSERT_TRUE(bool(trainer->trainBatch(batch)));
  EXPECT_EQ(trainer->getPosition().step, 1);
  expectFirstAdamStep(*trainer, start, *grads, 1.0);
}

TEST_F(TrainStepTest, TiedGradientsAreSummed) {
  TrainerOptions options;
  options.tieWeights = true;
  options.gradAccum = 2;
  std::unique_ptr<Trainer> trainer =
      create(Trainer::initialWeights(config, 6, true), options);
  ASSERT_TRUE(trainer);
  llvm::Expected<TensorMap> grads = trainer->gradients(batch);
  ASSERT_TRUE(bool(grads)) << llvm::toString(grads.takeError());
  ASSERT_TRUE(bool(trainer->trainBatch(batch)));
  TensorMap state = trainer->state(trainer->getPosition());
  const HostTensor &g = grads->at("grad.tgt_embed.lut.weight");
  const HostTensor &sum = state.at("accum.tgt_embed.lut.weight");
  ASSERT_EQ(g.shape, sum.shape);
  EXPECT_EQ(std::memcmp(g.data(), sum.data(), g.numBytes()), 0);
  EXPECT_FALSE(state.count("accum.src_embed.lut.weight"));
}

TEST_F(TrainStepTest, NonFiniteLossChangesNothing) {
  TensorMap weights = Trainer::initialWeights(config, 7, false);
  weights.at("generator.proj.bias").as<float>()[0] =
      std::numeric_limits<float>::quiet_NaN();
  for (int64_t accum : {1, 2}) {
    TrainerOptions options;
    options.gradAccum = accum;
    std::unique_ptr<Trainer> trainer = create(weights, options);
    ASSERT_TRUE(trainer);
    TensorMap before = trainer->state(trainer->getPosition());
    llvm::Expected<LossTotals> t = trainer->trainBatch(batch);
    ASSERT_FALSE(bool(t));
    EXPECT_NE(llvm::toString(t.takeError()).find("not finite"),
              std::string::npos);
    EXPECT_TRUE(sameBytes(trainer->state(trainer->getPosition()), before))
        << "grad_accum " << accum;
    EXPECT_EQ(trainer->getPosition().batchesSeen, 0);
  }
}
TEST_F(TrainStepTest, BatchesPreparedAheadTrainAsGivenOnes) {
  // A batch prepared ahead (fit() readies the next batch while a step
  // runs) trains as the examples themselves do, bit for bit; each is taken
  // once, and a preparation's failure is its take's.
  TrainerOptions options;
  std::unique_ptr<Trainer> given =
      create(Trainer::initialWeights(config, 8, false), options);
  std::unique_ptr<Trainer> ahead =
      create(Trainer::initialWeights(config, 8, false), options);
  ASSERT_TRUE(given && ahead);
  for (int step = 0; step < 2; ++step) {
    llvm::Expected<LossTotals> want = given->trainBatch(batch);
    ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());
    Trainer::BatchAhead next = ahead->prepareAhead(batch);
    llvm::Expected<Trainer::PreparedBatch> prepared = next.take();
    ASSERT_TRUE(bool(prepared)) << llvm::toString(prepared.takeError());
    llvm::Expected<LossTotals> got = ahead->trainBatch(std::move(*prepared));
    ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
    EXPECT_EQ(got->loss, want->loss);
    EXPECT_EQ(got->tokens, want->tokens);
    EXPECT_EQ(got->correct, want->correct);
    llvm::Expected<Trainer::PreparedBatch> again = next.take();
    ASSERT_FALSE(bool(again));
    EXPECT_EQ(llvm::toString(again.takeError()),
              "a batch prepared ahead was taken twice");
  }
  EXPECT_TRUE(sameBytes(ahead->state(ahead->getPosition()),
                        given->state(given->getPosition())));
  Trainer::BatchAhead empty = ahead->prepareAhead({});
  llvm::Expected<Trainer::PreparedBatch> none = empty.take();
  ASSERT_FALSE(bool(none));
  EXPECT_EQ(llvm::toString(none.takeError()), "an empty batch");
  // One never taken is dropped (a GPU's, prepared, with its failure).
  { Trainer::BatchAhead dropped = ahead->prepareAhead({}); }
  EXPECT_EQ(ahead->getPosition().batchesSeen, 2);
}
} // namespace
