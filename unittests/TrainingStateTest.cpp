//===- TrainingStateTest.cpp - what a saved training state agrees with ---===//
//
// Part of gnnc. The fingerprint that --resume checks covers every field of
// the model config and the trainer options (derived from their field
// lists, so a new field is covered without a change to the fingerprint),
// the trained parameters' shapes, and nothing that changes no result.
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/Trainer.h"

#include "gtest/gtest.h"

#include <set>

using namespace mlir::gnn;

namespace {
// A field declared outside its list would be missed by the fingerprint:
// these fail to compile then (add it to the list, or here if it changes no
// result).
struct ModelConfigFromList {
  GNN_MODEL_CONFIG_FIELDS(GNN_DECLARE_FIELD)
  std::string weightsPath, vocabPath;
};
static_assert(sizeof(ModelConfig) == sizeof(ModelConfigFromList),
              "a ModelConfig field outside GNN_MODEL_CONFIG_FIELDS");
struct TrainerOptionsFromList {
  GNN_TRAINER_OPTION_FIELDS(GNN_DECLARE_FIELD)
  int threads = 0;
  CompileOptions compile;
  bool announceGradients = false;
};
static_assert(sizeof(TrainerOptions) == sizeof(TrainerOptionsFromList),
              "a TrainerOptions field outside GNN_TRAINER_OPTION_FIELDS");

/// Changes the `target`-th field a visitor sees to another valid value;
/// records every field's name.
struct Perturb {
  size_t target;
  size_t seen = 0;
  std::vector<std::string> names;

  static void change(double &v) { v = v * 2 + 0.25; }
  static void change(std::optional<double> &v) {
    v = v ? std::optional<double>() : std::optional<double>(3.0);
  }
  static void change(bool &v) { v = !v; }
  template <typename T> static void change(T &v) {
    if constexpr (std::is_enum_v<T>)
      v = static_cast<T>(static_cast<int>(v) == 0 ? 1 : 0);
    else
      v = v + 1;
  }
  template <typename T> void operator()(const char *name, T &v) {
    names.push_back(name);
    if (seen++ == target)
      change(v);
  }
};

ModelConfig config() {
  ModelConfig c;
  c.layers = 2;
  c.dModel = 8;
  c.heads = 2;
  c.dFF = 16;
  c.srcVocab = 9;
  c.tgtVocab = 11;
  return c;
}

/// A tensor's type alone: the fingerprint reads no elements.
HostTensor typed(std::vector<int64_t> shape) {
  HostTensor t;
  t.shape = std::move(shape);
  return t;
}

TensorMap tensors() {
  TensorMap t;
  t["a.weight"] = typed({8, 8});
  t["b.bias"] = typed({8});
  return t;
}
const std::vector<std::string> kNames = {"a.weight", "b.bias"};
} // namespace

TEST(TrainingState, EveryModelFieldEntersTheFingerprint) {
  const uint64_t base =
      stateFingerprint(config(), TrainerOptions(), kNames, tensors());
  Perturb count{~size_t(0)};
  ModelConfig probe = config();
  ModelConfig::visitFields(probe, count);
  ASSERT_GE(count.names.size(), 12u);
  std::set<uint64_t> seen = {base};
  for (size_t i = 0; i < count.names.size(); ++i) {
    ModelConfig changed = config();
    Perturb perturb{i};
    ModelConfig::visitFields(changed, perturb);
    uint64_t fp =
        stateFingerprint(changed, TrainerOptions(), kNames, tensors());
    EXPECT_NE(fp, base) << count.names[i];
    EXPECT_TRUE(seen.insert(fp).second) << count.names[i];
  }
}

TEST(TrainingState, EveryTrainingOptionEntersTheFingerprint) {
  const uint64_t base =
      stateFingerprint(config(), TrainerOptions(), kNames, tensors());
  Perturb count{~size_t(0)};
  TrainerOptions probe;
  TrainerOptions::visitFields(probe, count);
  ASSERT_GE(count.names.size(), 10u);
  for (size_t i = 0; i < count.names.size(); ++i) {
    TrainerOptions changed;
    Perturb perturb{i};
    TrainerOptions::visitFields(changed, perturb);
    EXPECT_NE(stateFingerprint(config(), changed, kNames, tensors()), base)
        << count.names[i];
  }
}

TEST(TrainingState, HowItRunsIsNotPartOfTheFingerprint) {
  TrainerOptions other;
  other.threads = 7;
  other.compile.fuse = false;
  other.compile.compileThreads = 3;
  ModelConfig moved = config();
  moved.weightsPath = "/elsewhere/weights.safetensors";
  moved.vocabPath = "/elsewhere/vocab.txt";
  EXPECT_EQ(stateFingerprint(config(), TrainerOptions(), kNames, tensors()),
            stateFingerprint(moved, other, kNames, tensors()));
}

TEST(TrainingState, ParameterShapesAndNamesEnterTheFingerprint) {
  const uint64_t base =
      stateFingerprint(config(), TrainerOptions(), kNames, tensors());
  TensorMap reshaped = tensors();
  reshaped["b.bias"] = typed({9});
  EXPECT_NE(stateFingerprint(config(), TrainerOptions(), kNames, reshaped),
            base);
  EXPECT_NE(
      stateFingerprint(config(), TrainerOptions(), {"a.weight"}, tensors()),
      base);
}
