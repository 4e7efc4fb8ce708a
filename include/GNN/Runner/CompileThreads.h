//===- CompileThreads.h - the threads a tool compiles on --------*- C++ -*-===//
//
// Part of gnnc. A tool told to use T cores (--threads T, --serial) keeps
// its compiling to T threads too: MLIR's passes run on a pool of T threads
// (the context's own pool would take every core), and code generation is
// split at most T ways (CompileOptions::compileThreads).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNNER_COMPILETHREADS_H
#define GNN_RUNNER_COMPILETHREADS_H

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/ThreadPool.h"

#include <memory>

namespace mlir::gnn {

/// Declare it before the MLIRContext it serves (its pool must outlive the
/// context), then attach() the context before anything runs on it:
///
///   CompileThreads compileThreads(threads);
///   MLIRContext context(registry);
///   compileThreads.attach(context);
class CompileThreads {
public:
  /// `threads`: at most that many; 0: all cores (counted now). A host
  /// whose "all cores" follows OMP_NUM_THREADS passes that many
  /// (EnvironmentOptions::compileThreads).
  explicit CompileThreads(unsigned threads);

  /// Has `context` run on this object's pool, or on the calling thread
  /// alone for one thread.
  void attach(MLIRContext &context);

  /// For CompileOptions::compileThreads: at least 1.
  unsigned count() const { return threads; }

private:
  unsigned threads;
  std::unique_ptr<llvm::DefaultThreadPool> pool;
};

} // namespace mlir::gnn

#endif // GNN_RUNNER_COMPILETHREADS_H
