//===- ParserHazards.cpp - text MLIR 19's parsers crash on ----------------===//
//
// Part of gnnc. A scan of the text with MLIR's lexical rules for what the
// hazards need: comments, string literals, bare identifiers, integers.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/ParserHazards.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstring>

using namespace llvm;

namespace {
/// The linalg ops whose custom parser crashes on a malformed integer list,
/// and the keyword that introduces the list.
struct ListOp {
  StringRef name, keyword;
};
constexpr ListOp kTranspose = {"linalg.transpose", "permutation"};
constexpr ListOp kListOps[] = {kTranspose,
                               {"linalg.broadcast", "dimensions"},
                               {"linalg.reduce", "dimensions"}};

bool isIdentifierChar(char c) {
  return isAlnum(c) || c == '_' || c == '.' || c == '$' || c == '-';
}

class Scanner {
public:
  explicit Scanner(StringRef text) : text(text) {}

  /// Skips whitespace and `//` comments.
  void skipSpace() {
    while (at < text.size()) {
      if (isSpace(text[at])) {
        ++at;
      } else if (text.substr(at).starts_with("//")) {
        size_t eol = text.find('\n', at);
        at = eol == StringRef::npos ? text.size() : eol + 1;
      } else {
        return;
      }
    }
  }

  /// Skips a string literal starting at `at` (its escapes included).
  void skipString() {
    for (++at; at < text.size(); ++at) {
      if (text[at] == '\\')
        ++at;
      else if (text[at] == '"' || text[at] == '\n') {
        ++at;
        return;
      }
    }
  }

  /// Skips a comment at `at`; false if none starts there.
  bool skipComment() {
    if (!text.substr(at).starts_with("//"))
      return false;
    skipSpace();
    return true;
  }

  /// Whether the bare identifier `word` starts at `at` (not part of a
  /// longer one, nor a `%`, `@`, `^` or `#` name).
  bool wordAt(size_t pos, StringRef word) const {
    if (!text.substr(pos).starts_with(word))
      return false;
    if (pos > 0 && (isIdentifierChar(text[pos - 1]) || text[pos - 1] == '%' ||
                    text[pos - 1] == '@' || text[pos - 1] == '^' ||
                    text[pos - 1] == '#' || text[pos - 1] == '!'))
      return false;
    size_t end = pos + word.size();
    return end >= text.size() || !isIdentifierChar(text[end]);
  }

  /// The offset of the next bare `keyword` followed by `=`, from `at`
  /// (skipping comments and strings); npos if none.
  size_t findAssignment(StringRef keyword) {
    while (at < text.size()) {
      if (text[at] == '"') {
        skipString();
      } else if (skipComment()) {
        continue;
      } else if (wordAt(at, keyword)) {
        size_t start = at;
        at += keyword.size();
        skipSpace();
        if (at < text.size() && text[at] == '=') {
          ++at;
          return start;
        }
      } else {
        ++at;
      }
    }
    return StringRef::npos;
  }

  /// Whether a 64-bit integer literal (decimal or hex, optionally negative)
  /// starts at `at`; moves past it and appends it to `values`.
  bool integer(SmallVectorImpl<int64_t> &values) {
    size_t start = at;
    if (at < text.size() && text[at] == '-')
      ++at;
    size_t digits = at;
    bool hex = text.substr(at).starts_with("0x");
    if (hex)
      at += 2;
    while (at < text.size() && (hex ? isHexDigit(text[at]) : isDigit(text[at])))
      ++at;
    if (at == digits + (hex ? 2 : 0))
      return false;
    if (at < text.size() && isIdentifierChar(text[at]))
      return false; // `1.5`, `12abc`
    int64_t value;
    if (text.slice(start, at).getAsInteger(0, value))
      return false;
    values.push_back(value);
    return true;
  }

  /// Whether integers separated by commas and then `close` follow (none
  /// if `close` comes first); moves past them.
  bool integersUntil(char close, SmallVectorImpl<int64_t> &values) {
    skipSpace();
    if (at < text.size() && text[at] == close) {
      ++at;
      return true;
    }
    for (;;) {
      skipSpace();
      if (!integer(values))
        return false;
      skipSpace();
      if (at < text.size() && text[at] == close) {
        ++at;
        return true;
      }
      if (at >= text.size() || text[at] != ',')
        return false;
      ++at;
    }
  }

  /// Whether `[` integers `]` follows (the custom form's list); moves past
  /// it.
  bool integerList(SmallVectorImpl<int64_t> &values) {
    skipSpace();
    if (at >= text.size() || text[at] != '[')
      return false;
    ++at;
    return integersUntil(']', values);
  }

  /// Whether `array<i64` (`:` integers) `>` follows (the generic form's
  /// attribute); moves past it.
  bool integerArray(SmallVectorImpl<int64_t> &values) {
    skipSpace();
    if (!text.substr(at).starts_with("array<i64"))
      return false;
    at += strlen("array<i64");
    skipSpace();
    if (at < text.size() && text[at] == '>') {
      ++at;
      return true;
    }
    if (at >= text.size() || text[at] != ':')
      return false;
    ++at;
    return integersUntil('>', values);
  }

  StringRef text;
  size_t at = 0;
};
} // namespace

/// Whether `values` orders 0 .. size - 1.
static bool isPermutation(ArrayRef<int64_t> values) {
  SmallVector<bool> seen(values.size(), false);
  for (int64_t v : values) {
    if (v < 0 || v >= int64_t(values.size()) || seen[v])
      return false;
    seen[v] = true;
  }
  return true;
}

std::optional<mlir::gnn::ParserHazard>
mlir::gnn::findParserHazard(StringRef text) {
  Scanner scan(text);
  while (scan.at < text.size()) {
    char c = text[scan.at];
    const ListOp *op = nullptr;
    bool generic = false;
    if (c == '"') {
      // The generic form of linalg.transpose: its verifier reads the input's
      // shape at each entry of the permutation.
      generic = text.substr(scan.at).starts_with("\"linalg.transpose\"");
      scan.skipString();
      if (!generic)
        continue;
      op = &kTranspose;
    } else if (scan.skipComment()) {
      continue;
    } else {
      for (const ListOp &candidate : kListOps)
        if (scan.wordAt(scan.at, candidate.name))
          op = &candidate;
      if (!op) {
        ++scan.at;
        continue;
      }
      scan.at += op->name.size();
    }
    size_t keyword = scan.findAssignment(op->keyword);
    if (keyword == StringRef::npos)
      return std::nullopt;
    SmallVector<int64_t> values;
    bool listed =
        generic ? scan.integerArray(values) : scan.integerList(values);
    std::string where = ("'" + op->keyword + " =' of '" + op->name + "'").str();
    if (!listed && !generic)
      return ParserHazard{keyword,
                          where + " must be followed by a list of 64-bit "
                                  "integers in square brackets (MLIR 19's "
                                  "parser of the op crashes on anything else)"};
    // (A generic attribute of another kind is the verifier's to reject.)
    if (listed && op->name == kTranspose.name && !isPermutation(values))
      return ParserHazard{keyword,
                          where + " must be a permutation of 0 to " +
                              std::to_string(int64_t(values.size()) - 1) +
                              " (MLIR 19's verifier of the op crashes on "
                              "entries out of range)"};
  }
  return std::nullopt;
}

bool mlir::gnn::reportParserHazard(MemoryBufferRef buffer) {
  std::optional<ParserHazard> hazard = findParserHazard(buffer.getBuffer());
  if (!hazard)
    return false;
  SourceMgr sources;
  sources.AddNewSourceBuffer(
      MemoryBuffer::getMemBuffer(buffer, /*RequiresNullTerminator=*/false),
      SMLoc());
  sources.PrintMessage(
      SMLoc::getFromPointer(buffer.getBufferStart() + hazard->offset),
      SourceMgr::DK_Error, hazard->message);
  return true;
}
