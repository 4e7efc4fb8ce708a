//===- CompileThreads.cpp - the threads a tool compiles on ----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/CompileThreads.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

using namespace mlir;
using namespace mlir::gnn;

/// OMP_NUM_THREADS's first level (`4` in `4,2`), or 0 where it is unset or
/// not a number. Read from the environment, not from the OpenMP runtime:
/// starting that runtime binds this thread to one core, and the threads of
/// the compile pool, started from it later, would inherit that.
static unsigned ompNumThreads() {
  const char *set = std::getenv("OMP_NUM_THREADS");
  if (!set)
    return 0;
  char *end = nullptr;
  unsigned long n = std::strtoul(set, &end, 10);
  return end != set && n <= UINT_MAX ? unsigned(n) : 0;
}

CompileThreads::CompileThreads(unsigned threads) : threads(threads) {
  // "All cores" as the run counts them (JitProgram::setThreads): where
  // OMP_NUM_THREADS is set, that many, up to the cores. The cores are
  // counted here, when a tool starts: the OpenMP runtime binds the thread
  // that runs a program's parallel loops to one core, and LLVM counts the
  // cores the calling thread may run on, so a program compiled later in
  // the process (an attention-map model after an epoch) would get one code
  // generation thread.
  unsigned cores = llvm::hardware_concurrency().compute_thread_count();
  if (this->threads == 0) {
    unsigned set = ompNumThreads();
    this->threads = set ? std::min(set, cores) : cores;
  }
  if (this->threads > 1)
    pool = std::make_unique<llvm::DefaultThreadPool>(
        llvm::hardware_concurrency(this->threads));
}

void CompileThreads::attach(MLIRContext &context) {
  // The context's own pool (not started yet) gives way to this one, or to
  // none for one thread.
  context.disableMultithreading();
  if (pool)
    context.setThreadPool(*pool);
}
