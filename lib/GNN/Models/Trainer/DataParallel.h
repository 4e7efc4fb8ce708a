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

#include <optional>
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

} // namespace mlir::gnn::detail

#endif // GNN_MODELS_TRAINER_DATAPARALLEL_H
