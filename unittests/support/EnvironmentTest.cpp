//===- EnvironmentTest.cpp - the environment's options --------------------===//
//
// Part of gnnc. What the tools read from the environment, and how they set
// the process up with it: OpenBLAS's kernels and threads, malloc's
// thresholds. ctest also runs the OpenBLAS test with OPENBLAS_CORETYPE and
// GNNC_BLAS_CORETYPE set (unittests/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/Environment.h"
#include "gnnc/dense.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <optional>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GNN_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define GNN_TEST_ASAN 1
#endif

using namespace mlir::gnn;

namespace {
/// Sets `name` to `value` (null: unsets it) while this lives.
class ScopedVariable {
public:
  ScopedVariable(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      before = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedVariable() {
    if (before)
      setenv(name, before->c_str(), 1);
    else
      unsetenv(name);
  }

private:
  const char *name;
  std::optional<std::string> before;
};

TEST(Environment, SettingsComeFromTheirVariables) {
  {
    ScopedVariable pool("GNNC_POOL", nullptr), mb("GNNC_POOL_MB", nullptr),
        small("GNNC_SMALL_GEMM", nullptr), checked("GNNC_CHECKED", nullptr),
        omp("OMP_NUM_THREADS", nullptr), cuda("GNNC_CUDA_POOL", nullptr),
        cudaMB("GNNC_CUDA_POOL_MB", nullptr);
    EnvironmentOptions o = readEnvironment();
    gnn_rt_settings defaults;
    gnn_rt_settings_init(&defaults);
    EXPECT_EQ(o.runtime.keep_freed_blocks, defaults.keep_freed_blocks);
    EXPECT_EQ(o.runtime.pool_limit_bytes, GNN_RT_DEFAULT_POOL_LIMIT);
    EXPECT_EQ(o.runtime.small_gemm, 1);
    EXPECT_FALSE(o.checked);
    EXPECT_EQ(o.ompThreads, 0u);
    EXPECT_EQ(o.compileThreads(0), 0u);
    EXPECT_EQ(o.compileThreads(3), 3u);
    EXPECT_FALSE(o.cudaPoolLimit.has_value());
  }
  {
    ScopedVariable pool("GNNC_POOL", "off"), mb("GNNC_POOL_MB", "20"),
        small("GNNC_SMALL_GEMM", "off"), checked("GNNC_CHECKED", "1"),
        omp("OMP_NUM_THREADS", "1,2"), cuda("GNNC_CUDA_POOL_MB", "64");
    EnvironmentOptions o = readEnvironment();
    EXPECT_EQ(o.runtime.keep_freed_blocks, 0);
    EXPECT_EQ(o.runtime.pool_limit_bytes, uint64_t(20) << 20);
    EXPECT_EQ(o.runtime.small_gemm, 0);
    EXPECT_TRUE(o.checked);
    EXPECT_EQ(o.ompThreads, 1u);
    EXPECT_EQ(o.compileThreads(0), 1u);
    EXPECT_EQ(o.compileThreads(4), 4u);
    EXPECT_EQ(o.cudaPoolLimit, uint64_t(64) << 20);
  }
  {
    // Malformed numbers count as unset.
    ScopedVariable mb("GNNC_POOL_MB", "12x"), omp("OMP_NUM_THREADS", "many"),
        cuda("GNNC_CUDA_POOL", "off"), cudaMB("GNNC_CUDA_POOL_MB", "-3");
    EnvironmentOptions o = readEnvironment();
    EXPECT_EQ(o.runtime.pool_limit_bytes, GNN_RT_DEFAULT_POOL_LIMIT);
    EXPECT_EQ(o.ompThreads, 0u);
    EXPECT_EQ(o.cudaPoolLimit, uint64_t(0));
  }
  {
    ScopedVariable rank("OMPI_COMM_WORLD_SIZE", "2");
    EXPECT_TRUE(readEnvironment().mpiLaunched);
  }
}

// The GPU's fastest form is the default; 0 turns each part off, any other
// value leaves it on.
TEST(Environment, GpuFormIsOnUnlessTurnedOff) {
  {
    ScopedVariable async("GNNC_CUDA_ASYNC_LAUNCHES", nullptr),
        graphs("GNNC_CUDA_GRAPHS", nullptr),
        device("GNNC_CUDA_DEVICE_BUFFERS", nullptr);
    EnvironmentOptions o = readEnvironment();
    EXPECT_TRUE(o.asyncLaunches);
    EXPECT_TRUE(o.cudaGraphs);
    EXPECT_TRUE(o.deviceBuffers);
  }
  {
    ScopedVariable async("GNNC_CUDA_ASYNC_LAUNCHES", "0"),
        graphs("GNNC_CUDA_GRAPHS", "1"),
        device("GNNC_CUDA_DEVICE_BUFFERS", "0");
    EnvironmentOptions o = readEnvironment();
    EXPECT_FALSE(o.asyncLaunches);
    EXPECT_TRUE(o.cudaGraphs);
    EXPECT_FALSE(o.deviceBuffers);
  }
  {
    ScopedVariable graphs("GNNC_CUDA_GRAPHS", "0");
    EXPECT_FALSE(readEnvironment().cudaGraphs);
  }
}

// The tools name OpenBLAS's kernels from the CPU's features before it
// loads, over any OPENBLAS_CORETYPE in the environment (ctest also runs
// this test with OPENBLAS_CORETYPE=Prescott): on a CPU model newer than the
// OpenBLAS release, the library's own detection would fall back to its
// generic SSE3 kernels. GNNC_BLAS_CORETYPE names others (run by ctest as
// Blas.NamedKernels, which sets GNNC_TEST_EXPECT_CORE). OpenBLAS starts one
// thread of its own (the runtime calls it from its own threads, one call
// per thread), and the environment the process's children see is left as
// it was.
TEST(Environment, OpenBlasLoadsWithTheCpusKernelsAndOneThread) {
  const char *coreBefore = std::getenv("OPENBLAS_CORETYPE");
  std::string before = coreBefore ? coreBefore : "";
  bool threadsSet = std::getenv("OPENBLAS_NUM_THREADS") != nullptr;
  prepareProcess(readEnvironment());
  const char *core = gnn_rt_blas_core();
  ASSERT_NE(core, nullptr);
  const char *after = std::getenv("OPENBLAS_CORETYPE");
  EXPECT_EQ(after ? after : "", before);
  EXPECT_EQ(std::getenv("OPENBLAS_NUM_THREADS") != nullptr, threadsSet);
  if (!threadsSet) {
    void *library = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(library, nullptr);
    auto threads =
        reinterpret_cast<int (*)()>(dlsym(library, "openblas_get_num_threads"));
    ASSERT_NE(threads, nullptr);
    EXPECT_EQ(threads(), 1);
    dlclose(library);
  }
  if (const char *named = std::getenv("GNNC_BLAS_CORETYPE"); named && *named) {
    const char *expected = std::getenv("GNNC_TEST_EXPECT_CORE");
    if (!expected)
      GTEST_SKIP() << "GNNC_BLAS_CORETYPE=" << named << " names the kernels";
    EXPECT_STREQ(core, expected);
    return;
  }
  const char *forCpu = gnn_rt_blas_core_for_cpu();
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    EXPECT_STREQ(forCpu, "SkylakeX");
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    EXPECT_STREQ(forCpu, __builtin_cpu_is("amd") ? "Zen" : "Haswell");
#endif
  if (forCpu)
    EXPECT_STREQ(core, forCpu);
}

// What a step frees at the heap's top stays for the next step: with glibc's
// default trim threshold (128 KiB) the heap would shrink back at the frees.
TEST(Environment, FreedHeapTopStaysForTheNextStep) {
#if !defined(__GLIBC__) || defined(GNN_TEST_ASAN)
  GTEST_SKIP() << "glibc's malloc only";
#else
  EnvironmentOptions o = readEnvironment();
  if (o.mallocThresholdsSet)
    GTEST_SKIP() << "malloc's thresholds are set in the environment";
  prepareProcess(o);
  std::vector<void *> blocks;
  for (int i = 0; i < 64; ++i) {
    blocks.push_back(std::malloc(64 << 10));
    ASSERT_NE(blocks.back(), nullptr);
    std::memset(blocks.back(), 1, 64 << 10);
  }
  size_t grown = mallinfo2().arena;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it)
    std::free(*it);
  EXPECT_GE(mallinfo2().arena + (1 << 20), grown);
  // A block of 32 MiB is mapped on its own and handed back when freed.
  size_t before = mallinfo2().hblkhd;
  void *large = std::malloc(32 << 20);
  ASSERT_NE(large, nullptr);
  EXPECT_GE(mallinfo2().hblkhd, before + (32 << 20));
  std::free(large);
  EXPECT_EQ(mallinfo2().hblkhd, before);
#endif
}
} // namespace
