//===- CompileThreads.cpp - the threads a tool compiles on ----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/CompileThreads.h"

using namespace mlir;
using namespace mlir::gnn;

CompileThreads::CompileThreads(unsigned threads) : threads(threads) {
  // The cores are counted here, when a tool starts: the OpenMP runtime
  // binds the thread that runs a program's parallel loops to one core, and
  // LLVM counts the cores the calling thread may run on, so a program
  // compiled later in the process (an attention-map model after an epoch)
  // would get one code generation thread.
  if (this->threads == 0)
    this->threads = llvm::hardware_concurrency().compute_thread_count();
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
