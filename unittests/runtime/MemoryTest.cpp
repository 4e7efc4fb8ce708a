//===- MemoryTest.cpp - the runtime's buffer pool -------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/memory.h"
#include "gnnc/runtime.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace {
constexpr uint64_t kLarge = 8 << 20;

TEST(RuntimeMemory, LargeBlocksAreReusedForRequestsOfAboutTheirSize) {
  if (!gnn_rt_pool_recycles())
    GTEST_SKIP() << "recycling is off (AddressSanitizer)";
  gnn_rt_release_cached_memory();
  void *a = gnn_rt_alloc(kLarge);
  ASSERT_NE(a, nullptr);
  std::memset(a, 1, kLarge);
  gnn_rt_free(a);
  EXPECT_GE(gnn_rt_cached_memory_bytes(), kLarge);
  // Slightly smaller: the kept block serves it.
  void *b = gnn_rt_alloc(kLarge - 1000);
  EXPECT_EQ(b, a);
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), 0u);
  gnn_rt_free(b);
  // Much smaller or larger: a fresh block.
  void *c = gnn_rt_alloc(kLarge / 2);
  void *d = gnn_rt_alloc(kLarge * 2);
  EXPECT_NE(c, a);
  EXPECT_NE(d, a);
  std::memset(d, 2, kLarge * 2);
  gnn_rt_free(c);
  gnn_rt_free(d);
  gnn_rt_release_cached_memory();
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), 0u);
}

/// The calling thread bound, while this lives, to a context of a new
/// runtime instance with `settings`.
class BoundInstance {
public:
  explicit BoundInstance(const gnn_rt_settings &settings)
      : runtime(gnn_rt_runtime_create(&settings)),
        context(gnn_rt_context_create_in(runtime)),
        before(gnn_rt_context_bind(context)) {}
  ~BoundInstance() {
    gnn_rt_context_bind(before);
    gnn_rt_context_destroy(context);
    gnn_rt_runtime_destroy(runtime);
  }
  gnn_rt_runtime *const runtime;
  gnn_rt_context *const context;

private:
  gnn_rt_context *const before;
};

gnn_rt_settings withPoolLimit(uint64_t bytes) {
  gnn_rt_settings settings;
  gnn_rt_settings_init(&settings);
  settings.pool_limit_bytes = bytes;
  return settings;
}

bool builtWithAddressSanitizer() {
  BoundInstance probe(withPoolLimit(GNN_RT_DEFAULT_POOL_LIMIT));
  return !gnn_rt_pool_recycles();
}

/// A step's six blocks, the peak and the bound, in an instance whose pool
/// keeps `limit` bytes.
void expectKeptBlocksWithin(uint64_t limit) {
  EXPECT_EQ(gnn_rt_pool_limit_bytes(), limit);
  EXPECT_EQ(gnn_rt_pool_limit_bytes(), limit);
  EXPECT_EQ(gnn_rt_pool_recycles(), limit > 0 ? 1 : 0);
  // A step: six blocks live at once, then all freed. What was live at the
  // peak stays kept, whatever the bound, for the next step, which maps
  // nothing new.
  gnn_rt_release_cached_memory();
  auto step = [] {
    std::vector<char *> blocks;
    for (int i = 0; i < 6; ++i) {
      blocks.push_back(static_cast<char *>(gnn_rt_alloc(kLarge)));
      EXPECT_NE(blocks.back(), nullptr);
      if (blocks.back())
        blocks.back()[0] = blocks.back()[kLarge - 1] = 1;
    }
    for (char *block : blocks)
      gnn_rt_free(block);
    return std::set<char *>(blocks.begin(), blocks.end());
  };
  std::set<char *> first = step();
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), limit > 0 ? 6 * kLarge : 0);
  std::set<char *> second = step();
  if (limit > 0)
    EXPECT_EQ(second, first);
  // Beyond the peak, only the bound is kept: with the six live again, a
  // freed 2 x kLarge block stays kept while the peak allows it (it was live
  // with them), and no longer once a 5 x kLarge one (a new peak, too large
  // to grow the kept block into) is live: then it stays only if the bound
  // covers it.
  gnn_rt_release_cached_memory();
  std::vector<char *> six;
  for (int i = 0; i < 6; ++i)
    six.push_back(static_cast<char *>(gnn_rt_alloc(kLarge)));
  void *two = gnn_rt_alloc(2 * kLarge);
  ASSERT_NE(two, nullptr);
  gnn_rt_free(two);
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), limit > 0 ? 2 * kLarge : 0);
  void *five = gnn_rt_alloc(5 * kLarge);
  ASSERT_NE(five, nullptr);
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), limit >= 2 * kLarge ? 2 * kLarge : 0);
  gnn_rt_free(five);
  for (char *block : six)
    gnn_rt_free(block);
  // A kept block handed out again can raise the peak too: 4 and 8 live (8
  // then freed and kept), 16 live (the kept 8 grown into it), a fresh 8:
  // 28 live at once, all kept once freed.
  gnn_rt_release_cached_memory();
  void *four = gnn_rt_alloc(kLarge / 2);
  void *eight = gnn_rt_alloc(kLarge);
  gnn_rt_free(eight);
  void *sixteen = gnn_rt_alloc(2 * kLarge);
  void *again = gnn_rt_alloc(kLarge);
  ASSERT_TRUE(four && sixteen && again);
  gnn_rt_free(four);
  gnn_rt_free(sixteen);
  gnn_rt_free(again);
  EXPECT_EQ(gnn_rt_cached_memory_bytes(),
            limit > 0 ? kLarge / 2 + 3 * kLarge : 0);
  gnn_rt_release_cached_memory();
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), 0u);
}

// Each instance's pool keeps within its own bound (megabytes, 0, the
// default: 512 MB or a quarter of physical memory).
TEST(RuntimeMemory, KeptBlocksStayWithinTheBound) {
  if (builtWithAddressSanitizer())
    GTEST_SKIP() << "recycling is off (AddressSanitizer)";
  uint64_t physical =
      uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  for (auto [setting, limit] :
       {std::pair{uint64_t(20) << 20, uint64_t(20) << 20},
        {uint64_t(0), uint64_t(0)},
        {GNN_RT_DEFAULT_POOL_LIMIT,
         std::min<uint64_t>(physical / 4, uint64_t(512) << 20)},
        {uint64_t(7) << 20, uint64_t(7) << 20}}) {
    SCOPED_TRACE(limit);
    BoundInstance instance(withPoolLimit(setting));
    expectKeptBlocksWithin(limit);
  }
  // An instance that keeps nothing.
  gnn_rt_settings off = withPoolLimit(GNN_RT_DEFAULT_POOL_LIMIT);
  off.keep_freed_blocks = 0;
  BoundInstance instance(off);
  EXPECT_EQ(gnn_rt_pool_recycles(), 0);
  expectKeptBlocksWithin(0);
}

// A block goes back to the pool of the instance that handed it out,
// whatever the freeing thread is bound to, and outlives that instance.
TEST(RuntimeMemory, BlocksGoBackToTheirOwnInstance) {
  if (builtWithAddressSanitizer())
    GTEST_SKIP() << "recycling is off (AddressSanitizer)";
  gnn_rt_settings settings = withPoolLimit(uint64_t(64) << 20);
  gnn_rt_runtime *first = gnn_rt_runtime_create(&settings),
                 *second = gnn_rt_runtime_create(&settings);
  gnn_rt_context *inFirst = gnn_rt_context_create_in(first),
                 *inSecond = gnn_rt_context_create_in(second);
  ASSERT_TRUE(first && second && inFirst && inSecond);
  gnn_rt_context *before = gnn_rt_context_bind(inFirst);
  void *a = gnn_rt_alloc(kLarge), *kept = gnn_rt_alloc(kLarge);
  ASSERT_TRUE(a && kept);
  gnn_rt_context_bind(inSecond);
  gnn_rt_free(a); // on a thread bound to the second instance
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), 0u);
  gnn_rt_context_bind(inFirst);
  EXPECT_GE(gnn_rt_cached_memory_bytes(), kLarge);
  gnn_rt_context_bind(nullptr);
  // Freed on an unbound thread, too.
  std::thread([&] { gnn_rt_free(gnn_rt_alloc(16)); }).join();
  gnn_rt_context_bind(before);
  gnn_rt_context_destroy(inFirst);
  gnn_rt_context_destroy(inSecond);
  gnn_rt_runtime_destroy(first);
  gnn_rt_runtime_destroy(second);
  // A live block of a destroyed instance stays usable and is freed later.
  std::memset(kept, 3, kLarge);
  gnn_rt_free(kept);
}

TEST(RuntimeMemory, KeptBlocksGrowIntoLargerRequests) {
  if (!gnn_rt_pool_recycles())
    GTEST_SKIP() << "recycling is off (AddressSanitizer)";
  // A batch a little larger than the last: its buffers' class is above the
  // kept blocks'. A kept block of at least half the request is grown, its
  // pages (and contents) kept; a smaller one is not.
  gnn_rt_release_cached_memory();
  auto *a = static_cast<unsigned char *>(gnn_rt_alloc(kLarge));
  ASSERT_NE(a, nullptr);
  std::memset(a, 0xab, kLarge);
  gnn_rt_free(a);
  auto *grown = static_cast<unsigned char *>(gnn_rt_alloc(kLarge * 3 / 2));
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), 0u);
  EXPECT_EQ(grown[0], 0xab);
  EXPECT_EQ(grown[kLarge - 1], 0xab);
  std::memset(grown, 1, kLarge * 3 / 2);
  gnn_rt_free(grown);
  uint64_t kept = gnn_rt_cached_memory_bytes();
  EXPECT_GE(kept, kLarge * 3 / 2);
  // More than twice the kept block: a fresh one, and the kept one stays.
  auto *fresh = static_cast<unsigned char *>(gnn_rt_alloc(kLarge * 4));
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(fresh[0], 0);
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), kept);
  gnn_rt_free(fresh);
  gnn_rt_release_cached_memory();
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), 0u);
}

TEST(RuntimeMemory, GrowingRequestsReuseBlocksOfTheirClass) {
  if (!gnn_rt_pool_recycles())
    GTEST_SKIP() << "recycling is off (AddressSanitizer)";
  // A buffer that grows by 1% per step (a k/v cache while decoding), freed
  // after its successor is allocated: a few classes serve all steps.
  gnn_rt_release_cached_memory();
  std::set<void *> blocks;
  void *previous = nullptr;
  for (int step = 0; step < 40; ++step) {
    uint64_t bytes = kLarge + kLarge * uint64_t(step) / 100;
    auto *p = static_cast<char *>(gnn_rt_alloc(bytes));
    ASSERT_NE(p, nullptr);
    p[0] = p[bytes - 1] = 1;
    blocks.insert(p);
    gnn_rt_free(previous);
    previous = p;
  }
  gnn_rt_free(previous);
  // 8 MiB to 11.1 MiB spans two classes (8 and 10 MiB, then 12 MiB); each
  // needs two blocks (the live one and its successor).
  EXPECT_LE(blocks.size(), 6u);
  gnn_rt_release_cached_memory();
}

TEST(RuntimeMemory, AlignmentIsHonoured) {
  for (uint64_t alignment : {8u, 16u, 64u, 4096u, 65536u})
    for (uint64_t bytes : {uint64_t(1), uint64_t(100), kLarge + 3}) {
      void *p = gnn_rt_aligned_alloc(alignment, bytes);
      ASSERT_NE(p, nullptr) << alignment << " " << bytes;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u);
      std::memset(p, 0, bytes);
      gnn_rt_free(p);
    }
  EXPECT_EQ(gnn_rt_aligned_alloc(3, 64), nullptr);
  EXPECT_EQ(gnn_rt_aligned_alloc(0, 64), nullptr);
  gnn_rt_release_cached_memory();
}

TEST(RuntimeMemory, SmallNullAndForeignBlocks) {
  gnn_rt_free(nullptr);
  void *small = gnn_rt_alloc(64);
  ASSERT_NE(small, nullptr);
  gnn_rt_free(small);
  // Blocks from malloc may be handed back too.
  gnn_rt_free(std::malloc(kLarge));
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), 0u);
  // Absurd sizes fail cleanly.
  EXPECT_EQ(gnn_rt_alloc(UINT64_MAX - 10), nullptr);
}

TEST(RuntimeMemory, ThreadsAllocateAndFreeConcurrently) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) {
        uint64_t bytes = kLarge / 4 + uint64_t((t * 7 + i) % 5) * 4096 * 16;
        auto *p = static_cast<unsigned char *>(gnn_rt_alloc(bytes));
        ASSERT_NE(p, nullptr);
        p[0] = p[bytes - 1] = static_cast<unsigned char>(t);
        EXPECT_EQ(p[0], p[bytes - 1]);
        gnn_rt_free(p);
      }
    });
  for (std::thread &t : threads)
    t.join();
  gnn_rt_release_cached_memory();
  EXPECT_EQ(gnn_rt_cached_memory_bytes(), 0u);
}
} // namespace
