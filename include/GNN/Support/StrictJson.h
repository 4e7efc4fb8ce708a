//===- StrictJson.h - JSON from untrusted files -----------------*- C++ -*-===//
//
// Part of gnnc (no MLIR). llvm::json::parse recurses once per nesting level
// and keeps the last of duplicate keys; configs and safetensors headers come
// from users and the network, so they are checked first: nesting is bounded
// (a deep file is an error, not a stack overflow) and a key given twice in
// one object is an error, not a silent choice.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_STRICTJSON_H
#define GNN_SUPPORT_STRICTJSON_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace mlir::gnn {

/// Deepest nesting of arrays and objects accepted by default.
constexpr unsigned kMaxJsonDepth = 64;

/// Parses `text` after checking its nesting depth and that no object has a
/// key twice (keys compared as written).
llvm::Expected<llvm::json::Value>
parseStrictJson(llvm::StringRef text, unsigned maxDepth = kMaxJsonDepth);

} // namespace mlir::gnn

#endif // GNN_SUPPORT_STRICTJSON_H
