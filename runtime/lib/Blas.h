//===- Blas.h - OpenBLAS, loaded at run time --------------------*- C++ -*-===//
//
// Part of gnnc's runtime. OpenBLAS is opened with dlopen when the runtime
// loads, after the runtime has named its kernels for CPUs that OpenBLAS
// does not know (see Blas.cpp), so the library is not linked.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_BLAS_H
#define GNNC_RUNTIME_BLAS_H

#include <cblas.h>

namespace gnnc {
/// The OpenBLAS entry points the runtime calls.
struct Blas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&openblas_set_num_threads) setNumThreads = nullptr;
  decltype(&openblas_get_corename) coreName = nullptr;
};

/// OpenBLAS, or null after reporting why it cannot be loaded (through
/// gnn_rt_report, so the running program fails with that message).
const Blas *blas();
} // namespace gnnc

#endif // GNNC_RUNTIME_BLAS_H
