//===- CompileThreads.cpp - the threads a tool compiles on ----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/CompileThreads.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir;
using namespace mlir::gnn;

extern "C" int omp_get_max_threads(void);

CompileThreads::CompileThreads(unsigned threads) : threads(threads) {
  // The cores are counted here, when a tool starts: the OpenMP runtime
  // binds the thread that runs a program's parallel loops to one core, and
  // LLVM counts the cores the calling thread may run on, so a program
  // compiled later in the process (an attention-map model after an epoch)
  // would get one code generation thread.
  unsigned cores = llvm::hardware_concurrency().compute_thread_count();
  // "All cores" as the run counts them (JitProgram::setThreads): where
  // OMP_NUM_THREADS is set, that many, up to the cores.
  if (this->threads == 0)
    this->threads =
        std::getenv("OMP_NUM_THREADS")
            ? std::min(unsigned(std::max(1, omp_get_max_threads())), cores)
            : cores;
  if (this->threads > 1)
    pool = std::make_unique<llvm::DefaultThreadPool>(
        llvm::hardware_concurrency(this->threads));
}

MLIRContext::Threading CompileThreads::threading() const {
  return MLIRContext::Threading::DISABLED;
}

void CompileThreads::attach(MLIRContext &context) {
  if (pool)
    context.setThreadPool(*pool);
}
