//===- Messages.cpp - user input quoted in error messages -----------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/Messages.h"

#include "llvm/ADT/StringExtras.h"

std::string mlir::gnn::clipForMessage(llvm::StringRef text, size_t maxBytes) {
  std::string out;
  for (char c : text.take_front(maxBytes)) {
    if (llvm::isPrint(c) && c != '\\') {
      out += c;
    } else {
      out += "\\x";
      out += llvm::hexdigit((unsigned char)c >> 4, /*LowerCase=*/true);
      out += llvm::hexdigit((unsigned char)c & 15, /*LowerCase=*/true);
    }
  }
  if (text.size() > maxBytes)
    out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}
