//===- HeldMemoryTest.cpp - bytes held from an allocator, now and at most -===//
//
// Part of gnnc. The accounting behind gnn_cuda_peak_memory_bytes, without a
// GPU: blocks acquired and released in any order, unknown and repeated
// releases, threads.
//
//===----------------------------------------------------------------------===//

#include "HeldMemory.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using gnnc::HeldMemory;

namespace {
void *block(uintptr_t n) { return reinterpret_cast<void *>(n * 4096); }
} // namespace

TEST(HeldMemory, PeakIsTheMostHeldAtOnce) {
  HeldMemory held;
  EXPECT_EQ(held.now(), 0u);
  EXPECT_EQ(held.peak(), 0u);
  held.acquired(block(1), 100);
  held.acquired(block(2), 300);
  EXPECT_EQ(held.now(), 400u);
  held.released(block(1));
  held.acquired(block(3), 50);
  EXPECT_EQ(held.now(), 350u);
  EXPECT_EQ(held.peak(), 400u);
  held.acquired(block(4), 200);
  EXPECT_EQ(held.now(), 550u);
  EXPECT_EQ(held.peak(), 550u);
  held.released(block(2));
  held.released(block(3));
  held.released(block(4));
  EXPECT_EQ(held.now(), 0u);
  EXPECT_EQ(held.peak(), 550u);
}

TEST(HeldMemory, UnknownRepeatedAndNullBlocksChangeNothing) {
  HeldMemory held;
  held.acquired(nullptr, 1000); // a failed allocation
  held.acquired(block(1), 64);
  held.acquired(block(1), 64); // not handed out twice: counted once
  held.released(block(9));     // another allocator's
  EXPECT_EQ(held.now(), 64u);
  held.released(block(1));
  held.released(block(1));
  EXPECT_EQ(held.now(), 0u);
  EXPECT_EQ(held.peak(), 64u);
  // A block acquired again after its release counts anew.
  held.acquired(block(1), 32);
  EXPECT_EQ(held.now(), 32u);
  EXPECT_EQ(held.peak(), 64u);
}

TEST(HeldMemory, ThreadsAcquiringAndReleasingBalance) {
  HeldMemory held;
  constexpr int kThreads = 4, kBlocks = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&held, t] {
      for (int i = 0; i < kBlocks; ++i)
        held.acquired(block(uintptr_t(t) * kBlocks + i + 1), 8);
      for (int i = 0; i < kBlocks; ++i)
        held.released(block(uintptr_t(t) * kBlocks + i + 1));
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(held.now(), 0u);
  EXPECT_GE(held.peak(), uint64_t(8 * kBlocks));
  EXPECT_LE(held.peak(), uint64_t(8 * kBlocks * kThreads));
}
