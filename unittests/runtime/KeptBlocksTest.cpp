//===- KeptBlocksTest.cpp - the pools' shared bookkeeping -----------------===//
//
// Part of gnnc. KeptBlocks over fake blocks (addresses that are never
// dereferenced): which block a request gets, what is dropped and when.
//
//===----------------------------------------------------------------------===//

#include "KeptBlocks.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

using gnnc::KeptBlocks;

namespace {
/// A fake address for block `n`.
void *block(uintptr_t n) { return reinterpret_cast<void *>(n << 20); }

struct Dropped {
  std::map<void *, uint64_t> blocks;
  KeptBlocks make(uint64_t bound, uint64_t maxPeakKept = UINT64_MAX) {
    return KeptBlocks(bound, maxPeakKept, [this](void *b, uint64_t size) {
      EXPECT_TRUE(blocks.emplace(b, size).second) << "dropped twice";
    });
  }
};
} // namespace

TEST(KeptBlocks, AKeptBlockServesRequestsUpToAQuarterBelowIt) {
  Dropped dropped;
  KeptBlocks pool = dropped.make(1000);
  pool.handOut(block(1), 100);
  EXPECT_TRUE(pool.keep(block(1)));
  EXPECT_EQ(pool.keptBytes(), 100u);
  EXPECT_EQ(pool.reuse(79), nullptr); // 100 is more than a quarter over 79
  EXPECT_EQ(pool.reuse(101), nullptr);
  EXPECT_EQ(pool.reuse(80), block(1));
  EXPECT_EQ(pool.keptBytes(), 0u);
  // Handed out again whole: kept again at its own capacity.
  EXPECT_TRUE(pool.keep(block(1)));
  EXPECT_EQ(pool.keptBytes(), 100u);
  EXPECT_TRUE(dropped.blocks.empty());
}

TEST(KeptBlocks, ForeignBlocksAreTheCallers) {
  Dropped dropped;
  KeptBlocks pool = dropped.make(1000);
  EXPECT_FALSE(pool.keep(block(7)));
  pool.handOut(block(1), 10);
  EXPECT_TRUE(pool.keep(block(1)));
  // Kept is not handed out: a second free is foreign too.
  EXPECT_FALSE(pool.keep(block(1)));
  EXPECT_EQ(pool.keptBytes(), 10u);
}

TEST(KeptBlocks, ABoundOfZeroKeepsNothing) {
  Dropped dropped;
  KeptBlocks pool = dropped.make(0);
  pool.handOut(block(1), 10);
  EXPECT_TRUE(pool.keep(block(1)));
  EXPECT_EQ(pool.keptBytes(), 0u);
  EXPECT_EQ(dropped.blocks.at(block(1)), 10u);
  EXPECT_EQ(pool.reuse(10), nullptr);
}

TEST(KeptBlocks, KeptBytesStayWithinTheBoundOrWhatWasFreedSinceThePeak) {
  Dropped dropped;
  KeptBlocks pool = dropped.make(/*bound=*/100, /*maxPeakKept=*/250);
  for (uintptr_t i = 1; i <= 4; ++i)
    pool.handOut(block(i), 100);
  // 400 live at the peak; 300 of it freed, but at most 250 kept for it:
  // the largest go first, and among equals any one.
  for (uintptr_t i = 1; i <= 3; ++i)
    EXPECT_TRUE(pool.keep(block(i)));
  EXPECT_EQ(pool.keptBytes(), 200u);
  EXPECT_EQ(dropped.blocks.size(), 1u);
  // Handing one out raises live: still within the peak, nothing dropped.
  void *again = pool.reuse(100);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(pool.keptBytes(), 100u);
  // A new block: live is 300, 100 freed since the peak; the bound keeps 100.
  pool.handOut(block(9), 100);
  EXPECT_EQ(pool.keptBytes(), 100u);
  // 300 freed since the peak, at most 250 kept for it: blocks of 100 make
  // 200, the third dropped.
  pool.keep(again);
  pool.keep(block(9));
  EXPECT_EQ(pool.keptBytes(), 200u);
  EXPECT_EQ(dropped.blocks.size(), 2u);
}

TEST(KeptBlocks, DroppingAllForgetsThePeak) {
  Dropped dropped;
  KeptBlocks pool = dropped.make(10);
  pool.handOut(block(1), 100);
  pool.handOut(block(2), 100);
  pool.keep(block(1));
  EXPECT_EQ(pool.keptBytes(), 100u); // freed since the peak
  pool.dropAll();
  EXPECT_EQ(pool.keptBytes(), 0u);
  EXPECT_EQ(dropped.blocks.size(), 1u);
  // The peak is what is live now: a block freed later keeps at most what
  // was live above it, not the old peak.
  pool.handOut(block(3), 50);
  pool.keep(block(3));
  EXPECT_EQ(pool.keptBytes(), 50u);
  pool.keep(block(2));
  EXPECT_EQ(pool.keptBytes(), 150u);
}

TEST(KeptBlocks, ASmallerKeptBlockIsResizedIntoARequest) {
  Dropped dropped;
  KeptBlocks pool = dropped.make(1000);
  pool.handOut(block(1), 40);
  pool.handOut(block(2), 60);
  pool.keep(block(1));
  pool.keep(block(2));
  std::vector<std::pair<void *, uint64_t>> asked;
  auto grow = [&](void *b, uint64_t size) -> void * {
    asked.push_back({b, size});
    return block(5);
  };
  // The largest below 100 with at least half of it: block 2.
  EXPECT_EQ(pool.resizeSmaller(100, grow), block(5));
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].first, block(2));
  EXPECT_EQ(asked[0].second, 60u);
  EXPECT_EQ(pool.keptBytes(), 40u);
  // Block 1 has under half of 100; a failed resize leaves it kept.
  EXPECT_EQ(pool.resizeSmaller(100, grow), nullptr);
  EXPECT_EQ(pool.resizeSmaller(
                70, [](void *, uint64_t) -> void * { return nullptr; }),
            nullptr);
  EXPECT_EQ(pool.keptBytes(), 40u);
  EXPECT_EQ(pool.reuse(40), block(1));
  EXPECT_TRUE(dropped.blocks.empty());
}
