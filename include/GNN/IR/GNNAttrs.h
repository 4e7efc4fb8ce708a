//===- GNNAttrs.h - gnn enums and attributes --------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_IR_GNNATTRS_H
#define GNN_IR_GNNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "GNN/IR/GNNEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "GNN/IR/GNNAttrs.h.inc"

#endif // GNN_IR_GNNATTRS_H
