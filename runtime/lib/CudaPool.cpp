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
#include <iterator>

using namespace gnnc::cuda;

Pool::Pool(std::function<void *(uint64_t)> allocate,
           std::function<void(void *)> release, uint64_t limit)
    : allocate(std::move(allocate)), release(std::move(release)), limit(limit) {
}

void *Pool::take(uint64_t bytes, bool &reused) {
  reused = false;
  if (bytes > UINT64_MAX - kPage)
    return nullptr;
  uint64_t capacity = capacityFor(std::max<uint64_t>(bytes, 1));
  std::unique_lock<std::mutex> lock(mutex);
  void *block = nullptr;
  auto it = kept.lower_bound(capacity);
  if (limit > 0 && it != kept.end() && it->first - capacity <= capacity / 4) {
    block = it->second;
    capacity = it->first;
    keptSize -= capacity;
    kept.erase(it);
    reused = true;
  } else {
    lock.unlock();
    block = allocate(capacity);
    if (!block && limit > 0) {
      // Out of memory: what is kept may be enough.
      lock.lock();
      for (auto &[size, kept_block] : kept)
        release(kept_block);
      kept.clear();
      keptSize = 0;
      lock.unlock();
      block = allocate(capacity);
    }
    if (!block)
      return nullptr;
    lock.lock();
  }
  live[block] = capacity;
  liveBytes += capacity;
  peakLiveBytes = std::max(peakLiveBytes, liveBytes);
  trimLocked();
  return block;
}

void Pool::give(void *block) {
  if (!block)
    return;
  std::unique_lock<std::mutex> lock(mutex);
  auto it = live.find(block);
  if (it == live.end() || limit == 0) {
    if (it != live.end()) {
      liveBytes -= it->second;
      live.erase(it);
    }
    lock.unlock();
    release(block);
    return;
  }
  uint64_t capacity = it->second;
  live.erase(it);
  liveBytes -= capacity;
  kept.emplace(capacity, block);
  keptSize += capacity;
  trimLocked();
}

uint64_t Pool::keptBytes() {
  std::lock_guard<std::mutex> lock(mutex);
  return keptSize;
}

void Pool::trimLocked() {
  uint64_t freedSincePeak = peakLiveBytes - liveBytes;
  uint64_t keep = limit == 0 ? 0 : std::max(limit, freedSincePeak);
  while (keptSize > keep) {
    auto largest = std::prev(kept.end());
    release(largest->second);
    keptSize -= largest->first;
    kept.erase(largest);
  }
}

uint64_t gnnc::cuda::poolLimitFromEnvironment() {
  if (const char *setting = std::getenv("GNNC_CUDA_POOL");
      setting && std::strcmp(setting, "off") == 0)
    return 0;
  if (const char *setting = std::getenv("GNNC_CUDA_POOL_MB")) {
    char *end = nullptr;
    unsigned long long mb = std::strtoull(setting, &end, 10);
    if (end != setting && *end == 0 && mb > 0 && mb < (UINT64_MAX >> 20))
      return uint64_t(mb) << 20;
  }
  return uint64_t(512) << 20;
}
