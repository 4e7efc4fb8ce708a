//===- InputFile.h - files read whole, with a bound -------------*- C++ -*-===//
//
// Part of gnnc (no MLIR). Every input file gnnc's tools read goes through
// here. A regular file is read (or mapped) at its size; anything else (a
// device such as /dev/zero, a pipe, standard input as "-") is read up to a
// bound, so that an endless input is an error naming the file, not a read
// until memory runs out.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_INPUTFILE_H
#define GNN_SUPPORT_INPUTFILE_H

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace mlir::gnn {

/// How much a non-regular input may hold: 256 MiB.
constexpr uint64_t kMaxStreamedInputBytes = uint64_t(1) << 28;

/// The contents of `path` ("-": standard input); text is null-terminated.
/// Errors say why (the caller names the file).
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path, bool isText = false,
              uint64_t maxStreamedBytes = kMaxStreamedInputBytes);

} // namespace mlir::gnn

#endif // GNN_SUPPORT_INPUTFILE_H
