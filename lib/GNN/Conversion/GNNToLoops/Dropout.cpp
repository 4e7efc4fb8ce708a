//===- Dropout.cpp - lower gnn.dropout ------------------------------------===//
//
// Part of gnnc. Each element's mask bit is the first word of Philox-4x32-10
// of (seed, offset + the element's row-major index), as the op defines it:
// on the CPU computed for vectors of kVectorLanes counters at once (the
// row's end masked), in GPU kernels an element per thread.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

/// The first word of Philox-4x32-10 (Salmon et al., SC'11) for the 64-bit
/// counter and key given as (low, high) i32 pairs (or vectors of them, one
/// counter per lane), with the upper counter words 0.
static Value philoxFirstWord(Lowering &l, Value c0, Value c1, Value k0,
                             Value k1) {
  OpBuilder &b = l.b;
  Type type = c0.getType();
  auto constant = [&](uint32_t v) -> Value {
    IntegerAttr word = b.getI32IntegerAttr(int32_t(v));
    if (auto vector = dyn_cast<VectorType>(type))
      return b.create<arith::ConstantOp>(
          l.loc, DenseElementsAttr::get(vector, ArrayRef<Attribute>(word)));
    return b.create<arith::ConstantOp>(l.loc, word);
  };
  Value m0 = constant(0xD2511F53u), m1 = constant(0xCD9E8D57u);
  Value w0 = constant(0x9E3779B9u), w1 = constant(0xBB67AE85u);
  Value c2 = constant(0), c3 = constant(0);
  for (int round = 0; round < 10; ++round) {
    auto p0 = b.create<arith::MulUIExtendedOp>(l.loc, m0, c0);
    auto p1 = b.create<arith::MulUIExtendedOp>(l.loc, m1, c2);
    Value n0 = b.create<arith::XOrIOp>(
        l.loc, b.create<arith::XOrIOp>(l.loc, p1.getHigh(), c1), k0);
    Value n2 = b.create<arith::XOrIOp>(
        l.loc, b.create<arith::XOrIOp>(l.loc, p0.getHigh(), c3), k1);
    c0 = n0;
    c1 = p1.getLow();
    c2 = n2;
    c3 = p0.getLow();
    k0 = b.create<arith::AddIOp>(l.loc, k0, w0);
    k1 = b.create<arith::AddIOp>(l.loc, k1, w1);
  }
  return c0;
}

/// (low, high) i32 words of an i64 (or of each lane of a vector of them).
static std::pair<Value, Value> words(Lowering &l, Value v) {
  Type i32 = l.b.getI32Type();
  Value shift = l.b.create<arith::ConstantIntOp>(l.loc, 32, 64);
  if (auto vector = dyn_cast<VectorType>(v.getType())) {
    i32 = vector.clone(i32);
    shift = l.b.create<vector::BroadcastOp>(l.loc, vector, shift);
  }
  return {l.b.create<arith::TruncIOp>(l.loc, i32, v),
          l.b.create<arith::TruncIOp>(
              l.loc, i32, l.b.create<arith::ShRUIOp>(l.loc, v, shift))};
}

LogicalResult loops::lowerDropout(DropoutOp op, bool vectors,
                                  RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  Feature in = l.feature(op.getInput());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  SmallVector<Value> extents =
      l.itemExtents(getItemShape(type), SmallVector<Feature>{in});
  Value rows = l.dim(in.memref, 0);
  Value out = l.alloc(type, rows, extents);
  double rate = op.getRate().convertToDouble();
  // Kept iff the top 24 bits of the word reach ceil(rate * 2^24).
  int64_t threshold = int64_t(std::ceil(rate * double(1 << 24)));
  auto [k0, k1] = words(l, op.getSeed());
  Type elem = type.getElementType();
  Value scale = l.b.create<arith::ConstantOp>(
      l.loc, l.b.getFloatAttr(elem, 1.0 / (1.0 - rate)));
  Value zero =
      l.b.create<arith::ConstantOp>(l.loc, l.b.getFloatAttr(elem, 0.0));
  if (vectors && !extents.empty()) {
    // kVectorLanes elements of the last dim at a time: Philox on vectors of
    // counters, the row's end masked.
    OpBuilder &b = l.b;
    Location loc = l.loc;
    auto lanes = [&](Type t) { return VectorType::get({kVectorLanes}, t); };
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    SmallVector<int64_t> laneIds(kVectorLanes);
    std::iota(laneIds.begin(), laneIds.end(), 0);
    Value steps = b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(lanes(i64), ArrayRef(laneIds)));
    Value vk0 = b.create<vector::BroadcastOp>(loc, lanes(i32), k0);
    Value vk1 = b.create<vector::BroadcastOp>(loc, lanes(i32), k1);
    Value vThreshold = b.create<vector::BroadcastOp>(
        loc, lanes(i32), b.create<arith::ConstantIntOp>(loc, threshold, 32));
    Value vShift = b.create<vector::BroadcastOp>(
        loc, lanes(i32), b.create<arith::ConstantIntOp>(loc, 8, 32));
    Value vScale = b.create<vector::BroadcastOp>(loc, lanes(elem), scale);
    Value vZero = b.create<vector::BroadcastOp>(loc, lanes(elem), zero);
    Value last = extents.back();
    l.parallel(rows, [&](Value r) {
      l.loopNest(ArrayRef(extents).drop_back(), [&](ValueRange outer) {
        // Row-major index of the row's first element in the whole tensor.
        Value rowStart = r;
        for (auto [i, extent] : llvm::zip(outer, extents))
          rowStart = b.create<arith::AddIOp>(
              loc, b.create<arith::MulIOp>(loc, rowStart, extent), i);
        rowStart = b.create<arith::MulIOp>(loc, rowStart, last);
        l.serial(
            l.idx(0), last,
            [&](Value j) {
              Value flat = b.create<arith::AddIOp>(loc, rowStart, j);
              Value base = b.create<arith::AddIOp>(
                  loc, op.getOffset(),
                  b.create<arith::IndexCastOp>(loc, i64, flat));
              Value counters = b.create<arith::AddIOp>(
                  loc, b.create<vector::BroadcastOp>(loc, lanes(i64), base),
                  steps);
              auto [c0, c1] = words(l, counters);
              Value x = philoxFirstWord(l, c0, c1, vk0, vk1);
              Value keep = b.create<arith::CmpIOp>(
                  loc, arith::CmpIPredicate::uge,
                  b.create<arith::ShRUIOp>(loc, x, vShift), vThreshold);
              Value mask = b.create<vector::CreateMaskOp>(
                  loc, lanes(b.getI1Type()),
                  ValueRange{b.create<arith::MinSIOp>(
                      loc, b.create<arith::SubIOp>(loc, last, j),
                      l.idx(kVectorLanes))});
              SmallVector<Value> at = {r};
              llvm::append_range(at, outer);
              at.push_back(j);
              Value v = b.create<vector::MaskedLoadOp>(
                  loc, lanes(elem), in.memref, at, mask, vZero);
              Value kept = b.create<arith::SelectOp>(
                  loc, keep, b.create<arith::MulFOp>(loc, v, vScale), vZero);
              b.create<vector::MaskedStoreOp>(loc, out, at, mask, kept);
            },
            kVectorLanes);
      });
    });
    return l.replaceWithBuffers(op, out);
  }
  l.parallel(rows, [&](Value r) {
    l.loopNest(extents, [&](ValueRange item) {
      // The element's row-major index in the whole tensor.
      Value flat = r;
      for (auto [i, extent] : llvm::zip_equal(item, extents))
        flat = l.b.create<arith::AddIOp>(
            l.loc, l.b.create<arith::MulIOp>(l.loc, flat, extent), i);
      Value counter = l.b.create<arith::AddIOp>(
          l.loc, op.getOffset(),
          l.b.create<arith::IndexCastOp>(l.loc, l.b.getI64Type(), flat));
      auto [c0, c1] = words(l, counter);
      Value x = philoxFirstWord(l, c0, c1, k0, k1);
      Value top = l.b.create<arith::ShRUIOp>(
          l.loc, x, l.b.create<arith::ConstantIntOp>(l.loc, 8, 32));
      Value keep = l.b.create<arith::CmpIOp>(
          l.loc, arith::CmpIPredicate::uge, top,
          l.b.create<arith::ConstantIntOp>(l.loc, threshold, 32));
      Value v = l.load(in, r, item);
      Value scaled = l.b.create<arith::MulFOp>(l.loc, v, scale);
      SmallVector<Value> index = {r};
      llvm::append_range(index, item);
      l.b.create<memref::StoreOp>(
          l.loc, l.b.create<arith::SelectOp>(l.loc, keep, scaled, zero), out,
          index);
    });
  });
  return l.replaceWithBuffers(op, out);
}
