//===- Environment.h - what the environment asks of gnnc's hosts -*- C++
//-*-===//
//
// Part of gnnc (no MLIR). The one place that reads the process's
// environment: the tools, the benchmarks and the Python package read it at
// start-up and pass what it asks for into the libraries (runtime settings,
// compile options), which never read it themselves.
//
// Variables: GNNC_POOL=off and GNNC_POOL_MB (the CPU pool), GNNC_SMALL_GEMM
// =off (OpenBLAS for every product), GNNC_CHECKED=1 (checked mode),
// GNNC_PERF_MAP=1 (/tmp/perf-PID.map), GNNC_CUDA_ASYNC_LAUNCHES=0,
// GNNC_CUDA_GRAPHS=0 and GNNC_CUDA_DEVICE_BUFFERS=0 (the GPU's waiting,
// unified-memory form, part by part),
// GNNC_CUDA_POOL=off and GNNC_CUDA_POOL_MB (the unified-memory pool),
// GNNC_DENSE_PROFILE=1 and GNNC_CUDA_PROFILE=1 (tables at exit),
// GNNC_BLAS_CORETYPE (OpenBLAS's kernels), GNNC_CACHE_DIR, XDG_CACHE_HOME
// and HOME (the compile cache's directory), OMP_NUM_THREADS (what "all
// cores" means), OPENBLAS_NUM_THREADS and malloc's thresholds (left to
// their libraries where set), and the variables MPI launchers set.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_ENVIRONMENT_H
#define GNN_SUPPORT_ENVIRONMENT_H

#include "gnnc/runtime.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::gnn {

struct EnvironmentOptions {
  /// The runtime instance's settings (pool and small kernels; threads and
  /// the tape budget are the host's flags).
  gnn_rt_settings runtime;
  bool checked = false;
  bool perfMap = false;
  /// GNNC_CUDA_ASYNC_LAUNCHES (on unless 0): GPU kernels launched without
  /// a wait after each (gnn-gpu-async-launches).
  bool asyncLaunches = true;
  /// GNNC_CUDA_DEVICE_BUFFERS (on unless 0): buffers that only kernels and
  /// cuBLAS touch in device memory, those only the host touches in host
  /// memory (gnn-gpu-place-buffers).
  bool deviceBuffers = true;
  /// GNNC_CUDA_GRAPHS (on unless 0; with asynchronous launches): the
  /// launches between two waits as one CUDA graph (gnn_cuda_use_graphs).
  bool cudaGraphs = true;
  /// OMP_NUM_THREADS's first level (`4` in `4,2`); 0 where unset or not a
  /// number.
  unsigned ompThreads = 0;
  bool denseProfile = false;
  bool cudaProfile = false;
  /// The unified-memory pool's bound, where the environment sets one.
  std::optional<uint64_t> cudaPoolLimit;
  /// OpenBLAS's kernels: GNNC_BLAS_CORETYPE, else those for this CPU's
  /// vector features (empty: OpenBLAS's own choice).
  std::string blasCore;
  /// Whether OPENBLAS_NUM_THREADS is set (else OpenBLAS loads with one
  /// thread: the runtime calls it from its own threads).
  bool blasThreadsSet = false;
  /// Whether an MPI launcher started this process, from the variables it
  /// sets (Open MPI's, PMIx's, PMI's as Slurm and MPICH set them).
  bool mpiLaunched = false;
  /// Whether malloc's thresholds are set (GLIBC_TUNABLES,
  /// MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_THRESHOLD_).
  bool mallocThresholdsSet = false;

  /// The threads to compile on for a `--threads` flag (0: all cores, which
  /// OMP_NUM_THREADS bounds where set, as the run counts them).
  unsigned compileThreads(unsigned flag) const;
};

/// Where the compile cache lives unless a tool is told otherwise:
/// $GNNC_CACHE_DIR, else $XDG_CACHE_HOME/gnnc, else $HOME/.cache/gnnc;
/// empty when none of them is set.
std::string defaultCompileCacheDirectory();

/// Reads the environment. A malformed number counts as unset.
EnvironmentOptions readEnvironment();

/// Sets the process up as `options` ask: malloc keeps freed heap for
/// reuse (unless its thresholds are set), OpenBLAS is loaded with its
/// kernels named and one thread of its own (the environment is restored
/// after), the profiles and the unified-memory pool's bound. Call at the
/// start of main, before other threads start.
void prepareProcess(const EnvironmentOptions &options);

} // namespace mlir::gnn

#endif // GNN_SUPPORT_ENVIRONMENT_H
