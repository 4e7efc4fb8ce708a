//===- FunctionEquivalence.h - functions that compute the same --*- C++ -*-===//
//
// Part of gnnc. Two functions compute the same when they have the same type,
// argument and result attributes, and bodies equal up to the names of
// values (locations ignored). Kernel outlining and the model builders use
// this to generate each distinct function once.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_IR_FUNCTIONEQUIVALENCE_H
#define GNN_IR_FUNCTIONEQUIVALENCE_H

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::gnn {

bool areEquivalentFunctions(FunctionOpInterface a, FunctionOpInterface b);

} // namespace mlir::gnn

#endif // GNN_IR_FUNCTIONEQUIVALENCE_H
