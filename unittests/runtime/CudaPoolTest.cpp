//===- CudaPoolTest.cpp - the unified-memory pool's bookkeeping -----------===//
//
// Part of gnnc. The pool over a fake driver (malloc), so that its reuse and
// bounds are checked without a GPU; CudaTest.cpp checks it on a device.
//
//===----------------------------------------------------------------------===//

#include "CudaPool.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <vector>

using gnnc::cuda::Pool;

namespace {
struct FakeDriver {
  std::set<void *> blocks;
  int allocations = 0, releases = 0;
  bool full = false;
  /// Each request's flag: whether its null would be final.
  std::vector<bool> finals;
  Pool pool(uint64_t limit) {
    return Pool(
        [this](uint64_t bytes, bool final) -> void * {
          finals.push_back(final);
          if (full)
            return nullptr;
          ++allocations;
          void *block = std::malloc(bytes);
          blocks.insert(block);
          return block;
        },
        [this](void *block) {
          ++releases;
          EXPECT_EQ(blocks.erase(block), 1u) << "released twice or unknown";
          std::free(block);
        },
        limit);
  }
  ~FakeDriver() {
    for (void *block : blocks)
      std::free(block);
  }
};

constexpr uint64_t kPage = 4096;
} // namespace

TEST(CudaPool, FreedBlocksServeRequestsOfTheirClass) {
  FakeDriver driver;
  Pool pool = driver.pool(1 << 20);
  bool reused = true;
  void *a = pool.take(1000, reused);
  EXPECT_FALSE(reused);
  pool.give(a);
  EXPECT_EQ(pool.keptBytes(), kPage);
  // Any request of one page, even of no bytes, takes it back.
  EXPECT_EQ(pool.take(0, reused), a);
  EXPECT_TRUE(reused);
  EXPECT_EQ(pool.keptBytes(), 0u);
  // A request more than a quarter below a kept block's class gets a new one.
  void *big = pool.take(64 * kPage, reused);
  pool.give(big);
  void *small = pool.take(40 * kPage, reused);
  EXPECT_FALSE(reused);
  EXPECT_NE(small, big);
  EXPECT_EQ(pool.take(60 * kPage, reused), big);
  EXPECT_TRUE(reused);
  EXPECT_EQ(driver.allocations, 3);
  EXPECT_EQ(driver.releases, 0);
  pool.give(a);
  pool.give(small);
  pool.give(big);
}

TEST(CudaPool, BlocksComeInSixteenClassesPerDoubling) {
  FakeDriver driver;
  Pool pool = driver.pool(1 << 30);
  bool reused;
  // 1,100 pages: between 1,024 and 2,048, classes are 64 pages apart (the
  // CPU pool's four classes would round it to 1,280).
  void *a = pool.take(1100 * kPage - 1, reused);
  pool.give(a);
  EXPECT_EQ(pool.keptBytes(), 1152 * kPage);
  // Small requests take whole pages, up to 32 of them exactly.
  void *b = pool.take(31 * kPage + 1, reused);
  pool.give(b);
  EXPECT_EQ(pool.keptBytes(), (1152 + 32) * kPage);
}

TEST(CudaPool, KeptBytesStayWithinTheBoundOrThePeak) {
  FakeDriver driver;
  Pool pool = driver.pool(2 * kPage);
  bool reused;
  // Three pages live at once, then freed: the peak keeps them all.
  void *a = pool.take(kPage, reused), *b = pool.take(kPage, reused),
       *c = pool.take(kPage, reused);
  pool.give(a);
  pool.give(b);
  pool.give(c);
  EXPECT_EQ(pool.keptBytes(), 3 * kPage);
  EXPECT_EQ(driver.releases, 0);
  // A large block live: the peak is now that block, nothing freed since,
  // so only the bound (two pages) stays kept.
  void *d = pool.take(100 * kPage, reused);
  EXPECT_EQ(pool.keptBytes(), 2 * kPage);
  EXPECT_EQ(driver.releases, 1);
  pool.give(d);
}

TEST(CudaPool, OffKeepsNothing) {
  FakeDriver driver;
  Pool pool = driver.pool(0);
  bool reused;
  void *a = pool.take(kPage, reused);
  pool.give(a);
  EXPECT_EQ(pool.keptBytes(), 0u);
  EXPECT_EQ(driver.releases, 1);
  void *b = pool.take(kPage, reused);
  EXPECT_FALSE(reused);
  pool.give(b);
  EXPECT_EQ(driver.allocations, 2);
}

TEST(CudaPool, ForeignPointersGoToTheDriver) {
  FakeDriver driver;
  Pool pool = driver.pool(1 << 20);
  void *foreign = std::malloc(16);
  driver.blocks.insert(foreign);
  pool.give(foreign);
  EXPECT_EQ(driver.releases, 1);
  EXPECT_EQ(pool.keptBytes(), 0u);
  pool.give(nullptr);
  EXPECT_EQ(driver.releases, 1);
}

TEST(CudaPool, AFullDeviceGetsTheKeptBlocksBack) {
  FakeDriver driver;
  Pool pool = driver.pool(1 << 20);
  bool reused;
  void *a = pool.take(kPage, reused);
  pool.give(a);
  driver.full = true;
  // No new block while kept ones are held: they are returned, then the
  // request fails as the driver says.
  EXPECT_EQ(pool.take(64 * kPage, reused), nullptr);
  EXPECT_EQ(pool.keptBytes(), 0u);
  EXPECT_EQ(driver.releases, 1);
  EXPECT_EQ(pool.take(UINT64_MAX, reused), nullptr);
}

TEST(CudaPool, OnlyTheLastTryIsFinal) {
  // A driver's null is an error to report only when nothing kept can be
  // returned first: a full device with kept blocks gets them back and a
  // second, final try.
  FakeDriver driver;
  Pool pool = driver.pool(1 << 20);
  bool reused;
  void *a = pool.take(kPage, reused);
  EXPECT_EQ(driver.finals, std::vector<bool>({true}));
  pool.give(a);
  driver.full = true;
  EXPECT_EQ(pool.take(4 * kPage, reused), nullptr);
  EXPECT_EQ(driver.finals, std::vector<bool>({true, false, true}));
  // Nothing kept now: one try, final.
  EXPECT_EQ(pool.take(4 * kPage, reused), nullptr);
  EXPECT_EQ(driver.finals, std::vector<bool>({true, false, true, true}));
  // The second try succeeding serves the request.
  driver.full = false;
  void *b = pool.take(kPage, reused);
  pool.give(b);
  driver.finals.clear();
  void *c = pool.take(8 * kPage, reused);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(driver.finals, std::vector<bool>({false}));
  pool.give(c);
}

TEST(CudaPool, EachPoolTakesBackOnlyItsOwnBlocks) {
  // Runtime instances have a pool each: a freed block goes to the one that
  // handed it out, whichever instance the freeing thread runs for.
  FakeDriver driver;
  Pool first = driver.pool(1 << 20), second = driver.pool(1 << 20);
  bool reused;
  void *a = first.take(kPage, reused);
  void *b = second.take(2 * kPage, reused);
  EXPECT_FALSE(second.takeBack(a));
  EXPECT_FALSE(first.takeBack(b));
  EXPECT_EQ(driver.releases, 0); // neither went to the driver
  EXPECT_TRUE(first.takeBack(a));
  EXPECT_TRUE(second.takeBack(b));
  EXPECT_EQ(first.keptBytes(), kPage);
  EXPECT_EQ(second.keptBytes(), 2 * kPage);
  EXPECT_FALSE(first.takeBack(nullptr));
}

TEST(CudaPool, ADyingPoolsLiveBlocksGoToItsHeir) {
  FakeDriver driver;
  Pool heir = driver.pool(1 << 20);
  bool reused;
  void *live = nullptr;
  {
    Pool dying = driver.pool(1 << 20);
    void *kept = dying.take(kPage, reused);
    live = dying.take(4 * kPage, reused);
    dying.give(kept);
    dying.bequeath(heir);
    // What it kept went back to the driver; what is live is the heir's.
    EXPECT_EQ(driver.releases, 1);
    EXPECT_EQ(dying.keptBytes(), 0u);
    EXPECT_FALSE(dying.takeBack(live));
  }
  EXPECT_TRUE(heir.takeBack(live));
  EXPECT_EQ(heir.keptBytes(), 4 * kPage);
  EXPECT_EQ(driver.releases, 1);
}
