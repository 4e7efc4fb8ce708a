//===- CompileThreads.cpp - the threads a tool compiles on ----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/CompileThreads.h"

using namespace mlir;
using namespace mlir::gnn;

CompileThreads::CompileThreads(unsigned threads) : threads(threads) {
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
