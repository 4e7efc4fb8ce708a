//===- ParserQuarantineTest.cpp - freed memory kept while parsing ---------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/ParserQuarantine.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

using mlir::gnn::ParserQuarantine;

namespace {
/// malloc and free through calls the compiler cannot see through: it
/// would drop a pair of them, or warn of the test's write after a free.
void *(*volatile allocateBlock)(size_t) = std::malloc;
void (*volatile freeBlock)(void *) = std::free;

/// Allocates and frees `count` blocks of `size` bytes.
void churn(int count, size_t size) {
  for (int i = 0; i < count; ++i)
    freeBlock(allocateBlock(size));
}

class ParserQuarantineTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!ParserQuarantine::keepsMemory())
      GTEST_SKIP() << "AddressSanitizer's allocator keeps freed memory";
  }
};
} // namespace

TEST_F(ParserQuarantineTest, KeepsFreedBlocksUntilItEnds) {
  char *block = static_cast<char *>(allocateBlock(48));
  ASSERT_NE(block, nullptr);
  std::vector<void *> others;
  others.reserve(64);
  {
    ParserQuarantine quarantine;
    freeBlock(block);
    EXPECT_EQ(ParserQuarantine::keptBlocks(), 1u);
    // A stale write lands in memory the process still owns, and malloc
    // does not hand the block out again meanwhile.
    std::memset(block, 0xab, 48);
    for (int i = 0; i < 64; ++i) {
      others.push_back(allocateBlock(48));
      EXPECT_NE(others.back(), block);
    }
    for (void *p : others)
      freeBlock(p);
    EXPECT_EQ(ParserQuarantine::keptBlocks(), 65u);
  }
  EXPECT_EQ(ParserQuarantine::keptBlocks(), 0u);
  // Blocks of the size go through malloc's lists again after the guard.
  std::vector<void *> after;
  after.reserve(256);
  for (int i = 0; i < 256; ++i)
    after.push_back(allocateBlock(48));
  for (void *p : after)
    freeBlock(p);
  EXPECT_EQ(ParserQuarantine::keptBlocks(), 0u);
}

TEST_F(ParserQuarantineTest, NestedGuardsReturnMemoryAtTheOutermost) {
  ParserQuarantine outer;
  {
    ParserQuarantine inner;
    churn(1, 32);
    inner.release();
    EXPECT_EQ(ParserQuarantine::keptBlocks(), 1u);
    churn(1, 32);
    EXPECT_EQ(ParserQuarantine::keptBlocks(), 2u);
  }
  EXPECT_EQ(ParserQuarantine::keptBlocks(), 2u);
  outer.release();
  EXPECT_EQ(ParserQuarantine::keptBlocks(), 0u);
  outer.release(); // once only
  churn(1, 32);
  EXPECT_EQ(ParserQuarantine::keptBlocks(), 0u);
}

TEST_F(ParserQuarantineTest, OtherThreadsFreeAsUsual) {
  ParserQuarantine quarantine;
  size_t keptThere = 1;
  std::thread other([&] {
    churn(1000, 64);
    keptThere = ParserQuarantine::keptBlocks();
  });
  other.join();
  EXPECT_EQ(keptThere, 0u);
  // Here, at most the thread's own bookkeeping that this thread freed.
  EXPECT_LT(ParserQuarantine::keptBlocks(), 10u);
}

TEST_F(ParserQuarantineTest, ManyBlocks) {
  // The list of kept blocks grows past its first capacity.
  ParserQuarantine quarantine;
  for (int i = 0; i < 100000; ++i)
    churn(1, 16 + i % 256);
  EXPECT_EQ(ParserQuarantine::keptBlocks(), 100000u);
  quarantine.release();
  EXPECT_EQ(ParserQuarantine::keptBlocks(), 0u);
}
