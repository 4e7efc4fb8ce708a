//===- CudaPool.cpp - unified-memory blocks kept for reuse ----------------===//
//
// Part of gnnc's runtime (see CudaPool.h).
//
//===----------------------------------------------------------------------===//

#include "CudaPool.h"
#include "SizeClasses.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace gnnc::cuda;

Pool::Pool(std::function<void *(uint64_t, bool)> allocate,
           std::function<void(void *)> release, uint64_t limit)
    : allocate(std::move(allocate)), release(std::move(release)),
      // What was live at the peak is kept however much it is: the device's
      // memory is the program's.
      pool(limit, UINT64_MAX,
           [this](void *block, uint64_t) { this->release(block); }) {}

uint64_t Pool::capacityOfRequest(uint64_t bytes) {
  return capacityFor(std::max<uint64_t>(bytes, 1), kDeviceClasses);
}

void *Pool::take(uint64_t bytes, bool &reused) {
  reused = false;
  if (bytes > UINT64_MAX - kPage)
    return nullptr;
  uint64_t capacity = capacityOfRequest(bytes);
  KeptBlocks &blocks = pool.blocks;
  std::unique_lock<std::mutex> lock(pool.mutex);
  if (void *block = blocks.reuse(capacity)) {
    reused = true;
    return block;
  }
  // The driver is asked without the lock: it may take a while.
  bool keeps = blocks.keptBytes() > 0;
  lock.unlock();
  void *block = allocate(capacity, /*final=*/!keeps);
  lock.lock();
  if (!block && keeps) {
    // Out of memory: what is kept may be enough.
    blocks.dropAll();
    lock.unlock();
    block = allocate(capacity, /*final=*/true);
    lock.lock();
  }
  if (block)
    blocks.handOut(block, capacity);
  return block;
}

void Pool::give(void *block) {
  if (!block)
    return;
  KeptBlocks &blocks = pool.blocks;
  std::unique_lock<std::mutex> lock(pool.mutex);
  if (blocks.keep(block))
    return;
  lock.unlock();
  release(block);
}

void Pool::bequeath(Pool &heir) {
  pool.passLiveTo(heir.pool);
  pool.dropAll();
}
