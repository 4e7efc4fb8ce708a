//===- BlockTiles.cpp - run-time block tiles of attention kernels ---------===//
//
// Part of gnnc. See BlockTiles.h.
//
//===----------------------------------------------------------------------===//

#include "BlockTiles.h"
#include "Attention.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
/// Shorter runs take the per-row kernel (GEMM calls would not pay).
constexpr int64_t kMinRows = 16;
/// Rows outside runs go in groups of this many, heads outside: one head's
/// column rows of a group stay in cache.
constexpr int64_t kRowGroup = 32;
} // namespace

BlockTiles::BlockTiles(Lowering &l, Type elem)
    : l(l), b(l.b), loc(l.loc), t(elem) {
  MLIRContext *ctx = b.getContext();
  matrixType =
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, t,
                      StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                                             {ShapedType::kDynamic, 1}));
  auto module = b.getInsertionBlock()->getParent()->getParentOfType<ModuleOp>();
  declareFunction(module, abi::kGemm,
                  {matrixType, matrixType, matrixType, b.getI32Type(), t, t},
                  {}, /*cInterface=*/true);
}

void BlockTiles::build(const GraphParts &g, ArrayRef<Value> heads,
                       function_ref<void()> prepare, RunBody run, RowBody row) {
  Value tiles = b.create<arith::CeilDivUIOp>(loc, g.numDst, l.idx(kTileRows));
  l.parallel(tiles, [&](Value tile) {
    // Stack buffers are released after each tile.
    auto scope = b.create<memref::AllocaScopeOp>(loc, TypeRange{});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&scope.getBodyRegion().emplaceBlock());
    v0 = b.create<arith::MulIOp>(loc, tile, l.idx(kTileRows));
    n = b.create<arith::MinUIOp>(loc, l.idx(kTileRows),
                                 b.create<arith::SubIOp>(loc, g.numDst, v0));
    prepare();
    buildTile(g, heads, run, row);
    b.create<memref::AllocaScopeReturnOp>(loc);
  });
}

Value BlockTiles::stackTile(int64_t columns, Type type) {
  return b.create<memref::AllocaOp>(
      loc, MemRefType::get({kTileRows, columns}, type));
}

void BlockTiles::buildTile(const GraphParts &g, ArrayRef<Value> heads,
                           RunBody run, RowBody row) {
  auto indexType = MemRefType::get({kTileRows}, b.getIndexType());
  rowLo = b.create<memref::AllocaOp>(loc, indexType);
  rowHi = b.create<memref::AllocaOp>(loc, indexType);
  inRun = b.create<memref::AllocaOp>(
      loc, MemRefType::get({kTileRows}, b.getI1Type()));

  // Each row's column range [lo, hi), or [0, 0) if it has none.
  l.serial(l.idx(0), n, [&](Value r) {
    auto [first, last] = l.inSlots(g, graphRow(r));
    Value degree = b.create<arith::SubIOp>(loc, last, first);
    auto [lo, contiguous] = sourceRange(l, g, first, degree);
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

  // Runs of rows that share the first row's start or end (rows without a
  // range form runs of their own, never computed as rectangles).
  l.whileLoop(
      ValueRange{l.idx(0)},
      [&](ValueRange s) { return cmp(arith::CmpIPredicate::ult, s[0], n); },
      [&](ValueRange s) {
        Value r0 = s[0];
        Value lo = load(rowLo, r0), hi = load(rowHi, r0);
        Value ranged = hasRange(r0);
        Value r1 = l.whileLoop(
            ValueRange{b.create<arith::AddIOp>(loc, r0, l.idx(1))},
            [&](ValueRange s) {
              Value r = s[0];
              Value inTile = cmp(arith::CmpIPredicate::ult, r, n);
              // Read a row inside the tile even when r = n.
              Value safe = b.create<arith::SelectOp>(loc, inTile, r, r0);
              Value shares = b.create<arith::OrIOp>(
                  loc, cmp(arith::CmpIPredicate::eq, load(rowLo, safe), lo),
                  cmp(arith::CmpIPredicate::eq, load(rowHi, safe), hi));
              Value same = b.create<arith::AndIOp>(
                  loc, shares,
                  cmp(arith::CmpIPredicate::eq, hasRange(safe), ranged));
              return b.create<arith::AndIOp>(loc, inTile, same).getResult();
            },
            [&](ValueRange s) {
              return SmallVector<Value>{
                  b.create<arith::AddIOp>(loc, s[0], l.idx(1))};
            })[0];
        l.guarded(ranged, [&] { buildRun(r0, r1, heads, run); });
        return SmallVector<Value>{r1};
      });

  // The other rows one by one, in groups with the heads outside.
  l.forLoop(
      l.idx(0), n, ValueRange{},
      [&](Value g0, ValueRange) {
        Value g1 = b.create<arith::MinUIOp>(
            loc, n, b.create<arith::AddIOp>(loc, g0, l.idx(kRowGroup)));
        l.loopNest(heads, [&](ValueRange head) {
          l.serial(g0, g1, [&](Value r) {
            l.unless(load(inRun, r), [&] { row(graphRow(r), head); });
          });
        });
        return SmallVector<Value>{};
      },
      l.idx(kRowGroup));
}

void BlockTiles::buildRun(Value r0, Value r1, ArrayRef<Value> heads,
                          RunBody run) {
  Value rows = b.create<arith::SubIOp>(loc, r1, r0);
  // The union of the rows' ranges is [lo, hi); it pays to compute the
  // whole rows x (hi - lo) rectangle if at least half of it are edges.
  ValueRange extent =
      l.forLoop(r0, r1, ValueRange{load(rowLo, r0), load(rowHi, r0), l.idx(0)},
                [&](Value r, ValueRange s) {
                  Value lo = load(rowLo, r), hi = load(rowHi, r);
                  return SmallVector<Value>{
                      b.create<arith::MinUIOp>(loc, s[0], lo),
                      b.create<arith::MaxUIOp>(loc, s[1], hi),
                      b.create<arith::AddIOp>(
                          loc, s[2], b.create<arith::SubIOp>(loc, hi, lo))};
                });
  Value lo = extent[0], hi = extent[1], edges = extent[2];
  Value rectangle =
      b.create<arith::MulIOp>(loc, rows, b.create<arith::SubIOp>(loc, hi, lo));
  Value dense = cmp(arith::CmpIPredicate::uge,
                    b.create<arith::MulIOp>(loc, edges, l.idx(2)), rectangle);
  Value tiled = b.create<arith::AndIOp>(
      loc, dense, cmp(arith::CmpIPredicate::uge, rows, l.idx(kMinRows)));
  l.guarded(tiled, [&] {
    l.loopNest(heads, [&](ValueRange head) { run(r0, rows, lo, hi, head); });
    l.serial(r0, r1, [&](Value r) {
      b.create<memref::StoreOp>(loc, b.create<arith::ConstantIntOp>(loc, 1, 1),
                                inRun, r);
    });
  });
}

void BlockTiles::forEachChunk(Value lo, Value hi,
                              function_ref<void(Value, Value)> body) {
  l.forLoop(
      lo, hi, ValueRange{},
      [&](Value c, ValueRange) {
        body(c, b.create<arith::MinUIOp>(loc, l.idx(kTileCols),
                                         b.create<arith::SubIOp>(loc, hi, c)));
        return SmallVector<Value>{};
      },
      l.idx(kTileCols));
}

Value BlockTiles::graphRow(Value r) {
  return b.create<arith::AddIOp>(loc, v0, r);
}

std::pair<Value, Value> BlockTiles::rowColumns(Value r, Value c, Value cols) {
  auto clip = [&](Value column) {
    return b.create<arith::MinSIOp>(
        loc, cols,
        b.create<arith::MaxSIOp>(loc, l.idx(0),
                                 b.create<arith::SubIOp>(loc, column, c)));
  };
  return {clip(load(rowLo, r)), clip(load(rowHi, r))};
}

Value BlockTiles::laneMask(Value begin, Value end, Value j) {
  Type i32 = b.getI32Type();
  auto laneIds = VectorType::get({kVectorLanes}, i32);
  SmallVector<int32_t> iota(kVectorLanes);
  for (int64_t lane = 0; lane < kVectorLanes; ++lane)
    iota[lane] = int32_t(lane);
  Value lanes = b.create<arith::ConstantOp>(
      loc, laneIds, DenseElementsAttr::get(laneIds, ArrayRef(iota)));
  Value jI32 = b.create<arith::IndexCastOp>(loc, i32, j);
  auto relative = [&](Value column) {
    return b.create<vector::BroadcastOp>(
        loc, laneIds,
        b.create<arith::SubIOp>(
            loc, b.create<arith::IndexCastOp>(loc, i32, column), jI32));
  };
  return b.create<arith::AndIOp>(
      loc,
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, lanes,
                              relative(begin)),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, lanes,
                              relative(end)));
}

Value BlockTiles::paddedColumns(Value cols) {
  return b.create<arith::MulIOp>(
      loc, b.create<arith::CeilDivUIOp>(loc, cols, l.idx(kVectorLanes)),
      l.idx(kVectorLanes));
}

Value BlockTiles::view(Value feature, Value row, Value rows, ValueRange head,
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

Value BlockTiles::tileView(Value buffer, Value rows, Value cols, Value col) {
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0),
                                       col ? OpFoldResult(col)
                                           : OpFoldResult(b.getIndexAttr(0))},
                            sizes = {rows, cols}, strides(2, b.getIndexAttr(1));
  Value sub = b.create<memref::SubViewOp>(loc, buffer, offsets, sizes, strides);
  return b.create<memref::CastOp>(loc, matrixType, sub);
}

void BlockTiles::gemm(Value a, Value bMatrix, Value c, bool transposeB,
                      Value alpha, Value beta) {
  b.create<func::CallOp>(
      loc, abi::kGemm, TypeRange{},
      ValueRange{a, bMatrix, c,
                 b.create<arith::ConstantIntOp>(loc, transposeB ? 1 : 0, 32),
                 alpha, beta});
}
