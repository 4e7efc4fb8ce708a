//===- HeapSettings.cpp - malloc's policy for processes that run steps ----===//
//
// Part of gnnc. A training step allocates and frees the same small blocks
// every time (graphs of a batch, kernels' scratch). With glibc's default
// trim threshold each step's frees shrank the heap and the next step grew
// it again: on the tutorial's model 26 brk calls and about 1,650 page
// faults a step, which the next step had to take again.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/HeapSettings.h"

#include "llvm/ADT/StringRef.h"

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {
constexpr int kMmapThreshold = 32 << 20;
constexpr int kTrimThreshold = 64 << 20;

bool userChoseThresholds() {
  const char *tunables = std::getenv("GLIBC_TUNABLES");
  return (tunables && llvm::StringRef(tunables).contains("glibc.malloc.")) ||
         std::getenv("MALLOC_TRIM_THRESHOLD_") ||
         std::getenv("MALLOC_MMAP_THRESHOLD_");
}
} // namespace

void mlir::gnn::keepFreedHeapForReuse() {
#if defined(__GLIBC__)
  if (userChoseThresholds())
    return;
  mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
#endif
}
