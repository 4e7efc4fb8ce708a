//===- NCCLCommunicator.cpp - tensors between GPUs over NCCL -------------===//
//
// Part of gnnc. NCCL is opened with dlopen like the CUDA driver and cuBLAS
// (gnnc runs where it is missing) and bootstrapped through the run's MPI
// world: rank 0's unique id is broadcast over it. Transfers take device
// (or unified) memory and are complete when a call returns; gathers of
// small host records go over the bootstrap world.
//
//===----------------------------------------------------------------------===//

#include "GNN/Distributed/Launch.h"

#include "gnnc/cuda.h"

#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <string>
#include <type_traits>
#include <vector>

using namespace mlir::gnn;

namespace {
/// NCCL's entry points that gnnc uses.
struct NCCL {
  decltype(&ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&ncclCommInitRank) commInitRank = nullptr;
  decltype(&ncclCommDestroy) commDestroy = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclGetErrorString) errorString = nullptr;
};

/// NCCL bound from libnccl.so.2, or the reason it cannot be.
llvm::Expected<NCCL> loadNCCL() {
  void *library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "NCCL cannot be loaded: %s", dlerror());
  NCCL n;
  auto bind = [&](const char *name, auto &fn) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(library, name));
    return fn != nullptr;
  };
  for (bool bound :
       {bind("ncclGetUniqueId", n.getUniqueId),
        bind("ncclCommInitRank", n.commInitRank),
        bind("ncclCommDestroy", n.commDestroy), bind("ncclSend", n.send),
        bind("ncclRecv", n.recv), bind("ncclBroadcast", n.broadcast),
        bind("ncclGetErrorString", n.errorString)})
    if (!bound)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "libnccl.so.2 lacks an entry point gnnc "
                                     "uses (NCCL 2.7 or later is needed)");
  return n;
}

class NCCLCommunicator final : public Communicator {
public:
  NCCLCommunicator(const NCCL &nccl, ncclComm_t comm, Communicator &bootstrap)
      : nccl(nccl), comm(comm), bootstrap(bootstrap) {}
  ~NCCLCommunicator() override { nccl.commDestroy(comm); }

  int rank() const override { return bootstrap.rank(); }
  int size() const override { return bootstrap.size(); }
  int localRank() const override { return bootstrap.localRank(); }
  int localSize() const override { return bootstrap.localSize(); }
  std::string describe() const override { return "NCCL"; }

  void send(const void *data, size_t bytes, int to) override {
    check(nccl.send(data, bytes, ncclUint8, to, comm, nullptr), "ncclSend");
  }
  void receive(void *data, size_t bytes, int from) override {
    check(nccl.recv(data, bytes, ncclUint8, from, comm, nullptr), "ncclRecv");
  }
  void broadcast(void *data, size_t bytes, int root) override {
    check(nccl.broadcast(data, data, bytes, ncclUint8, root, comm, nullptr),
          "ncclBroadcast");
  }
  void allGather(const void *mine, void *all, size_t bytes) override {
    bootstrap.allGather(mine, all, bytes);
  }

private:
  /// Waits for the transfer; a failure ends the process, as MPI's do.
  void check(ncclResult_t result, const char *what) {
    if (result == ncclSuccess && gnn_cuda_synchronize())
      return;
    std::fprintf(stderr, "gnn: error: rank %d: %s: %s\n", rank(), what,
                 result == ncclSuccess ? "the device failed"
                                       : nccl.errorString(result));
    std::fflush(stderr);
    std::_Exit(1);
  }

  NCCL nccl;
  ncclComm_t comm;
  Communicator &bootstrap;
};
} // namespace

llvm::Expected<std::unique_ptr<Communicator>>
mlir::gnn::openNCCLWorld(Communicator &bootstrap) {
  // Every rank loads NCCL, and the ranks agree whether all could, before
  // any of them waits for the others in NCCL.
  llvm::Expected<NCCL> nccl = loadNCCL();
  int32_t mine = bool(nccl);
  std::vector<int32_t> loaded(bootstrap.size());
  bootstrap.allGather(&mine, loaded.data(), sizeof(mine));
  if (!nccl)
    return nccl.takeError();
  for (int r = 0; r < bootstrap.size(); ++r)
    if (!loaded[r])
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "rank %d cannot load NCCL", r);
  ncclUniqueId id{};
  int32_t status = 0;
  if (bootstrap.rank() == 0)
    status = nccl->getUniqueId(&id);
  bootstrap.broadcast(&status, sizeof(status), 0);
  if (status != ncclSuccess)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "ncclGetUniqueId failed on rank 0");
  bootstrap.broadcast(&id, sizeof(id), 0);
  ncclComm_t comm = nullptr;
  if (ncclResult_t r =
          nccl->commInitRank(&comm, bootstrap.size(), id, bootstrap.rank());
      r != ncclSuccess)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "ncclCommInitRank: %s",
                                   nccl->errorString(r));
  return std::make_unique<NCCLCommunicator>(*nccl, comm, bootstrap);
}
