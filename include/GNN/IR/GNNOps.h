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

/// Clones the ops of a one-block element body (apply_nodes, apply_edges)
/// with its arguments bound to `args`; returns the yielded values.
/// `lowerOp`, where given, replaces the ops that are not cloned as they are
/// (a lowering's, for those whose value depends on the element's position):
/// it returns the replacement, or null to clone.
SmallVector<Value> cloneElementBodyResults(
    OpBuilder &b, Region &body, ValueRange args,
    function_ref<Value(Operation &, IRMapping &)> lowerOp = nullptr);
/// As cloneElementBodyResults, for a body that yields one value.
Value cloneElementBody(OpBuilder &b, Region &body, ValueRange args);

/// Whether two per-row shapes agree in rank and wherever both are static.
bool areCompatibleItemShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b);

/// gnn.fused_attention's per-row shape rule: query and key [heads..., d]
/// alike, value [heads..., dv] with the query's heads. Fails, with the
/// reason in `why` when given, where they break it. The verifier and the
/// fusion pass (which must not build an op that would not verify) share it.
LogicalResult verifyAttentionInputShapes(ArrayRef<int64_t> query,
                                         ArrayRef<int64_t> key,
                                         ArrayRef<int64_t> value,
                                         std::string *why = nullptr);

/// The per-row shapes of gnn.fused_attention's results: the weighted sum
/// [heads..., dv] and the sum of weights [heads..., 1].
SmallVector<SmallVector<int64_t>, 2>
getAttentionResultItemShapes(ArrayRef<int64_t> query, ArrayRef<int64_t> value);

/// The most elements one row of a feature with a static per-row shape may
/// hold (2^24): wider rows are a verifier error. Kernels keep a row in
/// registers or on the stack, and sizes beyond this only arise from bad
/// input (a width of INT64_MAX once aborted the lowering).
constexpr int64_t kMaxStaticRowElements = int64_t(1) << 24;

/// The product of static, non-negative `sizes` (a shape's element count),
/// saturated at INT64_MAX: bad input can give shapes whose product
/// overflows.
int64_t saturatedElementCount(ArrayRef<int64_t> sizes);

/// Whether `type`, if a ranked tensor of rank 2 or more, has rows (its
/// shape after the first dimension) of at most kMaxStaticRowElements
/// elements or of dynamic width; true for every other type.
bool hasBoundedRowWidth(Type type);

/// Fails (with an error on `op`) where a ranked tensor operand or result
/// of `op` has a static per-row shape with more than kMaxStaticRowElements
/// elements.
LogicalResult verifyStaticRowWidths(Operation *op);

/// Every gnn op's operands and results have rows of bounded static width.
template <typename ConcreteType>
class BoundedRowWidths
    : public OpTrait::TraitBase<ConcreteType, BoundedRowWidths> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyStaticRowWidths(op);
  }
};

/// Simplifies a chain of elementwise functions without changing any value:
/// drops scale(1), multiplies adjacent scales, intersects adjacent
/// overlapping clamps.
SmallVector<Attribute> simplifyUnaryChain(ArrayRef<Attribute> chain);
} // namespace mlir::gnn

#define GET_OP_CLASSES
#include "GNN/IR/GNNOps.h.inc"

#endif // GNN_IR_GNNOPS_H
