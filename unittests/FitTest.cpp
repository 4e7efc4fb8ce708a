//===- FitTest.cpp - the training loop as a library ----------------------===//
//
// Part of gnnc. fit() driven from a test: a callback stops it after an
// epoch, with that epoch's checkpoint written; a trainer resumed from it
// ends with the same weights, bit for bit, as a run that was never
// stopped; the step limit writes a mid-epoch checkpoint; a state with
// nothing left to train changes nothing.
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/Fit.h"
#include "GNN/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include "SameTensors.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::gnn;
using mlir::gnn::testing::sameBytes;

namespace {
class FitTest : public ::testing::Test {
protected:
  FitTest() {
    DialectRegistry registry;
    gnn::registerAllDialectsAndExtensions(registry);
    context.appendDialectRegistry(registry);
    config.layers = 1;
    config.dModel = 8;
    config.heads = 2;
    config.dFF = 16;
    config.srcVocab = 9;
    config.tgtVocab = 9;
    config.maxLen = 10;
    // Seven pairs in batches of 2: four batches an epoch, the last short.
    for (int64_t i = 0; i < 7; ++i) {
      Sequence s = {3 + i % 6, 4 + (i * 5) % 5, 3 + (i * 3) % 6};
      train.push_back({s, s});
    }
    valid = {train[1], train[4]};
    options.batchSize = 2;
    options.threads = 1;
    options.lrFactor = 1;
    options.warmup = 4;
    llvm::SmallString<128> dir;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("gnnc-fit", dir));
    outDir = dir.str().str();
  }
  ~FitTest() override { llvm::sys::fs::remove_directories(outDir); }

  std::unique_ptr<Trainer> create() {
    auto trainer = Trainer::create(
        context, config, Trainer::initialWeights(config, 3, false), options);
    if (!trainer) {
      ADD_FAILURE() << llvm::toString(trainer.takeError());
      return nullptr;
    }
    return std::move(*trainer);
  }
  bool exists(const std::string &name) const {
    llvm::SmallString<128> path(outDir);
    llvm::sys::path::append(path, name);
    return llvm::sys::fs::exists(path);
  }

  MLIRContext context;
  ModelConfig config;
  TrainerOptions options;
  std::vector<TrainingExample> train, valid;
  std::string outDir;
};

} // namespace

TEST_F(FitTest, ACallbackStopsItAndAResumedRunEndsWhereAnUnstoppedOneDoes) {
  FitOptions fitOptions;
  fitOptions.epochs = 3;
  fitOptions.outDir = outDir;

  std::unique_ptr<Trainer> whole = create();
  ASSERT_TRUE(whole);
  std::vector<EpochReport> reports;
  FitCallbacks record;
  record.onEpoch = [&](const EpochReport &r) {
    reports.push_back(r);
    return true;
  };
  auto end = fit(*whole, train, valid, fitOptions, record);
  ASSERT_TRUE(bool(end)) << llvm::toString(end.takeError());
  EXPECT_EQ(*end, FitEnd::Epochs);
  ASSERT_EQ(reports.size(), 3u);
  for (auto [i, r] : llvm::enumerate(reports)) {
    EXPECT_EQ(r.epoch, int64_t(i) + 1);
    EXPECT_EQ(r.step, 4 * (int64_t(i) + 1));
    EXPECT_EQ(r.train.tokens, 7 * 4); // three tokens and <eos> a pair
    EXPECT_TRUE(r.validated);
    EXPECT_EQ(r.valid.tokens, 2 * 4);
    EXPECT_FALSE(r.midEpoch);
  }
  TensorMap wholeWeights = whole->weights();

  // Stopped by the callback after epoch 1: its checkpoint, no more.
  ASSERT_TRUE(llvm::sys::fs::remove_directories(outDir) == std::error_code());
  ASSERT_FALSE(llvm::sys::fs::create_directories(outDir));
  std::unique_ptr<Trainer> first = create();
  ASSERT_TRUE(first);
  int64_t epochsSeen = 0;
  std::vector<std::string> checkpoints;
  FitCallbacks stopAfterOne;
  stopAfterOne.onEpoch = [&](const EpochReport &) {
    ++epochsSeen;
    return false;
  };
  stopAfterOne.afterCheckpoint = [&](const std::string &path, int64_t) {
    checkpoints.push_back(path);
    return llvm::Error::success();
  };
  end = fit(*first, train, valid, fitOptions, stopAfterOne);
  ASSERT_TRUE(bool(end)) << llvm::toString(end.takeError());
  EXPECT_EQ(*end, FitEnd::Stopped);
  EXPECT_EQ(epochsSeen, 1);
  ASSERT_EQ(checkpoints.size(), 1u);
  EXPECT_TRUE(llvm::sys::fs::exists(checkpoints[0]));
  EXPECT_TRUE(exists("epoch-1.safetensors"));
  EXPECT_TRUE(exists(kTrainStateFile));
  EXPECT_FALSE(exists("epoch-2.safetensors"));
  EXPECT_EQ(first->getPosition().epoch, 1);
  EXPECT_EQ(first->getPosition().step, 4);
  EXPECT_FALSE(sameBytes(first->weights(), wholeWeights));

  // A fresh trainer resumed from the state trains the two epochs left and
  // ends with the unstopped run's weights.
  std::unique_ptr<Trainer> resumed = create();
  ASSERT_TRUE(resumed);
  llvm::Error restored = resumeFrom(*resumed, outDir);
  ASSERT_FALSE(bool(restored)) << llvm::toString(std::move(restored));
  reports.clear();
  end = fit(*resumed, train, valid, fitOptions, record);
  ASSERT_TRUE(bool(end)) << llvm::toString(end.takeError());
  EXPECT_EQ(*end, FitEnd::Epochs);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].epoch, 2);
  EXPECT_TRUE(sameBytes(resumed->weights(), wholeWeights));

  // Nothing left: no epoch runs, nothing changes.
  reports.clear();
  end = fit(*resumed, train, valid, fitOptions, record);
  ASSERT_TRUE(bool(end)) << llvm::toString(end.takeError());
  EXPECT_EQ(*end, FitEnd::AlreadyDone);
  EXPECT_TRUE(reports.empty());
  EXPECT_TRUE(sameBytes(resumed->weights(), wholeWeights));
}

TEST_F(FitTest, TheStepLimitStopsMidEpochWithACheckpoint) {
  std::unique_ptr<Trainer> t = create();
  ASSERT_TRUE(t);
  FitOptions fitOptions;
  fitOptions.epochs = 5;
  fitOptions.maxSteps = 6;
  fitOptions.outDir = outDir;
  std::vector<EpochReport> reports;
  FitCallbacks record;
  record.onEpoch = [&](const EpochReport &r) {
    reports.push_back(r);
    return true;
  };
  auto end = fit(*t, train, {}, fitOptions, record);
  ASSERT_TRUE(bool(end)) << llvm::toString(end.takeError());
  EXPECT_EQ(*end, FitEnd::StepLimit);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_FALSE(reports[0].midEpoch);
  EXPECT_TRUE(reports[1].midEpoch);
  EXPECT_FALSE(reports[1].validated);
  EXPECT_EQ(reports[1].step, 6);
  EXPECT_TRUE(exists("epoch-1.safetensors"));
  EXPECT_TRUE(exists("step-6.safetensors"));
  EXPECT_FALSE(exists("epoch-2.safetensors"));
  EXPECT_EQ(t->getPosition().step, 6);

  reports.clear();
  end = fit(*t, train, {}, fitOptions, record);
  ASSERT_TRUE(bool(end)) << llvm::toString(end.takeError());
  EXPECT_EQ(*end, FitEnd::AlreadyAtStepLimit);
  EXPECT_TRUE(reports.empty());
}

TEST_F(FitTest, AStateForMoreDataIsRefused) {
  std::unique_ptr<Trainer> t = create();
  ASSERT_TRUE(t);
  TrainingPosition at;
  at.batch = 3;
  t->setPosition(at);
  FitOptions fitOptions;
  fitOptions.epochs = 1;
  auto end = fit(*t, llvm::ArrayRef(train).take_front(4), {}, fitOptions);
  ASSERT_FALSE(bool(end));
  EXPECT_NE(llvm::toString(end.takeError()).find("the training data makes 2"),
            std::string::npos);
}

// gnn-train's flags and gnnc.train's options are checked by one function;
// each names the option as its users spell it.
TEST(TrainingSettings, OneCheckNamesOptionsAsEachCallerSpellsThem) {
  auto flag = [](llvm::StringRef option) {
    return "--" + llvm::join(llvm::split(option, '_'), "-");
  };
  auto python = [](llvm::StringRef option) { return option.str(); };
  EXPECT_FALSE(bool(checkTrainingSettings(TrainingSettings(), flag)));
  auto message = [](const TrainingSettings &s, auto name) {
    llvm::Error e = checkTrainingSettings(s, name);
    return e ? llvm::toString(std::move(e)) : std::string();
  };
  TrainingSettings s;
  s.trainer.batchSize = 0;
  EXPECT_EQ(message(s, flag), "--batch-size must be between 1 and 2^24");
  EXPECT_EQ(message(s, python), "batch_size must be between 1 and 2^24");
  s = TrainingSettings();
  s.trainer.lrFactor = std::nan("");
  EXPECT_EQ(message(s, flag), "--lr-factor must be a positive number");
  s = TrainingSettings();
  s.trainer.dropout = 1.0;
  EXPECT_EQ(message(s, python), "dropout must be in [0, 1)");
  s = TrainingSettings();
  s.maxSteps = 0;
  EXPECT_EQ(message(s, flag), "--max-steps must be at least 1");
  s.maxSteps = std::nullopt;
  s.trainer.gradAccum = 1000001;
  EXPECT_EQ(message(s, python), "grad_accum must be between 1 and 10^6");
  s = TrainingSettings();
  s.resume = s.init = true;
  EXPECT_EQ(message(s, flag),
            "--resume continues from the state; it takes no --init");
  s = TrainingSettings();
  s.device = "tpu";
  EXPECT_EQ(message(s, python), "device must be cpu or cuda, not 'tpu'");
  s = TrainingSettings();
  s.trainer.actLossWeight = -1;
  EXPECT_EQ(message(s, flag),
            "--act-loss-weight must be a non-negative number");
  s = TrainingSettings();
  s.trainer.threads = 5000;
  EXPECT_EQ(message(s, flag),
            "--threads must be between 0 (all cores) and 4096");
  s = TrainingSettings();
  s.epochs = 0;
  EXPECT_EQ(message(s, python), "epochs must be between 1 and 10^6");
}
