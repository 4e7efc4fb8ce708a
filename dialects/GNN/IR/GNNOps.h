//===- GNNOps.h - gnn operations --------------------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_IR_GNNOPS_H
#define GNN_IR_GNNOPS_H

#include "GNN/IR/GNNAttrs.h"
#include "GNN/IR/GNNDialect.h"
#include "GNN/IR/GNNInterfaces.h"
#include "GNN/IR/GNNTypes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gnn {
/// The per-row shape of a feature: its shape without the leading dimension.
ArrayRef<int64_t> getItemShape(ShapedType feature);

/// Broadcasts per-row shapes from the right as NumPy does; fails if two
/// static sizes other than 1 disagree.
FailureOr<SmallVector<int64_t>> broadcastItemShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b);

/// Simplifies a chain of elementwise functions without changing any value:
/// drops scale(1), multiplies adjacent scales, intersects adjacent
/// overlapping clamps.
SmallVector<Attribute> simplifyUnaryChain(ArrayRef<Attribute> chain);
} // namespace mlir::gnn

#define GET_OP_CLASSES
#include "GNN/IR/GNNOps.h.inc"

#endif // GNN_IR_GNNOPS_H
