//===- gnn-opt.cpp - the mlir-opt of the gnn dialect ----------------------===//
//
// Part of gnnc. Parses, verifies, transforms and prints gnn IR, with the
// upstream dialects and passes that the gnn lowerings produce and use.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNDialect.h"
#include "GNN/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::gnn::registerAllPasses();

  mlir::DialectRegistry registry;
  mlir::gnn::registerAllDialectsAndExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  mlir::registerAllGPUToLLVMIRTranslations(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "gnn optimizer driver\n", registry));
}
