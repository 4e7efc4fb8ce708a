//===- NoNCCL.cpp - builds without NCCL's header
//---------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Distributed/Launch.h"

llvm::Expected<std::unique_ptr<mlir::gnn::Communicator>>
mlir::gnn::openNCCLWorld(Communicator &) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "this gnnc was built without NCCL's header");
}
