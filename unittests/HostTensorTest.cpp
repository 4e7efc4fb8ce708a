//===- HostTensorTest.cpp - host tensors and the results of programs ------===//
//
// Part of gnnc. HostTensor's storage (deep copies, moves, joined rows,
// adopted blocks released once) and how JitProgram hands results back: a
// CPU result is taken over without copying, so these tests check that
// results sharing a buffer, inputs handed back and strided views come back
// right and stay right across later runs.
//
//===----------------------------------------------------------------------===//

#include "GNN/InitAll.h"
#include "GNN/Runner/JitRunner.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <cstdlib>
#include <numeric>

using namespace mlir;
using namespace mlir::gnn;

namespace {
HostTensor iota(std::vector<int64_t> shape, float first = 0.0f) {
  HostTensor t;
  t.shape = std::move(shape);
  t.allocate();
  std::iota(t.as<float>(), t.as<float>() + t.numElements(), first);
  return t;
}

std::vector<float> values(const HostTensor &t) {
  return std::vector<float>(t.as<float>(), t.as<float>() + t.numElements());
}

TEST(HostTensor, AllocatesZeros) {
  HostTensor t;
  t.dtype = DType::I64;
  t.shape = {3, 5};
  t.allocate();
  for (int64_t i = 0; i < 15; ++i)
    EXPECT_EQ(t.as<int64_t>()[i], 0);
  HostTensor empty;
  empty.shape = {0, 4};
  empty.allocate();
  EXPECT_NE(empty.data(), nullptr);
}

TEST(HostTensor, PooledStorageHoldsWhatIsWritten) {
  // Large enough for the runtime's pool to keep the block when freed.
  for (int round = 0; round < 3; ++round) {
    HostTensor t;
    t.shape = {1024, 257};
    t.allocateUninitialized();
    ASSERT_NE(t.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % alignof(double), 0u);
    std::iota(t.as<float>(), t.as<float>() + t.numElements(), float(round));
    HostTensor copy = t;
    EXPECT_EQ(copy.as<float>()[0], float(round));
    EXPECT_EQ(copy.as<float>()[t.numElements() - 1],
              float(round + t.numElements() - 1));
  }
  HostTensor empty;
  empty.shape = {0, 4};
  empty.allocateUninitialized();
  EXPECT_NE(empty.data(), nullptr);
}

TEST(HostTensor, CopiesAreDeepAndMovesKeepTheBuffer) {
  HostTensor a = iota({2, 3});
  HostTensor b = a;
  EXPECT_NE(a.data(), b.data());
  b.as<float>()[0] = 42.0f;
  EXPECT_EQ(a.as<float>()[0], 0.0f);
  EXPECT_EQ(values(b), (std::vector<float>{42, 1, 2, 3, 4, 5}));

  HostTensor c;
  c = a;
  EXPECT_EQ(values(c), values(a));
  c = c; // self-assignment keeps the elements
  EXPECT_EQ(values(c), values(a));

  const void *buffer = a.data();
  HostTensor d = std::move(a);
  EXPECT_EQ(d.data(), buffer);
  EXPECT_EQ(d.shape, (std::vector<int64_t>{2, 3}));
}

int releases = 0;
void countRelease(void *block) {
  ++releases;
  std::free(block);
}

TEST(HostTensor, AdoptedBlocksAreReleasedOnce) {
  releases = 0;
  {
    auto *block = static_cast<float *>(std::malloc(8 * sizeof(float)));
    std::iota(block, block + 8, 0.0f);
    HostTensor t;
    t.shape = {2, 2};
    // The elements may start inside the block.
    t.adopt(block, block + 4, &countRelease);
    EXPECT_EQ(values(t), (std::vector<float>{4, 5, 6, 7}));
    HostTensor moved = std::move(t);
    HostTensor copy = moved;
    EXPECT_EQ(values(copy), values(moved));
    EXPECT_EQ(releases, 0);
  }
  EXPECT_EQ(releases, 1);
}

TEST(HostTensor, ConcatRowsJoinsInOrder) {
  HostTensor a = iota({1, 2}), b = iota({0, 2}), c = iota({2, 2}, 10.0f);
  HostTensor joined = HostTensor::concatRows({a, b, c});
  EXPECT_EQ(joined.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(joined), (std::vector<float>{0, 1, 10, 11, 12, 13}));
  HostTensor one = HostTensor::concatRows({c});
  EXPECT_NE(one.data(), c.data());
  EXPECT_EQ(values(one), values(c));
}

/// Results of every kind a program can hand back: a fresh tensor, the same
/// tensor twice, an input unchanged, and a strided view of a fresh tensor.
constexpr const char *kProgram = R"mlir(
func.func @main(%x: tensor<?x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x2xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %y = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %s = arith.addf %a, %a : f32
    gnn.yield %s : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  %odd = tensor.extract_slice %y[0, 1] [%n, 2] [1, 2]
      : tensor<?x4xf32> to tensor<?x2xf32>
  return %y, %y, %x, %odd
      : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x2xf32>
}
)mlir";

TEST(JitResults, ComeBackRightAndStayRight) {
  DialectRegistry registry;
  gnn::registerAllDialectsAndExtensions(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kProgram, ParserConfig(&context));
  ASSERT_TRUE(module);
  auto program = JitProgram::compile(std::move(module), "main", {}, {});
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());

  auto check = [](const std::vector<HostTensor> &out, const HostTensor &x) {
    ASSERT_EQ(out.size(), 4u);
    int64_t rows = x.shape[0];
    std::vector<float> doubled, odd;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < 4; ++c) {
        float y = 2.0f * x.as<float>()[r * 4 + c];
        doubled.push_back(y);
        if (c % 2 == 1)
          odd.push_back(y);
      }
    EXPECT_EQ(values(out[0]), doubled);
    EXPECT_EQ(values(out[1]), doubled);
    EXPECT_NE(out[0].data(), out[1].data());
    EXPECT_EQ(values(out[2]), values(x));
    EXPECT_NE(out[2].data(), x.data());
    EXPECT_EQ(out[3].shape, (std::vector<int64_t>{rows, 2}));
    EXPECT_EQ(values(out[3]), odd);
  };
  HostTensor x = iota({5, 4}, 1.0f);
  auto first = (*program)->run({{nullptr, &x}});
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  check(*first, x);
  // Later runs (buffers come from the runtime's pool) leave earlier
  // results alone, whatever is freed in between.
  for (int64_t rows : {5, 0, 7, 5}) {
    HostTensor other = iota({rows, 4}, -100.0f);
    auto next = (*program)->run({{nullptr, &other}});
    ASSERT_TRUE(bool(next)) << llvm::toString(next.takeError());
    check(*next, other);
    check(*first, x);
  }
}
} // namespace

TEST(HostTensorTest, IdsAreOneDimensionalInt64) {
  HostTensor t = HostTensor::ids({3, -1, int64_t(1) << 40});
  EXPECT_EQ(t.dtype, DType::I64);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(t.as<int64_t>()[0], 3);
  EXPECT_EQ(t.as<int64_t>()[1], -1);
  EXPECT_EQ(t.as<int64_t>()[2], int64_t(1) << 40);
  HostTensor empty = HostTensor::ids({});
  EXPECT_EQ(empty.shape, (std::vector<int64_t>{0}));
  EXPECT_EQ(empty.numBytes(), 0u);
}
