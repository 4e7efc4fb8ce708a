//===- BlockAttentionGrad.cpp - gnn.fused_attention_grad in tiles (CPU) ---===//
//
// Part of gnnc. The backward of the fused attention over runs of
// block-structured nodes (BlockTiles.h), FlashAttention-2's way but free of
// races: each pass owns the rows it writes.
//
// Destination pass, per run of destinations and head: with `normalize`, the
// forward of the run in tiles (scores GEMM, online softmax, weights times
// values GEMM) gives each destination's log-sum-exp and D = dout . out,
// which are stored for the source pass; then per chunk of sources, S = Q K^T
// and dP = dOut V^T are two GEMMs, the tile turns into dS = P (dP - D)
// (zero where the clamp is active) with P = exp(score - shift) norm, and
// dQ += scale dS K is a third. When the forward saved its log-sum-exp (the
// shift), the norm and D are the row sums of exp(score - shift) and of P dP
// over the same tiles (AttentionGradPlan says why the weights get a norm of
// their own): in the chunk itself when the run's
// sources fit one chunk (three GEMMs in all), else in a first sweep over
// the chunks, whose S and dP tiles the second sweep reuses when the run's
// sources fit kKeptCols (the tiles are that wide then).
//
// Source pass, per run of sources (the reversed graph's runs) and head: per
// chunk of destinations, S^T = K Q^T and dP^T = V dOut^T, the tile turns
// into P^T and dS^T from the destinations' statistics, then dK += scale dS^T
// Q and dV += P^T dOut.
//
// Block pass, where the graph splits into blocks (BlockTiles::buildBlocks:
// batches of sequences, each block's sources feeding its destinations
// alone; no reversed graph is built then) and the weights need no
// recomputed forward: the source pass's
// S^T and dP^T are the destination pass's tiles transposed, so one thread
// per block and head does both. The block's K and V are transposed once
// for all its tiles (up to 128 wide), so that no product transposes an
// operand of its own. Per tile of the block's destinations, S, dP, D, P
// and dS as above (P computed once per edge, kept for dS), then dQ = scale
// dS K, dK += scale dS^T Q and dV += P^T dOut: five GEMMs instead of seven.
//
// Without `normalize` the weights are w = exp(score) and dS = w (dwv . v +
// dz): the same tiles with a shift of 0 and an offset of -dz. No per-edge
// value leaves the per-thread stack tiles.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "BlockTiles.h"
#include "InEdges.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
/// Columns of the destination pass's tiles when the forward saved its
/// log-sum-exp: runs of up to this many sources keep the first sweep's S
/// and dP (two [kTileRows, kKeptCols] tiles, 128 KB on the stack).
constexpr int64_t kKeptCols = 2 * kTileCols;
/// The widest keys and values the block pass transposes once per block
/// (two [width, kKeptCols] stack buffers, 128 KB each at this width); wider
/// ones are transposed by the runtime for each tile's product.
constexpr int64_t kMaxTransposedWidth = 128;

class BlockGrad {
public:
  BlockGrad(Lowering &l, const AttentionGradPlan &p)
      : l(l), b(l.b), loc(l.loc), p(p), t(p.elem),
        laneType(VectorType::get({kTileLanes}, p.elem)) {}

  /// Both passes in one where the graph splits into blocks, else
  /// `otherwise` with the rows' ranges it found; needs the log-sum-exp
  /// saved when normalizing.
  void blockPass(function_ref<void(RowRanges)> otherwise);
  /// `ranges`: the rows' ranges if blockPass found them (else null).
  void destinationPass(NodeHeadBody row, RowRanges ranges);
  void sourcePass(NodeHeadBody row);

private:
  /// Turns tile row r of raw dot products (`scores`) and of dP (`dprobs`),
  /// the chunk's columns from tile column `col`, into the weights P and
  /// scale * dS, both 0 off the row's columns [begin, end); `stats(j)`
  /// gives the lanes' statistics at chunk column j.
  void gradientRow(BlockTiles &tiles, Value r, Value col, Value cols,
                   Value begin, Value end,
                   function_ref<EdgeStatistics(Value)> stats);
  /// gradientRow for the destination rows [r0, r0 + rows) of a run (tile
  /// rows from 0) with their statistics in the row buffers.
  void destinationRows(BlockTiles &tiles, Value r0, Value rows, Value c,
                       Value col, Value cols);
  /// Adds the row sums of w dP and of w = exp(score - shift) over the
  /// chunk's tiles (from tile column `col`) to `rowOffset` and `rowNorm`
  /// (the rows' shifts are their saved log-sum-exps).
  void accumulateOutDots(BlockTiles &tiles, Value r0, Value rows, Value c,
                         Value col, Value cols);
  /// The sums of w dP and of w over tile row r's columns [begin, end) of
  /// the chunk from tile column `col` (`cols` wide), w = exp(score -
  /// shift) from the raw dot products in `scores` and the row's `shift` (a
  /// vector); each w (0 off the row's columns) is also stored at its chunk
  /// column in `kept` if given.
  std::pair<Value, Value> rowSums(BlockTiles &tiles, Value r, Value col,
                                  Value cols, Value begin, Value end,
                                  Value shift, Value kept = {});
  /// The norm and D - dlse of the rows from the sums in `rowOffset` and
  /// `rowNorm` into the statistics, and the rows' statistics back.
  void finishOutDots(BlockTiles &tiles, Value r0, Value rows, ValueRange head);
  /// Block pass, normalized: per tile row of a block's tile (its columns
  /// from `lo`), the weights from the saved log-sum-exp, their norm and D
  /// in one sweep that keeps them in `rowWeights`, the norm and D - dlse
  /// into the statistics, then P and scale * dS from the kept weights: one
  /// exponential per edge where accumulateOutDots and destinationRows
  /// compute two.
  void normalizedRows(BlockTiles &tiles, Value rows, Value lo, Value cols,
                      ValueRange head);
  /// The stack tiles of a pass (in `prepare`).
  void allocateTiles(BlockTiles &tiles, int64_t columns) {
    scores = tiles.stackTile(columns, t);
    dprobs = tiles.stackTile(columns, t);
  }
  /// The per-tile-row buffers of statistics (in `prepare`).
  void allocateRowStatistics() {
    auto rowType = MemRefType::get({kTileRows}, t);
    rowShift = b.create<memref::AllocaOp>(rowType);
    rowOffset = b.create<memref::AllocaOp>(rowType);
    if (p.normalize)
      rowNorm = b.create<memref::AllocaOp>(rowType);
  }
  /// Tile row r's statistics from the row buffers, in every lane.
  EdgeStatistics rowStatistics(BlockTiles &tiles, Value r) {
    return EdgeStatistics{tiles.load(rowShift, r),
                          rowNorm ? tiles.load(rowNorm, r) : Value(),
                          tiles.load(rowOffset, r)}
        .splat(l, laneType);
  }
  /// Stores the statistics of a destination into tile row r's buffers.
  void storeRowStatistics(const EdgeStatistics &stats, Value r) {
    b.create<memref::StoreOp>(stats.shift, rowShift, r);
    if (stats.norm)
      b.create<memref::StoreOp>(stats.norm, rowNorm, r);
    b.create<memref::StoreOp>(stats.offset, rowOffset, r);
  }
  /// beta of a GEMM that accumulates over chunks starting at `lo`: 0 for
  /// the first chunk (the output is not initialized), 1 after.
  Value accumulateAfter(Value c, Value lo) {
    return b.create<arith::SelectOp>(
        b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, c, lo),
        l.floatConst(t, 0.0), l.floatConst(t, 1.0));
  }

  Lowering &l;
  ImplicitLocOpBuilder &b;
  Location loc;
  const AttentionGradPlan &p;
  Type t;
  VectorType laneType;
  // Per tile: the [kTileRows, kTileCols] tiles of scores and of dP.
  Value scores, dprobs;
  // Block pass, per block: its keys and values transposed ([d, kKeptCols],
  // [dv, kKeptCols]), or null.
  Value keysT, valuesT;
  // Destination pass, per tile row: the weights' shift and norm (normalized)
  // and dP's offset.
  Value rowShift, rowNorm, rowOffset;
  // Block pass, normalized: one row's weights ([kKeptCols]).
  Value rowWeights;
};
} // namespace

void BlockGrad::gradientRow(BlockTiles &tiles, Value r, Value col, Value cols,
                            Value begin, Value end,
                            function_ref<EdgeStatistics(Value)> stats) {
  l.serial(
      l.idx(0), tiles.paddedColumns(cols),
      [&](Value j) {
        SmallVector<Value, 2> at = {r, b.create<arith::AddIOp>(col, j)};
        auto [w, ds] =
            scoreGradients(l, p, b.create<vector::LoadOp>(laneType, scores, at),
                           b.create<vector::LoadOp>(laneType, dprobs, at),
                           stats(j), tiles.laneMask(begin, end, j));
        b.create<vector::StoreOp>(w, scores, at);
        b.create<vector::StoreOp>(ds, dprobs, at);
      },
      kTileLanes);
}

void BlockGrad::destinationRows(BlockTiles &tiles, Value r0, Value rows,
                                Value c, Value col, Value cols) {
  l.serial(l.idx(0), rows, [&](Value r) {
    auto [begin, end] =
        tiles.rowColumns(b.create<arith::AddIOp>(r0, r), c, cols);
    EdgeStatistics stats = rowStatistics(tiles, r);
    gradientRow(tiles, r, col, cols, begin, end, [&](Value) { return stats; });
  });
}

std::pair<Value, Value> BlockGrad::rowSums(BlockTiles &tiles, Value r,
                                           Value col, Value cols, Value begin,
                                           Value end, Value shift, Value kept) {
  Value scale = l.floatConst(laneType, p.scale);
  Value zeros = l.floatConst(laneType, 0.0);
  ValueRange sums = l.forLoop(
      l.idx(0), tiles.paddedColumns(cols), ValueRange{zeros, zeros},
      [&](Value j, ValueRange state) {
        SmallVector<Value, 2> at = {r, b.create<arith::AddIOp>(col, j)};
        Value w = attentionWeights(
            l, p,
            b.create<arith::MulFOp>(
                b.create<vector::LoadOp>(laneType, scores, at), scale),
            shift);
        // Off the row's columns, dP may be whatever the stack held (an
        // infinity times a zero weight is NaN): both are masked.
        Value inRow = tiles.laneMask(begin, end, j);
        Value dP = b.create<arith::SelectOp>(
            inRow, b.create<vector::LoadOp>(laneType, dprobs, at), zeros);
        w = b.create<arith::SelectOp>(inRow, w, zeros);
        if (kept)
          b.create<vector::StoreOp>(w, kept, j);
        return SmallVector<Value>{b.create<vector::FMAOp>(w, dP, state[0]),
                                  b.create<arith::AddFOp>(w, state[1])};
      },
      l.idx(kTileLanes));
  auto total = [&](Value lanes) -> Value {
    return b.create<vector::ReductionOp>(vector::CombiningKind::ADD, lanes);
  };
  return {total(sums[0]), total(sums[1])};
}

void BlockGrad::accumulateOutDots(BlockTiles &tiles, Value r0, Value rows,
                                  Value c, Value col, Value cols) {
  l.serial(l.idx(0), rows, [&](Value r) {
    auto [begin, end] =
        tiles.rowColumns(b.create<arith::AddIOp>(r0, r), c, cols);
    Value shift =
        b.create<vector::BroadcastOp>(laneType, tiles.load(rowShift, r));
    auto [weightedDP, weightSum] =
        rowSums(tiles, r, col, cols, begin, end, shift);
    b.create<memref::StoreOp>(
        b.create<arith::AddFOp>(tiles.load(rowOffset, r), weightedDP),
        rowOffset, r);
    b.create<memref::StoreOp>(
        b.create<arith::AddFOp>(tiles.load(rowNorm, r), weightSum), rowNorm, r);
  });
}

void BlockGrad::finishOutDots(BlockTiles &tiles, Value r0, Value rows,
                              ValueRange head) {
  l.serial(l.idx(0), rows, [&](Value r) {
    Value dst = tiles.graphRow(b.create<arith::AddIOp>(r0, r));
    storeWeightSums(l, p, dst, head, tiles.load(rowOffset, r),
                    tiles.load(rowNorm, r));
    storeRowStatistics(edgeStatistics(l, p, dst, head), r);
  });
}

void BlockGrad::normalizedRows(BlockTiles &tiles, Value rows, Value lo,
                               Value cols, ValueRange head) {
  Value zero = l.idx(0);
  l.serial(zero, rows, [&](Value r) {
    auto [begin, end] = tiles.rowColumns(r, lo, cols);
    Value dst = tiles.graphRow(r);
    Value shift =
        b.create<vector::BroadcastOp>(laneType, weightShift(l, p, dst, head));
    auto [weightedDP, weightSum] =
        rowSums(tiles, r, zero, cols, begin, end, shift, rowWeights);
    storeWeightSums(l, p, dst, head, weightedDP, weightSum);
    EdgeStatistics stats = edgeStatistics(l, p, dst, head).splat(l, laneType);
    l.serial(
        zero, tiles.paddedColumns(cols),
        [&](Value j) {
          SmallVector<Value, 2> at = {r, j};
          auto [w, ds] = scoreGradients(
              l, p, b.create<vector::LoadOp>(laneType, scores, at),
              b.create<vector::LoadOp>(laneType, dprobs, at), stats,
              tiles.laneMask(begin, end, j),
              b.create<vector::LoadOp>(laneType, rowWeights, j));
          b.create<vector::StoreOp>(w, scores, at);
          b.create<vector::StoreOp>(ds, dprobs, at);
        },
        kTileLanes);
  });
}

void BlockGrad::blockPass(function_ref<void(RowRanges)> otherwise) {
  BlockTiles tiles(l, t);
  tiles.buildBlocks(
      p.g, p.heads, kKeptCols,
      [&] {
        allocateTiles(tiles, kKeptCols);
        if (p.normalize)
          rowWeights =
              b.create<memref::AllocaOp>(MemRefType::get({kKeptCols}, t));
        else
          allocateRowStatistics();
        if (std::max(p.d, p.dvSize) <= kMaxTransposedWidth) {
          keysT =
              b.create<memref::AllocaOp>(MemRefType::get({p.d, kKeptCols}, t));
          valuesT = b.create<memref::AllocaOp>(
              MemRefType::get({p.dvSize, kKeptCols}, t));
        }
      },
      [&](Value first, Value end, Value lo, Value hi, ValueRange head) {
        // A block of several tiles adds up the gradients of its sources over
        // them (a causal block's first tiles reach fewer sources), from
        // zeros; a block of one tile writes them once.
        Value tiled = b.create<arith::CmpIOp>(
            arith::CmpIPredicate::ugt, b.create<arith::SubIOp>(end, first),
            l.idx(kTileRows));
        Value sourceBeta = b.create<arith::SelectOp>(
            tiled, l.floatConst(t, 1.0), l.floatConst(t, 0.0));
        auto several = b.create<scf::IfOp>(tiled, /*withElse=*/false);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(several.thenBlock());
          Value dkZeros = l.floatConst(VectorType::get({p.d}, t), 0.0);
          Value dvZeros = l.floatConst(VectorType::get({p.dvSize}, t), 0.0);
          l.serial(lo, hi, [&](Value src) {
            b.create<vector::StoreOp>(dkZeros, p.dk, rowStart(l, src, head));
            b.create<vector::StoreOp>(dvZeros, p.dv, rowStart(l, src, head));
          });
          // Its keys and values transposed once for all its tiles, whose S
          // and dP products then read them as they lie. (One tile's
          // products would read such a copy once: they take K and V
          // transposed themselves.)
          if (keysT) {
            Value width = b.create<arith::SubIOp>(hi, lo);
            tiles.transpose(tiles.view(p.k.memref, lo, width, head, p.d),
                            tiles.tileView(keysT, l.idx(p.d), width));
            tiles.transpose(tiles.view(p.v.memref, lo, width, head, p.dvSize),
                            tiles.tileView(valuesT, l.idx(p.dvSize), width));
          }
        }
        tiles.forEachBlockTile(first, end, lo, [&](Value rows, Value e) {
          Value zero = l.idx(0);
          Value cols = b.create<arith::SubIOp>(e, lo);
          Value dst = tiles.graphRow(zero);
          Value qRows = tiles.view(p.q.memref, dst, rows, head, p.d);
          Value dOutRows =
              tiles.view(p.grads[0].memref, dst, rows, head, p.dvSize);
          Value kCols = tiles.view(p.k.memref, lo, cols, head, p.d);
          Value vCols = tiles.view(p.v.memref, lo, cols, head, p.dvSize);
          Value scoreTile = tiles.tileView(scores, rows, cols);
          Value dprobTile = tiles.tileView(dprobs, rows, cols);
          if (keysT) {
            auto operand = [&](Value copy, int64_t width, Value rowsOf) {
              return b.create<arith::SelectOp>(
                  tiled, tiles.tileView(copy, l.idx(width), cols), rowsOf);
            };
            Value flags = b.create<arith::SelectOp>(
                tiled, b.create<arith::ConstantIntOp>(0, 32),
                b.create<arith::ConstantIntOp>(abi::kGemmTransposeB, 32));
            tiles.gemmWithFlags(qRows, operand(keysT, p.d, kCols), scoreTile,
                                flags, /*beta=*/0.0);
            tiles.gemmWithFlags(dOutRows, operand(valuesT, p.dvSize, vCols),
                                dprobTile, flags, /*beta=*/0.0);
          } else {
            tiles.gemm(qRows, kCols, scoreTile, /*transposeB=*/true,
                       /*beta=*/0.0);
            tiles.gemm(dOutRows, vCols, dprobTile, /*transposeB=*/true,
                       /*beta=*/0.0);
          }
          // Normalized, D from the tile; else the rows' shifts and offsets.
          if (p.normalize) {
            normalizedRows(tiles, rows, lo, cols, head);
          } else {
            l.serial(zero, rows, [&](Value r) {
              storeRowStatistics(edgeStatistics(l, p, tiles.graphRow(r), head),
                                 r);
            });
            destinationRows(tiles, zero, rows, lo, zero, cols);
          }
          tiles.gemm(dprobTile, kCols, tiles.view(p.dq, dst, rows, head, p.d),
                     /*transposeB=*/false, /*beta=*/0.0);
          tiles.gemmTransposedA(dprobTile, qRows,
                                tiles.view(p.dk, lo, cols, head, p.d),
                                l.floatConst(t, 1.0), sourceBeta);
          tiles.gemmTransposedA(scoreTile, dOutRows,
                                tiles.view(p.dv, lo, cols, head, p.dvSize),
                                l.floatConst(t, 1.0), sourceBeta);
        });
      },
      otherwise);
}

void BlockGrad::destinationPass(NodeHeadBody row, RowRanges ranges) {
  BlockTiles tiles(l, t);
  SoftmaxRunTiles softmax(
      tiles, l, t, p.d, p.dvSize,
      [&](Value raw) {
        return clampScore(
            l, p,
            b.create<arith::MulFOp>(raw, l.floatConst(raw.getType(), p.scale)));
      },
      /*online=*/true);
  auto vType = VectorType::get({p.dvSize}, t);
  bool saved = p.savedLse.memref != nullptr;
  tiles.reuseRowRanges(ranges);
  tiles.build(
      p.g, p.heads,
      [&] {
        allocateTiles(tiles, saved ? kKeptCols : kTileCols);
        if (p.normalize && !saved)
          softmax.allocate();
        allocateRowStatistics();
      },
      [&](Value r0, Value rows, Value lo, Value hi, ValueRange head) {
        Value first = tiles.graphRow(r0);
        Value qRows = tiles.view(p.q.memref, first, rows, head, p.d);
        Value dOutRows =
            tiles.view(p.grads[0].memref, first, rows, head, p.dvSize);
        Value zero = l.idx(0);
        Value width = b.create<arith::SubIOp>(hi, lo);
        // Where chunk c's S and dP tiles start: side by side when the run's
        // sources fit the tiles (with a saved log-sum-exp), else all at 0.
        Value kept = saved ? tiles.cmp(arith::CmpIPredicate::ule, width,
                                       l.idx(kKeptCols))
                           : Value();
        auto tileColumn = [&](Value c) -> Value {
          if (!saved)
            return zero;
          return b.create<arith::SelectOp>(kept, b.create<arith::SubIOp>(c, lo),
                                           zero);
        };
        auto scoreTiles = [&](Value c, Value cols, Value col) {
          Value kCols = tiles.view(p.k.memref, c, cols, head, p.d);
          tiles.gemm(qRows, kCols, tiles.tileView(scores, rows, cols, col),
                     /*transposeB=*/true, /*beta=*/0.0);
          tiles.gemm(dOutRows, tiles.view(p.v.memref, c, cols, head, p.dvSize),
                     tiles.tileView(dprobs, rows, cols, col),
                     /*transposeB=*/true, /*beta=*/0.0);
        };
        auto clearSums = [&] {
          l.serial(l.idx(0), rows, [&](Value r) {
            b.create<memref::StoreOp>(l.floatConst(t, 0.0), rowOffset, r);
            b.create<memref::StoreOp>(l.floatConst(t, 0.0), rowNorm, r);
          });
        };
        // With a saved log-sum-exp: whether the second sweep computes the
        // tiles (one chunk: D in the chunk itself; too many sources to keep
        // the first sweep's).
        Value oneChunk, computeTiles;
        if (saved) {
          l.serial(l.idx(0), rows, [&](Value r) {
            Value dst = tiles.graphRow(b.create<arith::AddIOp>(r0, r));
            b.create<memref::StoreOp>(weightShift(l, p, dst, head), rowShift,
                                      r);
          });
          oneChunk =
              tiles.cmp(arith::CmpIPredicate::ule, width, l.idx(kTileCols));
          computeTiles = b.create<arith::OrIOp>(
              oneChunk,
              b.create<arith::XOrIOp>(
                  kept, b.create<arith::ConstantIntOp>(1, b.getI1Type())));
          // Sources past one chunk: D in a first sweep.
          l.unless(oneChunk, [&] {
            clearSums();
            tiles.forEachChunk(lo, hi, [&](Value c, Value cols) {
              Value col = tileColumn(c);
              scoreTiles(c, cols, col);
              accumulateOutDots(tiles, r0, rows, c, col, cols);
            });
            finishOutDots(tiles, r0, rows, head);
          });
        } else if (p.normalize) {
          softmax.compute(p.q.memref, p.k.memref, p.v.memref, r0, rows, lo, hi,
                          head);
          l.serial(l.idx(0), rows, [&](Value r) {
            Value dst = tiles.graphRow(b.create<arith::AddIOp>(r0, r));
            storeStatistics(l, p, dst, head, tiles.load(softmax.maxima, r),
                            tiles.load(softmax.weightSums, r),
                            b.create<vector::LoadOp>(vType, softmax.sums,
                                                     ValueRange{r, l.idx(0)}));
          });
        }
        if (!saved)
          l.serial(l.idx(0), rows, [&](Value r) {
            Value dst = tiles.graphRow(b.create<arith::AddIOp>(r0, r));
            storeRowStatistics(edgeStatistics(l, p, dst, head), r);
          });
        Value dqRows = tiles.view(p.dq, first, rows, head, p.d);
        tiles.forEachChunk(lo, hi, [&](Value c, Value cols) {
          Value col = tileColumn(c);
          if (saved) {
            l.guarded(computeTiles, [&] { scoreTiles(c, cols, col); });
            l.guarded(oneChunk, [&] {
              clearSums();
              accumulateOutDots(tiles, r0, rows, c, col, cols);
              finishOutDots(tiles, r0, rows, head);
            });
          } else {
            scoreTiles(c, cols, col);
          }
          destinationRows(tiles, r0, rows, c, col, cols);
          tiles.gemm(tiles.tileView(dprobs, rows, cols, col),
                     tiles.view(p.k.memref, c, cols, head, p.d), dqRows,
                     /*transposeB=*/false, l.floatConst(t, 1.0),
                     accumulateAfter(c, lo));
        });
      },
      row);
}

void BlockGrad::sourcePass(NodeHeadBody row) {
  BlockTiles tiles(l, t);
  Value colShift, colNorm, colOffset;
  tiles.build(
      p.r, p.heads,
      [&] {
        allocateTiles(tiles, kTileCols);
        auto colType = MemRefType::get({kTileCols}, t);
        colShift = b.create<memref::AllocaOp>(colType);
        if (p.normalize)
          colNorm = b.create<memref::AllocaOp>(colType);
        colOffset = b.create<memref::AllocaOp>(colType);
      },
      [&](Value r0, Value rows, Value lo, Value hi, ValueRange head) {
        // Rows are sources, columns destinations.
        Value first = tiles.graphRow(r0);
        Value kRows = tiles.view(p.k.memref, first, rows, head, p.d);
        Value vRows = tiles.view(p.v.memref, first, rows, head, p.dvSize);
        Value dkRows = tiles.view(p.dk, first, rows, head, p.d);
        Value dvRows = tiles.view(p.dv, first, rows, head, p.dvSize);
        tiles.forEachChunk(lo, hi, [&](Value c, Value cols) {
          l.serial(l.idx(0), cols, [&](Value j) {
            EdgeStatistics stats =
                edgeStatistics(l, p, b.create<arith::AddIOp>(c, j), head);
            b.create<memref::StoreOp>(stats.shift, colShift, j);
            if (stats.norm)
              b.create<memref::StoreOp>(stats.norm, colNorm, j);
            b.create<memref::StoreOp>(stats.offset, colOffset, j);
          });
          Value qCols = tiles.view(p.q.memref, c, cols, head, p.d);
          Value dOutCols =
              tiles.view(p.grads[0].memref, c, cols, head, p.dvSize);
          tiles.gemm(kRows, qCols, tiles.tileView(scores, rows, cols),
                     /*transposeB=*/true, /*beta=*/0.0);
          tiles.gemm(vRows, dOutCols, tiles.tileView(dprobs, rows, cols),
                     /*transposeB=*/true, /*beta=*/0.0);
          l.serial(l.idx(0), rows, [&](Value r) {
            auto [begin, end] =
                tiles.rowColumns(b.create<arith::AddIOp>(r0, r), c, cols);
            // Lanes past `cols` read stale statistics; they are masked.
            gradientRow(tiles, r, l.idx(0), cols, begin, end, [&](Value j) {
              auto lanes = [&](Value column) -> Value {
                return column ? b.create<vector::LoadOp>(laneType, column, j)
                              : Value();
              };
              return EdgeStatistics{lanes(colShift), lanes(colNorm),
                                    lanes(colOffset)};
            });
          });
          Value beta = accumulateAfter(c, lo);
          Value one = l.floatConst(t, 1.0);
          tiles.gemm(tiles.tileView(dprobs, rows, cols), qCols, dkRows,
                     /*transposeB=*/false, one, beta);
          tiles.gemm(tiles.tileView(scores, rows, cols), dOutCols, dvRows,
                     /*transposeB=*/false, one, beta);
        });
      },
      row);
}

bool loops::blockTileable(const AttentionGradPlan &p) {
  if (p.mask || !p.elem.isF32())
    return false;
  ArrayRef<int64_t> q = getItemShape(p.q.type), k = getItemShape(p.k.type),
                    v = getItemShape(p.v.type);
  for (const Feature &grad : p.grads)
    if (getItemShape(grad.type).drop_back() != q.drop_back())
      return false;
  return k == q && v.size() == q.size() && v.drop_back() == q.drop_back();
}

void loops::blockTiledAttentionGrad(Lowering &l, AttentionGradPlan &p,
                                    NodeHeadBody destinationRow,
                                    NodeHeadBody sourceRow) {
  BlockGrad grad(l, p);
  auto twoPasses = [&](RowRanges ranges) {
    grad.destinationPass(destinationRow, ranges);
    p.r = reverseGraph(l, p.g, LoopTarget());
    grad.sourcePass(sourceRow);
  };
  if (p.normalize && !p.savedLse.memref)
    twoPasses({});
  else
    grad.blockPass(twoPasses);
}
