//===- GNNInterfaces.h - gnn op interfaces ----------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_IR_GNNINTERFACES_H
#define GNN_IR_GNNINTERFACES_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::gnn {
/// What the rows of a feature operand are indexed by.
enum class RowKind { SrcNodes, DstNodes, Edges, EdgeIds };

/// A feature operand and what its rows are indexed by.
struct FeatureRows {
  Value feature;
  RowKind kind;
};
} // namespace mlir::gnn

#include "GNN/IR/GNNInterfaces.h.inc"

#endif // GNN_IR_GNNINTERFACES_H
