//===- DataParallel.h - what ranks of a data-parallel fit exchange -*- C++ -*-//
//
// Part of gnnc. The pieces fit() uses when it runs on several ranks: the
// trainer's state broadcast from rank 0, a batch's loss totals gathered
// from every rank, the gradient sum passed along the ranks in the order
// one process would add them, and agreement on failures.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_TRAINER_DATAPARALLEL_H
#define GNN_MODELS_TRAINER_DATAPARALLEL_H

#include "GNN/Distributed/Communicator.h"
#include "GNN/Models/Trainer.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace mlir::gnn::detail {

/// Rank 0's parameters, moments, sums and position on every rank.
void broadcastState(Trainer &trainer, Communicator &world);

/// Every rank's `mine` (a batch's totals, or none where a rank had no
/// batch), in rank order. `maxDepth` bounds an ACT step count.
std::vector<std::optional<LossTotals>>
gatherTotals(Communicator &world, const std::optional<LossTotals> &mine,
             int64_t maxDepth);

/// Adds the gradients of ranks first .. first+count-1 (this rank's
/// `gradients` where it is one of them) to the trainer's accumulated sums,
/// rank after rank, as one process adds consecutive batches; then every
/// rank holds the sums. The sums travel over `world` (the run's, or NCCL's
/// between GPUs).
void exchangeGradients(Trainer &trainer, Communicator &world, int first,
                       int count, const TensorMap &gradients);

/// One step of the chain for `parameters` (their sums as one message):
/// rank me receives the running sums from me - 1 (unless first), adds its
/// `gradients` of each parameter in @train_step's order and passes them on
/// to me + 1 (unless last); the round's last rank broadcasts them. Ranks
/// outside the round take part in the broadcast only.
void passSumsOn(Trainer &trainer, Communicator &world,
                llvm::ArrayRef<std::string> parameters,
                const TensorMap &gradients, int first, int count);

/// The gradient sum of a round taken while the backward still runs (as
/// exchangeGradients() takes it after), from a thread of its own: the
/// backward announces each gradient (Trainer::batchGradients' listener),
/// and bucket by bucket (consecutive parameters in the order the backward
/// completes them, at least `bucketBytes` of them where there are, each
/// bucket one message) the sums pass along the round's ranks and are
/// broadcast, while the layers below are differentiated. Needs a
/// communicator callable from any thread; the caller makes no other call
/// of it between begin() and finish().
class OverlappedExchange {
public:
  OverlappedExchange(Trainer &trainer, Communicator &world, size_t bucketBytes);
  ~OverlappedExchange();
  OverlappedExchange(const OverlappedExchange &) = delete;
  OverlappedExchange &operator=(const OverlappedExchange &) = delete;

  /// Starts the round of ranks first .. first+count-1.
  void begin(int first, int count);
  /// The listener of this rank's batchGradients(): keeps a copy of
  /// gradient `name` for the exchange.
  void gradientReady(llvm::StringRef name, const void *data, size_t bytes);
  /// After this rank's backward (or its failure, when the gradients that
  /// did not come count as zeros: the run then stops): waits until every
  /// rank holds the round's sums. Returns the seconds the exchange spent
  /// before the call, while the backward ran (awaiting other ranks
  /// included).
  double finish();

private:
  struct Bucket {
    std::vector<std::string> parameters;
    /// Their gradients (grad.<argument>), each kept here when announced.
    std::vector<std::string> pieces;
  };
  void serve();
  /// Whether this rank's gradients of `b` are all in (or the round closed).
  bool complete(const Bucket &b) const;

  Trainer &trainer;
  Communicator &world;
  /// The buckets in the order the backward completes them.
  std::vector<Bucket> buckets;
  /// This rank's gradients of the round.
  TensorMap kept;
  std::map<std::string, bool, std::less<>> arrived;
  std::mutex mutex;
  std::condition_variable changed;
  int first = 0, count = 0;
  bool running = false, closed = false, quit = false;
  /// When each bucket's exchange began and ended on the thread.
  std::vector<std::pair<std::chrono::steady_clock::time_point,
                        std::chrono::steady_clock::time_point>>
      spans;
  std::thread thread;
};

} // namespace mlir::gnn::detail

#endif // GNN_MODELS_TRAINER_DATAPARALLEL_H
