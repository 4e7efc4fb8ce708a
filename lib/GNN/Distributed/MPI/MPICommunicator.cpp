//===- MPICommunicator.cpp - a Communicator over MPI ----------------------===//
//
// Part of gnnc. The plugin libgnnc-mpi.so: gnn-train loads it when an MPI
// launcher (mpirun, srun) started it, so that gnnc runs where MPI is not
// installed. MPI's default error handler ends every rank on a transport
// failure, which is what a data-parallel run wants.
//
//===----------------------------------------------------------------------===//

#include "GNN/Distributed/Communicator.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <ctime>
#include <vector>

using mlir::gnn::Communicator;

namespace {
/// MPI counts are ints: larger transfers go in pieces of this many bytes.
constexpr size_t kMaxPiece = size_t(1) << 30;

class MPICommunicator final : public Communicator {
public:
  explicit MPICommunicator(bool serialized) : serialized(serialized) {
    MPI_Comm_rank(MPI_COMM_WORLD, &myRank);
    MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, myRank,
                        MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &myLocalRank);
    MPI_Comm_size(local, &myLocalSize);
    MPI_Comm_free(&local);
  }
  ~MPICommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Finalize();
  }

  int rank() const override { return myRank; }
  int size() const override { return worldSize; }
  int localRank() const override { return myLocalRank; }
  int localSize() const override { return myLocalSize; }
  std::string describe() const override {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    std::string text(version, size_t(length));
    // The first line names the library and its version.
    text = text.substr(0, text.find_first_of("\n,"));
    return "MPI (" + text + ")";
  }

  bool callableFromAnyThread() const override { return serialized; }

  void setWaiting(Waiting how) override { waiting.store(how); }

  void send(const void *data, size_t bytes, int to) override {
    forPieces(bytes, [&](size_t at, int n) {
      const char *piece = static_cast<const char *>(data) + at;
      if (waiting == Waiting::Spin) {
        MPI_Send(piece, n, MPI_BYTE, to, 0, MPI_COMM_WORLD);
        return;
      }
      MPI_Request request;
      MPI_Isend(piece, n, MPI_BYTE, to, 0, MPI_COMM_WORLD, &request);
      wait(request);
    });
  }
  void receive(void *data, size_t bytes, int from) override {
    forPieces(bytes, [&](size_t at, int n) {
      char *piece = static_cast<char *>(data) + at;
      if (waiting == Waiting::Spin) {
        MPI_Recv(piece, n, MPI_BYTE, from, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        return;
      }
      MPI_Request request;
      MPI_Irecv(piece, n, MPI_BYTE, from, 0, MPI_COMM_WORLD, &request);
      wait(request);
    });
  }
  void broadcast(void *data, size_t bytes, int root) override {
    // Always the nonblocking form: a blocking collective does not match a
    // nonblocking one, and ranks may wait in different ways at once.
    forPieces(bytes, [&](size_t at, int n) {
      MPI_Request request;
      MPI_Ibcast(static_cast<char *>(data) + at, n, MPI_BYTE, root,
                 MPI_COMM_WORLD, &request);
      wait(request);
    });
  }
  void sendAll(const Span *spans, size_t count, int to) override {
    if (!asOne(spans, count, [&](MPI_Datatype type, MPI_Request &request) {
          MPI_Isend(MPI_BOTTOM, 1, type, to, 0, MPI_COMM_WORLD, &request);
        }))
      Communicator::sendAll(spans, count, to);
  }
  void receiveAll(const Span *spans, size_t count, int from) override {
    if (!asOne(spans, count, [&](MPI_Datatype type, MPI_Request &request) {
          MPI_Irecv(MPI_BOTTOM, 1, type, from, 0, MPI_COMM_WORLD, &request);
        }))
      Communicator::receiveAll(spans, count, from);
  }
  void broadcastAll(const Span *spans, size_t count, int root) override {
    if (!asOne(spans, count, [&](MPI_Datatype type, MPI_Request &request) {
          MPI_Ibcast(MPI_BOTTOM, 1, type, root, MPI_COMM_WORLD, &request);
        }))
      Communicator::broadcastAll(spans, count, root);
  }

  void allGather(const void *mine, void *all, size_t bytes) override {
    if (bytes <= kMaxPiece) {
      MPI_Allgather(mine, int(bytes), MPI_BYTE, all, int(bytes), MPI_BYTE,
                    MPI_COMM_WORLD);
      return;
    }
    // Rare (a gather is of small records): one broadcast per rank.
    for (int r = 0; r < worldSize; ++r) {
      char *slot = static_cast<char *>(all) + size_t(r) * bytes;
      if (r == myRank)
        std::copy_n(static_cast<const char *>(mine), bytes, slot);
      broadcast(slot, bytes, r);
    }
  }

private:
  /// Waits for `request` as `waiting` says: MPI_Wait when spinning; else
  /// tests it a few times at once (a message already there costs no sleep),
  /// then with sleeps growing from 2 us to 1 ms, so that a core shared with
  /// computing threads mostly computes (shorter sleeps cost the computing
  /// threads more than the latency they save while a backward runs).
  void wait(MPI_Request &request) {
    if (waiting.load() == Waiting::Spin) {
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      return;
    }
    int done = 0;
    for (int spins = 0; spins < 64 && !done; ++spins)
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    for (long nanoseconds = 2000; !done;) {
      if (waiting.load() == Waiting::Spin) {
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        return;
      }
      timespec pause{0, nanoseconds};
      nanosleep(&pause, nullptr);
      nanoseconds = std::min(nanoseconds * 2, 1000000L);
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    }
  }

  /// Starts `start` on a datatype that describes every span by its address
  /// (one message, no copy into a staging buffer) and waits for it; false
  /// (nothing done) for one span or none, and where the spans do not fit
  /// one datatype's int counts.
  template <typename F> bool asOne(const Span *spans, size_t count, F &&start) {
    // One span is one plain message.
    if (count <= 1 || count > size_t(INT_MAX))
      return false;
    std::vector<int> lengths;
    std::vector<MPI_Aint> addresses;
    size_t total = 0;
    for (size_t i = 0; i < count; ++i) {
      total += spans[i].bytes;
      if (spans[i].bytes > kMaxPiece || total > kMaxPiece)
        return false;
      MPI_Aint address;
      MPI_Get_address(spans[i].data, &address);
      lengths.push_back(int(spans[i].bytes));
      addresses.push_back(address);
    }
    MPI_Datatype type;
    MPI_Type_create_hindexed(int(count), lengths.data(), addresses.data(),
                             MPI_BYTE, &type);
    MPI_Type_commit(&type);
    MPI_Request request;
    start(type, request);
    wait(request);
    MPI_Type_free(&type);
    return true;
  }

  template <typename F> static void forPieces(size_t bytes, F &&f) {
    size_t at = 0;
    do {
      size_t n = std::min(bytes - at, kMaxPiece);
      f(at, int(n));
      at += n;
    } while (at < bytes);
  }

  int myRank = 0, worldSize = 1, myLocalRank = 0, myLocalSize = 1;
  bool serialized = false;
  /// Read at every poll: a wait that began sleeping spins once told to.
  std::atomic<Waiting> waiting{Waiting::Spin};
};
} // namespace

extern "C" mlir::gnn::OpenCommunicator gnnc_mpi_open;

extern "C" Communicator *gnnc_mpi_open(int *argc, char ***argv, char *why,
                                       size_t whyLength) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  // Compiled code runs on OpenMP threads that never call MPI; the trainer
  // passes gradients on from a thread of its own while the backward runs,
  // never while another thread calls MPI.
  int provided = MPI_THREAD_SINGLE;
  if (!initialized && MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED,
                                      &provided) != MPI_SUCCESS) {
    std::snprintf(why, whyLength, "MPI_Init_thread failed");
    return nullptr;
  }
  if (initialized)
    MPI_Query_thread(&provided);
  return new MPICommunicator(provided >= MPI_THREAD_SERIALIZED);
}
