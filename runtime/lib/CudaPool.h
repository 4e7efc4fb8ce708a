//===- CudaPool.h - unified-memory blocks kept for reuse --------*- C++ -*-===//
//
// Part of gnnc's runtime. A GPU program allocates and frees thousands of
// unified buffers per call (a training step of the 6-layer Transformer:
// about 1,700), and each allocation and free costs the driver tens of
// microseconds. Freed blocks are kept by size class (SizeClasses.h: 16 per
// doubling) and handed out again for a request they exceed by at most a
// quarter. What is kept stays within what the program had live at most
// and no longer has, or 16 MB if that is more (gnn_cuda_set_pool_limit to
// change; 0 keeps nothing). Each runtime instance has its own (Cuda.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_CUDAPOOL_H
#define GNNC_RUNTIME_CUDAPOOL_H

#include "KeptBlocks.h"

#include <cstdint>
#include <functional>
#include <optional>

namespace gnnc::cuda {
class Pool {
public:
  /// `allocate` and `release` get and return blocks of the driver;
  /// `allocate`'s flag says whether a null is final (the pool has no kept
  /// blocks to return and try again with), so that only then is it an error
  /// to report.
  Pool(std::function<void *(uint64_t, bool)> allocate,
       std::function<void(void *)> release, uint64_t limit);

  /// A block of at least `bytes`, kept or new (null if the driver has
  /// none); `reused` says which.
  void *take(uint64_t bytes, bool &reused);
  /// Keeps `block` (from take) for reuse, or returns it to the driver; a
  /// pointer take did not hand out goes to the driver.
  void give(void *block);
  /// Like give for a block this pool handed out (true); false leaves any
  /// other block to the caller (another pool's, or the driver's).
  bool takeBack(void *block) { return pool.takeBack(block); }
  /// The capacity of `block` if this pool handed it out (and it is live).
  std::optional<uint64_t> capacityOf(void *block) {
    return pool.capacityOf(block);
  }
  /// The capacity take() gives a block for `bytes`.
  static uint64_t capacityOfRequest(uint64_t bytes);
  /// Hands the blocks this pool handed out and that are still live to
  /// `heir`, which takes them back when they are freed; what this pool
  /// keeps goes back to the driver.
  void bequeath(Pool &heir);
  /// Bytes kept now.
  uint64_t keptBytes() { return pool.keptBytes(); }

private:
  std::function<void *(uint64_t, bool)> allocate;
  std::function<void(void *)> release;
  LockedBlocks pool;
};

} // namespace gnnc::cuda

#endif // GNNC_RUNTIME_CUDAPOOL_H
