//===- Blas.cpp - OpenBLAS, loaded at run time ----------------------------===//
//
// Part of gnnc's runtime. OpenBLAS picks its kernels from the CPU model when
// it loads, and falls back to its generic SSE3 ("Prescott") kernels on CPUs
// newer than its release: Debian 12's 0.3.21 does so on Emerald Rapids, where
// sgemm then runs at half speed. OpenBLAS reads OPENBLAS_CORETYPE before it
// looks at the model, so the runtime sets it from the CPU's features and
// only then opens the library. Machines set OPENBLAS_CORETYPE machine-wide
// to work around that detection, with a choice for every program (an AMD
// EPYC with AVX-512 whose image sets Haswell: half the sgemm rate of its
// SkylakeX kernels), so the runtime replaces it; GNNC_BLAS_CORETYPE names
// other kernels.
//
// The runtime calls OpenBLAS from its own threads, one call per thread
// (gnn_rt_set_dense_threads(1)), so OpenBLAS's thread pool is never used;
// yet it starts one thread per core when it loads, each taking a 128 MiB
// buffer: 2 GiB of address space on 16 cores, and under an address-space
// limit (ulimit -v) a thread whose buffer fails retries forever and the
// process hangs at exit. Unless OPENBLAS_NUM_THREADS says otherwise, the
// library is opened with one thread (openblas_set_num_threads starts more
// if a caller asks).
//
//===----------------------------------------------------------------------===//

#include "Blas.h"
#include "DynamicLibrary.h"

#include "gnnc/dense.h"
#include "gnnc/errors.h"

#include <cstdlib>
#include <dlfcn.h> // dlerror
#include <string>

namespace {
using namespace gnnc;

/// The OpenBLAS kernels for this CPU's vector features: those OpenBLAS
/// itself picks on the CPUs it knows (its Cooperlake kernels are SkylakeX's
/// plus bfloat16 routines, and 0.3.21 does not accept that name in
/// OPENBLAS_CORETYPE). Null where the generic ones are right.
const char *coreForThisCpu() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (avx512)
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return __builtin_cpu_is("amd") ? "Zen" : "Haswell";
  if (__builtin_cpu_supports("avx"))
    return "Sandybridge";
#endif
  return nullptr;
}

struct Loaded {
  Blas api;
  std::string why; // empty when loaded
};

Loaded load() {
  Loaded l;
  const char *chosen = std::getenv("GNNC_BLAS_CORETYPE");
  if (const char *core = chosen && *chosen ? chosen : coreForThisCpu())
    setenv("OPENBLAS_CORETYPE", core, /*overwrite=*/1);
  // Set only while the library loads: the process's children see the
  // environment it was given.
  bool ownThreadCount = !std::getenv("OPENBLAS_NUM_THREADS");
  if (ownThreadCount)
    setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
  void *library = openFirst({"libopenblas.so.0", "libopenblas.so"});
  if (ownThreadCount)
    unsetenv("OPENBLAS_NUM_THREADS");
  if (!library) {
    const char *reason = dlerror();
    l.why = std::string("cannot load OpenBLAS (libopenblas.so.0): ") +
            (reason ? reason : "not found");
    return l;
  }
  Symbols symbols(library);
  symbols.need("cblas_sgemm", l.api.sgemm);
  symbols.need("openblas_set_num_threads", l.api.setNumThreads);
  symbols.need("openblas_get_corename", l.api.coreName);
  if (const char *missing = symbols.missing())
    l.why = std::string("the loaded OpenBLAS lacks ") + missing;
  return l;
}

const Loaded &loaded() {
  static const Loaded l = load();
  return l;
}

// Loaded with the runtime, while the process has one thread: setenv must
// not race with other threads' getenv.
[[gnu::constructor]] void loadWithTheRuntime() { (void)loaded(); }
} // namespace

const Blas *gnnc::blas() {
  const Loaded &l = loaded();
  if (!l.why.empty()) {
    gnn_rt_report(l.why.c_str());
    return nullptr;
  }
  return &l.api;
}

extern "C" const char *gnn_rt_blas_core(void) {
  const Loaded &l = loaded();
  return l.why.empty() ? l.api.coreName() : nullptr;
}
