//===- Differentiate.h - reverse-mode differentiation -----------*- C++ -*-===//
//
// Part of gnnc. The API behind gnn-differentiate, for tools that
// differentiate one function (gnn-run --grad) or build training programs.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TRANSFORMS_DIFFERENTIATE_H
#define GNN_TRANSFORMS_DIFFERENTIATE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir::gnn {

/// Writes, beside `fn` in its module, the function `gradName` that takes
/// the same arguments and returns `fn`'s results followed by the gradient
/// of its first result (a float tensor of one element, the loss) with
/// respect to each argument in `wrt` (float tensors), in that order. A
/// gradient result is named `grad.<name>` (`gnn.name`) after its argument's
/// `gnn.name`, or `grad.arg<i>`. Only what the loss depends on is
/// differentiated; an argument it does not depend on gets zeros. Emits an
/// error naming the op and fails when an op on the way has no adjoint.
FailureOr<func::FuncOp> differentiateFunction(func::FuncOp fn,
                                              ArrayRef<unsigned> wrt,
                                              StringRef gradName);

} // namespace mlir::gnn

#endif // GNN_TRANSFORMS_DIFFERENTIATE_H
