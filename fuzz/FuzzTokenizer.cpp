//===- FuzzTokenizer.cpp - vocabularies and sequences under libFuzzer -----===//
//
// Part of gnnc. The first line of the input is a vocabulary (words split by
// spaces), the rest are sequences, read as words and as ids; every token
// read is in range, and printing then parsing gives the ids back.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/Tokenizer.h"

#include "llvm/ADT/StringExtras.h"

#include <cstdlib>

using namespace mlir::gnn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto [head, body] = text.split('\n');
  std::vector<std::string> vocab = {"<sos>", "<eos>", "<pad>"};
  llvm::SmallVector<llvm::StringRef> words;
  head.split(words, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef w : words)
    if (llvm::find(vocab, w.str()) == vocab.end())
      vocab.push_back(w.str());
  int64_t vocabSize = int64_t(vocab.size());
  Tokenizer byWord(false, vocab), byId(true, {});
  llvm::SmallVector<llvm::StringRef> lines;
  body.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    for (const Tokenizer *t : {&byWord, &byId}) {
      llvm::Expected<Sequence> seq = t->parse(line, vocabSize, "line");
      if (!seq) {
        llvm::consumeError(seq.takeError());
        continue;
      }
      for (int64_t id : *seq)
        if (id < 0 || id >= vocabSize)
          std::abort();
      llvm::Expected<Sequence> again =
          t->parse(t->print(*seq), vocabSize, "again");
      if (!again || *again != *seq)
        std::abort();
    }
  }
  return 0;
}
