//===- FatalErrors.h - LLVM's fatal errors as tool errors -------*- C++ -*-===//
//
// Part of gnnc (no MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_FATALERRORS_H
#define GNN_SUPPORT_FATALERRORS_H

namespace mlir::gnn {

/// Makes LLVM's fatal errors (report_fatal_error, and allocation failures
/// inside LLVM) "<tool>: error: <reason>" and exit code 1, with temporary
/// files removed, instead of an abort with a stack dump: MLIR 19's parser
/// reports a `tensor.from_elements` of 2^63 elements that way. `tool` must
/// outlive the process. Call once, at the start of main.
void installFatalErrorHandlers(const char *tool);

/// Bounds LLVM's crash report (the stack dump it prints on SIGSEGV, SIGABRT
/// and the other crash signals): if it has not finished after `seconds`,
/// the process prints "error: the crash report did not finish" and exits
/// with 128 + the signal's number. The report allocates, so a crash inside
/// malloc (an abort on a corrupted heap) used to hang on malloc's lock
/// instead of ending. Installs over LLVM's handlers, which must be in
/// place (InitLLVM); installFatalErrorHandlers calls it with 10 seconds.
void installCrashReportTimeout(unsigned seconds);

} // namespace mlir::gnn

#endif // GNN_SUPPORT_FATALERRORS_H
