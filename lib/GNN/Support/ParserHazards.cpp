//===- ParserHazards.cpp - text MLIR 19's parsers crash on ----------------===//
//
// Part of gnnc. A scan of the text with MLIR's lexical rules for what the
// hazards need: comments, string literals, bare identifiers, integers.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/ParserHazards.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
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

  /// The next character from `at` outside strings and comments (0 at the
  /// end); moves past it.
  char next() {
    while (at < text.size()) {
      if (text[at] == '"')
        skipString();
      else if (!skipComment())
        return text[at++];
    }
    return 0;
  }

  /// The `%` operands from `at` to the `:` that ends them (an attribute
  /// dictionary in between skipped); npos if no `:` follows. Moves past the
  /// `:`.
  size_t operandsUntilColon() {
    size_t operands = 0;
    int depth = 0;
    while (char c = next()) {
      if (c == '{')
        ++depth;
      else if (c == '}')
        depth = depth > 0 ? depth - 1 : 0;
      else if (c == '%' && depth == 0)
        ++operands;
      else if (c == ':' && depth == 0)
        return operands;
    }
    return StringRef::npos;
  }

  /// The number of elements of the `tensor<` or `vector<` static shape
  /// `x` ...`>` at `at` (saturated at INT64_MAX); none if no such type
  /// starts there.
  std::optional<int64_t> staticShapeElements() {
    skipSpace();
    if (!text.substr(at).starts_with("tensor<") &&
        !text.substr(at).starts_with("vector<"))
      return std::nullopt;
    at += strlen("tensor<");
    int64_t elements = 1;
    for (;;) {
      skipSpace();
      size_t digits = at;
      while (at < text.size() && isDigit(text[at]))
        ++at;
      if (at == digits || at >= text.size() || text[at] != 'x')
        return at == digits ? std::optional<int64_t>(elements) : std::nullopt;
      uint64_t size;
      if (text.slice(digits, at).getAsInteger(10, size))
        size = UINT64_MAX;
      ++at; // `x`
      elements = int64_t(std::min<uint64_t>(
          SaturatingMultiply(uint64_t(elements), size), INT64_MAX));
    }
  }

  /// The number of elements of the result type of a `from_elements` op
  /// after its `:`: `tensor<...>` or `vector<...>`, or the generic form's
  /// `(...) -> ` type, either possibly a type alias defined in the text.
  std::optional<int64_t> resultElements() {
    skipSpace();
    if (at < text.size() && text[at] == '(') {
      for (int depth = 0; char c = next();)
        if (c == '(')
          ++depth;
        else if (c == ')' && --depth == 0)
          break;
      skipSpace();
      if (!text.substr(at).starts_with("->"))
        return std::nullopt;
      at += 2;
      skipSpace();
    }
    if (at < text.size() && text[at] == '!') {
      size_t end = at + 1;
      while (end < text.size() && isIdentifierChar(text[end]))
        ++end;
      StringRef alias = text.slice(at, end);
      at = end;
      // Each alias is looked up once: a search of the whole text per use
      // would take quadratic time on text with many uses of one undefined.
      auto [known, inserted] = aliases.try_emplace(alias);
      if (inserted)
        known->second = aliasElements(alias);
      return known->second;
    }
    return staticShapeElements();
  }

  /// The number of elements of the type `alias` (`!name`) is defined as:
  /// the alias at the start of a line, then `=`, then a shape.
  std::optional<int64_t> aliasElements(StringRef alias) const {
    for (size_t pos = text.find(alias); pos != StringRef::npos;
         pos = text.find(alias, pos + 1)) {
      if (pos > 0 && text[pos - 1] != '\n')
        continue;
      Scanner definition(text);
      definition.at = pos + alias.size();
      if (definition.at < text.size() && isIdentifierChar(text[definition.at]))
        continue;
      definition.skipSpace();
      if (definition.at >= text.size() || text[definition.at] != '=')
        continue;
      ++definition.at;
      return definition.staticShapeElements();
    }
    return std::nullopt;
  }

  StringRef text;
  size_t at = 0;
  /// The element counts of the type aliases looked up so far.
  StringMap<std::optional<int64_t>> aliases;
};

/// `tensor.from_elements` and `vector.from_elements`: MLIR 19's custom
/// parsers and their verifiers (the generic form) make a list of one type
/// per element of the result before they compare the count with the
/// operands; a mismatch above this many elements is reported first.
constexpr StringRef kFromElementsOps[] = {"tensor.from_elements",
                                          "vector.from_elements"};
constexpr int64_t kFromElementsChecked = int64_t(1) << 16;
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

/// A `name` op (one of kFromElementsOps) at `start` (`scan` past its
/// name) whose operands do not give its result's elements, if they are
/// many.
static std::optional<mlir::gnn::ParserHazard>
fromElementsHazard(Scanner &scan, size_t start, StringRef name) {
  size_t operands = scan.operandsUntilColon();
  if (operands == StringRef::npos)
    return std::nullopt;
  std::optional<int64_t> elements = scan.resultElements();
  if (!elements || *elements <= kFromElementsChecked ||
      uint64_t(*elements) == operands)
    return std::nullopt;
  return mlir::gnn::ParserHazard{
      start, "'" + name.str() + "' has a result of " +
                 std::to_string(*elements) + " elements but " +
                 std::to_string(operands) +
                 (operands == 1 ? " operand" : " operands") +
                 " (MLIR 19's parser and verifier of the op allocate for "
                 "every element first)"};
}

/// The first bracket, brace or parenthesis (outside strings and comments)
/// that opens more than kMaxNesting levels: MLIR 19's parser recurses once
/// per level (10,000 nested `scf.if` overflowed its stack, 4,000 took 77 s
/// to parse and verify).
static std::optional<mlir::gnn::ParserHazard> nestingHazard(StringRef text) {
  int64_t depth = 0;
  Scanner scan(text);
  while (scan.at < text.size()) {
    char c = text[scan.at];
    if (c == '"') {
      scan.skipString();
      continue;
    }
    if (scan.skipComment())
      continue;
    if (c == '{' || c == '(' || c == '[') {
      if (++depth > mlir::gnn::kMaxNesting)
        return mlir::gnn::ParserHazard{
            scan.at, "nested deeper than " +
                         std::to_string(mlir::gnn::kMaxNesting) +
                         " levels of braces, brackets and parentheses "
                         "(MLIR's parser recurses once per level)"};
    } else if ((c == '}' || c == ')' || c == ']') && depth > 0) {
      --depth;
    }
    ++scan.at;
  }
  return std::nullopt;
}

std::optional<mlir::gnn::ParserHazard>
mlir::gnn::findParserHazard(StringRef text) {
  if (std::optional<ParserHazard> deep = nestingHazard(text))
    return deep;
  Scanner scan(text);
  while (scan.at < text.size()) {
    char c = text[scan.at];
    const ListOp *op = nullptr;
    bool generic = false;
    bool fromElements = false;
    for (StringRef name : kFromElementsOps) {
      bool genericForm =
          c == '"' && text.substr(scan.at + 1).starts_with(name) &&
          text.substr(scan.at + 1 + name.size()).starts_with("\"");
      if (!genericForm && !scan.wordAt(scan.at, name))
        continue;
      size_t start = scan.at;
      scan.at += name.size() + (genericForm ? 2 : 0);
      if (std::optional<ParserHazard> hazard =
              fromElementsHazard(scan, start, name))
        return hazard;
      fromElements = true;
      break;
    }
    if (fromElements)
      continue;
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

bool mlir::gnn::reportParserHazard(MemoryBufferRef buffer,
                                   llvm::raw_ostream &os) {
  std::optional<ParserHazard> hazard = findParserHazard(buffer.getBuffer());
  if (!hazard)
    return false;
  SourceMgr sources;
  sources.AddNewSourceBuffer(
      MemoryBuffer::getMemBuffer(buffer, /*RequiresNullTerminator=*/false),
      SMLoc());
  sources.PrintMessage(
      os, SMLoc::getFromPointer(buffer.getBufferStart() + hazard->offset),
      SourceMgr::DK_Error, hazard->message);
  return true;
}
