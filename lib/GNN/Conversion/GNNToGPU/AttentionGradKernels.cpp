//===- AttentionGradKernels.cpp - the attention backward in warp tiles ----===//
//
// Part of gnnc. gnn.fused_attention_grad over graphs whose structure
// promises each node a contiguous range of neighbours (complete, causal and
// bipartite blocks), walked as the forward's tiled kernel walks them: a lane
// (or, for wide rows, 2, 4, ... lanes holding parts of its rows, their dot
// products added by shuffles) per node, a warp's worth of consecutive nodes
// and one head to a warp, the warp stepping through the union of its nodes'
// ranges in lockstep. Every node's lanes read the same row at each step
// (one load serves the warp) and keep their node's rows and sums in
// registers; no per-edge value is written. The rows the walks read at each
// step (k and v in the destination pass; q, dout and the destination's
// statistics in the source pass) are staged in shared memory 32 steps at a
// time (SharedTiles.h).
//
// The two passes of the loop form (AttentionGrad.cpp), each a kernel:
//  - destinations: one walk for the statistics (the weights' shift, their
//    norm and D - dlse, stored for the source pass), a second for dq;
//  - sources, over the reversal's in-edges (their destinations, ranges
//    too in these graphs): dk and dv, or, when k, v and both sums do not fit
//    in registers together, dv and then dk in two launches.
// A lane whose row breaks the promise walks its edges one by one in the same
// kernel, so results stay exact for any graph.
//
// With TileThreads::Loops the same per-lane code runs as a parallel loop
// whose iterations each walk their own range: how the CPU checks the
// kernels' arithmetic (convert-gnn-to-gpu{attention-kernels=false}).
//
//===----------------------------------------------------------------------===//

#include "AlignedRows.h"
#include "AttentionKernels.h"
#include "GNNToLoops/Attention.h"
#include "GNNToLoops/InEdges.h"
#include "SharedTiles.h"
#include "Warp.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
/// Most floats of rows and sums a lane keeps in registers: the
/// destination pass's slices of q, dout and dq, the source pass's of k, v,
/// dk and dv. Beyond it, a node's rows are split over more lanes
/// (lanesPerNode).
constexpr int64_t kLaneFloats = 64;

/// Lanes per node on a GPU: the fewest (a power of two dividing both
/// feature sizes) whose slices of the destination pass's rows and sums (q,
/// dout and dq: 2 d + dv floats) fit in kLaneFloats; none if no warp's
/// worth does.
std::optional<int64_t> lanesPerNode(int64_t d, int64_t dv) {
  for (int64_t lanes = 1; lanes <= kWarp; lanes *= 2) {
    if (d % lanes != 0 || dv % lanes != 0)
      return std::nullopt;
    if ((2 * d + dv) / lanes <= kLaneFloats)
      return lanes;
  }
  return std::nullopt;
}

/// Where one lane runs: its node (valid, or 0 standing in past the last
/// node), its head (none without a head dim) and its part of the node's
/// rows (the elements [part * size / lanes, (part + 1) * size / lanes)).
struct Lane {
  Value valid, node;
  SmallVector<Value, 1> head;
  Value part;
  /// The thread in its block of one warp (kernels only).
  Value thread;
};

/// A row a walk reads at each step: staged in shared memory (kernels only).
struct StagedRow {
  Value memref;
  int64_t size;
};

/// The shared memory of either pass's staged rows: (k, v), or (q, dout)
/// and the destinations' statistics.
int64_t stagedBytes(const AttentionGradPlan &p) {
  return sharedTileBytes({p.d, p.dvSize}) +
         int64_t(statisticBuffers(p).size()) * sharedTileBytes(1);
}

/// The per-lane code of both passes.
class TileLanes {
public:
  TileLanes(Lowering &l, AttentionGradPlan &p, TileThreads threads,
            int64_t lanes, ArrayRef<Value> alignedInputs)
      : l(l), p(p), threads(threads), lanes(lanes),
        alignedInputs(alignedInputs) {}

  /// Both passes (the reversal built between them).
  void build(const LoopTarget &target);

private:
  /// What an edge needs from every lane of its node (dot products, whose
  /// lanes' parts shuffles add up): called where the whole warp runs.
  using EdgeDots = function_ref<SmallVector<Value>(Value u)>;
  /// The state after the edge from `u`, given its dots.
  using EdgeStep =
      function_ref<SmallVector<Value>(Value u, ValueRange dots, ValueRange)>;

  /// The lane's node's in-edges in a graph, as the walks take them.
  struct Row {
    const GraphParts &g;
    /// The node's CSR slots, their count (0 past the last node).
    Value first, degree;
    /// The slots list a range [lo, hi) in order (the promise kept; both 0
    /// otherwise), or they do not: the edges go one by one.
    Value lo, hi, perEdge;
    /// The union of the warp's ranges; rounds of its longest row of the
    /// other kind (a lane's own in loops).
    Value walkLo, walkHi, rounds;
  };

  /// Runs `body` once per lane over `n` nodes and every head.
  void forEachLane(Value n, function_ref<void(const Lane &)> body);
  /// The lane's node's row in `g`: its promise checked once for the
  /// walks that follow.
  Row rowOf(const GraphParts &g, const Lane &lane);
  /// The state after `step` over every in-edge source of the row, in slot
  /// order: the warp's union of ranges in lockstep where the lane's row is
  /// the range it promises, edge by edge where it is not. Every lane of the
  /// warp computes `dots` at each step of both loops. In kernels, the
  /// lockstep loop reads the `staged` rows of each step's source from
  /// shared memory (row() does).
  SmallVector<Value> walk(const Lane &lane, const Row &row,
                          ArrayRef<StagedRow> staged, ValueRange init,
                          EdgeDots dots, EdgeStep step);
  /// The lockstep loop over the warp's union of ranges: `body(u, state)`
  /// for each source, 32 sources to a staged tile in kernels.
  SmallVector<Value>
  walkRanges(const Lane &lane, const Row &row, ArrayRef<StagedRow> staged,
             ValueRange init,
             function_ref<SmallVector<Value>(Value, ValueRange)> body);
  /// Whether the walks stage their rows in shared memory: in kernels,
  /// where the rows fit the shared memory a launch gets.
  bool stages() const {
    return threads == TileThreads::Warps &&
           stagedBytes(p) <= kSharedTileBytesLimit;
  }
  /// The minimum or maximum of an index over the warp (over the lane's own
  /// value in loops), in every lane.
  Value warpReduce(Value n, bool max);

  void destinationLane(const Lane &lane);
  void sourceLane(const Lane &lane, bool withDk, bool withDv);

  /// The lane's part of row `r` of `memref` (of `size` elements) at its
  /// head, from one vector load (a single address per row).
  SmallVector<Value> row(const Lane &lane, Value memref, Value r, int64_t size);
  void storeRow(const Lane &lane, ArrayRef<Value> values, Value memref,
                int64_t size);
  /// The shared-memory tile `memref`'s rows are staged in within a staged
  /// walk; null outside one or for a memref it does not stage.
  Value stagedTile(Value memref) const;
  /// A destination's statistic in `memref` (one of statisticBuffers'):
  /// from its staged tile within a staged walk (dst is the step's), else
  /// at the destination's row start.
  Value statistic(const Lane &lane, Value memref, Value dst);
  /// The column of element j of the lane's part of a row of `size`.
  Value column(const Lane &lane, int64_t size, int64_t j);
  /// a . b over the node's lanes (a and b: this lane's parts), in four
  /// interleaved partial sums (shorter dependency chains).
  Value dot(ArrayRef<Value> a, ArrayRef<Value> b);
  SmallVector<Value> zeros(int64_t n) {
    return SmallVector<Value>(n, l.floatConst(p.elem, 0.0));
  }
  /// s_j + f x_j for every j.
  SmallVector<Value> axpy(Value f, ArrayRef<Value> x, ValueRange s);
  Value cmp(arith::CmpIPredicate pred, Value a, Value b) {
    return l.b.create<arith::CmpIOp>(pred, a, b);
  }

  Lowering &l;
  AttentionGradPlan &p;
  TileThreads threads;
  /// Lanes per node (1 in loops).
  int64_t lanes;
  /// Inputs whose rows start 16-byte aligned (withAlignedRows).
  ArrayRef<Value> alignedInputs;
  /// Within a walk over a staged tile: its first source and, per staged
  /// memref, its tile in shared memory, which row() reads instead.
  struct StagedTile {
    Value first;
    SmallVector<std::pair<Value, Value>> tiles;
  };
  std::optional<StagedTile> staged;
};
} // namespace

void TileLanes::forEachLane(Value n, function_ref<void(const Lane &)> body) {
  if (threads == TileThreads::Loops) {
    l.parallelItems(n, p.heads, [&](Value node, ValueRange head) {
      body({l.b.create<arith::ConstantIntOp>(1, 1), node,
            SmallVector<Value, 1>(head), l.idx(0), l.idx(0)});
    });
    return;
  }
  Value numHeads = p.heads.empty() ? l.idx(1) : p.heads.front();
  Value nonEmpty = cmp(arith::CmpIPredicate::ugt,
                       l.b.create<arith::MulIOp>(n, numHeads), l.idx(0));
  l.guarded(nonEmpty, [&] {
    // A warp to a block, as the forward's tiles: with this many registers a
    // lane, registers bound the warps an SM holds before blocks do.
    int64_t nodesPerWarp = kWarp / lanes;
    Value tiles = l.b.create<arith::CeilDivUIOp>(n, l.idx(nodesPerWarp));
    Value one = l.idx(1);
    auto launch = l.b.create<gpu::LaunchOp>(
        tiles, numHeads, one, l.idx(kWarp), one, one,
        l.b.create<arith::ConstantIntOp>(stages() ? stagedBytes(p) : 0, 32));
    OpBuilder::InsertionGuard guard(l.b);
    l.b.setInsertionPointToStart(&launch.getBody().front());
    Value tid = launch.getThreadIds().x;
    Value v = l.b.create<arith::AddIOp>(
        l.b.create<arith::MulIOp>(launch.getBlockIds().x, l.idx(nodesPerWarp)),
        l.b.create<arith::DivUIOp>(tid, l.idx(lanes)));
    // Lanes past the last node take part in the warp's shuffles.
    Value valid = cmp(arith::CmpIPredicate::ult, v, n);
    Lane lane{valid,
              l.b.create<arith::SelectOp>(valid, v, l.idx(0)),
              {},
              l.b.create<arith::RemUIOp>(tid, l.idx(lanes)),
              tid};
    if (!p.heads.empty())
      lane.head.push_back(launch.getBlockIds().y);
    body(lane);
    l.b.create<gpu::TerminatorOp>();
  });
}

Value TileLanes::warpReduce(Value n, bool max) {
  return threads == TileThreads::Loops ? n : warpMinMax(l, n, max);
}

TileLanes::Row TileLanes::rowOf(const GraphParts &g, const Lane &lane) {
  auto [first, last] = l.inSlots(g, lane.node);
  Value degree = l.b.create<arith::SelectOp>(
      lane.valid, l.b.create<arith::SubIOp>(last, first), l.idx(0));
  Value hasEdges = cmp(arith::CmpIPredicate::ugt, degree, l.idx(0));
  auto [lo, contiguous] = sourceRange(l, g, first, degree);
  Value tiled = l.b.create<arith::AndIOp>(hasEdges, contiguous);
  Row row{g, first, degree};
  row.lo = l.b.create<arith::SelectOp>(tiled, lo, l.idx(0));
  row.hi = l.b.create<arith::SelectOp>(
      tiled, l.b.create<arith::AddIOp>(lo, degree), l.idx(0));
  // The union of the tiled lanes' ranges (empty if none is).
  row.walkLo =
      warpReduce(l.b.create<arith::SelectOp>(
                     tiled, lo, l.idx(std::numeric_limits<int64_t>::max())),
                 /*max=*/false);
  row.walkHi = warpReduce(row.hi, /*max=*/true);
  row.perEdge = l.b.create<arith::AndIOp>(
      hasEdges, l.b.create<arith::XOrIOp>(
                    contiguous, l.b.create<arith::ConstantIntOp>(1, 1)));
  row.rounds =
      warpReduce(l.b.create<arith::SelectOp>(row.perEdge, degree, l.idx(0)),
                 /*max=*/true);
  return row;
}

SmallVector<Value> TileLanes::walkRanges(
    const Lane &lane, const Row &row, ArrayRef<StagedRow> stagedRows,
    ValueRange init, function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  if (!stages() || stagedRows.empty())
    return SmallVector<Value>(l.forLoop(row.walkLo, row.walkHi, init, body));
  SmallVector<int64_t> widths;
  for (const StagedRow &r : stagedRows)
    widths.push_back(r.size);
  SmallVector<Value> views = sharedTiles(l, widths);
  Value tileSources = l.idx(kTileSources);
  Value last = l.b.create<arith::SubIOp>(row.walkHi, l.idx(1));
  return SmallVector<Value>(l.forLoop(
      row.walkLo, row.walkHi, init,
      [&](Value t, ValueRange s) {
        StagedTile tile{t, {}};
        for (auto [r, view] : llvm::zip_equal(stagedRows, views)) {
          stageRows(l, r.memref, lane.head, view, r.size, t, last, lane.thread,
                    alignedInputs);
          tile.tiles.emplace_back(r.memref, view);
        }
        l.b.create<gpu::BarrierOp>();
        Value count = l.b.create<arith::MinUIOp>(
            tileSources, l.b.create<arith::SubIOp>(row.walkHi, t));
        staged = tile;
        SmallVector<Value> next(
            l.forLoop(l.idx(0), count, s, [&](Value i, ValueRange state) {
              return body(l.b.create<arith::AddIOp>(t, i), state);
            }));
        staged.reset();
        // Every lane is done with the tile before the next replaces it.
        l.b.create<gpu::BarrierOp>();
        return next;
      },
      tileSources));
}

SmallVector<Value> TileLanes::walk(const Lane &lane, const Row &row,
                                   ArrayRef<StagedRow> stagedRows,
                                   ValueRange init, EdgeDots dots,
                                   EdgeStep step) {
  SmallVector<Value> state =
      walkRanges(lane, row, stagedRows, init, [&](Value u, ValueRange s) {
        SmallVector<Value> d = dots(u);
        Value inRange = l.b.create<arith::AndIOp>(
            cmp(arith::CmpIPredicate::uge, u, row.lo),
            cmp(arith::CmpIPredicate::ult, u, row.hi));
        return SmallVector<Value>(l.ifElse(
            inRange, [&] { return step(u, d, s); },
            [&] { return SmallVector<Value>(s); }));
      });
  // Rows that break the promise go edge by edge, for as many rounds as the
  // warp's longest such row (dots need every lane); a lane past its own
  // edges computes on source 0 (every warp with an edge has one) and keeps
  // its state.
  return SmallVector<Value>(
      l.forLoop(l.idx(0), row.rounds, state, [&](Value i, ValueRange s) {
        Value hasEdge = l.b.create<arith::AndIOp>(
            row.perEdge, cmp(arith::CmpIPredicate::ult, i, row.degree));
        Value u = l.ifElse(
            hasEdge,
            [&] {
              return SmallVector<Value>{l.b.create<memref::LoadOp>(
                  row.g.inSrc,
                  ValueRange{l.b.create<arith::AddIOp>(row.first, i)})};
            },
            [&] { return SmallVector<Value>{l.idx(0)}; })[0];
        SmallVector<Value> d = dots(u);
        return SmallVector<Value>(l.ifElse(
            hasEdge, [&] { return step(u, d, s); },
            [&] { return SmallVector<Value>(s); }));
      }));
}

Value TileLanes::stagedTile(Value memref) const {
  if (staged)
    for (auto [m, tile] : staged->tiles)
      if (m == memref)
        return tile;
  return {};
}

Value TileLanes::statistic(const Lane &lane, Value memref, Value dst) {
  if (Value tile = stagedTile(memref))
    return l.b.create<memref::LoadOp>(
        tile,
        ValueRange{l.b.create<arith::SubIOp>(dst, staged->first), l.idx(0)});
  return l.b.create<memref::LoadOp>(memref, rowStart(l, dst, lane.head));
}

Value TileLanes::column(const Lane &lane, int64_t size, int64_t j) {
  int64_t slice = size / lanes;
  return l.b.create<arith::AddIOp>(
      l.b.create<arith::MulIOp>(lane.part, l.idx(slice)), l.idx(j));
}

SmallVector<Value> TileLanes::row(const Lane &lane, Value memref, Value r,
                                  int64_t size) {
  int64_t slice = size / lanes;
  // Within a staged walk, r is the step's source: its row is in the tile.
  if (Value tile = stagedTile(memref))
    return loadRow(l, tile,
                   ValueRange{l.b.create<arith::SubIOp>(r, staged->first),
                              column(lane, size, 0)},
                   slice);
  SmallVector<Value> at = {r};
  llvm::append_range(at, lane.head);
  at.push_back(column(lane, size, 0));
  return loadRow(l, memref, at, slice, alignedInputs);
}

void TileLanes::storeRow(const Lane &lane, ArrayRef<Value> values, Value memref,
                         int64_t size) {
  for (auto [j, x] : llvm::enumerate(values)) {
    SmallVector<Value> at = {lane.node};
    llvm::append_range(at, lane.head);
    at.push_back(column(lane, size, j));
    l.b.create<memref::StoreOp>(x, memref, at);
  }
}

Value TileLanes::dot(ArrayRef<Value> a, ArrayRef<Value> b) {
  Value sum = chainedDot(l, p.elem, a, b);
  // A node's lanes are aligned within the warp: offsets below `lanes`
  // stay among them.
  for (int64_t offset = lanes / 2; offset > 0; offset /= 2)
    sum = l.b.create<arith::AddFOp>(sum, shuffleXor(l, sum, offset));
  return sum;
}

SmallVector<Value> TileLanes::axpy(Value f, ArrayRef<Value> x, ValueRange s) {
  SmallVector<Value> next;
  for (auto [xj, sj] : llvm::zip_equal(x, s))
    next.push_back(l.b.create<math::FmaOp>(f, xj, sj));
  return next;
}

void TileLanes::destinationLane(const Lane &lane) {
  Value v = lane.node;
  Value scale = l.floatConst(p.elem, p.scale);
  SmallVector<Value> q = row(lane, p.q.memref, v, p.d);
  SmallVector<Value> dOut = row(lane, p.grads[0].memref, v, p.dvSize);
  // Both walks need the scaled score q . k and dP = dout . v of each edge.
  auto dots = [&](Value u) {
    return SmallVector<Value>{
        l.b.create<arith::MulFOp>(dot(q, row(lane, p.k.memref, u, p.d)), scale),
        dot(dOut, row(lane, p.v.memref, u, p.dvSize))};
  };
  Row edges = rowOf(p.g, lane);
  // Each step reads the source's k and v rows.
  StagedRow sources[] = {{p.k.memref, p.d}, {p.v.memref, p.dvSize}};
  // The statistics the edges' weights and score gradients use, kept in
  // registers for dq and stored for the source pass.
  EdgeStatistics stats;
  if (p.savedLse.memref) {
    // The norm and D from the weights the score gradients use.
    stats.shift = weightShift(l, p, v, lane.head);
    Value zero = l.floatConst(p.elem, 0.0);
    SmallVector<Value> sums =
        walk(lane, edges, sources, ValueRange{zero, zero}, dots,
             [&](Value, ValueRange d, ValueRange s) {
               Value w = attentionWeights(l, p, d[0], stats.shift);
               return SmallVector<Value>{l.b.create<math::FmaOp>(w, d[1], s[0]),
                                         l.b.create<arith::AddFOp>(w, s[1])};
             });
    stats.norm = inverseSum(l, sums[1]);
    stats.offset = l.b.create<arith::MulFOp>(sums[0], stats.norm);
  } else if (p.normalize) {
    // The maximum, the weights' sum and sum w dP, rescaled as the maximum
    // grows (D = sum P dP without forming the output row).
    double negInf = -std::numeric_limits<double>::infinity();
    SmallVector<Value> init = {l.floatConst(p.elem, negInf),
                               l.floatConst(p.elem, 0.0),
                               l.floatConst(p.elem, 0.0)};
    SmallVector<Value> sums = walk(
        lane, edges, sources, init, dots,
        [&](Value, ValueRange d, ValueRange s) {
          Value sc = clampScore(l, p, d[0]);
          Value max = l.b.create<arith::MaximumFOp>(s[0], sc);
          Value rescale =
              l.b.create<math::ExpOp>(l.b.create<arith::SubFOp>(s[0], max));
          Value w = l.b.create<math::ExpOp>(l.b.create<arith::SubFOp>(sc, max));
          Value z = l.b.create<math::FmaOp>(s[1], rescale, w);
          Value wdP = l.b.create<arith::MulFOp>(w, d[1]);
          return SmallVector<Value>{
              max, z, l.b.create<math::FmaOp>(s[2], rescale, wdP)};
        });
    stats.shift = sums[0];
    stats.norm = inverseSum(l, sums[1]);
    stats.offset = l.b.create<arith::MulFOp>(sums[2], stats.norm);
  } else {
    stats = edgeStatistics(l, p, v, lane.head);
  }
  if (p.normalize) {
    // d lse / d score = P: the log-sum-exp's gradient shifts dP as D does.
    if (p.grads.size() == 2)
      stats.offset = l.b.create<arith::SubFOp>(
          stats.offset, l.b.create<memref::LoadOp>(p.grads[1].memref,
                                                   rowStart(l, v, lane.head)));
    // One lane of the node stores what all of its lanes hold.
    Value first = cmp(arith::CmpIPredicate::eq, lane.part, l.idx(0));
    l.guarded(l.b.create<arith::AndIOp>(lane.valid, first), [&] {
      SmallVector<Value> at = rowStart(l, v, lane.head);
      if (!p.savedLse.memref)
        l.b.create<memref::StoreOp>(stats.shift, p.shift, at);
      l.b.create<memref::StoreOp>(stats.norm, p.norm, at);
      l.b.create<memref::StoreOp>(stats.offset, p.outDot, at);
    });
  }
  SmallVector<Value> dq =
      walk(lane, edges, sources, zeros(p.d / lanes), dots,
           [&](Value u, ValueRange d, ValueRange s) {
             Value w = attentionWeights(l, p, d[0], stats.shift);
             if (stats.norm)
               w = l.b.create<arith::MulFOp>(w, stats.norm);
             Value ds = throughClamp(
                 l, p, d[0],
                 l.b.create<arith::MulFOp>(
                     w, l.b.create<arith::SubFOp>(d[1], stats.offset)));
             return axpy(l.b.create<arith::MulFOp>(ds, scale),
                         row(lane, p.k.memref, u, p.d), s);
           });
  l.guarded(lane.valid, [&] { storeRow(lane, dq, p.dq, p.d); });
}

void TileLanes::sourceLane(const Lane &lane, bool withDk, bool withDv) {
  Value u = lane.node;
  Value scale = l.floatConst(p.elem, p.scale);
  SmallVector<Value> k = row(lane, p.k.memref, u, p.d);
  SmallVector<Value> v;
  if (withDk)
    v = row(lane, p.v.memref, u, p.dvSize);
  int64_t dkSlice = withDk ? p.d / lanes : 0;
  SmallVector<Value> init = zeros(dkSlice);
  if (withDv)
    llvm::append_range(init, zeros(p.dvSize / lanes));
  // The reversal's in-edges of a source are its destinations: the scaled
  // score and (for dk) dP of each.
  Row destinations = rowOf(p.r, lane);
  // Each step reads the destination's q and dout rows and statistics.
  SmallVector<StagedRow> rows = {{p.q.memref, p.d},
                                 {p.grads[0].memref, p.dvSize}};
  for (Value buffer : statisticBuffers(p))
    rows.push_back({buffer, 1});
  // The destination's statistics, loaded by every lane at the step's start
  // with its rows (not after the range test), so that their latency
  // overlaps the dot products.
  EdgeStatistics stepStats;
  auto dots = [&](Value dst) {
    stepStats = edgeStatistics(l, p, dst, lane.head, [&](Value memref) {
      return statistic(lane, memref, dst);
    });
    SmallVector<Value> d = {l.b.create<arith::MulFOp>(
        dot(row(lane, p.q.memref, dst, p.d), k), scale)};
    if (withDk)
      d.push_back(dot(row(lane, p.grads[0].memref, dst, p.dvSize), v));
    return d;
  };
  SmallVector<Value> sums = walk(
      lane, destinations, rows, init, dots,
      [&](Value dst, ValueRange d, ValueRange s) {
        const EdgeStatistics &stats = stepStats;
        Value w = attentionWeights(l, p, d[0], stats.shift);
        if (stats.norm)
          w = l.b.create<arith::MulFOp>(w, stats.norm);
        SmallVector<Value> next;
        if (withDk) {
          Value ds = throughClamp(
              l, p, d[0],
              l.b.create<arith::MulFOp>(
                  w, l.b.create<arith::SubFOp>(d[1], stats.offset)));
          llvm::append_range(next, axpy(l.b.create<arith::MulFOp>(ds, scale),
                                        row(lane, p.q.memref, dst, p.d),
                                        s.take_front(dkSlice)));
        }
        if (withDv)
          llvm::append_range(
              next, axpy(w, row(lane, p.grads[0].memref, dst, p.dvSize),
                         s.drop_front(dkSlice)));
        return next;
      });
  l.guarded(lane.valid, [&] {
    ArrayRef<Value> rest = sums;
    if (withDk)
      storeRow(lane, rest.take_front(dkSlice), p.dk, p.d);
    if (withDv)
      storeRow(lane, rest.drop_front(dkSlice), p.dv, p.dvSize);
  });
}

void TileLanes::build(const LoopTarget &target) {
  forEachLane(p.g.numDst, [&](const Lane &lane) { destinationLane(lane); });
  p.r = reverseGraph(l, p.g, target);
  // k, v, dk and dv together where their parts fit, else dv (k and dv)
  // then dk (k, v and dk: as many floats as the destination pass).
  if (2 * (p.d + p.dvSize) / lanes <= kLaneFloats) {
    forEachLane(p.r.numDst,
                [&](const Lane &lane) { sourceLane(lane, true, true); });
    return;
  }
  forEachLane(p.r.numDst,
              [&](const Lane &lane) { sourceLane(lane, false, true); });
  forEachLane(p.r.numDst,
              [&](const Lane &lane) { sourceLane(lane, true, false); });
}

/// Whether the tiles serve `op`: a structure that promises ranges, every
/// edge listed, f32 rows of static sizes with at most one head dim that no
/// operand broadcasts, and rows that fit in registers.
static bool tileable(FusedAttentionGradOp op) {
  if (cast<GraphType>(op.getGraph().getType()).getStructure() ==
          GraphStructure::General ||
      op.getEdges())
    return false;
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  if (!typeOf(op.getQuery()).getElementType().isF32())
    return false;
  ArrayRef<int64_t> q = getItemShape(typeOf(op.getQuery()));
  if (q.size() > 2)
    return false;
  auto sameHeads = [&](Value x) {
    ArrayRef<int64_t> item = getItemShape(typeOf(x));
    return item.size() == q.size() && (q.size() == 1 || item[0] == q[0]);
  };
  if (!sameHeads(op.getKey()) || !sameHeads(op.getValue()) ||
      !llvm::all_of(op.getGrads(), sameHeads) ||
      (op.getSavedLse() && !sameHeads(op.getSavedLse())))
    return false;
  int64_t d = q.back();
  int64_t dv = getItemShape(typeOf(op.getValue())).back();
  return !ShapedType::isDynamic(d) && !ShapedType::isDynamic(dv) &&
         getItemShape(typeOf(op.getKey())).back() == d &&
         lanesPerNode(d, dv).has_value();
}

LogicalResult loops::lowerFusedAttentionGradToTiles(FusedAttentionGradOp op,
                                                    const LoopTarget &target,
                                                    TileThreads threads,
                                                    RewriterBase &rewriter) {
  if (!tileable(op))
    return failure();
  Lowering l(op, rewriter);
  FailureOr<AttentionGradPlan> p = planAttentionGrad(l, op);
  if (failed(p))
    return failure();
  // Loops run a node per iteration, its rows whole.
  int64_t lanes =
      threads == TileThreads::Warps ? *lanesPerNode(p->d, p->dvSize) : 1;
  l.guarded(p->inputsOk, [&] {
    // Rows read in 16-byte loads where their slices allow (kernels only).
    SmallVector<Value> aligned;
    if (threads == TileThreads::Warps) {
      alignRows(l, p->q, p->d / lanes, aligned);
      alignRows(l, p->k, p->d / lanes, aligned);
      alignRows(l, p->v, p->dvSize / lanes, aligned);
      alignRows(l, p->grads[0], p->dvSize / lanes, aligned);
    }
    TileLanes(l, *p, threads, lanes, aligned).build(target);
  });
  return l.replaceWithBuffers(op, {p->dq, p->dk, p->dv});
}
