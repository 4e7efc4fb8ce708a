//===- RuntimeContextTest.cpp - errors stay with the program that made them ==//
//
// Part of gnnc. Two compiled programs run at the same time in one process,
// each with bad input of its own: each run reports its own error, and a run
// with good input beside a failing one succeeds.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/RuntimeABI.h"
#include "GNN/InitAll.h"
#include "GNN/Runner/JitRunner.h"
#include "gnnc/cuda.h"
#include "gnnc/dense.h"
#include "gnnc/errors.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <dlfcn.h>
#include <thread>

using namespace mlir;
using namespace mlir::gnn;

namespace {
constexpr const char *kGather = R"mlir(
  func.func @main(%x: tensor<?x4xf32>, %ids: tensor<?xindex>) -> tensor<?x4xf32> {
    %r = gnn.gather_rows %x[%ids] : (tensor<?x4xf32>, tensor<?xindex>) -> tensor<?x4xf32>
    return %r : tensor<?x4xf32>
  })mlir";

constexpr const char *kLinear = R"mlir(
  func.func @main(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?xf32> {
    %y = gnn.linear %x, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    return %y : tensor<?x?xf32>
  })mlir";

/// A rows x cols matrix of small values.
HostTensor matrix(int64_t rows, int64_t cols) {
  HostTensor t;
  t.shape = {rows, cols};
  t.allocate();
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.as<float>()[i] = float(i % 7) * 0.25f;
  return t;
}

HostTensor rows(int64_t n) {
  HostTensor t;
  t.shape = {n, 4};
  t.allocate();
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.as<float>()[i] = float(i);
  return t;
}

std::unique_ptr<JitProgram> compile(MLIRContext &context, const char *source) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, ParserConfig(&context));
  if (!module)
    return nullptr;
  auto program = JitProgram::compile(std::move(module), "main", {}, {});
  if (!program) {
    ADD_FAILURE() << llvm::toString(program.takeError());
    return nullptr;
  }
  return std::move(*program);
}

/// The error of a run, or "" when it succeeded.
std::string errorOf(JitProgram &program, const HostTensor &x,
                    const HostTensor &list) {
  auto out = program.run({{nullptr, &x}, {nullptr, &list}});
  return out ? "" : llvm::toString(out.takeError());
}

/// A run's two inputs.
using Inputs = std::pair<const HostTensor *, const HostTensor *>;

/// Compiles `source` twice and runs both programs at once, 200 times each:
/// the first on `bad`, the second on `otherBad` and then on `good`. Each
/// failing run must report its own error, the good runs none, and nothing
/// may reach the process-wide context.
void expectEachRunItsOwnError(const char *source, Inputs bad,
                              const std::string &badError, Inputs otherBad,
                              const std::string &otherBadError, Inputs good) {
  DialectRegistry registry;
  gnn::registerAllDialectsAndExtensions(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::unique_ptr<JitProgram> first = compile(context, source);
  std::unique_ptr<JitProgram> second = compile(context, source);
  ASSERT_TRUE(first && second);

  constexpr int kRuns = 200;
  std::vector<std::string> firstErrors(kRuns), secondErrors(kRuns),
      goodErrors(kRuns);
  std::thread a([&] {
    for (int i = 0; i < kRuns; ++i)
      firstErrors[i] = errorOf(*first, *bad.first, *bad.second);
  });
  std::thread b([&] {
    for (int i = 0; i < kRuns; ++i) {
      secondErrors[i] = errorOf(*second, *otherBad.first, *otherBad.second);
      goodErrors[i] = errorOf(*second, *good.first, *good.second);
    }
  });
  a.join();
  b.join();
  for (int i = 0; i < kRuns; ++i) {
    EXPECT_EQ(firstErrors[i], badError) << "run " << i;
    EXPECT_EQ(secondErrors[i], otherBadError) << "run " << i;
    EXPECT_EQ(goodErrors[i], "") << "run " << i;
  }
  // Nothing leaked into the process-wide context.
  EXPECT_EQ(gnn_rt_take_error(nullptr, 0), 0);
}
} // namespace

TEST(RuntimeContextTest, ConcurrentProgramsKeepTheirOwnErrors) {
  HostTensor x3 = rows(3), x5 = rows(5);
  HostTensor bad7 = HostTensor::ids({0, 7, 1}), bad9 = HostTensor::ids({9}),
             good = HostTensor::ids({2, 0});
  expectEachRunItsOwnError(
      kGather, {&x3, &bad7}, "id list entry 1: id 7 is out of range [0, 3)",
      {&x5, &bad9}, "id list entry 0: id 9 is out of range [0, 5)",
      {&x5, &good});
}

// The dense layers' size checks run in the runtime (gnn_rt_linear): their
// reports go into the calling run's context too.
TEST(RuntimeContextTest, ConcurrentDenseLayersKeepTheirOwnErrors) {
  // Inputs 4 and 6 wide against weights over 5 and 7 inputs; the good run
  // multiplies 6-wide rows by a weight over 6.
  HostTensor x4 = matrix(3, 4), w5 = matrix(2, 5), x6 = matrix(5, 6),
             w7 = matrix(2, 7), w6 = matrix(3, 6);
  expectEachRunItsOwnError(
      kLinear, {&x4, &w5},
      "a feature has size 4 in a per-row dimension, but the op needs 5",
      {&x6, &w7},
      "a feature has size 6 in a per-row dimension, but the op needs 7",
      {&x6, &w6});
}

TEST(RuntimeContextTest, ContextsAreIndependent) {
  gnn_rt_context *a = gnn_rt_context_create();
  gnn_rt_context *b = gnn_rt_context_create();
  ASSERT_TRUE(a && b);
  gnn_rt_id_out_of_range(a, 1, 2, 3);
  gnn_rt_id_out_of_range(a, 4, 5, 6); // the first report wins
  gnn_rt_rows_mismatch(b, 7, 8, GNN_RT_SIZE_EDGES);
  char message[128];
  ASSERT_EQ(gnn_rt_context_take_error(a, message, sizeof(message)), 1);
  EXPECT_STREQ(message, "id list entry 1: id 2 is out of range [0, 3)");
  EXPECT_EQ(gnn_rt_context_take_error(a, message, sizeof(message)), 0);
  ASSERT_EQ(gnn_rt_context_take_error(b, message, sizeof(message)), 1);
  EXPECT_STREQ(message, "a feature has 7 rows, but the op needs 8 (edges)");
  EXPECT_EQ(gnn_rt_take_error(nullptr, 0), 0);
  // A null context is the process-wide one.
  gnn_rt_edge_out_of_range(nullptr, 0, -1, 4, 1);
  ASSERT_EQ(gnn_rt_take_error(message, sizeof(message)), 1);
  EXPECT_STREQ(message, "edge 0: source node -1 is out of range [0, 4)");
  gnn_rt_context_destroy(a);
  gnn_rt_context_destroy(b);
}

// The GEMM's transpose flags the compiler emits are the runtime's.
static_assert(mlir::gnn::abi::kGemmTransposeA == GNN_GEMM_TRANSPOSE_A &&
              mlir::gnn::abi::kGemmTransposeB == GNN_GEMM_TRANSPOSE_B &&
              mlir::gnn::abi::kGemmLayer == GNN_GEMM_LAYER);
// The slots' "no entry failed" and the blocks' alignment, which compiled
// code relies on, are the runtime's.
static_assert(mlir::gnn::abi::kNoEntry == GNN_RT_NO_ENTRY &&
              mlir::gnn::abi::kBlockAlignment == GNN_CUDA_BLOCK_ALIGNMENT);

TEST(RuntimeABITest, EveryListedFunctionIsBoundAndExported) {
  for (auto [device, async] :
       {std::pair(Device::CPU, false), std::pair(Device::CUDA, false),
        std::pair(Device::CUDA, true)}) {
    std::map<std::string, void *> bound = runtimeSymbols(device, async);
    std::vector<std::string> pushes = gnn::abi::tapePushSymbols(),
                             pops = gnn::abi::tapePopSymbols();
    EXPECT_EQ(bound.size(), std::size(gnn::abi::kRuntimeFunctions) +
                                pushes.size() + pops.size());
    // Every element type's push and every rank's pop is the one function.
    for (const std::string &symbol : pushes)
      EXPECT_EQ(bound[symbol], dlsym(RTLD_DEFAULT, "gnn_rt_tape_push"))
          << symbol;
    for (const std::string &symbol : pops)
      EXPECT_EQ(bound[symbol], dlsym(RTLD_DEFAULT, "gnn_rt_tape_pop"))
          << symbol;
    for (const gnn::abi::RuntimeFunction &f : gnn::abi::kRuntimeFunctions) {
      std::string symbol = gnn::abi::symbolOf(f);
      ASSERT_TRUE(bound.count(symbol)) << symbol;
      EXPECT_NE(bound[symbol], nullptr) << symbol;
      if (device != Device::CPU)
        continue;
      // On the CPU the program calls the runtime's exported function itself.
      void *exported = dlsym(RTLD_DEFAULT, symbol.c_str());
      EXPECT_NE(exported, nullptr) << symbol << " is not exported";
      EXPECT_EQ(bound[symbol], exported) << symbol;
    }
  }
}

TEST(RuntimeABITest, AsynchronousGPUProgramsQueueTheirProducts) {
  // The dense products of a program whose kernels are launched without
  // waiting, and its loops' tapes (whose pushes copy on the stream), are
  // the ones that queue their work; everything else is bound as for any
  // GPU program.
  std::map<std::string, void *> waiting = runtimeSymbols(Device::CUDA),
                                queued = runtimeSymbols(Device::CUDA, true);
  const std::pair<llvm::StringRef, const char *> products[] = {
      {gnn::abi::kLinear, "gnn_cuda_linear_queued"},
      {gnn::abi::kLinearNoBias, "gnn_cuda_linear_nobias_queued"},
      {gnn::abi::kGemm, "gnn_cuda_gemm_queued"},
      {gnn::abi::kGemmAt, "gnn_cuda_gemm_at_queued"},
      {gnn::abi::kTapeCreate, "gnn_cuda_tape_create_queued"},
      {gnn::abi::kCheckBadId, "_mlir_ciface_gnn_cuda_check_bad_id_queued"},
      {gnn::abi::kCheckRepeatedId,
       "_mlir_ciface_gnn_cuda_check_repeated_id_queued"}};
  for (const gnn::abi::RuntimeFunction &f : gnn::abi::kRuntimeFunctions) {
    std::string symbol = gnn::abi::symbolOf(f);
    const auto *product = llvm::find_if(
        products, [&](const auto &p) { return p.first == f.name; });
    if (product == std::end(products)) {
      EXPECT_EQ(queued[symbol], waiting[symbol]) << symbol;
      continue;
    }
    EXPECT_EQ(queued[symbol], dlsym(RTLD_DEFAULT, product->second)) << symbol;
    EXPECT_NE(queued[symbol], waiting[symbol]) << symbol;
  }
}
