//===- Memory.cpp - buffers of compiled CPU programs ----------------------===//
//
// Part of gnnc's runtime. Large blocks are mapped from the kernel, their
// sizes rounded up to a size class, and kept for reuse when freed
// (KeptBlocks.h); a request up to twice a kept block's size may also grow
// it (mremap). Small blocks are malloc's.
//
//===----------------------------------------------------------------------===//

#include "gnnc/memory.h"
#include "KeptBlocks.h"
#include "SizeClasses.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>

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
    if (blocks.bound() == 0 || bytes < kMinKeptBytes || alignment > kPage ||
        bytes > UINT64_MAX - kPage)
      return systemAlloc(alignment, bytes);
    uint64_t capacity = capacityFor(bytes);
    std::lock_guard<std::mutex> lock(mutex);
    if (void *block = blocks.reuse(capacity))
      return block;
    // A kept block of the class below, grown: its pages stay resident, so
    // only the growth is faulted in. When a batch grows a little, a step's
    // buffers move up a size class, and the blocks of the class below
    // would otherwise sit unused while fresh ones are mapped and faulted
    // in whole (and the bound then drops other kept blocks the step needs
    // later).
    void *block =
        blocks.resizeSmaller(capacity, [&](void *kept, uint64_t size) {
          void *grown = mremap(kept, size, capacity, MREMAP_MAYMOVE);
          return grown == MAP_FAILED ? nullptr : grown;
        });
    if (!block)
      block = mapBlock(capacity);
    if (!block) {
      // Out of memory: what is kept may be enough.
      blocks.dropAll();
      block = mapBlock(capacity);
    }
    if (block)
      blocks.handOut(block, capacity);
    return block;
  }

  void free(void *block) {
    if (!block)
      return;
    std::unique_lock<std::mutex> lock(mutex);
    if (blocks.keep(block))
      return;
    lock.unlock();
    std::free(block);
  }

  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    blocks.dropAll();
  }

  uint64_t cachedBytes() {
    std::lock_guard<std::mutex> lock(mutex);
    return blocks.keptBytes();
  }

  uint64_t limitBytes() const { return blocks.bound(); }

private:
  std::mutex mutex;
  /// Large blocks: the bound, and what was live at the peak and is not now
  /// up to half of physical memory.
  gnnc::KeptBlocks blocks{maxKeptBytes(), physicalBytes() / 2, unmapBlock};
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

extern "C" int64_t gnn_rt_allocation_limit_bytes(void) {
  static const uint64_t limit = physicalBytes();
  // (Unknown: no bound beyond what an int64_t holds.)
  return limit > 0 && limit < uint64_t(INT64_MAX) ? int64_t(limit) : INT64_MAX;
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
