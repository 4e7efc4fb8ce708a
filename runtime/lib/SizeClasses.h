//===- SizeClasses.h - capacities of pooled blocks --------------*- C++ -*-===//
//
// Part of gnnc's runtime: the size classes that the CPU pool (Memory.cpp)
// and the unified-memory pool (CudaPool.cpp) round requests up to.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_SIZECLASSES_H
#define GNNC_RUNTIME_SIZECLASSES_H

#include <cstdint>

namespace gnnc {
constexpr uint64_t kPage = 4096;

inline uint64_t roundUp(uint64_t bytes, uint64_t to) {
  return (bytes + to - 1) / to * to;
}

/// Size classes per doubling: the CPU pool's, and the device pools' (finer:
/// a device's memory is the footprint benchmarks compare, and its blocks
/// are few and large; the 6-layer d_model 512 training step peaks at 2,372
/// MiB held with 16, 2,547 with 4, the same number of driver calls).
constexpr uint64_t kHostClasses = 4, kDeviceClasses = 16;

/// The capacity of a pooled block for `bytes`: whole pages in classes of
/// `classes` per doubling (`classes` to 2 x `classes` - 1 times a power of
/// two pages), under 1 / `classes` over the request. A request that grows a
/// little at a time (a k/v cache growing by some rows per decoding step) so
/// lands in the class of a block freed a step before instead of needing a
/// fresh one each time.
inline uint64_t capacityFor(uint64_t bytes, uint64_t classes = kHostClasses) {
  uint64_t pages = roundUp(bytes, kPage) / kPage;
  uint64_t unit = 1;
  while (pages > 2 * classes * unit)
    unit *= 2;
  // Now pages <= 2 x classes x unit: the smallest multiple of unit covers
  // it, and unit <= pages / classes once pages > 2 x classes.
  return roundUp(pages, unit) * kPage;
}
} // namespace gnnc

#endif // GNNC_RUNTIME_SIZECLASSES_H
