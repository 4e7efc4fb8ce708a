//===- Agreement.h - ranks that agree on failures and settings --*- C++ -*-===//
//
// Part of gnnc. A data-parallel run must not leave ranks waiting for one
// that has failed: at each point where a rank can fail on its own (bad
// input, a non-finite loss, a file it cannot write), the ranks exchange
// whether they did and all stop together, the failed rank with its error
// and the others with a RankFailed naming it.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DISTRIBUTED_AGREEMENT_H
#define GNN_DISTRIBUTED_AGREEMENT_H

#include "GNN/Distributed/Communicator.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>

namespace mlir::gnn {

/// What a rank returns when another rank failed (that rank returns, and
/// reports, its own error).
class RankFailed : public llvm::ErrorInfo<RankFailed> {
public:
  static char ID;
  explicit RankFailed(int rank) : rank(rank) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  int rank;
};

/// Collective: success where no rank failed; else, on the first rank that
/// failed, its error `e`, and on every other rank a RankFailed naming that
/// one (so that a run reports one failure, once).
llvm::Error agree(Communicator &world, llvm::Error e);

/// A setting every rank must share, by name ("argument 3", "the file of
/// --config") and value (the text, or a digest of a file's contents).
using Setting = std::pair<std::string, std::string>;

/// Collective: refuses a run whose ranks differ from rank 0 in any of
/// `settings` (each rank lists the same names in the same order): the
/// ranks that differ return an error naming the first setting and both
/// values, the others a RankFailed.
llvm::Error checkSameSettings(Communicator &world,
                              llvm::ArrayRef<Setting> settings);

} // namespace mlir::gnn

#endif // GNN_DISTRIBUTED_AGREEMENT_H
