//===- FatalErrors.cpp - LLVM's fatal errors as tool errors ---------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/FatalErrors.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

[[noreturn]] static void exitWithError(void *tool, const char *reason) {
  WithColor::error(errs(), static_cast<const char *>(tool)) << reason << "\n";
  errs().flush();
  sys::RunInterruptHandlers();
  sys::Process::Exit(1, /*NoCleanup=*/true);
}

static void onFatalError(void *tool, const char *reason, bool) {
  exitWithError(tool, reason);
}

static void onBadAlloc(void *tool, const char *reason, bool) {
  // Nothing may be allocated here; the message is a constant.
  (void)reason;
  exitWithError(tool, "out of memory");
}

void mlir::gnn::installFatalErrorHandlers(const char *tool) {
  install_fatal_error_handler(onFatalError, const_cast<char *>(tool));
  install_bad_alloc_error_handler(onBadAlloc, const_cast<char *>(tool));
}
