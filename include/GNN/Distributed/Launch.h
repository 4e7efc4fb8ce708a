//===- Launch.h - joining the processes a launcher started ------*- C++ -*-===//
//
// Part of gnnc. A data-parallel run is K processes that an MPI launcher
// (mpirun, srun) started (EnvironmentOptions::mpiLaunched tells whether
// this process is one of them); this opens the engine's plugin, which gnnc
// loads at run time so that its tools run where MPI is not installed.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_DISTRIBUTED_LAUNCH_H
#define GNN_DISTRIBUTED_LAUNCH_H

#include "GNN/Distributed/Communicator.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace mlir::gnn {

/// Loads the MPI plugin (kMPIPlugin, found beside the file that holds
/// gnnc's code, or in its ../lib) and joins the run: MPI_Init with
/// argc/argv. An error says what is missing.
llvm::Expected<std::unique_ptr<Communicator>> openMPIWorld(int &argc,
                                                           char **&argv);

/// Whether this build can reduce gradients over NCCL (its header was found
/// when gnnc was built; the library itself is loaded at run time).
bool haveNCCL();

/// Tensors between the ranks' GPUs over NCCL (libnccl.so.2, loaded now),
/// bootstrapped through `bootstrap`, which must outlive it. Collective: every
/// rank calls it after choosing its device (gnn_cuda_use_device and
/// gnn_cuda_init). Its transfers take device or unified memory; its gathers
/// go over `bootstrap`.
llvm::Expected<std::unique_ptr<Communicator>>
openNCCLWorld(Communicator &bootstrap);

} // namespace mlir::gnn

#endif // GNN_DISTRIBUTED_LAUNCH_H
