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

/// The capacity of a pooled block for `bytes`: whole pages in classes of
/// four per doubling (4, 5, 6 or 7 times a power of two pages), at most a
/// quarter over the request. A request that grows a little at a time (a k/v
/// cache growing by some rows per decoding step) so lands in the class of a
/// block freed a step before instead of needing a fresh one each time.
inline uint64_t capacityFor(uint64_t bytes) {
  uint64_t pages = roundUp(bytes, kPage) / kPage;
  uint64_t unit = 1;
  while (pages > 8 * unit)
    unit *= 2;
  // Now pages <= 8 * unit: the smallest multiple of unit covers it, and
  // unit <= pages / 4 once pages > 8, so the class is within a quarter.
  return roundUp(pages, unit) * kPage;
}
} // namespace gnnc

#endif // GNNC_RUNTIME_SIZECLASSES_H
