//===- BlockTiles.h - run-time block tiles of attention kernels -*- C++ -*-===//
//
// Part of gnnc. What the block-tiled CPU kernels of gnn.fused_attention and
// of its backward share. The rows of a graph (its destinations) are taken
// kTileRows at a time, the parallel unit. Inside a tile, a run is a stretch
// of consecutive rows whose CSR rows each list one range of columns
// (sources) lo, lo + 1, ... in order, the ranges sharing their start or
// their end: the blocks of a batch (complete, causal, bipartite) and their
// reversed graphs. A run dense enough is computed as a rectangle of rows
// times the union of their ranges, kTileCols columns at a time, through the
// runtime's GEMM, each row masked to its own range; the other rows take a
// per-row kernel. Runs are found at run time whatever the graph's declared
// structure, so results are exact for any graph.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOLOOPS_BLOCKTILES_H
#define GNN_CONVERSION_GNNTOLOOPS_BLOCKTILES_H

#include "Lowering.h"

#include <functional>
#include <tuple>

namespace mlir::gnn::loops {

/// Rows per tile (the parallel unit, and the most rows of a run).
constexpr int64_t kTileRows = 64;
/// Columns per chunk of a run: one set of GEMMs each.
constexpr int64_t kTileCols = 128;
/// Lanes of the vectors that sweep a tile's rows: one AVX-512 register of
/// f32 (two AVX2 ones). Tile buffers' widths are multiples of it.
constexpr int64_t kTileLanes = 16;
static_assert(kTileCols % kTileLanes == 0, "whole vectors per chunk");

/// Every row's column range [lo[v], hi[v]) of a graph (index buffers).
struct RowRanges {
  Value lo, hi;
};

class BlockTiles {
public:
  /// One head of run rows [r0, r0 + rows) (tile rows) over the columns
  /// [lo, hi), the union of their ranges.
  using RunBody = function_ref<void(Value r0, Value rows, Value lo, Value hi,
                                    ValueRange head)>;
  /// One head of a row outside the runs (its index in the graph).
  using RowBody = function_ref<void(Value row, ValueRange head)>;
  /// One head of a block: destinations [first, end) and sources [lo, hi).
  using BlockBody = function_ref<void(Value first, Value end, Value lo,
                                      Value hi, ValueRange head)>;

  /// `elem` is the element type of the features the GEMMs read (f32).
  BlockTiles(Lowering &l, Type elem);

  /// Tiles the destinations of `g`: per tile, `prepare` (stack buffers of
  /// the tile), then `run` for every dense run and `row` for the others.
  void build(const GraphParts &g, ArrayRef<Value> heads,
             function_ref<void()> prepare, RunBody run, RowBody row);

  /// Whether the destinations of `g` and its sources split into blocks:
  /// if so, `block` for each block and head, the parallel unit (after
  /// `prepare`, as in `build`), else `otherwise`. A block is a maximal
  /// stretch of destinations whose CSR rows each list one range of sources
  /// in order, all from the same first source; its sources, the union of
  /// the ranges, are at most `maxColumns` and at least half of its rows
  /// times columns are edges; and the blocks' sources tile the graph's in
  /// order (each block's first source is where the previous block's end,
  /// the first block's 0, the last block's end the source count), so that
  /// every source lies in one block and feeds no other. `otherwise` gets
  /// every row's column range as buildBlocks found it. The batches of
  /// sequences (complete, causal, bipartite) split this way, and then a
  /// block is all that the gradients of its sources depend on.
  void buildBlocks(const GraphParts &g, ArrayRef<Value> heads,
                   int64_t maxColumns, function_ref<void()> prepare,
                   BlockBody block, function_ref<void(RowRanges)> otherwise);
  /// Has `build` read each row's column range from `ranges` (what
  /// buildBlocks found for the same graph) instead of finding it again;
  /// null ranges are found by `build`.
  void reuseRowRanges(RowRanges ranges) {
    if (ranges.lo)
      std::tie(rangeLo, rangeHi) = std::tie(ranges.lo, ranges.hi);
  }

  /// Inside `block`: `body(rows, hi)` for each tile of at most kTileRows
  /// of the destinations [first, end), with the tile's rows set for
  /// graphRow, rowColumns and laneMask; [lo, hi) is the union of their
  /// ranges (all of a block's rows start at its first source `lo`).
  void forEachBlockTile(Value first, Value end, Value lo,
                        function_ref<void(Value rows, Value hi)> body);

  /// Runs `body(c, cols)` for each chunk [c, c + cols) of at most
  /// kTileCols columns of [lo, hi).
  void forEachChunk(Value lo, Value hi,
                    function_ref<void(Value c, Value cols)> body);
  /// The graph row of tile row `r` (inside the callbacks).
  Value graphRow(Value r);
  /// Tile row r's columns within the chunk [c, c + cols), relative to c:
  /// [begin, end), both clipped to [0, cols].
  std::pair<Value, Value> rowColumns(Value r, Value c, Value cols);
  /// Lanes of the kTileLanes-wide vector at column j of a row whose
  /// columns are [begin, end): which of them lie inside.
  Value laneMask(Value begin, Value end, Value j);
  /// The columns [0, cols) rounded up to whole vectors.
  Value paddedColumns(Value cols);

  /// Rows [row, row + rows) of one head of a feature, as a matrix of
  /// `width` columns.
  Value view(Value feature, Value row, Value rows, ValueRange head,
             int64_t width);
  /// The rows x cols corner of a tile buffer at column `col` (else 0), as a
  /// matrix.
  Value tileView(Value buffer, Value rows, Value cols, Value col = {});
  /// c = alpha * a @ op(bMatrix) + beta * c through the runtime.
  void gemm(Value a, Value bMatrix, Value c, bool transposeB, Value alpha,
            Value beta);
  void gemm(Value a, Value bMatrix, Value c, bool transposeB, double beta) {
    gemm(a, bMatrix, c, transposeB, l.floatConst(t, 1.0),
         l.floatConst(t, beta));
  }
  /// c = a @ op(bMatrix) + beta * c, op chosen at run time: `transpose` is
  /// an i32 of the runtime's GEMM flags.
  void gemmWithFlags(Value a, Value bMatrix, Value c, Value transpose,
                     double beta);
  /// c = alpha * transpose(a) @ bMatrix + beta * c through the runtime.
  void gemmTransposedA(Value a, Value bMatrix, Value c, Value alpha,
                       Value beta);
  void gemmTransposedA(Value a, Value bMatrix, Value c, double alpha,
                       double beta) {
    gemmTransposedA(a, bMatrix, c, l.floatConst(t, alpha),
                    l.floatConst(t, beta));
  }
  /// out = transpose(a) through the runtime.
  void transpose(Value a, Value out);

  Value load(Value buffer, Value i) {
    return b.create<memref::LoadOp>(buffer, i);
  }
  Value cmp(arith::CmpIPredicate pred, Value x, Value y) {
    return b.create<arith::CmpIOp>(pred, x, y);
  }
  /// A kTileRows x `columns` buffer on the stack (released after the tile).
  Value stackTile(int64_t columns, Type type);

private:
  /// Row v's column range [lo, hi), or [0, 0) if it has none.
  std::pair<Value, Value> columnRange(const GraphParts &g, Value v);
  /// Whether the destinations [first, end) with sources [lo, hi), after
  /// blocks whose sources are [0, covered), form a block (buildBlocks).
  Value isBlock(const GraphParts &g, Value first, Value end, Value lo, Value hi,
                Value covered, int64_t maxColumns);
  void callGemm(Value a, Value bMatrix, Value c, int32_t transpose, Value alpha,
                Value beta);
  /// The runtime's GEMM with its transpose flags (an i32) as a value.
  void callGemm(Value a, Value bMatrix, Value c, Value transpose, Value alpha,
                Value beta);
  void buildTile(const GraphParts &g, ArrayRef<Value> heads, RunBody run,
                 RowBody row);
  void buildRun(Value r0, Value r1, ArrayRef<Value> heads, RunBody run);
  Value hasRange(Value r) {
    return cmp(arith::CmpIPredicate::ugt, load(rowHi, r), load(rowLo, r));
  }

  Lowering &l;
  ImplicitLocOpBuilder &b;
  Location loc;
  Type t;
  ModuleOp module;
  MemRefType matrixType;
  // Per tile: first row, row count, each row's column range and whether a
  // run computed it.
  Value v0, n, rowLo, rowHi, inRun;
  // With blocks (or reused): every row's column range.
  Value rangeLo, rangeHi;
};

/// The forward softmax of one run, kept in stack tiles: per run row (from
/// 0), its weighted sum of value rows, sum of weights and, with `online`,
/// running maximum (else weights are exp(score) unshifted).
class SoftmaxRunTiles {
public:
  /// `score` turns a vector of raw dot products into scores.
  SoftmaxRunTiles(BlockTiles &tiles, Lowering &l, Type elem, int64_t d,
                  int64_t dv, std::function<Value(Value)> score, bool online)
      : tiles(tiles), l(l), b(l.b), loc(l.loc), t(elem), d(d), dv(dv),
        score(std::move(score)), online(online) {}

  /// Allocates the tiles (in a tile's `prepare`).
  void allocate();
  /// One head of run rows [r0, r0 + rows) against columns [lo, hi) of the
  /// features `k` and `v`, with the query feature `q` indexed by graph row.
  void compute(Value q, Value k, Value v, Value r0, Value rows, Value lo,
               Value hi, ValueRange head);

  /// Per run row: [kTileRows, dv] sums, [kTileRows] weight sums and maxima.
  Value sums, weightSums, maxima;

private:
  void softmaxRow(Value r, Value cols, Value begin, Value end);

  BlockTiles &tiles;
  Lowering &l;
  ImplicitLocOpBuilder &b;
  Location loc;
  Type t;
  int64_t d, dv;
  std::function<Value(Value)> score;
  bool online;
  Value scores;
};

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOLOOPS_BLOCKTILES_H
