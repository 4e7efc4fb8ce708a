//===- DataParallel.cpp - what ranks of a data-parallel fit exchange -----===//
//
// Part of gnnc. Every rank holds the whole state, and every rank ends each
// round of batches with the same gradient sums: rank r receives the sum
// from rank r-1, adds its batch's gradients tensor by tensor (so that the
// transfers of one tensor overlap the additions of the next) and passes
// it on; the last rank of the round broadcasts it. The sum is thus taken
// in the order of the batches, as one process with --grad-accum takes it,
// whatever the number of ranks.
//
//===----------------------------------------------------------------------===//

#include "DataParallel.h"

#include "GNN/Models/Fit.h"

using namespace mlir::gnn;
using llvm::Error;

void detail::broadcastState(Trainer &trainer, Communicator &world) {
  for (HostTensor *tensor : trainer.stateTensors())
    world.broadcast(tensor->data(), tensor->numBytes(), 0);
  TrainingPosition p = trainer.getPosition();
  int64_t fields[] = {p.step, p.epoch, p.batch, p.batchesSeen, p.pending};
  world.broadcast(fields, sizeof(fields), 0);
  trainer.setPosition({fields[0], fields[1], fields[2], fields[3], fields[4]});
}

std::vector<std::optional<LossTotals>>
detail::gatherTotals(Communicator &world, const std::optional<LossTotals> &mine,
                     int64_t maxDepth) {
  // A record: present, loss, act loss, tokens, correct, nodes, the number
  // of ACT steps, then each step's count (integers are exact in doubles
  // up to 2^53).
  constexpr size_t kFixed = 7;
  size_t width = kFixed + size_t(std::max<int64_t>(maxDepth, 0));
  std::vector<double> record(width, 0.0);
  if (mine) {
    size_t steps = std::min(mine->entered.size(), width - kFixed);
    record[0] = 1;
    record[1] = mine->loss;
    record[2] = mine->actLoss;
    record[3] = double(mine->tokens);
    record[4] = double(mine->correct);
    record[5] = double(mine->nodes);
    record[6] = double(steps);
    for (size_t s = 0; s < steps; ++s)
      record[kFixed + s] = double(mine->entered[s]);
  }
  std::vector<double> all(width * size_t(world.size()));
  world.allGather(record.data(), all.data(), width * sizeof(double));
  std::vector<std::optional<LossTotals>> totals(world.size());
  for (int r = 0; r < world.size(); ++r) {
    const double *f = &all[size_t(r) * width];
    if (f[0] == 0)
      continue;
    LossTotals t;
    t.loss = f[1];
    t.actLoss = f[2];
    t.tokens = int64_t(f[3]);
    t.correct = int64_t(f[4]);
    t.nodes = int64_t(f[5]);
    for (int64_t s = 0; s < int64_t(f[6]); ++s)
      t.entered.push_back(int64_t(f[kFixed + s]));
    totals[r] = std::move(t);
  }
  return totals;
}

void detail::passSumsOn(Trainer &trainer, Communicator &world,
                        llvm::ArrayRef<std::string> parameters,
                        const TensorMap &gradients, int first, int count) {
  const int me = world.rank(), last = first + count - 1;
  std::vector<Communicator::Span> sums;
  for (const std::string &name : parameters) {
    HostTensor &sum = trainer.accumulatedGradients().at(name);
    sums.push_back({sum.data(), sum.numBytes()});
  }
  if (me >= first && me <= last) {
    if (me > first)
      world.receiveAll(sums.data(), sums.size(), me - 1);
    for (const std::string &name : parameters)
      trainer.accumulate(gradients, name);
    if (me < last)
      world.sendAll(sums.data(), sums.size(), me + 1);
  }
  world.broadcastAll(sums.data(), sums.size(), last);
}

void detail::exchangeGradients(Trainer &trainer, Communicator &world, int first,
                               int count, const TensorMap &gradients) {
  // Tensor by tensor, so that the transfers of one overlap the additions of
  // the next.
  for (const auto &entry : trainer.accumulatedGradients())
    passSumsOn(trainer, world, entry.first, gradients, first, count);
}
