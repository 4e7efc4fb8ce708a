//===- RuntimeInstanceTest.cpp - two runtime instances in one process -----===//
//
// Part of gnnc. Programs compiled for two runtime instances with different
// thread counts and pools run at the same time in one process: each run
// gets its instance's threads and pool and its own errors, and neither
// instance sees the other's settings.
//
//===----------------------------------------------------------------------===//

#include "GNN/InitAll.h"
#include "GNN/Runner/Program.h"
#include "gnnc/errors.h"
#include "gnnc/memory.h"
#include "gnnc/runtime.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <thread>

using namespace mlir;
using namespace mlir::gnn;

extern "C" int omp_get_max_threads(void);

namespace {
/// Gathers rows (ids checked against the rows) and makes a result of
/// 512 KiB and more, which the pool serves.
constexpr const char *kSource = R"mlir(
  func.func @main(%x: tensor<?x128xf32>, %ids: tensor<?xindex>) -> tensor<?x128xf32> {
    %r = gnn.gather_rows %x[%ids] : (tensor<?x128xf32>, tensor<?xindex>) -> tensor<?x128xf32>
    %s = arith.addf %r, %r : tensor<?x128xf32>
    return %s : tensor<?x128xf32>
  })mlir";

HostTensor rows(int64_t n) {
  HostTensor t;
  t.shape = {n, 128};
  t.allocate();
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.as<float>()[i] = float(i % 97);
  return t;
}

/// `n` ids cycling through [0, bound), the one at `bad` (if any) = bound.
HostTensor ids(int64_t n, int64_t bound, int64_t bad = -1) {
  std::vector<int64_t> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(i == bad ? bound : i % bound);
  return HostTensor::ids(values);
}

struct Instance {
  RuntimeInstance runtime;
  std::unique_ptr<Program> program;
};

Instance compileFor(MLIRContext &context, const gnn_rt_settings &settings) {
  Instance made;
  llvm::Expected<RuntimeInstance> runtime = createRuntime(settings);
  EXPECT_TRUE(bool(runtime)) << llvm::toString(runtime.takeError());
  if (!runtime)
    return made;
  made.runtime = std::move(*runtime);
  ProgramOptions options;
  options.compile.runtime = made.runtime.get();
  auto program = Program::compileString(context, kSource, options);
  EXPECT_TRUE(bool(program)) << llvm::toString(program.takeError());
  if (program)
    made.program = std::move(*program);
  return made;
}

/// A context with gnnc's dialects loaded.
std::unique_ptr<MLIRContext> gnnContext() {
  DialectRegistry registry;
  gnn::registerAllDialectsAndExtensions(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

/// What the calling thread's pool says when bound to a context of
/// `runtime`.
struct PoolView {
  int recycles;
  uint64_t limit, cached;
};
PoolView poolOf(gnn_rt_runtime *runtime) {
  gnn_rt_context *context = gnn_rt_context_create_in(runtime);
  gnn_rt_context *before = gnn_rt_context_bind(context);
  PoolView view{gnn_rt_pool_recycles(), gnn_rt_pool_limit_bytes(),
                gnn_rt_cached_memory_bytes()};
  gnn_rt_context_bind(before);
  gnn_rt_context_destroy(context);
  return view;
}
} // namespace

TEST(RuntimeInstanceTest, TwoInstancesRunAtOnceWithTheirOwnSettings) {
  std::unique_ptr<MLIRContext> owned = gnnContext();
  MLIRContext &context = *owned;
  gnn_rt_settings one, two;
  gnn_rt_settings_init(&one);
  gnn_rt_settings_init(&two);
  one.threads = 1;
  one.pool_limit_bytes = uint64_t(64) << 20;
  two.threads = 2;
  two.keep_freed_blocks = 0;
  Instance a = compileFor(context, one), b = compileFor(context, two);
  ASSERT_TRUE(a.program && b.program);

  HostTensor x = rows(1024), y = rows(2048);
  HostTensor goodA = ids(1500, 1024), badA = ids(1500, 1024, 3),
             goodB = ids(3000, 2048), badB = ids(3000, 2048, 11);
  constexpr int kRuns = 30;
  auto runMany = [](Instance &in, const HostTensor &x, const HostTensor &good,
                    const HostTensor &bad, int threads, float expectFirst,
                    std::vector<std::string> &errors, int &threadsSeen) {
    for (int i = 0; i < kRuns; ++i) {
      TensorMap inputs;
      inputs["x"] = x.view();
      inputs["ids"] = (i % 2 ? bad : good).view();
      llvm::Expected<TensorMap> out = in.program->run(nullptr, inputs);
      if (!out) {
        errors.push_back(llvm::toString(out.takeError()));
      } else {
        errors.push_back("");
        EXPECT_EQ(out->at("result0").as<float>()[1], expectFirst);
      }
      // The run set the calling thread's parallel loops to its instance's.
      threadsSeen = omp_get_max_threads();
      EXPECT_EQ(threadsSeen, threads);
    }
  };
  std::vector<std::string> errorsA, errorsB;
  int threadsA = 0, threadsB = 0;
  std::thread first(
      [&] { runMany(a, x, goodA, badA, 1, 2.0f, errorsA, threadsA); });
  std::thread second(
      [&] { runMany(b, y, goodB, badB, 2, 2.0f, errorsB, threadsB); });
  first.join();
  second.join();
  for (int i = 0; i < kRuns; ++i) {
    EXPECT_EQ(errorsA[i],
              i % 2 ? "id list entry 3: id 1024 is out of range [0, 1024)" : "")
        << "run " << i;
    EXPECT_EQ(errorsB[i],
              i % 2 ? "id list entry 11: id 2048 is out of range [0, 2048)"
                    : "")
        << "run " << i;
  }
  EXPECT_EQ(threadsA, 1);
  EXPECT_EQ(threadsB, 2);
  // Nothing reached the process-wide context.
  EXPECT_EQ(gnn_rt_take_error(nullptr, 0), 0);

  // Each instance's pool follows its own settings: the first keeps the
  // blocks its runs freed (unless AddressSanitizer turns keeping off), the
  // second keeps nothing.
  PoolView poolA = poolOf(a.runtime.get()), poolB = poolOf(b.runtime.get());
  EXPECT_EQ(poolB.recycles, 0);
  EXPECT_EQ(poolB.limit, 0u);
  EXPECT_EQ(poolB.cached, 0u);
  if (poolA.recycles) {
    EXPECT_EQ(poolA.limit, uint64_t(64) << 20);
    EXPECT_GT(poolA.cached, 0u);
  }
  // The default instance's pool saw none of their blocks.
  EXPECT_EQ(poolOf(nullptr).cached, poolOf(gnn_rt_default_runtime()).cached);
}

TEST(RuntimeInstanceTest, WorkerThreadsAllocateFromTheCallersInstance) {
  // Every iteration of a parallel loop allocates a scratch buffer of 800
  // KB (which pools serve) on whichever OpenMP thread runs it, and frees it
  // there (the deallocation pipeline's free at the body's end).
  constexpr const char *kScratch = R"mlir(
    func.func @main(%x: tensor<?xf32>, %size: tensor<1xindex>) -> tensor<?xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %n = tensor.dim %x, %c0 : tensor<?xf32>
      %k = tensor.extract %size[%c0] : tensor<1xindex>
      %in = bufferization.to_memref %x : memref<?xf32>
      %out = memref.alloc(%n) : memref<?xf32>
      scf.parallel (%i) = (%c0) to (%n) step (%c1) {
        %scratch = memref.alloc(%k) : memref<?xf32>
        %v = memref.load %in[%i] : memref<?xf32>
        memref.store %v, %scratch[%c0] : memref<?xf32>
        %w = memref.load %scratch[%c0] : memref<?xf32>
        %twice = arith.addf %w, %w : f32
        memref.store %twice, %out[%i] : memref<?xf32>
        scf.reduce
      }
      %r = bufferization.to_tensor %out restrict : memref<?xf32>
      return %r : tensor<?xf32>
    })mlir";
  std::unique_ptr<MLIRContext> owned = gnnContext();
  MLIRContext &context = *owned;
  gnn_rt_settings settings;
  gnn_rt_settings_init(&settings);
  settings.threads = 2;
  llvm::Expected<RuntimeInstance> runtime = createRuntime(settings);
  ASSERT_TRUE(bool(runtime)) << llvm::toString(runtime.takeError());
  ProgramOptions options;
  options.compile.runtime = runtime->get();
  auto program = Program::compileString(context, kScratch, options);
  ASSERT_TRUE(bool(program)) << llvm::toString(program.takeError());

  HostTensor x;
  x.shape = {256};
  x.allocate();
  for (int64_t i = 0; i < 256; ++i)
    x.as<float>()[i] = float(i);
  HostTensor size = HostTensor::ids({200000});
  uint64_t defaultBefore = poolOf(gnn_rt_default_runtime()).cached;
  for (int run = 0; run < 3; ++run) {
    TensorMap inputs;
    inputs["x"] = x.view();
    inputs["size"] = size.view();
    llvm::Expected<TensorMap> out = (*program)->run(nullptr, inputs);
    ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
    EXPECT_EQ(out->at("result0").as<float>()[255], 510.0f);
  }
  // The scratch buffers went back to the instance's pool (unless
  // AddressSanitizer turns keeping off): at least one kept there, more when
  // the threads' iterations overlapped in time (one freed block serves the
  // other thread's next iteration otherwise, as on a loaded machine); none
  // reached the default one's.
  PoolView mine = poolOf(runtime->get());
  if (mine.recycles) {
    EXPECT_GE(mine.cached, uint64_t(800000));
  }
  EXPECT_EQ(poolOf(gnn_rt_default_runtime()).cached, defaultBefore);
}

TEST(RuntimeInstanceTest, ResultsOutliveTheirInstance) {
  std::unique_ptr<MLIRContext> owned = gnnContext();
  MLIRContext &context = *owned;
  gnn_rt_settings settings;
  gnn_rt_settings_init(&settings);
  Instance a = compileFor(context, settings);
  ASSERT_TRUE(a.program);
  HostTensor x = rows(1024), list = ids(2000, 1024);
  TensorMap inputs;
  inputs["x"] = x.view();
  inputs["ids"] = list.view();
  llvm::Expected<TensorMap> out = a.program->run(nullptr, inputs);
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  a.program.reset();
  a.runtime.reset();
  // The result's buffer came from the instance's pool; it stays readable
  // and goes back to the default instance when freed.
  const HostTensor &r = out->at("result0");
  // Row 1999 gathered row 1999 % 1024 = 975.
  EXPECT_EQ(r.as<float>()[128 * 1999 + 5], 2.0f * float((975 * 128 + 5) % 97));
  out->clear();
}

TEST(RuntimeInstanceTest, SettingsOutOfRangeAreRefused) {
  gnn_rt_settings settings;
  gnn_rt_settings_init(&settings);
  settings.threads = -1;
  llvm::Expected<RuntimeInstance> negative = createRuntime(settings);
  ASSERT_FALSE(bool(negative));
  EXPECT_EQ(llvm::toString(negative.takeError()),
            "a runtime's thread count must not be negative");
  EXPECT_EQ(gnn_rt_runtime_create(&settings), nullptr);
  settings.threads = 0;
  settings.tape_budget_bytes = -5;
  EXPECT_STREQ(gnn_rt_settings_problem(&settings),
               "a runtime's tape budget must not be negative");
  EXPECT_EQ(gnn_rt_runtime_create(&settings), nullptr);
  settings.tape_budget_bytes = 0;
  EXPECT_EQ(gnn_rt_settings_problem(&settings), nullptr);
  EXPECT_STREQ(gnn_rt_settings_problem(nullptr), "no settings");
}
