//===- FuzzSafeTensors.cpp - the safetensors reader under libFuzzer -------===//
//
// Part of gnnc. Any bytes are a safetensors file or an error; a file that
// reads back is written and read again to the same tensors.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/SafeTensors.h"

#include <cstdlib>

using namespace mlir::gnn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<TensorMap> tensors = parseSafeTensors(bytes, "fuzz");
  if (!tensors) {
    llvm::consumeError(tensors.takeError());
    return 0;
  }
  std::string again = serializeSafeTensors(*tensors);
  llvm::Expected<TensorMap> reread = parseSafeTensors(again, "again");
  if (!reread || reread->size() != tensors->size())
    std::abort();
  for (const auto &[name, t] : *tensors) {
    const HostTensor &u = reread->at(name);
    if (u.dtype != t.dtype || u.shape != t.shape ||
        u.numBytes() != t.numBytes() ||
        (t.numBytes() && std::memcmp(u.data(), t.data(), t.numBytes())))
      std::abort();
  }
  return 0;
}
