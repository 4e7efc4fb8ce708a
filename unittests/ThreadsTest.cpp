//===- ThreadsTest.cpp - the cores programs compile and run on ------------===//
//
// Part of gnnc. --threads T and --serial bound compiling too: the context's
// pool has T threads, and with one thread compiling starts none. "All
// cores" follows OpenMP's default, OMP_NUM_THREADS included (ctest also
// runs Threads.* with OMP_NUM_THREADS=1).
//
//===----------------------------------------------------------------------===//

#include "GNN/InitAll.h"
#include "GNN/Models/ModelConfig.h"
#include "GNN/Models/TransformerModel.h"
#include "GNN/Runner/CompileThreads.h"
#include "GNN/Runner/JitRunner.h"
#include "GNN/Support/Environment.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

using namespace mlir;
using namespace mlir::gnn;

extern "C" int omp_get_max_threads(void);
extern "C" int omp_get_num_procs(void);

namespace {
/// Threads of this process now.
size_t processThreads() {
  size_t n = 0;
  for ([[maybe_unused]] auto &entry :
       std::filesystem::directory_iterator("/proc/self/task"))
    ++n;
  return n;
}

TEST(CompileThreads, BoundTheContextsPool) {
  DialectRegistry registry;
  {
    // All cores, or OMP_NUM_THREADS of them as the environment's options
    // count them: counted before OpenMP starts (which may bind this thread
    // to one core).
    unsigned cores = llvm::hardware_concurrency().compute_thread_count();
    const char *set = std::getenv("OMP_NUM_THREADS");
    CompileThreads all(readEnvironment().compileThreads(0));
    EXPECT_EQ(all.count(),
              set ? std::min(unsigned(std::atoi(set)), cores) : cores);
    // Reading OMP_NUM_THREADS does not start OpenMP, which would have bound
    // this thread, and so the pool's threads, to one core.
    EXPECT_EQ(llvm::hardware_concurrency().compute_thread_count(), cores);
    MLIRContext context(registry);
    all.attach(context);
    EXPECT_EQ(context.isMultithreadingEnabled(), all.count() > 1);
  }
  {
    CompileThreads one(1);
    MLIRContext context(registry);
    one.attach(context);
    EXPECT_FALSE(context.isMultithreadingEnabled());
    EXPECT_EQ(one.count(), 1u);
  }
  {
    CompileThreads three(3);
    MLIRContext context(registry);
    three.attach(context);
    ASSERT_TRUE(context.isMultithreadingEnabled());
    EXPECT_EQ(context.getThreadPool().getMaxConcurrency(), 3u);
    EXPECT_EQ(three.count(), 3u);
  }
}

/// Compiles the bundled copy-task Transformer (no compile cache) with
/// `threads` compile threads; returns how many threads the process gained.
size_t threadsStartedCompiling(unsigned threads) {
  // As the tools do at start-up: OpenBLAS loaded with no threads of its own.
  prepareProcess(readEnvironment());
  CompileThreads bound(threads);
  DialectRegistry registry;
  gnn::registerAllDialectsAndExtensions(registry);
  MLIRContext context(registry);
  bound.attach(context);
  context.loadAllAvailableDialects();
  auto config = readModelConfig(GNN_SOURCE_DIR "/examples/copy/config.json");
  EXPECT_TRUE(bool(config)) << llvm::toString(config.takeError());
  if (!config)
    return 0;
  ModelOptions options;
  options.compile.parallel = threads != 1;
  options.compile.compileThreads = bound.count();
  size_t before = processThreads();
  auto model = TransformerModel::load(context, *config, options);
  EXPECT_TRUE(bool(model)) << llvm::toString(model.takeError());
  return processThreads() - before;
}

TEST(CompileThreads, OneThreadCompilesOnTheCallingThread) {
  EXPECT_EQ(threadsStartedCompiling(1), 0u);
}

TEST(Threads, AllCoresFollowOpenMPsDefault) {
  const char *set = std::getenv("OMP_NUM_THREADS");
  JitProgram::setThreads(1);
  EXPECT_EQ(omp_get_max_threads(), 1);
  JitProgram::setThreads(0);
  EXPECT_EQ(omp_get_max_threads(), set ? std::atoi(set) : omp_get_num_procs());
  JitProgram::setThreads(3);
  EXPECT_EQ(omp_get_max_threads(), 3);
}
} // namespace
