//===- CopyStridedViews.cpp - row-major copies of slices within rows ------===//
//
// Part of gnnc. The lowerings take each feature as a buffer whose items are
// row-major (static strides after the first dim). A slice within rows has
// other strides: bufferization would have to copy it into such a layout,
// and its copy into a layout with a run-time offset builds an allocation it
// cannot express. Such a slice, where a lowered op takes its buffer, is
// copied into a buffer of its own first (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_COPYSTRIDEDVIEWSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// Whether `slice` of a source with row-major items has row-major items
/// itself: it keeps dim 0, and each kept item dim steps by the product of
/// the kept item sizes after it (all static).
bool keepsRowMajorItems(tensor::ExtractSliceOp slice) {
  RankedTensorType source = slice.getSourceType();
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  if (dropped.test(0))
    return false;
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  SmallVector<OpFoldResult> steps = slice.getMixedStrides();
  int64_t sourceStride = 1, expected = 1;
  for (int64_t d = source.getRank() - 1; d >= 1; --d) {
    if (source.isDynamicDim(d))
      return false;
    if (!dropped.test(d)) {
      std::optional<int64_t> size = getConstantIntValue(sizes[d]);
      std::optional<int64_t> step = getConstantIntValue(steps[d]);
      if (!size || !step || sourceStride * *step != expected)
        return false;
      expected *= *size;
    }
    sourceStride *= source.getDimSize(d);
  }
  return true;
}

/// Whether `tensor` may be a view whose items are not row-major: a slice
/// within rows, possibly through casts and reshapes.
bool mayHaveStridedItems(Value tensor) {
  for (Operation *def = tensor.getDefiningOp(); def;
       def = def->getOperand(0).getDefiningOp()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      if (!keepsRowMajorItems(slice))
        return true;
      continue;
    }
    if (!isa<tensor::CastOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
            def))
      return false;
  }
  return false;
}

/// Whether `type` has row-major items (static strides after the first dim),
/// which a strided view's buffer may not be cast to.
bool wantsRowMajorItems(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return true;
  return llvm::any_of(ArrayRef(strides).drop_front(),
                      [](int64_t s) { return !ShapedType::isDynamic(s); });
}

struct CopyStridedViewsPass
    : public gnn::impl::CopyStridedViewsPassBase<CopyStridedViewsPass> {
  void runOnOperation() override {
    // One copy per tensor, however many ops take its buffer.
    llvm::MapVector<Value, SmallVector<bufferization::ToMemrefOp>> views;
    getOperation()->walk([&](bufferization::ToMemrefOp op) {
      auto type = dyn_cast<MemRefType>(op.getType());
      if (type && type.getRank() > 1 && wantsRowMajorItems(type) &&
          mayHaveStridedItems(op.getTensor()))
        views[op.getTensor()].push_back(op);
    });
    for (auto &[tensor, users] : views) {
      OpBuilder b(tensor.getContext());
      b.setInsertionPointAfterValue(tensor);
      Value copy = b.create<bufferization::AllocTensorOp>(
          tensor.getLoc(), cast<RankedTensorType>(tensor.getType()),
          ValueRange(), tensor);
      for (bufferization::ToMemrefOp op : users)
        op.getTensorMutable().assign(copy);
    }
  }
};
} // namespace
