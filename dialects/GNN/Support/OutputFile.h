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

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir::gnn {

/// Writes `content` to `path` whole or not at all ("-" is standard output).
/// Errors name the file.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef content);

} // namespace mlir::gnn

#endif // GNN_SUPPORT_OUTPUTFILE_H
