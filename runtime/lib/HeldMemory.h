//===- HeldMemory.h - bytes held from an allocator --------------*- C++ -*-===//
//
// Part of gnnc's runtime. The unified memory a process holds from the
// driver (every block, in use or kept for reuse by a pool) is its footprint
// on the device; its most at any time is the peak that benchmarks compare
// with other systems' (gnn_cuda_peak_memory_bytes).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_HELDMEMORY_H
#define GNNC_RUNTIME_HELDMEMORY_H

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace gnnc {
class HeldMemory {
public:
  /// `block` of `bytes` was taken from the allocator.
  void acquired(void *block, uint64_t bytes);
  /// `block` went back to it; a block not acquired here is ignored.
  void released(void *block);
  /// Bytes held now, and the most held at once so far.
  uint64_t now();
  uint64_t peak();

private:
  std::mutex mutex;
  std::unordered_map<void *, uint64_t> sizes;
  uint64_t held = 0, most = 0;
};
} // namespace gnnc

#endif // GNNC_RUNTIME_HELDMEMORY_H
