//===- Tokenizer.cpp - sequences of token ids from text lines -------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/Tokenizer.h"
#include "GNN/Support/InputFile.h"
#include "GNN/Support/Messages.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir::gnn;
using llvm::Expected;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

Expected<std::vector<std::string>> mlir::gnn::readLines(const std::string &path,
                                                        const char *what) {
  auto buffer = readInputFile(path, /*isText=*/true);
  if (!buffer)
    return error(llvm::Twine("cannot read ") + what + " file '" + path +
                 "': " + llvm::toString(buffer.takeError()));
  // Lines end with "\n", "\r\n" or a lone "\r".
  std::vector<std::string> lines;
  llvm::StringRef text = (*buffer)->getBuffer();
  while (!text.empty()) {
    size_t end = text.find_first_of("\r\n");
    lines.push_back(text.take_front(end).str());
    if (end == llvm::StringRef::npos)
      break;
    text =
        text.drop_front(end + (text.substr(end).starts_with("\r\n") ? 2 : 1));
  }
  return lines;
}

Tokenizer::Tokenizer(bool ids, std::vector<std::string> vocab)
    : ids(ids), vocab(std::move(vocab)) {
  for (auto [i, t] : llvm::enumerate(this->vocab))
    index[t] = int64_t(i);
}

Expected<Sequence> Tokenizer::parse(llvm::StringRef line, int64_t vocabSize,
                                    const llvm::Twine &where, int64_t maxTokens,
                                    bool truncate) const {
  static constexpr llvm::StringLiteral kSpaces = " \t\r\v\f";
  // The next word of `rest`, consumed.
  auto next = [](llvm::StringRef &rest) {
    rest = rest.ltrim(kSpaces);
    llvm::StringRef w = rest.take_front(rest.find_first_of(kSpaces));
    rest = rest.drop_front(w.size());
    return w;
  };
  Sequence out;
  llvm::StringRef rest = line;
  for (int64_t i = 0;; ++i) {
    llvm::StringRef w = next(rest);
    if (w.empty())
      break;
    if (i == maxTokens) {
      if (truncate)
        break;
      // Counted, not parsed: a line far past the limit costs no memory.
      int64_t count = i + 1;
      while (!next(rest).empty())
        ++count;
      return error(where + " has " + llvm::Twine(count) +
                   " tokens, more than max_len (" + llvm::Twine(maxTokens) +
                   ")");
    }
    int64_t id;
    if (ids) {
      if (w.getAsInteger(10, id))
        return error(where + ", token " + llvm::Twine(i + 1) + ": '" +
                     clipForMessage(w) + "' is not an integer id");
    } else {
      auto it = index.find(w.str());
      if (it == index.end())
        return error(where + ", token " + llvm::Twine(i + 1) +
                     ": unknown token '" + clipForMessage(w) + "'");
      id = it->second;
    }
    if (id < 0 || id >= vocabSize)
      return error(where + ", token " + llvm::Twine(i + 1) + ": id " +
                   llvm::Twine(id) + " is out of range [0, " +
                   llvm::Twine(vocabSize) + ")");
    out.push_back(id);
  }
  if (out.empty())
    return error(where + " is empty");
  return out;
}

std::string Tokenizer::print(const Sequence &s) const {
  bool asIds = ids || llvm::any_of(s, [&](int64_t id) {
                 return id < 0 || id >= int64_t(vocab.size());
               });
  std::string line;
  for (auto [i, id] : llvm::enumerate(s)) {
    if (i)
      line += ' ';
    line += asIds ? std::to_string(id) : vocab[size_t(id)];
  }
  return line;
}

Expected<std::vector<Sequence>>
mlir::gnn::parseSequences(llvm::ArrayRef<std::string> lines, const char *what,
                          const Tokenizer &tokenizer, int64_t vocabSize,
                          int64_t maxLen, bool truncate) {
  std::vector<Sequence> out;
  for (auto [i, line] : llvm::enumerate(lines)) {
    std::string where = std::string(what) + " line " + std::to_string(i + 1);
    auto seq = tokenizer.parse(line, vocabSize, where, maxLen, truncate);
    if (!seq)
      return seq.takeError();
    out.push_back(std::move(*seq));
  }
  return out;
}

Expected<std::vector<Sequence>>
mlir::gnn::readSequences(const std::string &path, const char *what,
                         const Tokenizer &tokenizer, int64_t vocabSize,
                         int64_t maxLen, bool truncate) {
  auto lines = readLines(path, what);
  if (!lines)
    return lines.takeError();
  if (lines->empty())
    return error(llvm::Twine(what) + " file '" + path + "' has no sequences");
  return parseSequences(*lines, what, tokenizer, vocabSize, maxLen, truncate);
}
