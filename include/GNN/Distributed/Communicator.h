//===- Communicator.h - the processes of a data-parallel run ----*- C++ -*-===//
//
// Part of gnnc. What data-parallel training needs from the engine that
// started and connected its processes (MPI): ranks, point-to-point
// transfers, broadcasts and gathers of bytes. Header-only, so that the
// trainer depends on no engine; an engine's implementation lives in a
// plugin loaded at run time (see Launch.h).
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DISTRIBUTED_COMMUNICATOR_H
#define GNN_DISTRIBUTED_COMMUNICATOR_H

#include <cstddef>
#include <string>

namespace mlir::gnn {

/// The processes of one run, numbered 0..size()-1. Every call is collective
/// in the MPI sense where it says so: every rank makes it, in the same
/// order. A transport failure ends the process (the engine's own handling);
/// the calls return only on success.
class Communicator {
public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// This rank's place among the ranks on its machine, and their number
  /// (threads and GPUs are shared among them).
  virtual int localRank() const = 0;
  virtual int localSize() const = 0;
  /// The engine and its version, e.g. "MPI (Open MPI v4.1.4)".
  virtual std::string describe() const = 0;

  /// Whether calls may come from any thread, one thread at a time (MPI's
  /// MPI_THREAD_SERIALIZED); else only from the thread that opened it.
  virtual bool callableFromAnyThread() const { return false; }

  /// How calls wait for the other ranks: spinning (the engine's default,
  /// the lowest latency), or polling with short sleeps in between, which
  /// leaves the core to the threads that compute beside the caller (the
  /// gradient exchange during the backward).
  /// May be called from any thread at any time: a call waiting with
  /// sleeps spins once told to.
  enum class Waiting { Spin, Sleep };
  virtual void setWaiting(Waiting how) {}

  /// Sends `bytes` bytes to rank `to`; blocks until they may be reused.
  virtual void send(const void *data, size_t bytes, int to) = 0;
  /// Receives `bytes` bytes from rank `from`.
  virtual void receive(void *data, size_t bytes, int from) = 0;
  /// Collective: `root`'s `bytes` bytes into every rank's `data`.
  virtual void broadcast(void *data, size_t bytes, int root) = 0;
  /// Several buffers as one message (a bucket of gradients), in order: the
  /// receiving side's spans hold as many bytes in all. By default one call
  /// per span; an engine may send them at once (MPI's derived datatypes).
  struct Span {
    void *data;
    size_t bytes;
  };
  virtual void sendAll(const Span *spans, size_t count, int to) {
    for (size_t i = 0; i < count; ++i)
      send(spans[i].data, spans[i].bytes, to);
  }
  virtual void receiveAll(const Span *spans, size_t count, int from) {
    for (size_t i = 0; i < count; ++i)
      receive(spans[i].data, spans[i].bytes, from);
  }
  /// Collective.
  virtual void broadcastAll(const Span *spans, size_t count, int root) {
    for (size_t i = 0; i < count; ++i)
      broadcast(spans[i].data, spans[i].bytes, root);
  }

  /// Collective: every rank's `bytes` bytes of `mine`, in rank order, into
  /// `all` (size() * bytes bytes).
  virtual void allGather(const void *mine, void *all, size_t bytes) = 0;
};

/// The contract between gnnc and an engine's plugin: the shared library
/// `kMPIPlugin` exports `kMPIPluginEntry`, an OpenCommunicator that
/// initializes the engine (MPI_Init with the process's arguments) and
/// returns the world's communicator (deleting it finalizes the engine), or
/// null with the reason in `why`.
using OpenCommunicator = Communicator *(int *argc, char ***argv, char *why,
                                        size_t whyLength);
constexpr const char *kMPIPlugin = "libgnnc-mpi.so";
constexpr const char *kMPIPluginEntry = "gnnc_mpi_open";

} // namespace mlir::gnn

#endif // GNN_DISTRIBUTED_COMMUNICATOR_H
