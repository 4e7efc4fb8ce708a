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

} // namespace mlir::gnn

#endif // GNN_SUPPORT_FATALERRORS_H
