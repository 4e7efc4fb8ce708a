//===- HostPool.h - a runtime instance's pool of CPU buffers ----*- C++ -*-===//
//
// Part of gnnc's runtime (internal). Large blocks are mapped from the
// kernel, their sizes rounded up to a size class, and kept for reuse when
// freed (KeptBlocks.h); small blocks are malloc's. Thread-safe.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_HOSTPOOL_H
#define GNNC_RUNTIME_HOSTPOOL_H

#include "KeptBlocks.h"

#include "gnnc/runtime.h"

#include <cstdint>

namespace gnnc {
class HostPool {
public:
  explicit HostPool(const gnn_rt_settings &settings);
  ~HostPool();

  /// Null when out of memory; `alignment` a power of two.
  void *allocate(uint64_t alignment, uint64_t bytes);
  /// Keeps or unmaps `block` if this pool handed it out; false otherwise
  /// (the block is someone else's to free).
  bool takeBack(void *block) { return pool.takeBack(block); }
  /// Hands over the blocks this pool handed out and that are still live
  /// to `heir`, which takes them back when they are freed.
  void bequeath(HostPool &heir) { pool.passLiveTo(heir.pool); }
  void release() { pool.dropAll(); }
  uint64_t cachedBytes() { return pool.keptBytes(); }
  uint64_t limitBytes() const { return pool.blocks.bound(); }

private:
  LockedBlocks pool;
};

/// The machine's physical memory in bytes (0 if unknown).
uint64_t physicalBytes();
} // namespace gnnc

#endif // GNNC_RUNTIME_HOSTPOOL_H
