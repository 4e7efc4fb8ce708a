//===- OutputFile.cpp - files written whole or not at all -----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/OutputFile.h"

#include "llvm/Support/raw_ostream.h"

llvm::Error mlir::gnn::writeFileAtomically(llvm::StringRef path,
                                           llvm::StringRef content) {
  return writeFileAtomically(path, [&](llvm::raw_ostream &out) {
    out << content;
    return llvm::Error::success();
  });
}

llvm::Error mlir::gnn::writeFileAtomically(
    llvm::StringRef path,
    llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write) {
  // LLVM writes a temporary file in the target's directory and renames it
  // over the target once everything is written.
  if (llvm::Error e = llvm::writeToOutput(path, write))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot write '" + path.str() +
                                       "': " + llvm::toString(std::move(e)));
  return llvm::Error::success();
}
