//===- ParserHazards.cpp - text MLIR 19's parsers crash on ----------------===//
//
// Part of gnnc. A scan of the text with MLIR's lexical rules for what the
// hazards need: comments, string literals, bare identifiers, integers.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/ParserHazards.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace {
/// The linalg ops whose custom parser crashes on a malformed integer list,
/// and the keyword that introduces the list.
struct ListOp {
  StringRef name, keyword;
};
constexpr ListOp kListOps[] = {{"linalg.transpose", "permutation"},
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
      char c = text[at];
      if (c == '"') {
        skipString();
      } else if (text.substr(at).starts_with("//")) {
        skipSpace();
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
  /// starts at `at`; moves past it.
  bool integer() {
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
    return !text.slice(start, at).getAsInteger(0, value);
  }

  /// Whether `[` integers `]` follows; moves past it.
  bool integerList() {
    skipSpace();
    if (at >= text.size() || text[at] != '[')
      return false;
    ++at;
    skipSpace();
    if (at < text.size() && text[at] == ']') {
      ++at;
      return true;
    }
    for (;;) {
      skipSpace();
      if (!integer())
        return false;
      skipSpace();
      if (at < text.size() && text[at] == ']') {
        ++at;
        return true;
      }
      if (at >= text.size() || text[at] != ',')
        return false;
      ++at;
    }
  }

  StringRef text;
  size_t at = 0;
};
} // namespace

std::optional<mlir::gnn::ParserHazard>
mlir::gnn::findParserHazard(StringRef text) {
  Scanner scan(text);
  while (scan.at < text.size()) {
    char c = text[scan.at];
    if (c == '"') {
      scan.skipString();
      continue;
    }
    if (text.substr(scan.at).starts_with("//")) {
      scan.skipSpace();
      continue;
    }
    const ListOp *op = nullptr;
    for (const ListOp &candidate : kListOps)
      if (scan.wordAt(scan.at, candidate.name))
        op = &candidate;
    if (!op) {
      ++scan.at;
      continue;
    }
    scan.at += op->name.size();
    size_t keyword = scan.findAssignment(op->keyword);
    if (keyword == StringRef::npos)
      return std::nullopt;
    if (!scan.integerList())
      return ParserHazard{keyword,
                          ("'" + op->keyword + " =' of '" + op->name +
                           "' must be followed by a list of 64-bit integers "
                           "in square brackets (MLIR 19's parser of the op "
                           "crashes on anything else)")
                              .str()};
  }
  return std::nullopt;
}
