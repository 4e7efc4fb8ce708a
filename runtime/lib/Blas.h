//===- Blas.h - OpenBLAS, loaded at run time --------------------*- C++ -*-===//
//
// Part of gnnc's runtime. OpenBLAS is opened with dlopen on first use (see
// Blas.cpp), so the library is not linked.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_BLAS_H
#define GNNC_RUNTIME_BLAS_H

#include "gnnc/errors.h"

#include <cblas.h>

namespace gnnc {
/// The OpenBLAS entry points the runtime calls.
struct Blas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&openblas_set_num_threads) setNumThreads = nullptr;
  decltype(&openblas_get_corename) coreName = nullptr;
};

/// OpenBLAS, or null after reporting why it cannot be loaded into
/// `context` (null: the thread's bound context), so that the running
/// program fails with that message.
const Blas *blas(gnn_rt_context *context);
} // namespace gnnc

#endif // GNNC_RUNTIME_BLAS_H
