//===- Environment.cpp - what the environment asks of gnnc's hosts --------===//
//
// Part of gnnc. Malloc: a training step allocates and frees the same small
// blocks every time (graphs of a batch, kernels' scratch); with glibc's
// default trim threshold each step's frees shrank the heap and the next
// step grew it again (on the tutorial's model 26 brk calls and about 1,650
// page faults a step), so freed heap is kept up to 64 MiB at its top and
// blocks of 32 MiB and more are mapped on their own (glibc's adaptive
// thresholds settle there once it has seen such blocks).
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/Environment.h"

#include "gnnc/cuda.h"
#include "gnnc/dense.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace mlir::gnn;

namespace {
constexpr int kMmapThreshold = 32 << 20;
constexpr int kTrimThreshold = 64 << 20;

llvm::StringRef variable(const char *name) {
  const char *value = std::getenv(name);
  return value ? llvm::StringRef(value) : llvm::StringRef();
}

bool isSet(const char *name) { return std::getenv(name) != nullptr; }

/// A decimal count of megabytes as bytes; none where malformed.
std::optional<uint64_t> megabytes(const char *name) {
  uint64_t mb = 0;
  llvm::StringRef value = variable(name);
  if (value.empty() || value.getAsInteger(10, mb) || mb >= (UINT64_MAX >> 20))
    return std::nullopt;
  return mb << 20;
}

/// OMP_NUM_THREADS's first level; 0 where unset or not a number.
unsigned ompNumThreads() {
  llvm::StringRef value = variable("OMP_NUM_THREADS").split(',').first;
  unsigned n = 0;
  return value.getAsInteger(10, n) ? 0 : n;
}
} // namespace

std::string mlir::gnn::defaultCompileCacheDirectory() {
  // Set, even to nothing, it is the choice (empty: no cache).
  if (isSet("GNNC_CACHE_DIR"))
    return variable("GNNC_CACHE_DIR").str();
  llvm::SmallString<256> path;
  if (llvm::StringRef xdg = variable("XDG_CACHE_HOME"); !xdg.empty()) {
    path = xdg;
  } else if (llvm::StringRef home = variable("HOME"); !home.empty()) {
    path = home;
    llvm::sys::path::append(path, ".cache");
  } else {
    return "";
  }
  llvm::sys::path::append(path, "gnnc");
  return std::string(path);
}

unsigned EnvironmentOptions::compileThreads(unsigned flag) const {
  if (flag > 0 || ompThreads == 0)
    return flag;
  return std::min(ompThreads,
                  llvm::hardware_concurrency().compute_thread_count());
}

EnvironmentOptions mlir::gnn::readEnvironment() {
  EnvironmentOptions o;
  gnn_rt_settings_init(&o.runtime);
  if (variable("GNNC_POOL") == "off")
    o.runtime.keep_freed_blocks = 0;
  if (std::optional<uint64_t> limit = megabytes("GNNC_POOL_MB"))
    o.runtime.pool_limit_bytes = *limit;
  o.runtime.small_gemm = variable("GNNC_SMALL_GEMM") != "off";
  o.checked = variable("GNNC_CHECKED") == "1";
  o.perfMap = variable("GNNC_PERF_MAP") == "1";
  // The GPU's fastest form is the default (timed on an H200, 2026-11-30);
  // each part is turned off with 0.
  o.asyncLaunches = variable("GNNC_CUDA_ASYNC_LAUNCHES") != "0";
  o.deviceBuffers = variable("GNNC_CUDA_DEVICE_BUFFERS") != "0";
  o.cudaGraphs = variable("GNNC_CUDA_GRAPHS") != "0";
  o.ompThreads = ompNumThreads();
  auto profile = [](const char *name) {
    llvm::StringRef value = variable(name);
    return !value.empty() && value != "0";
  };
  o.denseProfile = profile("GNNC_DENSE_PROFILE");
  o.cudaProfile = profile("GNNC_CUDA_PROFILE");
  if (variable("GNNC_CUDA_POOL") == "off")
    o.cudaPoolLimit = 0;
  else if (std::optional<uint64_t> limit = megabytes("GNNC_CUDA_POOL_MB");
           limit && *limit > 0)
    o.cudaPoolLimit = *limit;
  // OpenBLAS falls back to its generic kernels on CPU models newer than its
  // release, and machines set OPENBLAS_CORETYPE machine-wide with a choice
  // for every program: gnnc names the kernels for this CPU over it.
  llvm::StringRef named = variable("GNNC_BLAS_CORETYPE");
  const char *forCpu = gnn_rt_blas_core_for_cpu();
  o.blasCore = !named.empty() ? named.str() : forCpu ? forCpu : "";
  o.blasThreadsSet = isSet("OPENBLAS_NUM_THREADS");
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                           "PMI_SIZE", "MV2_COMM_WORLD_SIZE"})
    o.mpiLaunched |= !variable(name).empty();
  o.mallocThresholdsSet =
      variable("GLIBC_TUNABLES").contains("glibc.malloc.") ||
      isSet("MALLOC_TRIM_THRESHOLD_") || isSet("MALLOC_MMAP_THRESHOLD_");
  return o;
}

void mlir::gnn::prepareProcess(const EnvironmentOptions &options) {
#if defined(__GLIBC__)
  if (!options.mallocThresholdsSet) {
    mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
    mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
  }
#endif
  // OpenBLAS reads its variables when it loads: set them, load it, and
  // leave the environment the children of this process see as it was.
  std::optional<std::string> coreBefore;
  if (const char *before = std::getenv("OPENBLAS_CORETYPE"))
    coreBefore = before;
  if (!options.blasCore.empty())
    setenv("OPENBLAS_CORETYPE", options.blasCore.c_str(), /*overwrite=*/1);
  if (!options.blasThreadsSet)
    setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
  (void)gnn_rt_blas_core();
  if (!options.blasThreadsSet)
    unsetenv("OPENBLAS_NUM_THREADS");
  if (coreBefore)
    setenv("OPENBLAS_CORETYPE", coreBefore->c_str(), /*overwrite=*/1);
  else
    unsetenv("OPENBLAS_CORETYPE");
  if (options.denseProfile)
    gnn_rt_dense_profile_enable();
  if (options.cudaProfile)
    gnn_cuda_profile_enable();
  if (options.cudaPoolLimit)
    gnn_cuda_set_pool_limit(*options.cudaPoolLimit);
  // Segments between waits exist only where launches do not wait each.
  if (options.cudaGraphs && options.asyncLaunches)
    gnn_cuda_use_graphs(1);
}
