//===- Dropout.cpp - lower gnn.dropout ------------------------------------===//
//
// Part of gnnc. Element e's mask bit comes from word e mod 4 of
// Philox-4x32-10 of (seed, offset + e / 4), e its row-major index, as the op
// defines it. On the CPU, rows that start at a multiple of 4 take vectors of
// kVectorLanes counters, whose four words cover 4 * kVectorLanes elements
// in order after a transpose; other rows, vectors of elements, each lane
// picking its word. In GPU kernels an element per thread.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <array>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

/// The i32 constant `v`, or a vector of it where `type` is a vector.
static Value wordConstant(Lowering &l, Type type, uint32_t v) {
  IntegerAttr word = l.b.getI32IntegerAttr(int32_t(v));
  if (auto vector = dyn_cast<VectorType>(type))
    return l.b.create<arith::ConstantOp>(
        DenseElementsAttr::get(vector, ArrayRef<Attribute>(word)));
  return l.b.create<arith::ConstantOp>(word);
}

/// The four words of Philox-4x32-10 (Salmon et al., SC'11) for the 64-bit
/// counter and key given as (low, high) i32 pairs (or vectors of them, one
/// counter per lane), with the upper counter words 0.
static std::array<Value, 4> philox(Lowering &l, Value c0, Value c1, Value k0,
                                   Value k1) {
  ImplicitLocOpBuilder &b = l.b;
  auto constant = [&](uint32_t v) { return wordConstant(l, c0.getType(), v); };
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
  return {c0, c1, c2, c3};
}

/// Word `which` (0 to 3, i64; or a vector of them) of `words`.
static Value pickWord(Lowering &l, const std::array<Value, 4> &words,
                      Value which) {
  Type i32 = l.b.getI32Type();
  if (auto vector = dyn_cast<VectorType>(which.getType()))
    i32 = vector.clone(i32);
  which = l.b.create<arith::TruncIOp>(i32, which);
  Value picked = words[3];
  for (int w = 2; w >= 0; --w)
    picked = l.b.create<arith::SelectOp>(
        l.b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, which,
                                  wordConstant(l, i32, w)),
        words[w], picked);
  return picked;
}

/// The i64 constant `v`, or a vector of it where `like` is a vector.
static Value indexConstant(Lowering &l, Type like, int64_t v) {
  Value c = l.b.create<arith::ConstantIntOp>(v, 64);
  if (auto vector = dyn_cast<VectorType>(like))
    c = l.b.create<vector::BroadcastOp>(vector, c);
  return c;
}

/// (low, high) i32 words of an i64 (or of each lane of a vector of them).
static std::pair<Value, Value> words(Lowering &l, Value v) {
  Type i32 = l.b.getI32Type();
  if (auto vector = dyn_cast<VectorType>(v.getType()))
    i32 = vector.clone(i32);
  Value shift = indexConstant(l, v.getType(), 32);
  return {
      l.b.create<arith::TruncIOp>(i32, v),
      l.b.create<arith::TruncIOp>(i32, l.b.create<arith::ShRUIOp>(v, shift))};
}

/// Element `e`'s Philox counter, offset + e / 4, and the word of it that
/// it takes, e mod 4 (`e` an i64 or a vector of them; `offset` an i64).
static std::pair<Value, Value> counterAndWord(Lowering &l, Value offset,
                                              Value e) {
  Type type = e.getType();
  if (isa<VectorType>(type))
    offset = l.b.create<vector::BroadcastOp>(type, offset);
  return {l.b.create<arith::AddIOp>(
              offset, l.b.create<arith::ShRUIOp>(e, indexConstant(l, type, 2))),
          l.b.create<arith::AndIOp>(e, indexConstant(l, type, 3))};
}

/// An element is kept iff the top 24 bits of its word reach this,
/// ceil(rate * 2^24).
static int64_t keepThreshold(double rate) {
  return int64_t(std::ceil(rate * double(1 << 24)));
}

/// Element `flat` (an index) of dropout with key words (k0, k1): `x`
/// scaled, or zero where it is dropped.
static Value dropElement(Lowering &l, Value x, Value k0, Value k1, Value offset,
                         Value flat, double rate) {
  ImplicitLocOpBuilder &b = l.b;
  auto [counter, word] = counterAndWord(
      l, offset, b.create<arith::IndexCastOp>(b.getI64Type(), flat));
  auto [c0, c1] = words(l, counter);
  Value bits = pickWord(l, philox(l, c0, c1, k0, k1), word);
  Value top =
      b.create<arith::ShRUIOp>(bits, b.create<arith::ConstantIntOp>(8, 32));
  Value keep = b.create<arith::CmpIOp>(
      arith::CmpIPredicate::uge, top,
      b.create<arith::ConstantIntOp>(keepThreshold(rate), 32));
  Type elem = x.getType();
  Value scaled = b.create<arith::MulFOp>(
      x, b.create<arith::ConstantOp>(b.getFloatAttr(elem, 1.0 / (1.0 - rate))));
  return b.create<arith::SelectOp>(
      keep, scaled, b.create<arith::ConstantOp>(b.getFloatAttr(elem, 0.0)));
}

Value loops::lowerDropoutElement(Lowering &l, DropoutElementOp op, Value x,
                                 Value flat) {
  auto [k0, k1] = words(l, op.getSeed());
  return dropElement(l, x, k0, k1, op.getOffset(), flat,
                     op.getRate().convertToDouble());
}

LogicalResult loops::lowerDropout(DropoutOp op, const LoopTarget &target,
                                  RewriterBase &rewriter) {
  bool vectors = target.vectorLoops();
  Lowering l(op, rewriter);
  Feature in = l.feature(op.getInput());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  SmallVector<Value> extents =
      l.itemExtents(getItemShape(type), SmallVector<Feature>{in});
  Value rows = l.dim(in.memref, 0);
  Value out = l.alloc(type, rows, extents);
  double rate = op.getRate().convertToDouble();
  auto [k0, k1] = words(l, op.getSeed());
  if (vectors && !extents.empty()) {
    Type elem = type.getElementType();
    Value scale = l.b.create<arith::ConstantOp>(
        l.b.getFloatAttr(elem, 1.0 / (1.0 - rate)));
    Value zero = l.b.create<arith::ConstantOp>(l.b.getFloatAttr(elem, 0.0));
    // kVectorLanes elements of the last dim at a time: Philox on vectors of
    // counters, the row's end masked.
    ImplicitLocOpBuilder &b = l.b;
    auto lanes = [&](Type t) { return VectorType::get({kVectorLanes}, t); };
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    SmallVector<int64_t> laneIds(kVectorLanes);
    std::iota(laneIds.begin(), laneIds.end(), 0);
    Value steps = b.create<arith::ConstantOp>(
        DenseElementsAttr::get(lanes(i64), ArrayRef(laneIds)));
    Value vk0 = b.create<vector::BroadcastOp>(lanes(i32), k0);
    Value vk1 = b.create<vector::BroadcastOp>(lanes(i32), k1);
    Value vThreshold = b.create<vector::BroadcastOp>(
        lanes(i32), b.create<arith::ConstantIntOp>(keepThreshold(rate), 32));
    Value vShift = b.create<vector::BroadcastOp>(
        lanes(i32), b.create<arith::ConstantIntOp>(8, 32));
    Value vScale = b.create<vector::BroadcastOp>(lanes(elem), scale);
    Value vZero = b.create<vector::BroadcastOp>(lanes(elem), zero);
    Value last = extents.back();
    auto keepMask = [&](Value x) {
      return b.create<arith::CmpIOp>(arith::CmpIPredicate::uge,
                                     b.create<arith::ShRUIOp>(x, vShift),
                                     vThreshold);
    };
    l.parallel(rows, [&](Value r) {
      l.loopNest(ArrayRef(extents).drop_back(), [&](ValueRange outer) {
        SmallVector<Value> at = {r};
        llvm::append_range(at, outer);
        // Row-major index of the row's first element in the whole tensor.
        SmallVector<Value> first(outer);
        first.push_back(l.idx(0));
        Value start =
            b.create<arith::IndexCastOp>(i64, l.flatIndex(r, first, extents));
        // Kept lanes of the row's elements [j, j + kVectorLanes), scaled,
        // the row's end masked.
        auto apply = [&](Value j, Value keep) {
          Value mask = b.create<vector::CreateMaskOp>(
              lanes(b.getI1Type()),
              ValueRange{b.create<arith::MinSIOp>(
                  b.create<arith::SubIOp>(last, j), l.idx(kVectorLanes))});
          SmallVector<Value> index = at;
          index.push_back(j);
          Value v = b.create<vector::MaskedLoadOp>(lanes(elem), in.memref,
                                                   index, mask, vZero);
          Value kept = b.create<arith::SelectOp>(
              keep, b.create<arith::MulFOp>(v, vScale), vZero);
          b.create<vector::MaskedStoreOp>(out, index, mask, kept);
        };
        Value aligned = b.create<arith::CmpIOp>(
            arith::CmpIPredicate::eq,
            counterAndWord(l, op.getOffset(), start).second,
            indexConstant(l, i64, 0));
        auto branch = b.create<scf::IfOp>(aligned, /*withElse=*/true);
        OpBuilder::InsertionGuard guard(b);
        // A row starting at a multiple of 4: kVectorLanes counters give
        // the words of 4 * kVectorLanes elements, lane i's word w for
        // element 4 i + w.
        b.setInsertionPointToStart(&branch.getThenRegion().front());
        l.serial(
            l.idx(0), last,
            [&](Value j) {
              Value first =
                  counterAndWord(
                      l, op.getOffset(),
                      b.create<arith::AddIOp>(
                          start, b.create<arith::IndexCastOp>(i64, j)))
                      .first;
              Value counters = b.create<arith::AddIOp>(
                  b.create<vector::BroadcastOp>(lanes(i64), first), steps);
              auto [c0, c1] = words(l, counters);
              std::array<Value, 4> x = philox(l, c0, c1, vk0, vk1);
              // Interleave: elements 8k .. 8k + 7 are lanes 2k and 2k + 1
              // of the four words.
              auto shuffle = [&](Value a, Value c, ArrayRef<int64_t> mask) {
                return b.create<vector::ShuffleOp>(a, c, mask);
              };
              Value lo01 = shuffle(x[0], x[1], {0, 8, 1, 9, 2, 10, 3, 11});
              Value lo23 = shuffle(x[2], x[3], {0, 8, 1, 9, 2, 10, 3, 11});
              Value hi01 = shuffle(x[0], x[1], {4, 12, 5, 13, 6, 14, 7, 15});
              Value hi23 = shuffle(x[2], x[3], {4, 12, 5, 13, 6, 14, 7, 15});
              Value elements[4] = {
                  shuffle(lo01, lo23, {0, 1, 8, 9, 2, 3, 10, 11}),
                  shuffle(lo01, lo23, {4, 5, 12, 13, 6, 7, 14, 15}),
                  shuffle(hi01, hi23, {0, 1, 8, 9, 2, 3, 10, 11}),
                  shuffle(hi01, hi23, {4, 5, 12, 13, 6, 7, 14, 15})};
              for (int k = 0; k < 4; ++k) {
                Value col = b.create<arith::AddIOp>(j, l.idx(k * kVectorLanes));
                l.guarded(b.create<arith::CmpIOp>(arith::CmpIPredicate::ult,
                                                  col, last),
                          [&] { apply(col, keepMask(elements[k])); });
              }
            },
            4 * kVectorLanes);
        // Other rows: a counter per lane, each lane picking its word.
        b.setInsertionPointToStart(&branch.getElseRegion().front());
        l.serial(
            l.idx(0), last,
            [&](Value j) {
              Value flat = b.create<arith::AddIOp>(
                  b.create<vector::BroadcastOp>(
                      lanes(i64),
                      b.create<arith::AddIOp>(
                          start, b.create<arith::IndexCastOp>(i64, j))),
                  steps);
              auto [counters, word] = counterAndWord(l, op.getOffset(), flat);
              auto [c0, c1] = words(l, counters);
              Value x = pickWord(l, philox(l, c0, c1, vk0, vk1), word);
              apply(j, keepMask(x));
            },
            kVectorLanes);
      });
    });
    return l.replaceWithBuffers(op, out);
  }
  l.parallel(rows, [&](Value r) {
    l.loopNest(extents, [&](ValueRange item) {
      Value kept = dropElement(l, l.load(in, r, item), k0, k1, op.getOffset(),
                               l.flatIndex(r, item, extents), rate);
      SmallVector<Value> index = {r};
      llvm::append_range(index, item);
      l.b.create<memref::StoreOp>(kept, out, index);
    });
  });
  return l.replaceWithBuffers(op, out);
}
