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
  // "All cores" as the run counts them (JitProgram::setThreads): where
  // OMP_NUM_THREADS is set, that many (no more than there are cores).
  if (threads == 0 && std::getenv("OMP_NUM_THREADS"))
    this->threads = threads =
        std::min(unsigned(std::max(1, omp_get_max_threads())),
                 llvm::hardware_concurrency().compute_thread_count());
  if (threads > 1)
    pool = std::make_unique<llvm::DefaultThreadPool>(
        llvm::hardware_concurrency(threads));
}

MLIRContext::Threading CompileThreads::threading() const {
  return threads == 0 ? MLIRContext::Threading::ENABLED
                      : MLIRContext::Threading::DISABLED;
}

void CompileThreads::attach(MLIRContext &context) {
  if (pool)
    context.setThreadPool(*pool);
}
