//===- HeldMemory.cpp - bytes held from an allocator ----------------------===//
//
// Part of gnnc's runtime (see HeldMemory.h).
//
//===----------------------------------------------------------------------===//

#include "HeldMemory.h"

#include <algorithm>

using namespace gnnc;

void HeldMemory::acquired(void *block, uint64_t bytes) {
  if (!block)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = sizes.emplace(block, bytes);
  if (!inserted)
    return; // the allocator never hands out a held block twice
  held += bytes;
  most = std::max(most, held);
}

void HeldMemory::released(void *block) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = sizes.find(block);
  if (it == sizes.end())
    return;
  held -= it->second;
  sizes.erase(it);
}

uint64_t HeldMemory::now() {
  std::lock_guard<std::mutex> lock(mutex);
  return held;
}

uint64_t HeldMemory::peak() {
  std::lock_guard<std::mutex> lock(mutex);
  return most;
}
