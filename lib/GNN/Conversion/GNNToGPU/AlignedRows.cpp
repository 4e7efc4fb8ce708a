//===- AlignedRows.cpp - 16-byte row accesses in the GPU kernels ----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "AlignedRows.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

SmallVector<Value> loops::rowAlignmentConditions(OpBuilder &b, Location loc,
                                                 Value memref) {
  auto multipleOf = [&](Value x, int64_t n) -> Value {
    Value low = b.create<arith::AndIOp>(
        loc, x, b.create<arith::ConstantIndexOp>(loc, n - 1));
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, low,
                                   b.create<arith::ConstantIndexOp>(loc, 0));
  };
  SmallVector<Value> conditions = {
      multipleOf(b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref),
                 kAccessBytes)};
  auto metadata = b.create<memref::ExtractStridedMetadataOp>(loc, memref);
  conditions.push_back(multipleOf(metadata.getOffset(), kAccessFloats));
  for (Value stride : metadata.getStrides().drop_back())
    conditions.push_back(multipleOf(stride, kAccessFloats));
  return conditions;
}

bool loops::vectorizableRows(MemRefType type, int64_t slice) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getElementType().isF32() && type.getRank() > 0 &&
         slice % kAccessFloats == 0 &&
         succeeded(getStridesAndOffset(type, strides, offset)) &&
         strides.back() == 1;
}

Value loops::withAlignedRows(Lowering &l, Value memref) {
  SmallVector<Value> conditions = rowAlignmentConditions(l.b, l.loc, memref);
  Value aligned = conditions.front();
  for (Value c : llvm::drop_begin(conditions))
    aligned = l.b.create<arith::AndIOp>(aligned, c);
  auto type = cast<MemRefType>(memref.getType());
  return l.ifElse(
      aligned, [&] { return SmallVector<Value>{memref}; },
      [&] {
        SmallVector<Value> sizes;
        for (int64_t i = 0; i < type.getRank(); ++i)
          if (type.isDynamicDim(i))
            sizes.push_back(l.b.create<memref::DimOp>(memref, i));
        Value copy = l.b.create<memref::AllocOp>(
            MemRefType::get(type.getShape(), type.getElementType()), sizes);
        l.b.create<memref::CopyOp>(memref, copy);
        return SmallVector<Value>{l.b.create<memref::CastOp>(type, copy)};
      })[0];
}

void loops::alignRows(Lowering &l, Feature &f, int64_t slice,
                      SmallVectorImpl<Value> &aligned) {
  if (!vectorizableRows(cast<MemRefType>(f.memref.getType()), slice))
    return;
  f.memref = withAlignedRows(l, f.memref);
  aligned.push_back(f.memref);
}

void loops::markAlignedRow(vector::LoadOp load, ArrayRef<Value> aligned) {
  if (llvm::is_contained(aligned, load.getBase()))
    load->setAttr(GNNDialect::kAlignedRowsAttrName,
                  UnitAttr::get(load.getContext()));
}

SmallVector<Value> loops::loadRow(Lowering &l, Value memref, ValueRange index,
                                  int64_t size, ArrayRef<Value> aligned) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  auto x = l.b.create<vector::LoadOp>(VectorType::get({size}, element), memref,
                                      index);
  markAlignedRow(x, aligned);
  SmallVector<Value> elements;
  for (int64_t j = 0; j < size; ++j)
    elements.push_back(l.b.create<vector::ExtractOp>(x, j));
  return elements;
}
