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

#include <csignal>
#include <unistd.h>

using namespace llvm;

namespace {
/// The signals LLVM prints a stack dump for.
constexpr int kCrashSignals[] = {SIGILL,  SIGTRAP, SIGABRT, SIGFPE,  SIGBUS,
                                 SIGSEGV, SIGQUIT, SIGSYS,  SIGXCPU, SIGXFSZ};
/// LLVM's handler of each, which prints the report.
struct sigaction reportHandlers[NSIG];
volatile sig_atomic_t crashSignal = 0;
unsigned reportSeconds = 10;

void onReportTimeout(int) {
  static const char message[] =
      "error: the crash report did not finish; exiting\n";
  (void)!write(STDERR_FILENO, message, sizeof(message) - 1);
  _exit(128 + crashSignal);
}

void onCrash(int signal, siginfo_t *info, void *context) {
  crashSignal = signal;
  struct sigaction timeout = {};
  timeout.sa_handler = onReportTimeout;
  sigemptyset(&timeout.sa_mask);
  sigaction(SIGALRM, &timeout, nullptr);
  alarm(reportSeconds);
  const struct sigaction &report = reportHandlers[signal];
  if (report.sa_flags & SA_SIGINFO)
    return report.sa_sigaction(signal, info, context);
  if (report.sa_handler != SIG_DFL && report.sa_handler != SIG_IGN)
    return report.sa_handler(signal);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}
} // namespace

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
  installCrashReportTimeout(10);
}

void mlir::gnn::installCrashReportTimeout(unsigned seconds) {
  reportSeconds = seconds;
  for (int signal : kCrashSignals) {
    struct sigaction current;
    if (sigaction(signal, nullptr, &current) != 0)
      continue;
    if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == onCrash)
      continue; // installed already

    reportHandlers[signal] = current;
    // LLVM's flags (its alternate stack) and mask, with this handler.
    struct sigaction wrapped = current;
    wrapped.sa_flags |= SA_SIGINFO;
    wrapped.sa_sigaction = onCrash;
    sigaction(signal, &wrapped, nullptr);
  }
}
