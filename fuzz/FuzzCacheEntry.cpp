//===- FuzzCacheEntry.cpp - compile cache entries under libFuzzer ---------===//
//
// Part of gnnc. A cache entry is read from a directory anyone may write to:
// any bytes are an entry's objects or nothing. The input is a mode byte
// and an entry less its SHA-256, which the harness appends (else almost
// every input would stop at the digest), except when the mode byte is odd:
// then the bytes are taken as they are. An entry that decodes encodes back
// to itself.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/CompileCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <array>
#include <cstdlib>

using namespace mlir::gnn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  constexpr llvm::StringLiteral kKey = "fuzz-key";
  if (size == 0)
    return 0;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data) + 1, size - 1);
  std::string entry = bytes.str();
  if ((data[0] & 1) == 0) {
    std::array<uint8_t, 32> digest =
        llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes));
    entry.append(reinterpret_cast<const char *>(digest.data()), digest.size());
  }
  std::optional<std::vector<std::string>> objects =
      decodeCacheEntry(kKey, entry);
  if (!objects)
    return 0;
  if (objects->empty() || encodeCacheEntry(kKey, *objects) != entry)
    std::abort();
  return 0;
}
