//===- Memory.cpp - buffers of compiled CPU programs ----------------------===//
//
// Part of gnnc's runtime. Large blocks are page-aligned and page-rounded;
// when freed they are kept in a size-ordered pool and handed out again for a
// request they exceed by at most a quarter. Small blocks are malloc's.
//
//===----------------------------------------------------------------------===//

#include "gnnc/memory.h"
#include "BlockPool.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>

#include <unistd.h>

namespace {
/// Below this, malloc's own bins reuse memory well.
constexpr uint64_t kMinKeptBytes = 256 << 10;
constexpr uint64_t kPage = 4096;

uint64_t roundUp(uint64_t bytes, uint64_t to) {
  return (bytes + to - 1) / to * to;
}

/// A quarter of physical memory, at most 4 GiB, is kept for reuse.
uint64_t maxKeptBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  uint64_t physical =
      pages > 0 && size > 0 ? uint64_t(pages) * uint64_t(size) : 0;
  return std::min<uint64_t>(physical / 4, uint64_t(4) << 30);
}

void *systemAlloc(uint64_t alignment, uint64_t bytes) {
  if (alignment <= alignof(std::max_align_t))
    return std::malloc(bytes);
  return std::aligned_alloc(alignment, roundUp(bytes, alignment));
}

/// Large blocks: page-aligned and page-rounded, kept when freed.
gnnc::BlockPool &pool() {
  // Never destroyed: compiled code may free buffers during exit.
  static auto *p = new gnnc::BlockPool(
      {[](uint64_t capacity) { return std::aligned_alloc(kPage, capacity); },
       [](void *block) { std::free(block); }, kPage, maxKeptBytes()});
  return *p;
}

void *allocate(uint64_t alignment, uint64_t bytes) {
  if (bytes < kMinKeptBytes || alignment > kPage)
    return systemAlloc(alignment, bytes);
  return pool().allocate(bytes);
}
} // namespace

extern "C" void *gnn_rt_alloc(uint64_t bytes) {
  return allocate(alignof(std::max_align_t), bytes);
}

extern "C" void *gnn_rt_aligned_alloc(uint64_t alignment, uint64_t bytes) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return nullptr;
  return allocate(alignment, bytes);
}

extern "C" void gnn_rt_free(void *ptr) {
  if (ptr && !pool().free(ptr))
    std::free(ptr);
}

extern "C" void gnn_rt_release_cached_memory(void) { pool().release(); }

extern "C" uint64_t gnn_rt_cached_memory_bytes(void) {
  return pool().cachedBytes();
}
