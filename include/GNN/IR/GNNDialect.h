//===- GNNDialect.h - the gnn dialect ---------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_IR_GNNDIALECT_H
#define GNN_IR_GNNDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "GNN/IR/GNNOpsDialect.h.inc"

#endif // GNN_IR_GNNDIALECT_H
