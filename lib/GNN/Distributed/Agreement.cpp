//===- Agreement.cpp - ranks that agree on failures and settings ---------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Distributed/Agreement.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <vector>

using namespace mlir::gnn;
using llvm::Error;

char RankFailed::ID = 0;

void RankFailed::log(llvm::raw_ostream &os) const {
  os << "rank " << rank << " failed";
}

Error mlir::gnn::agree(Communicator &world, Error e) {
  int32_t mine = e ? 1 : 0;
  std::vector<int32_t> all(world.size());
  world.allGather(&mine, all.data(), sizeof(mine));
  // The first rank that failed reports its error; the rest, that it did
  // (one line for the run, whichever ranks failed).
  for (int r = 0; r < world.size(); ++r)
    if (all[r]) {
      if (r == world.rank())
        return e;
      llvm::consumeError(std::move(e));
      return llvm::make_error<RankFailed>(r);
    }
  return Error::success();
}

/// Rank 0's `text` on every rank.
static std::string broadcastText(Communicator &world, std::string text) {
  uint64_t length = text.size();
  world.broadcast(&length, sizeof(length), 0);
  text.resize(length);
  world.broadcast(text.data(), length, 0);
  return text;
}

Error mlir::gnn::checkSameSettings(Communicator &world,
                                   llvm::ArrayRef<Setting> settings) {
  // Rank 0's settings as lines of name and value, each with its length.
  std::string mine;
  for (const Setting &s : settings)
    mine += std::to_string(s.first.size()) + ":" + s.first +
            std::to_string(s.second.size()) + ":" + s.second;
  std::string reference = broadcastText(world, mine);
  Error e = Error::success();
  if (reference != mine) {
    // Name the first setting that differs.
    size_t at = 0;
    auto next = [&](std::string &out) {
      size_t colon = reference.find(':', at);
      if (colon == std::string::npos)
        return false;
      size_t n = std::stoull(reference.substr(at, colon - at));
      out = reference.substr(colon + 1, n);
      at = colon + 1 + n;
      return true;
    };
    std::string message = "differs from rank 0 in the number of settings";
    for (const Setting &s : settings) {
      std::string name, value;
      if (!next(name) || !next(value))
        break;
      if (name != s.first) {
        message = "its settings differ from rank 0's at " + s.first;
        break;
      }
      if (value != s.second) {
        message = s.first + " is '" + s.second + "' here but '" + value +
                  "' on rank 0";
        break;
      }
    }
    e = llvm::createStringError(llvm::inconvertibleErrorCode(),
                                "every rank must run the same binary with the "
                                "same flags and files: " +
                                    message);
  }
  return agree(world, std::move(e));
}
