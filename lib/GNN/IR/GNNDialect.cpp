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

Operation *GNNDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  // Counts fold to index constants.
  return arith::ConstantOp::materialize(builder, value, type, loc);
}
