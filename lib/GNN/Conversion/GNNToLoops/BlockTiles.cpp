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
  // Bodies of loops are built before their loop is in a function: the
  // module is found once, here.
  module = b.getInsertionBlock()->getParent()->getParentOfType<ModuleOp>();
  declareFunction(module, abi::kGemm,
                  {matrixType, matrixType, matrixType, b.getI32Type(), t, t},
                  {}, /*cInterface=*/true);
}

void BlockTiles::build(const GraphParts &g, ArrayRef<Value> heads,
                       function_ref<void()> prepare, RunBody run, RowBody row) {
  Value tiles = b.create<arith::CeilDivUIOp>(g.numDst, l.idx(kTileRows));
  l.parallel(tiles, [&](Value tile) {
    // Stack buffers are released after each tile.
    auto scope = b.create<memref::AllocaScopeOp>(TypeRange{});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&scope.getBodyRegion().emplaceBlock());
    v0 = b.create<arith::MulIOp>(tile, l.idx(kTileRows));
    n = b.create<arith::MinUIOp>(l.idx(kTileRows),
                                 b.create<arith::SubIOp>(g.numDst, v0));
    prepare();
    buildTile(g, heads, run, row);
    b.create<memref::AllocaScopeReturnOp>();
  });
}

Value BlockTiles::stackTile(int64_t columns, Type type) {
  return b.create<memref::AllocaOp>(
      MemRefType::get({kTileRows, columns}, type));
}

std::pair<Value, Value> BlockTiles::columnRange(const GraphParts &g, Value v) {
  auto [first, last] = l.inSlots(g, v);
  Value degree = b.create<arith::SubIOp>(last, first);
  auto [lo, contiguous] = sourceRange(l, g, first, degree);
  Value ranged = b.create<arith::AndIOp>(
      contiguous, cmp(arith::CmpIPredicate::ugt, degree, l.idx(0)));
  return {b.create<arith::SelectOp>(ranged, lo, l.idx(0)),
          b.create<arith::SelectOp>(ranged, b.create<arith::AddIOp>(lo, degree),
                                    l.idx(0))};
}

Value BlockTiles::isBlock(const GraphParts &g, Value first, Value end, Value lo,
                          Value hi, Value covered, int64_t maxColumns) {
  auto sub = [&](Value x, Value y) { return b.create<arith::SubIOp>(x, y); };
  Value width = sub(hi, lo);
  // The rows' edges all come from [lo, hi); sources that follow the earlier
  // blocks' feed these rows alone (the rows of the blocks before and after
  // have their own sources).
  Value edges = sub(load(g.inPtr, end), load(g.inPtr, first));
  Value rectangle = b.create<arith::MulIOp>(sub(end, first), width);
  Value ok = b.create<arith::AndIOp>(
      cmp(arith::CmpIPredicate::ule, width, l.idx(maxColumns)),
      cmp(arith::CmpIPredicate::eq, lo, covered));
  return b.create<arith::AndIOp>(
      ok, cmp(arith::CmpIPredicate::uge,
              b.create<arith::MulIOp>(edges, l.idx(2)), rectangle));
}

void BlockTiles::buildBlocks(const GraphParts &g, ArrayRef<Value> heads,
                             int64_t maxColumns, function_ref<void()> prepare,
                             BlockBody block,
                             function_ref<void(RowRanges)> otherwise) {
  Value rows = g.numDst;
  rangeLo = l.idBuffer(rows);
  rangeHi = l.idBuffer(rows);
  l.parallel(rows, [&](Value v) {
    auto [lo, hi] = columnRange(g, v);
    b.create<memref::StoreOp>(lo, rangeLo, v);
    b.create<memref::StoreOp>(hi, rangeHi, v);
  });

  // The blocks in one sweep: block i has rows [starts[i], starts[i + 1])
  // and sources [sourceLo[i], sourceHi[i]).
  Value one = l.idx(1);
  Value starts = l.idBuffer(b.create<arith::AddIOp>(rows, one));
  Value sourceLo = l.idBuffer(rows), sourceHi = l.idBuffer(rows);
  Value yes = b.create<arith::ConstantIntOp>(1, 1);
  auto select = [&](Value c, Value x, Value y) -> Value {
    return b.create<arith::SelectOp>(c, x, y);
  };
  // State: blocks so far, all fine, open block's first row and sources,
  // sources covered by the closed blocks.
  auto close = [&](ValueRange s, Value end, Value closing) {
    Value count = s[0], first = s[2], lo = s[3], hi = s[4];
    Value fine = l.ifElse(
        closing,
        [&] {
          b.create<memref::StoreOp>(first, starts, count);
          b.create<memref::StoreOp>(lo, sourceLo, count);
          b.create<memref::StoreOp>(hi, sourceHi, count);
          return SmallVector<Value>{
              isBlock(g, first, end, lo, hi, s[5], maxColumns)};
        },
        [&] { return SmallVector<Value>{yes}; })[0];
    Value zero = l.idx(0);
    return SmallVector<Value>{
        b.create<arith::AddIOp>(count, select(closing, one, zero)),
        b.create<arith::AndIOp>(s[1], fine),
        b.create<arith::AddIOp>(
            s[5], select(closing, b.create<arith::SubIOp>(hi, lo), zero))};
  };
  Value zero = l.idx(0);
  ValueRange swept = l.forLoop(
      zero, rows, ValueRange{zero, yes, zero, zero, zero, zero},
      [&](Value v, ValueRange s) {
        Value lo = load(rangeLo, v), hi = load(rangeHi, v);
        Value opens =
            b.create<arith::OrIOp>(cmp(arith::CmpIPredicate::eq, v, zero),
                                   cmp(arith::CmpIPredicate::ne, lo, s[3]));
        Value closing = b.create<arith::AndIOp>(
            opens, cmp(arith::CmpIPredicate::ugt, v, zero));
        SmallVector<Value> closed = close(s, v, closing);
        return SmallVector<Value>{
            closed[0],
            b.create<arith::AndIOp>(closed[1],
                                    cmp(arith::CmpIPredicate::ugt, hi, lo)),
            select(opens, v, s[2]),
            select(opens, lo, s[3]),
            select(opens, hi, b.create<arith::MaxUIOp>(s[4], hi)),
            closed[2]};
      });
  SmallVector<Value> last =
      close(swept, rows, cmp(arith::CmpIPredicate::ugt, rows, zero));
  Value count = last[0];
  b.create<memref::StoreOp>(rows, starts, count);
  Value blocks = b.create<arith::AndIOp>(
      last[1], cmp(arith::CmpIPredicate::eq, last[2], g.numSrc));

  auto branch = b.create<scf::IfOp>(blocks, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getElseRegion().front());
  otherwise({rangeLo, rangeHi});
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  Value perBlock = one;
  for (Value extent : heads)
    perBlock = b.create<arith::MulIOp>(perBlock, extent);
  l.parallel(b.create<arith::MulIOp>(count, perBlock), [&](Value item) {
    auto scope = b.create<memref::AllocaScopeOp>(TypeRange{});
    OpBuilder::InsertionGuard inScope(b);
    b.setInsertionPointToStart(&scope.getBodyRegion().emplaceBlock());
    Value i = b.create<arith::DivUIOp>(item, perBlock);
    Value rest = b.create<arith::RemUIOp>(item, perBlock);
    SmallVector<Value> head(heads.size());
    for (int64_t h = int64_t(heads.size()) - 1; h >= 0; --h) {
      head[h] = b.create<arith::RemUIOp>(rest, heads[h]);
      rest = b.create<arith::DivUIOp>(rest, heads[h]);
    }
    prepare();
    block(load(starts, i), load(starts, b.create<arith::AddIOp>(i, one)),
          load(sourceLo, i), load(sourceHi, i), head);
    b.create<memref::AllocaScopeReturnOp>();
  });
}

void BlockTiles::forEachBlockTile(
    Value first, Value end, Value lo,
    function_ref<void(Value rows, Value hi)> body) {
  l.forLoop(
      first, end, ValueRange{},
      [&](Value r0, ValueRange) {
        v0 = r0;
        n = b.create<arith::MinUIOp>(l.idx(kTileRows),
                                     b.create<arith::SubIOp>(end, r0));
        auto rowsOf = [&](Value ranges) -> Value {
          SmallVector<OpFoldResult> offsets = {r0}, sizes = {n},
                                    strides = {b.getIndexAttr(1)};
          return b.create<memref::SubViewOp>(ranges, offsets, sizes, strides);
        };
        rowLo = rowsOf(rangeLo);
        rowHi = rowsOf(rangeHi);
        Value hi =
            l.forLoop(l.idx(0), n, ValueRange{lo}, [&](Value r, ValueRange s) {
              return SmallVector<Value>{
                  b.create<arith::MaxUIOp>(s[0], load(rowHi, r))};
            })[0];
        body(n, hi);
        return SmallVector<Value>{};
      },
      l.idx(kTileRows));
}

void BlockTiles::buildTile(const GraphParts &g, ArrayRef<Value> heads,
                           RunBody run, RowBody row) {
  auto indexType = MemRefType::get({kTileRows}, b.getIndexType());
  rowLo = b.create<memref::AllocaOp>(indexType);
  rowHi = b.create<memref::AllocaOp>(indexType);
  inRun =
      b.create<memref::AllocaOp>(MemRefType::get({kTileRows}, b.getI1Type()));

  // Each row's column range [lo, hi), or [0, 0) if it has none.
  l.serial(l.idx(0), n, [&](Value r) {
    Value v = graphRow(r);
    auto [lo, hi] = rangeLo ? std::pair(load(rangeLo, v), load(rangeHi, v))
                            : columnRange(g, v);
    b.create<memref::StoreOp>(lo, rowLo, r);
    b.create<memref::StoreOp>(hi, rowHi, r);
    b.create<memref::StoreOp>(b.create<arith::ConstantIntOp>(0, 1), inRun, r);
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
            ValueRange{b.create<arith::AddIOp>(r0, l.idx(1))},
            [&](ValueRange s) {
              Value r = s[0];
              Value inTile = cmp(arith::CmpIPredicate::ult, r, n);
              // Read a row inside the tile even when r = n.
              Value safe = b.create<arith::SelectOp>(inTile, r, r0);
              Value shares = b.create<arith::OrIOp>(
                  cmp(arith::CmpIPredicate::eq, load(rowLo, safe), lo),
                  cmp(arith::CmpIPredicate::eq, load(rowHi, safe), hi));
              Value same =
                  b.create<arith::AndIOp>(shares, cmp(arith::CmpIPredicate::eq,
                                                      hasRange(safe), ranged));
              return b.create<arith::AndIOp>(inTile, same).getResult();
            },
            [&](ValueRange s) {
              return SmallVector<Value>{
                  b.create<arith::AddIOp>(s[0], l.idx(1))};
            })[0];
        l.guarded(ranged, [&] { buildRun(r0, r1, heads, run); });
        return SmallVector<Value>{r1};
      });

  // The other rows one by one, in groups with the heads outside.
  l.forLoop(
      l.idx(0), n, ValueRange{},
      [&](Value g0, ValueRange) {
        Value g1 = b.create<arith::MinUIOp>(
            n, b.create<arith::AddIOp>(g0, l.idx(kRowGroup)));
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
  Value rows = b.create<arith::SubIOp>(r1, r0);
  // The union of the rows' ranges is [lo, hi); it pays to compute the
  // whole rows x (hi - lo) rectangle if at least half of it are edges.
  ValueRange extent = l.forLoop(
      r0, r1, ValueRange{load(rowLo, r0), load(rowHi, r0), l.idx(0)},
      [&](Value r, ValueRange s) {
        Value lo = load(rowLo, r), hi = load(rowHi, r);
        return SmallVector<Value>{
            b.create<arith::MinUIOp>(s[0], lo),
            b.create<arith::MaxUIOp>(s[1], hi),
            b.create<arith::AddIOp>(s[2], b.create<arith::SubIOp>(hi, lo))};
      });
  Value lo = extent[0], hi = extent[1], edges = extent[2];
  Value rectangle =
      b.create<arith::MulIOp>(rows, b.create<arith::SubIOp>(hi, lo));
  Value dense = cmp(arith::CmpIPredicate::uge,
                    b.create<arith::MulIOp>(edges, l.idx(2)), rectangle);
  Value tiled = b.create<arith::AndIOp>(
      dense, cmp(arith::CmpIPredicate::uge, rows, l.idx(kMinRows)));
  l.guarded(tiled, [&] {
    l.loopNest(heads, [&](ValueRange head) { run(r0, rows, lo, hi, head); });
    l.serial(r0, r1, [&](Value r) {
      b.create<memref::StoreOp>(b.create<arith::ConstantIntOp>(1, 1), inRun, r);
    });
  });
}

void BlockTiles::forEachChunk(Value lo, Value hi,
                              function_ref<void(Value, Value)> body) {
  l.forLoop(
      lo, hi, ValueRange{},
      [&](Value c, ValueRange) {
        body(c, b.create<arith::MinUIOp>(l.idx(kTileCols),
                                         b.create<arith::SubIOp>(hi, c)));
        return SmallVector<Value>{};
      },
      l.idx(kTileCols));
}

Value BlockTiles::graphRow(Value r) { return b.create<arith::AddIOp>(v0, r); }

std::pair<Value, Value> BlockTiles::rowColumns(Value r, Value c, Value cols) {
  auto clip = [&](Value column) {
    return b.create<arith::MinSIOp>(
        cols,
        b.create<arith::MaxSIOp>(l.idx(0), b.create<arith::SubIOp>(column, c)));
  };
  return {clip(load(rowLo, r)), clip(load(rowHi, r))};
}

Value BlockTiles::laneMask(Value begin, Value end, Value j) {
  Type i32 = b.getI32Type();
  auto laneIds = VectorType::get({kTileLanes}, i32);
  SmallVector<int32_t> iota(kTileLanes);
  for (int64_t lane = 0; lane < kTileLanes; ++lane)
    iota[lane] = int32_t(lane);
  Value lanes = b.create<arith::ConstantOp>(
      laneIds, DenseElementsAttr::get(laneIds, ArrayRef(iota)));
  Value jI32 = b.create<arith::IndexCastOp>(i32, j);
  auto relative = [&](Value column) {
    return b.create<vector::BroadcastOp>(
        laneIds, b.create<arith::SubIOp>(
                     b.create<arith::IndexCastOp>(i32, column), jI32));
  };
  return b.create<arith::AndIOp>(
      b.create<arith::CmpIOp>(arith::CmpIPredicate::sge, lanes,
                              relative(begin)),
      b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, lanes, relative(end)));
}

Value BlockTiles::paddedColumns(Value cols) {
  return b.create<arith::MulIOp>(
      b.create<arith::CeilDivUIOp>(cols, l.idx(kTileLanes)), l.idx(kTileLanes));
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
  Value sub = b.create<memref::SubViewOp>(cast<MemRefType>(viewType), feature,
                                          offsets, sizes, strides);
  return b.create<memref::CastOp>(matrixType, sub);
}

Value BlockTiles::tileView(Value buffer, Value rows, Value cols, Value col) {
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0),
                                       col ? OpFoldResult(col)
                                           : OpFoldResult(b.getIndexAttr(0))},
                            sizes = {rows, cols}, strides(2, b.getIndexAttr(1));
  Value sub = b.create<memref::SubViewOp>(buffer, offsets, sizes, strides);
  return b.create<memref::CastOp>(matrixType, sub);
}

void BlockTiles::gemm(Value a, Value bMatrix, Value c, bool transposeB,
                      Value alpha, Value beta) {
  callGemm(a, bMatrix, c, transposeB ? abi::kGemmTransposeB : 0, alpha, beta);
}

void BlockTiles::gemmWithFlags(Value a, Value bMatrix, Value c, Value transpose,
                               double beta) {
  callGemm(a, bMatrix, c, transpose, l.floatConst(t, 1.0),
           l.floatConst(t, beta));
}

void BlockTiles::gemmTransposedA(Value a, Value bMatrix, Value c, Value alpha,
                                 Value beta) {
  callGemm(a, bMatrix, c, abi::kGemmTransposeA, alpha, beta);
}

void BlockTiles::transpose(Value a, Value out) {
  declareFunction(module, abi::kTranspose, {matrixType, matrixType}, {},
                  /*cInterface=*/true);
  b.create<func::CallOp>(abi::kTranspose, TypeRange{}, ValueRange{a, out});
}

void BlockTiles::callGemm(Value a, Value bMatrix, Value c, int32_t transpose,
                          Value alpha, Value beta) {
  callGemm(a, bMatrix, c, b.create<arith::ConstantIntOp>(transpose, 32), alpha,
           beta);
}

void BlockTiles::callGemm(Value a, Value bMatrix, Value c, Value transpose,
                          Value alpha, Value beta) {
  b.create<func::CallOp>(abi::kGemm, TypeRange{},
                         ValueRange{a, bMatrix, c, transpose, alpha, beta});
}
