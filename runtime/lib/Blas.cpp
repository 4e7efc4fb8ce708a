//===- Blas.cpp - OpenBLAS, loaded at run time ----------------------------===//
//
// Part of gnnc's runtime. OpenBLAS is opened on first use. It picks its
// kernels from the CPU model when it loads, and falls back to its generic
// SSE3 ("Prescott") kernels on CPUs newer than its release: Debian 12's
// 0.3.21 does so on Emerald Rapids, where sgemm then runs at half speed.
// OpenBLAS reads OPENBLAS_CORETYPE before it looks at the model, and starts
// one thread per core (each taking a 128 MiB buffer) unless
// OPENBLAS_NUM_THREADS says otherwise, though the runtime calls it from its
// own threads, one call per thread. The runtime reads and writes no
// environment: gnn_rt_blas_core_for_cpu names the kernels for this CPU's
// vector features, and the host sets OpenBLAS's variables before the first
// use (gnnc's tools do so in their options module).
//
//===----------------------------------------------------------------------===//

#include "Blas.h"
#include "DynamicLibrary.h"

#include "gnnc/dense.h"
#include "gnnc/errors.h"

#include <dlfcn.h> // dlerror
#include <string>

namespace {
using namespace gnnc;

struct Loaded {
  Blas api;
  std::string why; // empty when loaded
};

Loaded load() {
  Loaded l;
  void *library = openFirst({"libopenblas.so.0", "libopenblas.so"});
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

} // namespace

const Blas *gnnc::blas(gnn_rt_context *context) {
  const Loaded &l = loaded();
  if (!l.why.empty()) {
    if (context)
      gnn_rt_context_report(context, l.why.c_str());
    else
      gnn_rt_report(l.why.c_str()); // the thread's bound context
    return nullptr;
  }
  return &l.api;
}

extern "C" const char *gnn_rt_blas_core(void) {
  const Loaded &l = loaded();
  return l.why.empty() ? l.api.coreName() : nullptr;
}

// Those OpenBLAS itself picks on the CPUs it knows (its Cooperlake kernels
// are SkylakeX's plus bfloat16 routines, and 0.3.21 does not accept that
// name in OPENBLAS_CORETYPE).
extern "C" const char *gnn_rt_blas_core_for_cpu(void) {
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
