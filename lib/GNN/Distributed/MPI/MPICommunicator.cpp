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
#include <climits>
#include <cstdio>

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

  void send(const void *data, size_t bytes, int to) override {
    forPieces(bytes, [&](size_t at, int n) {
      MPI_Send(static_cast<const char *>(data) + at, n, MPI_BYTE, to, 0,
               MPI_COMM_WORLD);
    });
  }
  void receive(void *data, size_t bytes, int from) override {
    forPieces(bytes, [&](size_t at, int n) {
      MPI_Recv(static_cast<char *>(data) + at, n, MPI_BYTE, from, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    });
  }
  void broadcast(void *data, size_t bytes, int root) override {
    forPieces(bytes, [&](size_t at, int n) {
      MPI_Bcast(static_cast<char *>(data) + at, n, MPI_BYTE, root,
                MPI_COMM_WORLD);
    });
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
