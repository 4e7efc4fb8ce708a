//===- KeptBlocks.h - a pool's handed-out and kept blocks -------*- C++ -*-===//
//
// Part of gnnc's runtime: the bookkeeping that the CPU pool (Memory.cpp) and
// the unified-memory pool (CudaPool.cpp) share. Blocks have a capacity of
// their size class (SizeClasses.h). A freed block is kept and handed out
// again for a request it exceeds by at most a quarter. What is kept stays
// within a bound, or within what the program had live at most and no
// longer has if that is more (a step's buffers, for the next step): so a
// program never holds more than its peak plus the bound. Where the memory
// comes from and goes to is the pool's: `drop` returns a block to it.
//
// KeptBlocks is not thread-safe: the pool holds its LockedBlocks' lock
// around every call, which LockedBlocks' own calls (those other threads
// and other pools make) take themselves.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_KEPTBLOCKS_H
#define GNNC_RUNTIME_KEPTBLOCKS_H

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

namespace gnnc {
class KeptBlocks {
public:
  /// `bound`: bytes kept in any case (0: nothing is kept); `maxPeakKept`:
  /// at most this much is kept for the peak's sake; `drop` hands a block
  /// of the given capacity back to where it came from.
  KeptBlocks(uint64_t bound, uint64_t maxPeakKept,
             std::function<void(void *, uint64_t)> drop);

  /// A kept block of `capacity` or at most a quarter more, handed out now;
  /// null if none.
  void *reuse(uint64_t capacity);
  /// The largest kept block below `capacity` with at least half of it,
  /// resized by `resize(block, itsCapacity)` (which returns the block at
  /// its new place, or null leaving it as it was) and no longer kept; null
  /// if none or if resizing failed. The caller hands it out.
  void *resizeSmaller(uint64_t capacity,
                      const std::function<void *(void *, uint64_t)> &resize);
  /// Records `block` (new or resized) as handed out, and drops kept blocks
  /// that the new peak no longer allows.
  void handOut(void *block, uint64_t capacity);
  /// Keeps `block` for reuse (or drops it when nothing is kept); false if
  /// this pool did not hand it out, which then is the caller's to free.
  bool keep(void *block);
  /// The capacity of `block` if this pool handed it out and it is live.
  std::optional<uint64_t> capacityOf(void *block) const;
  /// Drops every kept block and forgets the peak (a full device or
  /// address space, or the program asking for its memory back).
  void dropAll();
  /// The blocks handed out and not kept yet, with their capacities, which
  /// this pool then no longer knows (another pool adopts them).
  std::unordered_map<void *, uint64_t> takeLive();

  uint64_t keptBytes() const { return kept; }
  uint64_t bound() const { return boundBytes; }

private:
  /// Drops kept blocks, the largest first, until they fit what may be kept.
  void trim();

  const uint64_t boundBytes, maxPeakKept;
  std::function<void(void *, uint64_t)> drop;
  /// Blocks handed out, with their capacity.
  std::unordered_map<void *, uint64_t> live;
  /// Kept blocks by capacity.
  std::multimap<uint64_t, void *> byCapacity;
  uint64_t kept = 0;
  /// Bytes of the blocks handed out now, and the most at any time.
  uint64_t liveBytes = 0, peakLiveBytes = 0;
};

/// A pool's KeptBlocks and the lock around them.
struct LockedBlocks {
  template <typename... Args>
  explicit LockedBlocks(Args &&...args) : blocks(std::forward<Args>(args)...) {}

  /// Keeps `block` if this pool handed it out (true); false leaves it to
  /// the caller (another pool's, or the system's).
  bool takeBack(void *block);
  std::optional<uint64_t> capacityOf(void *block);
  /// Hands the blocks handed out and still live to `heir`, which takes
  /// them back when they are freed.
  void passLiveTo(LockedBlocks &heir);
  void dropAll();
  uint64_t keptBytes();

  std::mutex mutex;
  KeptBlocks blocks;
};
} // namespace gnnc

#endif // GNNC_RUNTIME_KEPTBLOCKS_H
