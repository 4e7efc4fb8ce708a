//===- FuzzTrainState.cpp - training state files under libFuzzer ---------===//
//
// Part of gnnc. `gnn-train --resume` reads DIR/train-state.safetensors,
// which anyone who can write DIR may have made. The input is a mode byte
// and a safetensors file. With an even mode byte, its tensors overlay the
// state of the harness's own trainer (a 1-layer Transformer compiled once),
// so that inputs reach the checks past the fingerprint (the position,
// every tensor's presence, shape and values); with an odd one, the file is
// the state as it is. A state the trainer refuses changes nothing in it; a
// state it restores is the trainer's state afterwards.
//
//===----------------------------------------------------------------------===//

#include "GNN/InitAll.h"
#include "GNN/Models/Trainer.h"
#include "GNN/Support/Environment.h"
#include "GNN/Support/SafeTensors.h"

#include "mlir/IR/MLIRContext.h"

#include <cstdlib>
#include <cstring>
#include <memory>

using namespace mlir;
using namespace mlir::gnn;

namespace {
struct Fixture {
  MLIRContext context;
  std::unique_ptr<Trainer> trainer;
};

Fixture &fixture() {
  static Fixture *f = [] {
    auto *made = new Fixture;
    DialectRegistry registry;
    gnn::registerAllDialectsAndExtensions(registry);
    made->context.appendDialectRegistry(registry);
    ModelConfig config;
    config.layers = 1;
    config.dModel = 8;
    config.heads = 2;
    config.dFF = 16;
    config.srcVocab = 9;
    config.tgtVocab = 9;
    config.maxLen = 10;
    TrainerOptions options;
    options.batchSize = 2;
    options.threads = 1;
    options.gradAccum = 3; // pending sums are part of the state
    auto trainer =
        Trainer::create(made->context, config,
                        Trainer::initialWeights(config, 3, false), options);
    if (!trainer)
      std::abort();
    made->trainer = std::move(*trainer);
    return made;
  }();
  return *f;
}

bool sameTensor(const HostTensor &a, const HostTensor &b) {
  return a.dtype == b.dtype && a.shape == b.shape &&
         (a.numBytes() == 0 ||
          std::memcmp(a.data(), b.data(), a.numBytes()) == 0);
}

bool sameTensors(const TensorMap &a, const TensorMap &b) {
  if (a.size() != b.size())
    return false;
  for (const auto &[name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || !sameTensor(t, it->second))
      return false;
  }
  return true;
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // As the tools do at start-up (OpenBLAS with one thread of its own).
  prepareProcess(readEnvironment());
  (void)fixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  llvm::Expected<TensorMap> file = parseSafeTensors(bytes, "fuzz");
  if (!file) {
    llvm::consumeError(file.takeError());
    return 0;
  }
  Trainer &trainer = *fixture().trainer;
  TensorMap before = trainer.state(trainer.getPosition());
  TensorMap state = (data[0] & 1) ? TensorMap() : before;
  for (auto &[name, t] : *file)
    state[name] = std::move(t);
  llvm::Expected<TrainingPosition> restored = trainer.restore(state);
  TensorMap after = trainer.state(trainer.getPosition());
  if (!restored) {
    llvm::consumeError(restored.takeError());
    if (!sameTensors(before, after))
      std::abort(); // a refused state changed the trainer
    return 0;
  }
  // What the trainer holds now is what it restored (extra tensors in the
  // file aside; the position and fingerprint by value, in any shape).
  for (const auto &[name, t] : after) {
    auto it = state.find(name);
    if (it == state.end())
      std::abort();
    bool byValue = t.dtype == DType::I64 && it->second.dtype == DType::I64 &&
                   t.numBytes() == it->second.numBytes() &&
                   std::memcmp(t.data(), it->second.data(), t.numBytes()) == 0;
    if (!sameTensor(t, it->second) && !byValue)
      std::abort();
  }
  return 0;
}
