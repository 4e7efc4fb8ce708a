//===- GNNTypes.h - gnn types -----------------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_IR_GNNTYPES_H
#define GNN_IR_GNNTYPES_H

#include "GNN/IR/GNNAttrs.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "GNN/IR/GNNOpsTypes.h.inc"

#endif // GNN_IR_GNNTYPES_H
