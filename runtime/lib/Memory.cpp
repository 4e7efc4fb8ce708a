//===- Memory.cpp - buffers of compiled CPU programs ----------------------===//
//
// Part of gnnc's runtime. Each runtime instance has a pool (HostPool.h):
// large blocks are mapped from the kernel, their sizes rounded up to a size
// class, and kept for reuse when freed (KeptBlocks.h); a request up to
// twice a kept block's size may also grow it (mremap). Small blocks are
// malloc's.
//
//===----------------------------------------------------------------------===//

#include "gnnc/memory.h"
#include "HostPool.h"
#include "RuntimeInstance.h"
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

/// The bytes kept for reuse in any case: 0 (nothing kept) without
/// recycling (always under AddressSanitizer, which does not track mapped
/// memory); else the settings' bound, by default 512 MB (a quarter of
/// physical memory if less). Beyond it, the pool keeps what the program
/// had live at most and no longer has.
uint64_t maxKeptBytes(const gnn_rt_settings &settings) {
#ifdef GNN_ASAN
  return 0;
#else
  if (!settings.keep_freed_blocks)
    return 0;
  if (settings.pool_limit_bytes != GNN_RT_DEFAULT_POOL_LIMIT)
    return settings.pool_limit_bytes;
  return std::min<uint64_t>(gnnc::physicalBytes() / 4, uint64_t(512) << 20);
#endif
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

} // namespace

uint64_t gnnc::physicalBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? uint64_t(pages) * uint64_t(size) : 0;
}

gnnc::HostPool::HostPool(const gnn_rt_settings &settings)
    : pool(maxKeptBytes(settings), physicalBytes() / 2, unmapBlock) {}

gnnc::HostPool::~HostPool() { pool.blocks.dropAll(); }

void *gnnc::HostPool::allocate(uint64_t alignment, uint64_t bytes) {
  // Without reuse every block is the system allocator's, so that
  // AddressSanitizer (which does not track mapped memory) sees each one.
  KeptBlocks &blocks = pool.blocks;
  if (blocks.bound() == 0 || bytes < kMinKeptBytes || alignment > kPage ||
      bytes > UINT64_MAX - kPage)
    return systemAlloc(alignment, bytes);
  uint64_t capacity = capacityFor(bytes);
  std::lock_guard<std::mutex> lock(pool.mutex);
  if (void *block = blocks.reuse(capacity))
    return block;
  // A kept block of the class below, grown: its pages stay resident, so
  // only the growth is faulted in. When a batch grows a little, a step's
  // buffers move up a size class, and the blocks of the class below
  // would otherwise sit unused while fresh ones are mapped and faulted
  // in whole (and the bound then drops other kept blocks the step needs
  // later).
  void *block = blocks.resizeSmaller(capacity, [&](void *kept, uint64_t size) {
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

extern "C" void *gnn_rt_alloc(uint64_t bytes) {
  return gnnc::currentPool().allocate(alignof(std::max_align_t), bytes);
}

extern "C" int64_t gnn_rt_allocation_limit_bytes(void) {
  static const uint64_t limit = gnnc::physicalBytes();
  // (Unknown: no bound beyond what an int64_t holds.)
  return limit > 0 && limit < uint64_t(INT64_MAX) ? int64_t(limit) : INT64_MAX;
}

extern "C" void *gnn_rt_aligned_alloc(uint64_t alignment, uint64_t bytes) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return nullptr;
  return gnnc::currentPool().allocate(alignment, bytes);
}

extern "C" void gnn_rt_free(void *ptr) {
  // Pooled blocks are mapped, so page-aligned: the frequent small blocks
  // go straight back to malloc.
  if (!ptr)
    return;
  if (reinterpret_cast<uintptr_t>(ptr) % kPage == 0 &&
      gnnc::freeIntoOwningPool(ptr))
    return;
  std::free(ptr);
}

extern "C" void gnn_rt_release_cached_memory(void) {
  gnnc::currentPool().release();
}

extern "C" int gnn_rt_pool_recycles(void) {
  return gnnc::currentPool().limitBytes() > 0;
}

extern "C" uint64_t gnn_rt_cached_memory_bytes(void) {
  return gnnc::currentPool().cachedBytes();
}

extern "C" uint64_t gnn_rt_pool_limit_bytes(void) {
  return gnnc::currentPool().limitBytes();
}
