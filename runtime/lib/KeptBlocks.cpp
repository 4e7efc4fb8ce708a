//===- KeptBlocks.cpp - a pool's handed-out and kept blocks ---------------===//
//
// Part of gnnc's runtime (see KeptBlocks.h).
//
//===----------------------------------------------------------------------===//

#include "KeptBlocks.h"

#include <algorithm>
#include <iterator>

using namespace gnnc;

KeptBlocks::KeptBlocks(uint64_t bound, uint64_t maxPeakKept,
                       std::function<void(void *, uint64_t)> drop)
    : boundBytes(bound), maxPeakKept(maxPeakKept), drop(std::move(drop)) {}

void *KeptBlocks::reuse(uint64_t capacity) {
  auto it = byCapacity.lower_bound(capacity);
  if (it == byCapacity.end() || it->first - capacity > capacity / 4)
    return nullptr;
  auto [own, block] = *it;
  kept -= own;
  byCapacity.erase(it);
  handOut(block, own);
  return block;
}

void *KeptBlocks::resizeSmaller(
    uint64_t capacity, const std::function<void *(void *, uint64_t)> &resize) {
  auto it = byCapacity.lower_bound(capacity);
  if (it == byCapacity.begin())
    return nullptr;
  --it;
  if (it->first < capacity / 2)
    return nullptr;
  void *resized = resize(it->second, it->first);
  if (!resized)
    return nullptr;
  kept -= it->first;
  byCapacity.erase(it);
  return resized;
}

void KeptBlocks::handOut(void *block, uint64_t capacity) {
  live[block] = capacity;
  liveBytes += capacity;
  peakLiveBytes = std::max(peakLiveBytes, liveBytes);
  // More is live now: less of what is kept stays within the peak.
  trim();
}

bool KeptBlocks::keep(void *block) {
  auto it = live.find(block);
  if (it == live.end())
    return false;
  uint64_t capacity = it->second;
  live.erase(it);
  liveBytes -= capacity;
  if (boundBytes == 0) {
    drop(block, capacity);
    return true;
  }
  byCapacity.emplace(capacity, block);
  kept += capacity;
  trim();
  return true;
}

void KeptBlocks::dropAll() {
  for (auto &[capacity, block] : byCapacity)
    drop(block, capacity);
  byCapacity.clear();
  kept = 0;
  peakLiveBytes = liveBytes;
}

std::unordered_map<void *, uint64_t> KeptBlocks::takeLive() {
  std::unordered_map<void *, uint64_t> taken;
  taken.swap(live);
  liveBytes = 0;
  return taken;
}

void KeptBlocks::trim() {
  uint64_t freedSincePeak = peakLiveBytes - liveBytes;
  uint64_t keep =
      boundBytes == 0
          ? 0
          : std::max(boundBytes, std::min(freedSincePeak, maxPeakKept));
  while (kept > keep) {
    auto largest = std::prev(byCapacity.end());
    drop(largest->second, largest->first);
    kept -= largest->first;
    byCapacity.erase(largest);
  }
}

std::optional<uint64_t> KeptBlocks::capacityOf(void *block) const {
  auto it = live.find(block);
  if (it == live.end())
    return std::nullopt;
  return it->second;
}

std::optional<uint64_t> LockedBlocks::capacityOf(void *block) {
  std::lock_guard<std::mutex> lock(mutex);
  return blocks.capacityOf(block);
}

bool LockedBlocks::takeBack(void *block) {
  std::lock_guard<std::mutex> lock(mutex);
  return blocks.keep(block);
}

void LockedBlocks::passLiveTo(LockedBlocks &heir) {
  std::unordered_map<void *, uint64_t> live;
  {
    std::lock_guard<std::mutex> lock(mutex);
    live = blocks.takeLive();
  }
  std::lock_guard<std::mutex> lock(heir.mutex);
  for (auto [block, capacity] : live)
    heir.blocks.handOut(block, capacity);
}

void LockedBlocks::dropAll() {
  std::lock_guard<std::mutex> lock(mutex);
  blocks.dropAll();
}

uint64_t LockedBlocks::keptBytes() {
  std::lock_guard<std::mutex> lock(mutex);
  return blocks.keptBytes();
}
