//===- BlockAttention.cpp - gnn.fused_attention in block tiles (CPU) ------===//
//
// Part of gnnc. A run of destinations (BlockTiles.h) goes FlashAttention's
// way: per head, the scores of the run against a chunk of kTileCols sources
// are one GEMM (q rows times key rows transposed, through the runtime's
// BLAS), the online softmax masks, rescales and exponentiates the tile row
// by row in vector registers (clamped scores are bounded and need no
// maximum: one sweep per row), and the tile's weights times the chunk's
// value rows is a second GEMM accumulated into the run's output tile.
// Scores live only in a per-thread tile on the stack. Destinations outside
// runs take the per-destination kernel (chunkedAttentionRow).
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "BlockTiles.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

static constexpr double kNegInf = -std::numeric_limits<double>::infinity();

void SoftmaxRunTiles::allocate() {
  scores = tiles.stackTile(kTileCols, t);
  sums = tiles.stackTile(dv, t);
  auto rowType = MemRefType::get({kTileRows}, t);
  maxima = b.create<memref::AllocaOp>(rowType);
  weightSums = b.create<memref::AllocaOp>(rowType);
}

void SoftmaxRunTiles::compute(Value q, Value k, Value v, Value r0, Value rows,
                              Value lo, Value hi, ValueRange head) {
  auto sumType = VectorType::get({dv}, t);
  l.serial(l.idx(0), rows, [&](Value r) {
    b.create<memref::StoreOp>(l.floatConst(t, kNegInf), maxima, r);
    b.create<memref::StoreOp>(l.floatConst(t, 0.0), weightSums, r);
    b.create<vector::StoreOp>(l.floatConst(sumType, 0.0), sums,
                              ValueRange{r, l.idx(0)});
  });
  Value qRows = tiles.view(q, tiles.graphRow(r0), rows, head, d);
  tiles.forEachChunk(lo, hi, [&](Value c, Value cols) {
    Value tileScores = tiles.tileView(scores, rows, cols);
    tiles.gemm(qRows, tiles.view(k, c, cols, head, d), tileScores,
               /*transposeB=*/true, /*beta=*/0.0);
    l.serial(l.idx(0), rows, [&](Value r) {
      auto [begin, end] =
          tiles.rowColumns(b.create<arith::AddIOp>(r0, r), c, cols);
      softmaxRow(r, cols, begin, end);
    });
    tiles.gemm(tileScores, tiles.view(v, c, cols, head, dv),
               tiles.tileView(sums, rows, l.idx(dv)), /*transposeB=*/false,
               /*beta=*/1.0);
  });
}

void SoftmaxRunTiles::softmaxRow(Value r, Value cols, Value begin, Value end) {
  auto laneType = VectorType::get({kTileLanes}, t);
  // Whole vectors: columns past `cols` are masked too.
  Value padded = tiles.paddedColumns(cols);
  Value step = l.idx(kTileLanes);
  auto at = [&](Value j) { return SmallVector<Value, 2>{r, j}; };
  Value zeros = l.floatConst(laneType, 0.0);
  // Stores the tile row's weights `weight(j)` and returns their lane sums.
  auto storeWeights = [&](function_ref<Value(Value)> weight) {
    return l.forLoop(
        l.idx(0), padded, ValueRange{zeros},
        [&](Value j, ValueRange s) {
          Value w = weight(j);
          b.create<vector::StoreOp>(w, scores, at(j));
          return SmallVector<Value>{b.create<arith::AddFOp>(s[0], w)};
        },
        step)[0];
  };

  Value z = tiles.load(weightSums, r), rowSum;
  if (!online) {
    // Bounded scores: weights exp(score) unshifted, in one sweep.
    rowSum = storeWeights([&](Value j) -> Value {
      Value raw = b.create<vector::LoadOp>(laneType, scores, at(j));
      return b.create<arith::SelectOp>(tiles.laneMask(begin, end, j),
                                       b.create<math::ExpOp>(score(raw)),
                                       zeros);
    });
  } else {
    // Scores: scaled, -inf off the row's edges; then weights
    // exp(score - shift), shift the running maximum (0 while the row has
    // seen no edge), and the row's sums so far rescaled to that shift.
    Value rowMax = l.forLoop(
        l.idx(0), padded, ValueRange{l.floatConst(laneType, kNegInf)},
        [&](Value j, ValueRange s) {
          Value raw = b.create<vector::LoadOp>(laneType, scores, at(j));
          Value scored = b.create<arith::SelectOp>(
              tiles.laneMask(begin, end, j), score(raw),
              l.floatConst(laneType, kNegInf));
          b.create<vector::StoreOp>(scored, scores, at(j));
          return SmallVector<Value>{b.create<arith::MaximumFOp>(s[0], scored)};
        },
        step)[0];
    Value oldMax = tiles.load(maxima, r);
    Value newMax = b.create<arith::MaximumFOp>(
        oldMax,
        b.create<vector::ReductionOp>(vector::CombiningKind::MAXIMUMF, rowMax));
    Value none = b.create<arith::CmpFOp>(arith::CmpFPredicate::OEQ, newMax,
                                         l.floatConst(t, kNegInf));
    Value shift = b.create<arith::SelectOp>(none, l.floatConst(t, 0.0), newMax);
    b.create<memref::StoreOp>(newMax, maxima, r);
    Value shiftLanes = b.create<vector::BroadcastOp>(laneType, shift);
    rowSum = storeWeights([&](Value j) -> Value {
      Value scored = b.create<vector::LoadOp>(laneType, scores, at(j));
      return b.create<math::ExpOp>(b.create<arith::SubFOp>(scored, shiftLanes));
    });
    Value rescale =
        b.create<math::ExpOp>(b.create<arith::SubFOp>(oldMax, shift));
    z = b.create<arith::MulFOp>(z, rescale);
    auto sumType = VectorType::get({dv}, t);
    Value acc =
        b.create<vector::LoadOp>(sumType, sums, ValueRange{r, l.idx(0)});
    b.create<vector::StoreOp>(
        b.create<arith::MulFOp>(
            acc, b.create<vector::BroadcastOp>(sumType, rescale)),
        sums, ValueRange{r, l.idx(0)});
  }
  z = b.create<arith::AddFOp>(
      z, b.create<vector::ReductionOp>(vector::CombiningKind::ADD, rowSum));
  b.create<memref::StoreOp>(z, weightSums, r);
}

bool loops::blockTileable(const AttentionPlan &p) {
  if (p.mask || !p.elem.isF32())
    return false;
  ArrayRef<int64_t> q = getItemShape(p.q.type), k = getItemShape(p.k.type),
                    v = getItemShape(p.val.type);
  return k == q && v.size() == q.size() && v.drop_back() == q.drop_back() &&
         !ShapedType::isDynamic(q.back()) && !ShapedType::isDynamic(v.back());
}

void loops::blockTiledAttention(Lowering &l, const AttentionPlan &p, int64_t d,
                                int64_t dv) {
  BlockTiles tiles(l, p.elem);
  SoftmaxRunTiles softmax(
      tiles, l, p.elem, d, dv,
      [&](Value raw) { return attentionScore(l, p, raw); }, p.online);
  auto sumType = VectorType::get({dv}, p.elem);
  tiles.build(
      p.g, p.heads, [&] { softmax.allocate(); },
      [&](Value r0, Value rows, Value lo, Value hi, ValueRange head) {
        softmax.compute(p.q.memref, p.k.memref, p.val.memref, r0, rows, lo, hi,
                        head);
        l.serial(l.idx(0), rows, [&](Value r) {
          Value v = tiles.graphRow(l.b.create<arith::AddIOp>(r0, r));
          Value acc = l.b.create<vector::LoadOp>(sumType, softmax.sums,
                                                 ValueRange{r, l.idx(0)});
          storeVectorResult(l, p, acc, tiles.load(softmax.weightSums, r),
                            tiles.load(softmax.maxima, r),
                            rowStart(l, v, head));
        });
      },
      [&](Value v, ValueRange head) {
        chunkedAttentionRow(l, p, d, dv, v, head);
      });
}
