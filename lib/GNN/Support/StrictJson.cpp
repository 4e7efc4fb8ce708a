//===- StrictJson.cpp - JSON from untrusted files -------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/StrictJson.h"

#include "llvm/ADT/StringSet.h"

#include <vector>

using namespace llvm;

namespace {
Error error(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// The contents of the string literal that starts at text[at] ('"'), with
/// `at` moved past it; nothing if it does not end.
std::optional<StringRef> readString(StringRef text, size_t &at) {
  size_t start = ++at;
  while (at < text.size()) {
    char c = text[at];
    if (c == '\\') {
      at += 2;
      continue;
    }
    if (c == '"')
      return text.slice(start, at++);
    ++at;
  }
  return std::nullopt;
}

/// One scan over the text: depth of arrays and objects, and the keys of
/// each open object. Malformed text passes through to the parser, which
/// reports it.
Error checkStructure(StringRef text, unsigned maxDepth) {
  struct Level {
    bool object;
    StringSet<> keys;
  };
  std::vector<Level> open;
  size_t at = 0;
  while (at < text.size()) {
    char c = text[at];
    if (c == '"') {
      size_t begin = at;
      std::optional<StringRef> s = readString(text, at);
      if (!s)
        return Error::success();
      // A string followed by ':' inside an object is a key.
      size_t next = text.find_first_not_of(" \t\r\n", at);
      if (!open.empty() && open.back().object && next != StringRef::npos &&
          text[next] == ':' && !open.back().keys.insert(*s).second) {
        std::string shown = s->take_front(64).str();
        return error("duplicate key \"" + shown +
                     (s->size() > 64 ? "..." : "") + "\" at offset " +
                     Twine(begin));
      }
      continue;
    }
    if (c == '[' || c == '{') {
      if (open.size() >= maxDepth)
        return error("nested deeper than " + Twine(maxDepth) +
                     " levels at offset " + Twine(at));
      open.push_back({c == '{', {}});
    } else if ((c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
    }
    ++at;
  }
  return Error::success();
}
} // namespace

Expected<json::Value> mlir::gnn::parseStrictJson(StringRef text,
                                                 unsigned maxDepth) {
  if (Error e = checkStructure(text, maxDepth))
    return std::move(e);
  return json::parse(text);
}
