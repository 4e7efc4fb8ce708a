//===- OverlappedExchange.cpp - gradient sums during the backward ---------===//
//
// Part of gnnc. The chain of exchangeGradients() (receive the running sum
// from the previous rank, add this rank's gradients, pass it on; the last
// rank broadcasts), taken bucket by bucket as the backward completes their
// gradients rather than after it, as PyTorch's DistributedDataParallel
// reduces buckets of gradients from autograd's hooks.
// The sums are those of exchangeGradients(), bit for bit: each parameter's
// sum is taken in the same order, only earlier.
//
//===----------------------------------------------------------------------===//

#include "DataParallel.h"

#include <cstring>

using namespace mlir::gnn;
using namespace mlir::gnn::detail;
using Clock = std::chrono::steady_clock;

OverlappedExchange::OverlappedExchange(Trainer &trainer, Communicator &world,
                                       size_t bucketBytes)
    : trainer(trainer), world(world) {
  const TensorMap &sums = trainer.accumulatedGradients();
  size_t filled = bucketBytes;
  for (const std::string &name : trainer.getGradientOrder()) {
    if (filled >= bucketBytes) {
      buckets.emplace_back();
      filled = 0;
    }
    filled += sums.at(name).numBytes();
    Bucket &bucket = buckets.back();
    bucket.parameters.push_back(name);
    for (const std::string &piece : trainer.gradientNames(name)) {
      kept[piece] = sums.at(name); // its dtype and shape
      arrived[piece] = false;
      bucket.pieces.push_back(piece);
    }
  }
  thread = std::thread([this] { serve(); });
}

OverlappedExchange::~OverlappedExchange() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    quit = true;
  }
  changed.notify_all();
  thread.join();
}

void OverlappedExchange::begin(int firstRank, int ranks) {
  std::lock_guard<std::mutex> lock(mutex);
  first = firstRank;
  count = ranks;
  closed = false;
  for (auto &[name, in] : arrived)
    in = false;
  spans.clear();
  running = true;
  changed.notify_all();
}

void OverlappedExchange::gradientReady(llvm::StringRef name, const void *data,
                                       size_t bytes) {
  auto it = kept.find(name.str());
  // Not a trained parameter's gradient, or not its size: the exchange goes
  // on with zeros (neither happens with @train_grad's own results).
  if (it == kept.end() || it->second.numBytes() != bytes)
    return;
  std::memcpy(it->second.data(), data, bytes);
  {
    std::lock_guard<std::mutex> lock(mutex);
    arrived[name.str()] = true;
  }
  changed.notify_all();
}

bool OverlappedExchange::complete(const Bucket &b) const {
  return closed || quit ||
         llvm::all_of(b.pieces, [&](const std::string &piece) {
           return arrived.find(piece)->second;
         });
}

double OverlappedExchange::finish() {
  Clock::time_point backwardEnd = Clock::now();
  std::unique_lock<std::mutex> lock(mutex);
  closed = true;
  // The backward is done: the rest of the exchange waits at full speed,
  // the transfer under way too. (Under the lock: the exchange thread
  // chooses its way of waiting under it, from `closed`.)
  world.setWaiting(Communicator::Waiting::Spin);
  changed.notify_all();
  changed.wait(lock, [&] { return !running; });
  double hidden = 0;
  for (auto [begin, end] : spans)
    if (begin < backwardEnd)
      hidden +=
          std::chrono::duration<double>(std::min(end, backwardEnd) - begin)
              .count();
  return hidden;
}

void OverlappedExchange::serve() {
  const int me = world.rank();
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    changed.wait(lock, [&] { return running || quit; });
    if (quit)
      return;
    const bool inRound = me >= first && me < first + count;
    for (const Bucket &bucket : buckets) {
      if (inRound)
        changed.wait(lock, [&] { return complete(bucket); });
      // While the backward computes beside this thread, waiting must not
      // take its core; after it, the fastest wait is the best.
      world.setWaiting(closed ? Communicator::Waiting::Spin
                              : Communicator::Waiting::Sleep);
      lock.unlock();
      Clock::time_point begin = Clock::now();
      passSumsOn(trainer, world, bucket.parameters, kept, first, count);
      Clock::time_point end = Clock::now();
      lock.lock();
      spans.emplace_back(begin, end);
    }
    world.setWaiting(Communicator::Waiting::Spin);
    running = false;
    changed.notify_all();
  }
}
