//===- FuzzConfig.cpp - the model config parser under libFuzzer -----------===//
//
// Part of gnnc. Any text is a model config or an error; an accepted config
// has a weight list (sizes that do not overflow).
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/ModelConfig.h"

using namespace mlir::gnn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<ModelConfig> config = parseModelConfig(text, "/fuzz");
  if (!config) {
    llvm::consumeError(config.takeError());
    return 0;
  }
  (void)expectedWeights(*config);
  TensorMap none;
  llvm::consumeError(checkWeights(*config, none));
  return 0;
}
