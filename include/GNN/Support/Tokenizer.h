//===- Tokenizer.h - sequences of token ids from text lines -----*- C++ -*-===//
//
// Part of gnnc (no MLIR). The text inputs of gnn-run and gnn-train: one
// sequence a line, tokens separated by spaces, either words of a vocabulary
// or integer ids.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_TOKENIZER_H
#define GNN_SUPPORT_TOKENIZER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace mlir::gnn {

using Sequence = std::vector<int64_t>;

/// Lines of a file; a final newline ends the last line. `what` names the
/// file in errors ("source", "target", ...).
llvm::Expected<std::vector<std::string>> readLines(const std::string &path,
                                                   const char *what);

/// Maps a line's tokens to ids and back.
class Tokenizer {
public:
  /// `ids`: tokens are integer ids; else words of `vocab` (id = position).
  Tokenizer(bool ids, std::vector<std::string> vocab);

  /// The ids of `line`'s tokens, each in [0, vocabSize); an empty line, an
  /// unknown word or an id out of range is an error naming `where`. More
  /// than `maxTokens` tokens: the first `maxTokens` if `truncate`, else an
  /// error, found without parsing (or holding) the tokens past the limit.
  llvm::Expected<Sequence>
  parse(llvm::StringRef line, int64_t vocabSize, const llvm::Twine &where,
        int64_t maxTokens = std::numeric_limits<int64_t>::max(),
        bool truncate = false) const;

  /// Tokens, or ids when reading ids or when an id has no token (a model
  /// vocabulary larger than the token file).
  std::string print(const Sequence &s) const;

private:
  bool ids;
  std::vector<std::string> vocab;
  std::map<std::string, int64_t> index;
};

/// The sequences of `lines` (named "<what> line N" in errors), none
/// longer than `maxLen` (or cut to it with `truncate`).
llvm::Expected<std::vector<Sequence>>
parseSequences(llvm::ArrayRef<std::string> lines, const char *what,
               const Tokenizer &tokenizer, int64_t vocabSize, int64_t maxLen,
               bool truncate = false);

/// The sequences of a file, one a line, none longer than `maxLen` (longer
/// ones are an error, or cut to `maxLen` tokens with `truncate`, as DGL's
/// example does); a file without sequences is an error.
llvm::Expected<std::vector<Sequence>>
readSequences(const std::string &path, const char *what,
              const Tokenizer &tokenizer, int64_t vocabSize, int64_t maxLen,
              bool truncate = false);

} // namespace mlir::gnn

#endif // GNN_SUPPORT_TOKENIZER_H
