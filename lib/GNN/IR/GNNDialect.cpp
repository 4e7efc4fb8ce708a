//===- GNNDialect.cpp - the gnn dialect -----------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNDialect.h"
#include "GNN/IR/GNNOps.h"

using namespace mlir;
using namespace mlir::gnn;

#include "GNN/IR/GNNOpsDialect.cpp.inc"

void GNNDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "GNN/IR/GNNOps.cpp.inc"
      >();
}
