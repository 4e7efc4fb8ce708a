//===- OutputFile.h - files written whole or not at all ---------*- C++ -*-===//
//
// Part of gnnc (no MLIR). Every file gnnc's tools write goes through here,
// so that a failed or interrupted run never leaves a half-written output:
// the content goes to a temporary file beside the target, which replaces it
// only once complete.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_OUTPUTFILE_H
#define GNN_SUPPORT_OUTPUTFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::gnn {

/// Writes `content` to `path` whole or not at all ("-" is standard output).
/// Errors name the file.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef content);
/// Like the above, with the content streamed by `write` (nothing of it held
/// in memory at once).
llvm::Error
writeFileAtomically(llvm::StringRef path,
                    llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write);

/// A tool's exit code once its standard output is flushed: `rc`, or 1 when
/// writing standard output failed (a full disk), which is then reported as
/// "<tool>: error: cannot write standard output: <why>" (LLVM would
/// otherwise abort at exit on the stream's error).
int finishStandardOutput(llvm::StringRef tool, int rc);

} // namespace mlir::gnn

#endif // GNN_SUPPORT_OUTPUTFILE_H
