//===- CallMemoryTest.cpp - where a GPU call's arguments are placed -------===//
//
// Part of gnnc. CallMemory (lib/GNN/Runner/DeviceMemory.h) on a GPU: a
// call's small arguments gathered into one unified block, each aligned and
// with its own bytes, larger ones copied alone, unified ones taken as they
// are, constant ones copied once per program. Skipped without a driver;
// test/Bench/stand-in-driver.test runs it on the stand-in driver, whose
// unified memory the host reads where it lies.
//
//===----------------------------------------------------------------------===//

#include "DeviceMemory.h"
#include "GNN/Runner/UnifiedMemory.h"
#include "gnnc/cuda.h"
#include "gnnc/errors.h"

#include "gtest/gtest.h"

#include <cstring>
#include <numeric>
#include <vector>

using namespace mlir::gnn;
using mlir::gnn::detail::CallMemory;
using mlir::gnn::detail::ResidentCopies;

namespace {
std::vector<int64_t> iota(size_t count, int64_t first) {
  std::vector<int64_t> v(count);
  std::iota(v.begin(), v.end(), first);
  return v;
}

bool sameBytes(const void *placed, const std::vector<int64_t> &v) {
  return std::memcmp(placed, v.data(), v.size() * sizeof(int64_t)) == 0;
}

uintptr_t address(const void *p) { return reinterpret_cast<uintptr_t>(p); }
} // namespace

TEST(CallMemory, GathersSmallArgumentsIntoOneBlock) {
  if (!gnn_cuda_init(nullptr, 0))
    GTEST_SKIP() << "no CUDA device";
  ResidentCopies resident;
  std::vector<int64_t> a = iota(3, 1), b = iota(100, 7), c = iota(1, 42),
                       large = iota((size_t(1) << 20) / 8 + 1, 5),
                       weight = iota(16, 3);
  int64_t none = 0;
  auto unified = unifiedCopy([&] {
    HostTensor t;
    t.dtype = DType::I64;
    t.shape = {4};
    t.allocate();
    return t;
  }());
  ASSERT_TRUE(bool(unified)) << llvm::toString(unified.takeError());
  std::vector<CallMemory::Buffer> buffers = {
      {a.data(), a.size() * 8, false},
      {b.data(), b.size() * 8, false},
      {&none, 0, false}, // an empty tensor with an address
      {nullptr, 0, false},
      {c.data(), c.size() * 8, false},
      {large.data(), large.size() * 8, false},
      {unified->data(), unified->numBytes(), false},
      {weight.data(), weight.size() * 8, true}};
  std::vector<const void *> placed(buffers.size());
  {
    auto memory = CallMemory::create(Device::CUDA, resident);
    ASSERT_TRUE(memory->place(buffers, placed));
    gnn_cuda_wait_for_launches();
    EXPECT_TRUE(sameBytes(placed[0], a));
    EXPECT_TRUE(sameBytes(placed[1], b));
    EXPECT_TRUE(sameBytes(placed[4], c));
    EXPECT_TRUE(sameBytes(placed[5], large));
    EXPECT_TRUE(sameBytes(placed[7], weight));
    // The small ones: 256-byte aligned, one after the other in one block,
    // the empty one a distinct address among them.
    for (size_t i : {0, 1, 2, 4}) {
      EXPECT_NE(placed[i], buffers[i].data);
      EXPECT_EQ(address(placed[i]) % GNN_CUDA_BLOCK_ALIGNMENT, 0u) << i;
      EXPECT_EQ(gnn_cuda_is_unified(placed[i]), 1) << i;
    }
    EXPECT_EQ(address(placed[1]) - address(placed[0]), 256u);
    EXPECT_EQ(address(placed[2]) - address(placed[1]), 1024u);
    EXPECT_EQ(address(placed[4]) - address(placed[2]), 256u);
    EXPECT_EQ(placed[3], nullptr);
    // The large one alone, the unified one as it is.
    EXPECT_NE(placed[5], buffers[5].data);
    EXPECT_EQ(gnn_cuda_is_unified(placed[5]), 1);
    EXPECT_EQ(placed[6], unified->data());
  }
  // A constant stays placed for the program's next calls.
  std::vector<const void *> again(buffers.size());
  auto memory = CallMemory::create(Device::CUDA, resident);
  ASSERT_TRUE(memory->place(buffers, again));
  gnn_cuda_wait_for_launches();
  EXPECT_EQ(again[7], placed[7]);
  char message[256];
  EXPECT_EQ(gnn_rt_take_error(message, sizeof(message)), 0) << message;
}
