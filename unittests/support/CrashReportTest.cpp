//===- CrashReportTest.cpp - LLVM's crash report, bounded in time ---------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/FatalErrors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Signals.h"
#include "gtest/gtest.h"

#include <csignal>
#include <cstdlib>
#include <unistd.h>

namespace {
/// LLVM's crash handlers, then the timeout over them.
void installHandlers(unsigned seconds) {
  llvm::sys::PrintStackTraceOnErrorSignal("crash-report-test");
  mlir::gnn::installCrashReportTimeout(seconds);
}

class CrashReportTest : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};
} // namespace

TEST_F(CrashReportTest, AReportThatHangsEnds) {
  // A report that never finishes, as one waiting on malloc's lock after an
  // abort inside malloc does.
  EXPECT_EXIT(
      {
        installHandlers(1);
        llvm::sys::AddSignalHandler(
            [](void *) {
              for (;;)
                pause();
            },
            nullptr);
        std::abort();
      },
      ::testing::ExitedWithCode(128 + SIGABRT),
      "error: the crash report did not finish; exiting");
}

TEST_F(CrashReportTest, AReportThatFinishesKeepsTheCrash) {
  EXPECT_EXIT(
      {
        installHandlers(30);
        std::abort();
      },
      ::testing::KilledBySignal(SIGABRT), "PrintStackTrace");
}

TEST_F(CrashReportTest, InstallingTwiceKeepsOneTimeout) {
  EXPECT_EXIT(
      {
        installHandlers(1);
        mlir::gnn::installCrashReportTimeout(1);
        llvm::sys::AddSignalHandler(
            [](void *) {
              for (;;)
                pause();
            },
            nullptr);
        std::raise(SIGSEGV);
      },
      ::testing::ExitedWithCode(128 + SIGSEGV),
      "the crash report did not finish");
}

// LLVM's fatal errors (MLIR 19's parser reported some inputs through them)
// are the tool's one-line error and exit code 1.
TEST_F(CrashReportTest, FatalErrorsAreToolErrors) {
  EXPECT_EXIT(
      {
        mlir::gnn::installFatalErrorHandlers("fatal-test");
        llvm::report_fatal_error("SmallVector unable to grow");
      },
      ::testing::ExitedWithCode(1),
      "^fatal-test: error: SmallVector unable to grow\n$");
  EXPECT_EXIT(
      {
        mlir::gnn::installFatalErrorHandlers("fatal-test");
        llvm::report_bad_alloc_error("Allocation failed");
      },
      ::testing::ExitedWithCode(1), "^fatal-test: error: out of memory\n$");
}
