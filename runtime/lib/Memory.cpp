//===- Memory.cpp - buffers of compiled CPU programs ----------------------===//
//
// Part of gnnc's runtime. Large blocks are mapped from the kernel, their
// sizes rounded up to a size class; when freed they are kept in a
// size-ordered pool and handed out again for a request they exceed by at
// most a quarter, or grown (mremap) for a request up to twice their size.
// The pool keeps what the program had live at most and no
// longer has (a step's buffers, for the next step), or a fixed bound if
// that is more: so the program never holds more than its peak plus that
// bound. Small blocks are malloc's.
//
//===----------------------------------------------------------------------===//

#include "gnnc/memory.h"
#include "SizeClasses.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include <sys/mman.h>
#include <unistd.h>

namespace {
using gnnc::capacityFor;
using gnnc::kPage;
using gnnc::roundUp;

/// Below this, malloc's own bins reuse memory well.
constexpr uint64_t kMinKeptBytes = 256 << 10;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GNN_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define GNN_ASAN 1
#endif

uint64_t physicalBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? uint64_t(pages) * uint64_t(size) : 0;
}

bool recycles() {
#ifdef GNN_ASAN
  return false;
#else
  const char *setting = std::getenv("GNNC_POOL");
  return !(setting && std::strcmp(setting, "off") == 0);
#endif
}

/// The bytes kept for reuse in any case: 0 (nothing kept) without
/// recycling; GNNC_POOL_MB megabytes if set, else 512 MB (a quarter of
/// physical memory if less). Beyond it, the pool keeps what the program
/// had live at most and no longer has.
uint64_t maxKeptBytes() {
  if (!recycles())
    return 0;
  if (const char *setting = std::getenv("GNNC_POOL_MB")) {
    char *end = nullptr;
    unsigned long long mb = std::strtoull(setting, &end, 10);
    if (end != setting && *end == 0 && mb < (UINT64_MAX >> 20))
      return uint64_t(mb) << 20;
  }
  return std::min<uint64_t>(physicalBytes() / 4, uint64_t(512) << 20);
}

void *systemAlloc(uint64_t alignment, uint64_t bytes) {
  if (alignment <= alignof(std::max_align_t))
    return std::malloc(bytes);
  return std::aligned_alloc(alignment, roundUp(bytes, alignment));
}

/// A large block straight from the kernel: page-aligned, handed back to it
/// whole when dropped (heap blocks would fragment and stay resident).
void *mapBlock(uint64_t capacity) {
  void *block = mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return block == MAP_FAILED ? nullptr : block;
}

void unmapBlock(void *block, uint64_t capacity) { munmap(block, capacity); }

class Pool {
public:
  void *allocate(uint64_t alignment, uint64_t bytes) {
    // Without reuse every block is the system allocator's, so that
    // AddressSanitizer (which does not track mapped memory) sees each one.
    if (limit == 0 || bytes < kMinKeptBytes || alignment > kPage ||
        bytes > UINT64_MAX - kPage)
      return systemAlloc(alignment, bytes);
    uint64_t capacity = capacityFor(bytes);
    std::lock_guard<std::mutex> lock(mutex);
    auto it = kept.lower_bound(capacity);
    if (it != kept.end() && it->first - capacity <= capacity / 4) {
      void *block = it->second;
      live[block] = it->first;
      keptBytes -= it->first;
      liveBytes += it->first;
      peakLiveBytes = std::max(peakLiveBytes, liveBytes);
      kept.erase(it);
      return block;
    }
    void *block = growKeptLocked(capacity);
    if (!block)
      block = mapBlock(capacity);
    if (!block) {
      // Out of memory: what is kept may be enough.
      releaseLocked();
      block = mapBlock(capacity);
    }
    if (block) {
      live[block] = capacity;
      liveBytes += capacity;
      peakLiveBytes = std::max(peakLiveBytes, liveBytes);
      // More is live now: less of what is kept stays within the peak.
      trimLocked();
    }
    return block;
  }

  void free(void *block) {
    if (!block)
      return;
    std::unique_lock<std::mutex> lock(mutex);
    auto it = live.find(block);
    if (it == live.end()) {
      lock.unlock();
      std::free(block);
      return;
    }
    uint64_t capacity = it->second;
    live.erase(it);
    liveBytes -= capacity;
    kept.emplace(capacity, block);
    keptBytes += capacity;
    trimLocked();
  }

  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    releaseLocked();
  }

  uint64_t cachedBytes() {
    std::lock_guard<std::mutex> lock(mutex);
    return keptBytes;
  }

  uint64_t limitBytes() const { return limit; }

private:
  /// The most bytes kept now: the bound, or what was live at the peak and
  /// is not now if more (up to half of physical memory).
  uint64_t keptLimitLocked() const {
    if (limit == 0)
      return 0;
    uint64_t freedSincePeak =
        peakLiveBytes > liveBytes ? peakLiveBytes - liveBytes : 0;
    return std::max(limit, std::min(freedSincePeak, maxPeakKept));
  }

  /// The largest kept block below `capacity`, if it has at least half of
  /// it, resized to `capacity` (taken out of the pool; null if none). Its
  /// pages stay resident, so only the growth is faulted in: when a batch
  /// grows a little, a step's buffers move up a size class, and the
  /// blocks of the class below would otherwise sit unused while fresh
  /// ones are mapped and faulted in whole (and the pool's bound then
  /// drops other kept blocks the step needs later).
  void *growKeptLocked(uint64_t capacity) {
    auto it = kept.lower_bound(capacity);
    if (it == kept.begin())
      return nullptr;
    --it;
    if (it->first < capacity / 2)
      return nullptr;
    void *grown = mremap(it->second, it->first, capacity, MREMAP_MAYMOVE);
    if (grown == MAP_FAILED)
      return nullptr;
    keptBytes -= it->first;
    kept.erase(it);
    return grown;
  }

  /// Drops kept blocks, the largest first, until they fit the limit.
  void trimLocked() {
    uint64_t keep = keptLimitLocked();
    while (keptBytes > keep) {
      auto largest = std::prev(kept.end());
      unmapBlock(largest->second, largest->first);
      keptBytes -= largest->first;
      kept.erase(largest);
    }
  }

  /// Drops every kept block and forgets the peak.
  void releaseLocked() {
    for (auto &[capacity, block] : kept)
      unmapBlock(block, capacity);
    kept.clear();
    keptBytes = 0;
    peakLiveBytes = liveBytes;
  }

  std::mutex mutex;
  /// Large blocks handed out, with their capacity.
  std::unordered_map<void *, uint64_t> live;
  /// Freed large blocks by capacity.
  std::multimap<uint64_t, void *> kept;
  uint64_t keptBytes = 0;
  /// Bytes of the blocks handed out now, and the most at any time.
  uint64_t liveBytes = 0, peakLiveBytes = 0;
  const uint64_t limit = maxKeptBytes();
  const uint64_t maxPeakKept = physicalBytes() / 2;
};

/// Never destroyed: compiled code may free buffers during exit.
Pool &pool() {
  static Pool *p = new Pool;
  return *p;
}
} // namespace

extern "C" void *gnn_rt_alloc(uint64_t bytes) {
  return pool().allocate(alignof(std::max_align_t), bytes);
}

extern "C" void *gnn_rt_aligned_alloc(uint64_t alignment, uint64_t bytes) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return nullptr;
  return pool().allocate(alignment, bytes);
}

extern "C" void gnn_rt_free(void *ptr) { pool().free(ptr); }

extern "C" void gnn_rt_release_cached_memory(void) { pool().release(); }

extern "C" int gnn_rt_pool_recycles(void) { return maxKeptBytes() > 0; }

extern "C" uint64_t gnn_rt_cached_memory_bytes(void) {
  return pool().cachedBytes();
}

extern "C" uint64_t gnn_rt_pool_limit_bytes(void) {
  return pool().limitBytes();
}
