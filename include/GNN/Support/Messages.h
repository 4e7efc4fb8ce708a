//===- Messages.h - user input quoted in error messages ---------*- C++ -*-===//
//
// Part of gnnc (no MLIR). Error messages quote what the user gave (a token,
// a tensor name, a dtype): quoted through here, a quote is at most a line
// long and shows bytes that are not printable as escapes, so a binary or
// huge input cannot flood or garble the terminal.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_MESSAGES_H
#define GNN_SUPPORT_MESSAGES_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::gnn {

/// `text` with non-printable bytes as \xNN and, past `maxBytes`, cut with
/// "... (N bytes)".
std::string clipForMessage(llvm::StringRef text, size_t maxBytes = 64);

} // namespace mlir::gnn

#endif // GNN_SUPPORT_MESSAGES_H
