//===- BlockPool.h - reuse of freed buffers by size -------------*- C++ -*-===//
//
// Part of gnnc's runtime (internal). Compiled programs allocate and free the
// same buffer sizes at every call; getting them from the system each time
// costs page faults (CPU) or driver calls (GPU). A pool keeps freed blocks
// by capacity and hands one out again for a request it exceeds by at most a
// quarter; what it keeps is bounded, the largest blocks dropped first.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_BLOCKPOOL_H
#define GNNC_RUNTIME_BLOCKPOOL_H

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <unordered_map>

namespace gnnc {

class BlockPool {
public:
  /// Where blocks come from: `fresh` returns a block of `capacity` bytes (a
  /// multiple of `granule`) or null; `drop` gives one back.
  struct Source {
    void *(*fresh)(uint64_t capacity);
    void (*drop)(void *block);
    uint64_t granule;
    uint64_t maxKeptBytes;
  };

  explicit BlockPool(Source source) : source(source) {}

  /// A block of at least `bytes` bytes, or null.
  void *allocate(uint64_t bytes) {
    if (bytes > UINT64_MAX - source.granule)
      return nullptr;
    uint64_t capacity =
        (bytes + source.granule - 1) / source.granule * source.granule;
    if (capacity == 0)
      capacity = source.granule;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = kept.lower_bound(capacity);
    if (it != kept.end() && it->first - capacity <= capacity / 4) {
      void *block = it->second;
      live[block] = it->first;
      keptBytes -= it->first;
      kept.erase(it);
      return block;
    }
    void *block = source.fresh(capacity);
    if (!block) {
      // Out of memory: what is kept may be enough.
      releaseLocked();
      block = source.fresh(capacity);
    }
    if (block)
      live[block] = capacity;
    return block;
  }

  /// Keeps `block` for reuse; false (and nothing done) if it is not one of
  /// this pool's.
  bool free(void *block) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = live.find(block);
    if (it == live.end())
      return false;
    uint64_t capacity = it->second;
    live.erase(it);
    kept.emplace(capacity, block);
    keptBytes += capacity;
    while (keptBytes > source.maxKeptBytes) {
      auto largest = std::prev(kept.end());
      source.drop(largest->second);
      keptBytes -= largest->first;
      kept.erase(largest);
    }
    return true;
  }

  /// Gives every kept block back.
  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    releaseLocked();
  }

  uint64_t cachedBytes() {
    std::lock_guard<std::mutex> lock(mutex);
    return keptBytes;
  }

private:
  void releaseLocked() {
    for (auto &[capacity, block] : kept)
      source.drop(block);
    kept.clear();
    keptBytes = 0;
  }

  const Source source;
  std::mutex mutex;
  /// Blocks handed out, with their capacity.
  std::unordered_map<void *, uint64_t> live;
  /// Freed blocks by capacity.
  std::multimap<uint64_t, void *> kept;
  uint64_t keptBytes = 0;
};

} // namespace gnnc

#endif // GNNC_RUNTIME_BLOCKPOOL_H
