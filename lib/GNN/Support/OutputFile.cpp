//===- OutputFile.cpp - files written whole or not at all -----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/OutputFile.h"

llvm::Error mlir::gnn::writeFileAtomically(
    llvm::StringRef path,
    std::function<llvm::Error(llvm::raw_ostream &)> write) {
  // The content is made first, so a failing `write` never touches the file
  // system; then LLVM writes a temporary file in the target's directory and
  // renames it over the target.
  std::string content;
  llvm::raw_string_ostream os(content);
  if (llvm::Error e = write(os))
    return e;
  if (llvm::Error e = llvm::writeToOutput(path, [&](llvm::raw_ostream &out) {
        out << content;
        return llvm::Error::success();
      }))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot write '" + path.str() +
                                       "': " + llvm::toString(std::move(e)));
  return llvm::Error::success();
}
