//===- ParserHazards.h - text MLIR 19's parsers crash on --------*- C++ -*-===//
//
// Part of gnnc (no MLIR). Some upstream custom parsers of MLIR 19 crash on
// malformed text instead of reporting it; the tools look for those inputs
// first and report them as errors themselves.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_PARSERHAZARDS_H
#define GNN_SUPPORT_PARSERHAZARDS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBufferRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <optional>
#include <string>

namespace mlir::gnn {

/// Where a parser hazard is in the text (a byte offset), and what it is.
struct ParserHazard {
  size_t offset;
  std::string message;
};

/// The most levels of braces, brackets and parentheses a program may nest.
constexpr int64_t kMaxNesting = 256;

/// The first place in `text` where an MLIR 19 parser or verifier would
/// crash: nesting deeper than kMaxNesting, `linalg.transpose`,
/// `linalg.broadcast` and `linalg.reduce` whose `permutation = ` or `dimensions
/// = ` is not followed by a list of 64-bit integers in square brackets (their
/// parsers store the failed list as a null attribute and dereference it), and a
/// `linalg.transpose`, custom or generic form, whose permutation does not order
/// 0 .. n - 1 (its verifier reads the input's shape at each entry), and a
/// `tensor.from_elements` (custom form) whose result has more than 2^16
/// elements and not as many operands (its parser allocates a type per element
/// before it counts them: gigabytes and seconds, or LLVM's fatal "SmallVector
/// unable to grow"). None if there is no such place.
std::optional<ParserHazard> findParserHazard(llvm::StringRef text);

/// Prints the first hazard of `buffer` to `os` as MLIR's parser prints its
/// errors ("FILE:LINE:COL: error: ...", the line, a caret); true if there
/// was one.
bool reportParserHazard(llvm::MemoryBufferRef buffer,
                        llvm::raw_ostream &os = llvm::errs());

} // namespace mlir::gnn

#endif // GNN_SUPPORT_PARSERHAZARDS_H
