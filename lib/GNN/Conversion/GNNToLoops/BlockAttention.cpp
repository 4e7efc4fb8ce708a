//===- BlockAttention.cpp - gnn.fused_attention in block tiles (CPU) ------===//
//
// Part of gnnc. In the blocks of a batch (complete, causal, bipartite), the
// destinations of one block read one range of sources. A run of such
// destinations goes FlashAttention's way: per head, the scores of up to
// kRows destinations against a chunk of kCols sources are one GEMM (q rows
// times key rows transposed, through the runtime's BLAS), the online softmax
// masks, rescales and exponentiates the tile row by row in vector
// registers, and the tile's weights times the chunk's value rows is a
// second GEMM accumulated into the run's output tile. Scores live only in a
// per-thread tile on the stack.
//
// Runs are found at run time, whatever the graph's declared structure: a
// destination joins a run only if its CSR row lists one range lo, lo + 1,
// ... in order, with the run's lo; rows may end at different sources
// (causal blocks), and columns past a row's end are masked. Destinations
// without such a row, without in-edges or in short or sparse runs take the
// per-destination kernel (chunkedAttentionRow), so results are exact for
// any graph, and a general graph pays one pass over its CSR sources.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
/// Destinations per tile (the parallel unit) and at most per run.
constexpr int64_t kRows = 64;
/// Sources per chunk: one score GEMM and one value GEMM each.
constexpr int64_t kCols = 128;
/// Shorter runs take the per-destination kernel (GEMM calls would not pay).
constexpr int64_t kMinRows = 16;
/// Rows outside runs go in groups of this many, heads outside.
constexpr int64_t kRowGroup = 32;
/// Vector width of the softmax loops over a score row.
constexpr int64_t kLanes = kVectorLanes;

class BlockKernel {
public:
  BlockKernel(Lowering &l, const AttentionPlan &p, int64_t d, int64_t dv)
      : l(l), b(l.b), loc(l.loc), p(p), d(d), dv(dv), t(p.elem) {
    MLIRContext *ctx = b.getContext();
    matrixType =
        MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, t,
                        StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                                               {ShapedType::kDynamic, 1}));
    auto module =
        b.getInsertionBlock()->getParent()->getParentOfType<ModuleOp>();
    declareFunction(module, abi::kGemm,
                    {matrixType, matrixType, matrixType, b.getI32Type(), t, t},
                    {}, /*cInterface=*/true);
  }

  void build() {
    Value tiles = b.create<arith::CeilDivUIOp>(loc, p.g.numDst, l.idx(kRows));
    l.parallel(tiles, [&](Value tile) {
      // Stack buffers are released after each tile.
      auto scope = b.create<memref::AllocaScopeOp>(loc, TypeRange{});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&scope.getBodyRegion().emplaceBlock());
      buildTile(tile);
      b.create<memref::AllocaScopeReturnOp>(loc);
    });
  }

private:
  void buildTile(Value tile) {
    v0 = b.create<arith::MulIOp>(loc, tile, l.idx(kRows));
    Value n = b.create<arith::MinUIOp>(
        loc, l.idx(kRows), b.create<arith::SubIOp>(loc, p.g.numDst, v0));
    auto indexType = MemRefType::get({kRows}, b.getIndexType());
    rowLo = b.create<memref::AllocaOp>(loc, indexType);
    rowHi = b.create<memref::AllocaOp>(loc, indexType);
    inRun = b.create<memref::AllocaOp>(loc,
                                       MemRefType::get({kRows}, b.getI1Type()));
    scores =
        b.create<memref::AllocaOp>(loc, MemRefType::get({kRows, kCols}, t));
    sums = b.create<memref::AllocaOp>(loc, MemRefType::get({kRows, dv}, t));
    maxima = b.create<memref::AllocaOp>(loc, MemRefType::get({kRows}, t));
    weightSums = b.create<memref::AllocaOp>(loc, MemRefType::get({kRows}, t));

    // Each row's source range [lo, hi), or [0, 0) if it has none.
    l.serial(l.idx(0), n, [&](Value r) {
      Value v = b.create<arith::AddIOp>(loc, v0, r);
      auto [first, last] = l.inSlots(p.g, v);
      Value degree = b.create<arith::SubIOp>(loc, last, first);
      auto [lo, contiguous] = sourceRange(l, p.g, first, degree);
      Value ranged = b.create<arith::AndIOp>(
          loc, contiguous, cmp(arith::CmpIPredicate::ugt, degree, l.idx(0)));
      b.create<memref::StoreOp>(
          loc, b.create<arith::SelectOp>(loc, ranged, lo, l.idx(0)), rowLo, r);
      b.create<memref::StoreOp>(
          loc,
          b.create<arith::SelectOp>(
              loc, ranged, b.create<arith::AddIOp>(loc, lo, degree), l.idx(0)),
          rowHi, r);
      b.create<memref::StoreOp>(loc, b.create<arith::ConstantIntOp>(loc, 0, 1),
                                inRun, r);
    });

    // Runs of rows with the same start (rows without a range form runs of
    // their own).
    l.whileLoop(
        ValueRange{l.idx(0)},
        [&](ValueRange s) { return cmp(arith::CmpIPredicate::ult, s[0], n); },
        [&](ValueRange s) {
          Value r0 = s[0];
          Value lo = load(rowLo, r0);
          Value ranged = hasRange(r0);
          Value r1 = l.whileLoop(
              ValueRange{b.create<arith::AddIOp>(loc, r0, l.idx(1))},
              [&](ValueRange s) {
                Value r = s[0];
                Value inTile = cmp(arith::CmpIPredicate::ult, r, n);
                // Read a row inside the tile even when r = n.
                Value safe = b.create<arith::SelectOp>(loc, inTile, r, r0);
                Value same = b.create<arith::AndIOp>(
                    loc, cmp(arith::CmpIPredicate::eq, load(rowLo, safe), lo),
                    cmp(arith::CmpIPredicate::eq, hasRange(safe), ranged));
                return b.create<arith::AndIOp>(loc, inTile, same).getResult();
              },
              [&](ValueRange s) {
                return SmallVector<Value>{
                    b.create<arith::AddIOp>(loc, s[0], l.idx(1))};
              })[0];
          buildRun(r0, r1, lo, ranged);
          return SmallVector<Value>{r1};
        });

    // The other rows one by one, in groups of kRowGroup with the heads
    // outside (as chunkedAttention): one head's key and value rows of a
    // group stay in cache.
    l.forLoop(
        l.idx(0), n, ValueRange{},
        [&](Value g0, ValueRange) {
          Value g1 = b.create<arith::MinUIOp>(
              loc, n, b.create<arith::AddIOp>(loc, g0, l.idx(kRowGroup)));
          l.loopNest(p.heads, [&](ValueRange head) {
            l.serial(g0, g1, [&](Value r) {
              l.unless(load(inRun, r), [&] {
                chunkedAttentionRow(l, p, d, dv,
                                    b.create<arith::AddIOp>(loc, v0, r), head);
              });
            });
          });
          return SmallVector<Value>{};
        },
        l.idx(kRowGroup));
  }

  /// Rows [r0, r1) of the tile, which share their first source `lo` (and
  /// all have a range if `ranged`): computed here and marked `inRun` if
  /// they are enough, and dense enough, for tiles.
  void buildRun(Value r0, Value r1, Value lo, Value ranged) {
    Value rows = b.create<arith::SubIOp>(loc, r1, r0);
    // The union of the rows' ranges is [lo, hi); it pays to compute the
    // whole rows x (hi - lo) score rectangle if at least half of it are
    // edges.
    ValueRange extent =
        l.forLoop(r0, r1, ValueRange{lo, l.idx(0)}, [&](Value r, ValueRange s) {
          Value rowEnd = load(rowHi, r);
          return SmallVector<Value>{
              b.create<arith::MaxUIOp>(loc, s[0], rowEnd),
              b.create<arith::AddIOp>(
                  loc, s[1], b.create<arith::SubIOp>(loc, rowEnd, lo))};
        });
    Value hi = extent[0], edges = extent[1];
    Value rectangle = b.create<arith::MulIOp>(
        loc, rows, b.create<arith::SubIOp>(loc, hi, lo));
    Value dense = cmp(arith::CmpIPredicate::uge,
                      b.create<arith::MulIOp>(loc, edges, l.idx(2)), rectangle);
    Value tiled = b.create<arith::AndIOp>(
        loc, b.create<arith::AndIOp>(loc, ranged, dense),
        cmp(arith::CmpIPredicate::uge, rows, l.idx(kMinRows)));
    l.guarded(tiled, [&] {
      l.loopNest(p.heads, [&](ValueRange head) {
        buildTiledRun(r0, rows, lo, hi, head);
      });
      l.serial(r0, r1, [&](Value r) {
        b.create<memref::StoreOp>(
            loc, b.create<arith::ConstantIntOp>(loc, 1, 1), inRun, r);
      });
    });
  }

  /// One head of rows [r0, r0 + rows) over sources [lo, hi), kCols at a
  /// time.
  void buildTiledRun(Value r0, Value rows, Value lo, Value hi,
                     ValueRange head) {
    double negInf = -std::numeric_limits<double>::infinity();
    auto sumType = VectorType::get({dv}, t);
    l.serial(l.idx(0), rows, [&](Value r) {
      b.create<memref::StoreOp>(loc, l.floatConst(t, negInf), maxima, r);
      b.create<memref::StoreOp>(loc, l.floatConst(t, 0.0), weightSums, r);
      b.create<vector::StoreOp>(loc, l.floatConst(sumType, 0.0), sums,
                                ValueRange{r, l.idx(0)});
    });
    Value q =
        view(p.q.memref, b.create<arith::AddIOp>(loc, v0, r0), rows, head, d);
    l.forLoop(
        lo, hi, ValueRange{},
        [&](Value c, ValueRange) {
          Value cols = b.create<arith::MinUIOp>(
              loc, l.idx(kCols), b.create<arith::SubIOp>(loc, hi, c));
          Value tileScores = tileView(scores, rows, cols);
          gemm(q, view(p.k.memref, c, cols, head, d), tileScores,
               /*transposeB=*/true, /*beta=*/0.0);
          l.serial(l.idx(0), rows, [&](Value r) {
            // Columns at or past `end` are not edges of this row.
            Value end = b.create<arith::MinSIOp>(
                loc, cols,
                b.create<arith::MaxSIOp>(
                    loc, l.idx(0),
                    b.create<arith::SubIOp>(
                        loc, load(rowHi, b.create<arith::AddIOp>(loc, r0, r)),
                        c)));
            softmaxRow(r, cols, end);
          });
          gemm(tileScores, view(p.val.memref, c, cols, head, dv),
               tileView(sums, rows, l.idx(dv)), /*transposeB=*/false,
               /*beta=*/1.0);
          return SmallVector<Value>{};
        },
        l.idx(kCols));
    l.serial(l.idx(0), rows, [&](Value r) {
      Value v =
          b.create<arith::AddIOp>(loc, v0, b.create<arith::AddIOp>(loc, r0, r));
      Value acc =
          b.create<vector::LoadOp>(loc, sumType, sums, ValueRange{r, l.idx(0)});
      storeVectorResult(l, p, acc, load(weightSums, r), rowStart(l, v, head));
    });
  }

  /// Turns the raw dot products of tile row r (columns [0, cols), edges
  /// below `end`) into softmax weights, rescaling the row's running sums.
  void softmaxRow(Value r, Value cols, Value end) {
    double negInf = -std::numeric_limits<double>::infinity();
    auto laneType = VectorType::get({kLanes}, t);
    auto laneIds = VectorType::get({kLanes}, b.getI32Type());
    SmallVector<int32_t> iota(kLanes);
    for (int64_t j = 0; j < kLanes; ++j)
      iota[j] = int32_t(j);
    Value lanes = b.create<arith::ConstantOp>(
        loc, laneIds, DenseElementsAttr::get(laneIds, ArrayRef(iota)));
    Value endI32 = b.create<arith::IndexCastOp>(loc, b.getI32Type(), end);
    // Whole vectors: columns past `cols` are masked too.
    Value padded = b.create<arith::MulIOp>(
        loc, b.create<arith::CeilDivUIOp>(loc, cols, l.idx(kLanes)),
        l.idx(kLanes));
    Value step = l.idx(kLanes);
    auto at = [&](Value j) { return SmallVector<Value, 2>{r, j}; };

    // Scores: scaled, clamped, -inf off the row's edges.
    Value rowMax = l.forLoop(
        l.idx(0), padded, ValueRange{l.floatConst(laneType, negInf)},
        [&](Value j, ValueRange s) {
          Value raw = b.create<vector::LoadOp>(loc, laneType, scores, at(j));
          Value limit = b.create<vector::BroadcastOp>(
              loc, laneIds,
              b.create<arith::SubIOp>(
                  loc, endI32,
                  b.create<arith::IndexCastOp>(loc, b.getI32Type(), j)));
          Value edge = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt,
                                               lanes, limit);
          Value score =
              b.create<arith::SelectOp>(loc, edge, attentionScore(l, p, raw),
                                        l.floatConst(laneType, negInf));
          b.create<vector::StoreOp>(loc, score, scores, at(j));
          return SmallVector<Value>{
              b.create<arith::MaximumFOp>(loc, s[0], score)};
        },
        step)[0];
    // Weights exp(score - shift); with the online softmax, shift is the
    // running maximum (0 while the row has seen no edge).
    Value shift = l.floatConst(t, 0.0), rescale;
    if (p.online) {
      Value oldMax = load(maxima, r);
      Value newMax = b.create<arith::MaximumFOp>(
          loc, oldMax,
          b.create<vector::ReductionOp>(loc, vector::CombiningKind::MAXIMUMF,
                                        rowMax));
      Value none = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ,
                                           newMax, l.floatConst(t, negInf));
      shift =
          b.create<arith::SelectOp>(loc, none, l.floatConst(t, 0.0), newMax);
      rescale = b.create<math::ExpOp>(
          loc, b.create<arith::SubFOp>(loc, oldMax, shift));
      b.create<memref::StoreOp>(loc, newMax, maxima, r);
    }
    Value shiftLanes = b.create<vector::BroadcastOp>(loc, laneType, shift);
    Value rowSum = l.forLoop(
        l.idx(0), padded, ValueRange{l.floatConst(laneType, 0.0)},
        [&](Value j, ValueRange s) {
          Value score = b.create<vector::LoadOp>(loc, laneType, scores, at(j));
          Value w = b.create<math::ExpOp>(
              loc, b.create<arith::SubFOp>(loc, score, shiftLanes));
          b.create<vector::StoreOp>(loc, w, scores, at(j));
          return SmallVector<Value>{b.create<arith::AddFOp>(loc, s[0], w)};
        },
        step)[0];
    Value z = load(weightSums, r);
    if (rescale) {
      z = b.create<arith::MulFOp>(loc, z, rescale);
      auto sumType = VectorType::get({dv}, t);
      Value acc =
          b.create<vector::LoadOp>(loc, sumType, sums, ValueRange{r, l.idx(0)});
      b.create<vector::StoreOp>(
          loc,
          b.create<arith::MulFOp>(
              loc, acc, b.create<vector::BroadcastOp>(loc, sumType, rescale)),
          sums, ValueRange{r, l.idx(0)});
    }
    z = b.create<arith::AddFOp>(
        loc, z,
        b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD, rowSum));
    b.create<memref::StoreOp>(loc, z, weightSums, r);
  }

  /// Rows [row, row + rows) of one head of a feature, as a matrix of `width`
  /// columns.
  Value view(Value feature, Value row, Value rows, ValueRange head,
             int64_t width) {
    auto type = cast<MemRefType>(feature.getType());
    SmallVector<OpFoldResult> offsets = {row}, sizes = {rows},
                              strides(type.getRank(), b.getIndexAttr(1));
    for (Value h : head) {
      offsets.push_back(h);
      sizes.push_back(b.getIndexAttr(1));
    }
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(width));
    auto viewType = memref::SubViewOp::inferRankReducedResultType(
        {ShapedType::kDynamic, width}, type, offsets, sizes, strides);
    Value sub = b.create<memref::SubViewOp>(loc, cast<MemRefType>(viewType),
                                            feature, offsets, sizes, strides);
    return b.create<memref::CastOp>(loc, matrixType, sub);
  }

  /// The top-left rows x cols corner of a tile buffer, as a matrix.
  Value tileView(Value buffer, Value rows, Value cols) {
    SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0)),
        sizes = {rows, cols}, strides(2, b.getIndexAttr(1));
    Value sub =
        b.create<memref::SubViewOp>(loc, buffer, offsets, sizes, strides);
    return b.create<memref::CastOp>(loc, matrixType, sub);
  }

  /// c = a @ op(bMatrix) + beta * c through the runtime.
  void gemm(Value a, Value bMatrix, Value c, bool transposeB, double beta) {
    b.create<func::CallOp>(
        loc, abi::kGemm, TypeRange{},
        ValueRange{a, bMatrix, c,
                   b.create<arith::ConstantIntOp>(loc, transposeB ? 1 : 0, 32),
                   l.floatConst(t, 1.0), l.floatConst(t, beta)});
  }

  Value load(Value buffer, Value i) {
    return b.create<memref::LoadOp>(loc, buffer, i);
  }

  Value hasRange(Value r) {
    return cmp(arith::CmpIPredicate::ugt, load(rowHi, r), load(rowLo, r));
  }

  Value cmp(arith::CmpIPredicate pred, Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, pred, x, y);
  }

  Lowering &l;
  OpBuilder &b;
  Location loc;
  const AttentionPlan &p;
  int64_t d, dv;
  Type t;
  MemRefType matrixType;
  // Per tile: first destination, row ranges and the stack tiles.
  Value v0, rowLo, rowHi, inRun, scores, sums, maxima, weightSums;
};
} // namespace

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
  BlockKernel(l, p, d, dv).build();
}
