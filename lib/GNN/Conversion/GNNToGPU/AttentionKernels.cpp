//===- AttentionKernels.cpp - gnn.fused_attention as a GPU kernel ---------===//
//
// Part of gnnc. A group of G lanes (a power of two up to a warp) handles one
// destination and head: lane j holds elements j, j + G, ... of the query row
// and of the running weighted sum in registers, the dot product with each
// source's key row is reduced by butterfly shuffles within the group, and
// every lane keeps the softmax state (running maximum and sum) of its group.
// Loads of key and value rows are coalesced across the lanes of a group. No
// per-edge value is written to memory.
//
// Groups tile warps (G divides 32) and warps tile blocks, so the shuffles
// (xor offsets below G) never cross groups.
//
// Graphs whose structure promises each destination a contiguous range of
// sources (complete, causal and bipartite blocks) get a tiled kernel
// instead: a warp takes 32 consecutive destinations (one per lane) and one
// head, and walks the union of their source ranges in lockstep. Every lane
// reads the same key and value row at each step, so one load serves the
// whole warp, and each lane keeps its query row and running sum in
// registers; there are no shuffles per edge. The warp stages the key and
// value rows of 32 sources at a time in shared memory, each lane loading
// consecutive slices with all its loads in flight at once, so that a
// source costs a shared-memory read instead of a global memory latency
// (with a warp or two per scheduler, nothing else hides that latency). A
// destination whose CSR row is not the range its first source starts (a
// broken promise) takes the per-edge path in the same kernel, so results
// stay exact.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernels.h"
#include "AlignedRows.h"
#include "GNNToLoops/Attention.h"
#include "SharedTiles.h"
#include "Warp.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
constexpr int64_t kBlockThreads = 128;
/// Largest q plus running-sum row the tiled kernel keeps in registers.
constexpr int64_t kTileRegisterFloats = 192;

/// The kernel's static layout: rows are [heads?, d] with at most one head
/// dim, q and k share d, and no operand broadcasts a head.
struct KernelShape {
  int64_t d, dv, lanes;
  int64_t perLaneD() const { return llvm::divideCeil(d, lanes); }
  int64_t perLaneDv() const { return llvm::divideCeil(dv, lanes); }
};

std::optional<KernelShape> kernelShape(FusedAttentionOp op) {
  auto itemOf = [](Value v) {
    return getItemShape(cast<RankedTensorType>(v.getType()));
  };
  ArrayRef<int64_t> q = itemOf(op.getQuery()), k = itemOf(op.getKey()),
                    v = itemOf(op.getValue());
  if (q.size() > 2 || k.size() != q.size() || v.size() != q.size())
    return std::nullopt;
  if (!cast<RankedTensorType>(op.getQuery().getType()).getElementType().isF32())
    return std::nullopt;
  if (q.size() == 2 && (k[0] != q[0] || v[0] != q[0]))
    return std::nullopt;
  if (ShapedType::isDynamic(q.back()) || k.back() != q.back() ||
      ShapedType::isDynamic(v.back()))
    return std::nullopt;
  KernelShape shape{q.back(), v.back(), 0};
  shape.lanes =
      std::min<int64_t>(kWarp, llvm::PowerOf2Ceil(std::max(shape.d, shape.dv)));
  return shape;
}

/// Destination v's first CSR slot and its in-degree (0 for a lane past the
/// last destination, which reads row 0's bounds).
struct CsrRow {
  Value first, degree;
};
CsrRow csrRow(Lowering &l, const AttentionPlan &p, Value v, Value valid) {
  auto [first, last] = l.inSlots(p.g, v);
  Value degree = l.b.create<arith::SelectOp>(
      valid, l.b.create<arith::SubIOp>(last, first), l.idx(0));
  return {first, degree};
}

/// The softmax state before any edge: z = 0, running max = -inf and `n`
/// zero sums.
SmallVector<Value> initialState(Lowering &l, Type t, int64_t n) {
  SmallVector<Value> state = {
      l.floatConst(t, 0.0),
      l.floatConst(t, -std::numeric_limits<double>::infinity())};
  for (int64_t j = 0; j < n; ++j)
    state.push_back(l.floatConst(t, 0.0));
  return state;
}

/// The softmax state {z, running max, sums...} after an edge with the given
/// score whose value row (or this lane's part of it) is `vRow`.
SmallVector<Value> softmaxAccumulate(Lowering &l, const AttentionPlan &p,
                                     ValueRange state, Value score,
                                     ArrayRef<Value> vRow) {
  SoftmaxStep step = softmaxStep(l, p, state[1], score);
  Value z = state[0];
  SmallVector<Value> acc(state.drop_front(2));
  if (step.rescale) {
    z = l.b.create<arith::MulFOp>(z, step.rescale);
    for (Value &a : acc)
      a = l.b.create<arith::MulFOp>(a, step.rescale);
  }
  z = l.b.create<arith::AddFOp>(z, step.weight);
  for (auto [a, x] : llvm::zip_equal(acc, vRow))
    a = l.b.create<math::FmaOp>(step.weight, x, a);
  SmallVector<Value> next = {z, step.max};
  llvm::append_range(next, acc);
  return next;
}

/// Builds the kernel body for one group (destination v, head h). Shuffles
/// need every lane of the warp, so the edge loop runs for the largest
/// in-degree among the warp's groups; a group past its own edges (or past
/// the last destination) computes nothing in those iterations.
class GroupBody {
public:
  GroupBody(Lowering &l, const AttentionPlan &p, const KernelShape &shape,
            Value valid, Value v, Value head, Value lane)
      : l(l), p(p), shape(shape), valid(valid), v(v), head(head), lane(lane) {}

  void build() {
    SmallVector<Value> qRegs;
    for (int64_t j = 0; j < shape.perLaneD(); ++j)
      qRegs.push_back(loadMasked(p.q.memref, v, j, shape.d));
    CsrRow slots = csrRow(l, p, v, valid);
    Value first = slots.first, degree = slots.degree;
    Value rounds = warpMax(degree);

    store(l.forLoop(l.idx(0), rounds,
                    initialState(l, p.elem, shape.perLaneDv()),
                    [&](Value i, ValueRange state) {
                      return round(first, degree, i, qRegs, state);
                    }));
  }

private:
  /// One round: this group's i-th in-edge, if it has one and it is listed.
  SmallVector<Value> round(Value first, Value degree, Value i,
                           ArrayRef<Value> qRegs, ValueRange state) {
    Type t = p.elem;
    Value hasEdge =
        l.b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, i, degree);
    // (listed, source, partial dot) of the edge; loads only for real edges.
    auto edge = l.b.create<scf::IfOp>(
        hasEdge,
        [&](OpBuilder &b, Location) {
          OpBuilder::InsertionGuard guard(l.b);
          l.b.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
          Value slot = l.b.create<arith::AddIOp>(first, i);
          Value u = l.b.create<memref::LoadOp>(p.g.inSrc, slot);
          Value listed = l.b.create<arith::ConstantIntOp>(1, 1);
          if (p.mask) {
            Value e = l.b.create<memref::LoadOp>(p.g.inEid, slot);
            listed = l.b.create<arith::CmpIOp>(
                arith::CmpIPredicate::ne, l.b.create<memref::LoadOp>(p.mask, e),
                l.b.create<arith::ConstantIntOp>(0, 8));
          }
          Value partial = l.floatConst(t, 0.0);
          for (auto [j, qj] : llvm::enumerate(qRegs))
            partial = l.b.create<math::FmaOp>(
                qj, loadMasked(p.k.memref, u, j, shape.d), partial);
          l.b.create<scf::YieldOp>(ValueRange{listed, u, partial});
        },
        [&](OpBuilder &b, Location) {
          OpBuilder::InsertionGuard guard(l.b);
          l.b.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
          l.b.create<scf::YieldOp>(
              ValueRange{l.b.create<arith::ConstantIntOp>(0, 1), l.idx(0),
                         l.floatConst(t, 0.0)});
        });
    Value listed = edge.getResult(0), u = edge.getResult(1);
    Value score = attentionScore(l, p, groupSum(edge.getResult(2)));
    auto update = l.b.create<scf::IfOp>(
        listed,
        [&](OpBuilder &b, Location) {
          OpBuilder::InsertionGuard guard(l.b);
          l.b.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());
          l.b.create<scf::YieldOp>(accumulate(u, score, state));
        },
        [&](OpBuilder &b, Location) { b.create<scf::YieldOp>(l.loc, state); });
    return update.getResults();
  }

  /// The softmax state after edge (u -> v) with the given score.
  SmallVector<Value> accumulate(Value u, Value score, ValueRange state) {
    SmallVector<Value> vSlice;
    for (int64_t j = 0; j < shape.perLaneDv(); ++j)
      vSlice.push_back(loadClamped(p.val.memref, u, j, shape.dv));
    return softmaxAccumulate(l, p, state, score, vSlice);
  }

  /// Writes this lane's part of the output row (and z).
  void store(ValueRange state) {
    l.guarded(valid, [&] {
      Value z = state[0];
      Value scale = p.zOut ? Value() : inverseSum(l, z);
      for (int64_t j = 0; j < shape.perLaneDv(); ++j) {
        Value c = column(j);
        Value x = state[2 + j];
        if (scale)
          x = l.b.create<arith::MulFOp>(x, scale);
        l.guarded(below(c, shape.dv),
                  [&] { l.b.create<memref::StoreOp>(x, p.out, at(v, c)); });
      }
      if (p.zOut)
        l.guarded(below(lane, 1), [&] {
          l.b.create<memref::StoreOp>(z, p.zOut, at(v, l.idx(0)));
        });
      if (p.lseOut)
        l.guarded(below(lane, 1), [&] {
          l.b.create<memref::StoreOp>(logSumExp(l, p, state[1], z), p.lseOut,
                                      at(v, l.idx(0)));
        });
    });
  }

  Value column(int64_t j) {
    return l.b.create<arith::AddIOp>(lane, l.idx(j * shape.lanes));
  }

  Value below(Value c, int64_t bound) {
    return l.b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, c,
                                     l.idx(bound));
  }

  SmallVector<Value> at(Value row, Value c) {
    SmallVector<Value> index = {row};
    if (head)
      index.push_back(head);
    index.push_back(c);
    return index;
  }

  /// Element j of this lane's slice of a row; the last element stands in for
  /// columns past the end (only lanes beyond a row's size read it).
  Value loadClamped(Value memref, Value row, int64_t j, int64_t size) {
    Value c = l.b.create<arith::MinUIOp>(column(j), l.idx(size - 1));
    return l.b.create<memref::LoadOp>(memref, at(row, c));
  }

  /// As loadClamped, but 0 past the end.
  Value loadMasked(Value memref, Value row, int64_t j, int64_t size) {
    Value x = loadClamped(memref, row, j, size);
    return l.b.create<arith::SelectOp>(below(column(j), size), x,
                                       l.floatConst(p.elem, 0.0));
  }

  /// The sum of `x` over the group's lanes, in every lane: offsets below
  /// the group size stay within the (aligned) group.
  Value groupSum(Value x) {
    for (int64_t offset = shape.lanes / 2; offset > 0; offset /= 2)
      x = l.b.create<arith::AddFOp>(x, shuffleXor(l, x, offset));
    return x;
  }

  /// The maximum of `n` over the warp, in every lane.
  Value warpMax(Value n) {
    if (shape.lanes == kWarp)
      return n; // one group per warp
    Value x = l.b.create<arith::IndexCastUIOp>(l.b.getI32Type(), n);
    for (int64_t offset = kWarp / 2; offset > 0; offset /= 2)
      x = l.b.create<arith::MaxUIOp>(x, shuffleXor(l, x, offset));
    return l.b.create<arith::IndexCastUIOp>(l.b.getIndexType(), x);
  }

  Lowering &l;
  const AttentionPlan &p;
  const KernelShape &shape;
  Value valid, v, head, lane;
};

/// The tiled kernel's body for one lane: destination v (if `valid`) and
/// head `head` of a warp's 32 consecutive destinations.
class TileBody {
public:
  TileBody(Lowering &l, const AttentionPlan &p, const KernelShape &shape,
           Value valid, Value v, Value head, Value lane,
           ArrayRef<Value> alignedInputs)
      : l(l), p(p), shape(shape), valid(valid), v(v), head(head), lane(lane),
        alignedInputs(alignedInputs) {}

  void build() {
    CsrRow slots = csrRow(l, p, v, valid);
    Value first = slots.first, degree = slots.degree;
    Value hasEdges = cmp(arith::CmpIPredicate::ugt, degree, l.idx(0));
    auto [lo, contiguous] = sourceRange(l, p.g, first, degree);
    Value tiled = l.b.create<arith::AndIOp>(hasEdges, contiguous);
    Value myLo = l.b.create<arith::SelectOp>(tiled, lo, l.idx(0));
    Value myHi = l.b.create<arith::SelectOp>(
        tiled, l.b.create<arith::AddIOp>(lo, degree), l.idx(0));
    // The warp walks the union of its tiled lanes' ranges.
    Value tileLo =
        warpMinMax(l,
                   l.b.create<arith::SelectOp>(
                       tiled, lo, l.idx(std::numeric_limits<int64_t>::max())),
                   /*max=*/false);
    Value tileHi = warpMinMax(l, myHi, /*max=*/true);

    SmallVector<Value> qRegs = row(p.q.memref, v, shape.d);
    SmallVector<Value> tiles = sharedTiles(l, {shape.d, shape.dv});
    Value kTile = tiles[0], vTile = tiles[1];
    SmallVector<Value> heads;
    if (head)
      heads.push_back(head);
    Value tileSources = l.idx(kTileSources);
    Value last = l.b.create<arith::SubIOp>(tileHi, l.idx(1));
    ValueRange state = l.forLoop(
        tileLo, tileHi, initialState(l, p.elem, shape.dv),
        [&](Value t, ValueRange state) {
          stageRows(l, p.k.memref, heads, kTile, shape.d, t, last, lane,
                    alignedInputs);
          stageRows(l, p.val.memref, heads, vTile, shape.dv, t, last, lane,
                    alignedInputs);
          l.b.create<gpu::BarrierOp>();
          Value rows = l.b.create<arith::MinUIOp>(
              tileSources, l.b.create<arith::SubIOp>(tileHi, t));
          SmallVector<Value> next(
              l.forLoop(l.idx(0), rows, state, [&](Value r, ValueRange sums) {
                Value u = l.b.create<arith::AddIOp>(t, r);
                // Read by every lane (the same row): outside the branch.
                Value score = attentionScore(
                    l, p,
                    chainedDot(l, p.elem, qRegs, tileRow(kTile, r, shape.d)));
                Value inRange = l.b.create<arith::AndIOp>(
                    cmp(arith::CmpIPredicate::uge, u, myLo),
                    cmp(arith::CmpIPredicate::ult, u, myHi));
                return SmallVector<Value>(l.ifElse(
                    inRange,
                    [&] {
                      return softmaxAccumulate(l, p, sums, score,
                                               tileRow(vTile, r, shape.dv));
                    },
                    [&] { return SmallVector<Value>(sums); }));
              }));
          // Every lane is done with the tile before the next replaces it.
          l.b.create<gpu::BarrierOp>();
          return next;
        },
        tileSources);
    // Destinations whose row breaks the promise go edge by edge.
    Value perEdge = l.b.create<arith::AndIOp>(
        hasEdges, l.b.create<arith::XOrIOp>(
                      contiguous, l.b.create<arith::ConstantIntOp>(1, 1)));
    state = l.ifElse(
        perEdge,
        [&] {
          return l.forEachInEdge(
              p.g, v, /*mask=*/Value(), state,
              [&](Value u, Value, ValueRange s) {
                return accumulate(u, attentionScore(l, p, dot(qRegs, u)), s);
              });
        },
        [&] { return SmallVector<Value>(state); });
    store(state);
  }

private:
  Value cmp(arith::CmpIPredicate pred, Value a, Value b) {
    return l.b.create<arith::CmpIOp>(pred, a, b);
  }

  SmallVector<Value> at(Value row, int64_t c) {
    SmallVector<Value> index = {row};
    if (head)
      index.push_back(head);
    index.push_back(l.idx(c));
    return index;
  }

  /// Row `r` (of head `head`) of `memref` as `size` scalars (loadRow).
  SmallVector<Value> row(Value memref, Value r, int64_t size) {
    return loadRow(l, memref, at(r, 0), size, alignedInputs);
  }

  /// Row `r` of a shared-memory tile as `width` scalars.
  SmallVector<Value> tileRow(Value tile, Value r, int64_t width) {
    return loadRow(l, tile, ValueRange{r, l.idx(0)}, width);
  }

  /// q . k[u].
  Value dot(ArrayRef<Value> qRegs, Value u) {
    return chainedDot(l, p.elem, qRegs, row(p.k.memref, u, shape.d));
  }

  /// The softmax state after edge (u -> v) with the given score.
  SmallVector<Value> accumulate(Value u, Value score, ValueRange state) {
    return softmaxAccumulate(l, p, state, score,
                             row(p.val.memref, u, shape.dv));
  }

  void store(ValueRange state) {
    l.guarded(valid, [&] {
      Value z = state[0];
      Value scale = p.zOut ? Value() : inverseSum(l, z);
      for (int64_t j = 0; j < shape.dv; ++j) {
        Value x = state[2 + j];
        if (scale)
          x = l.b.create<arith::MulFOp>(x, scale);
        l.b.create<memref::StoreOp>(x, p.out, at(v, j));
      }
      if (p.zOut)
        l.b.create<memref::StoreOp>(z, p.zOut, at(v, 0));
      if (p.lseOut)
        l.b.create<memref::StoreOp>(logSumExp(l, p, state[1], z), p.lseOut,
                                    at(v, 0));
    });
  }

  Lowering &l;
  const AttentionPlan &p;
  const KernelShape &shape;
  Value valid, v, head, lane;
  /// Inputs whose rows start 16-byte aligned (withAlignedRows).
  ArrayRef<Value> alignedInputs;
};

/// Whether the tiled kernel serves `op`: a structure that promises source
/// ranges, every in-edge listed, and rows that fit in registers.
bool tileable(FusedAttentionOp op, const AttentionPlan &p,
              const KernelShape &shape) {
  auto graph = cast<GraphType>(op.getGraph().getType());
  return graph.getStructure() != GraphStructure::General && !p.mask &&
         shape.d + shape.dv <= kTileRegisterFloats;
}

/// Launches one warp per 32 destinations and head (see TileBody). Rows of
/// q, k and v are read in 16-byte loads where their sizes allow: copied
/// first if they do not start aligned.
void launchTiles(Lowering &l, AttentionPlan p, const KernelShape &shape,
                 Value numHeads) {
  SmallVector<Value> aligned;
  alignRows(l, p.q, shape.d, aligned);
  alignRows(l, p.k, shape.d, aligned);
  alignRows(l, p.val, shape.dv, aligned);
  Value tiles = l.b.create<arith::CeilDivUIOp>(p.g.numDst, l.idx(kWarp));
  Value one = l.idx(1);
  auto launch =
      l.b.create<gpu::LaunchOp>(tiles, numHeads, one, l.idx(kWarp), one, one,
                                l.b.create<arith::ConstantIntOp>(
                                    sharedTileBytes({shape.d, shape.dv}), 32));
  OpBuilder::InsertionGuard guard(l.b);
  l.b.setInsertionPointToStart(&launch.getBody().front());
  Value v = l.b.create<arith::AddIOp>(
      l.b.create<arith::MulIOp>(launch.getBlockIds().x, l.idx(kWarp)),
      launch.getThreadIds().x);
  // Lanes past the last destination take part in the warp's reductions.
  Value valid =
      l.b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, v, p.g.numDst);
  Value safeV = l.b.create<arith::SelectOp>(valid, v, l.idx(0));
  Value head = p.heads.empty() ? Value() : launch.getBlockIds().y;
  TileBody(l, p, shape, valid, safeV, head, launch.getThreadIds().x, aligned)
      .build();
  l.b.create<gpu::TerminatorOp>();
}
} // namespace

/// Launches a group of lanes per destination and head (see GroupBody).
static void launchGroups(Lowering &l, const AttentionPlan &p,
                         const KernelShape &shape, Value numHeads) {
  Value groups = l.b.create<arith::MulIOp>(p.g.numDst, numHeads);
  int64_t groupsPerBlock = kBlockThreads / shape.lanes;
  Value blocks = l.b.create<arith::CeilDivUIOp>(groups, l.idx(groupsPerBlock));
  Value one = l.idx(1);
  auto launch = l.b.create<gpu::LaunchOp>(blocks, one, one,
                                          l.idx(kBlockThreads), one, one);
  OpBuilder::InsertionGuard guard(l.b);
  l.b.setInsertionPointToStart(&launch.getBody().front());
  Value tid = launch.getThreadIds().x;
  Value group = l.b.create<arith::AddIOp>(
      l.b.create<arith::MulIOp>(launch.getBlockIds().x, l.idx(groupsPerBlock)),
      l.b.create<arith::DivUIOp>(tid, l.idx(shape.lanes)));
  Value lane = l.b.create<arith::RemUIOp>(tid, l.idx(shape.lanes));
  // Groups past the end run the warp's loop without edges (see GroupBody).
  Value valid =
      l.b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, group, groups);
  Value safeGroup = l.b.create<arith::SelectOp>(valid, group, l.idx(0));
  Value v = l.b.create<arith::DivUIOp>(safeGroup, numHeads);
  Value head = p.heads.empty()
                   ? Value()
                   : l.b.create<arith::RemUIOp>(safeGroup, numHeads);
  GroupBody(l, p, shape, valid, v, head, lane).build();
  l.b.create<gpu::TerminatorOp>();
}

LogicalResult loops::lowerFusedAttentionToGPU(FusedAttentionOp op,
                                              RewriterBase &rewriter) {
  std::optional<KernelShape> shape = kernelShape(op);
  if (!shape)
    return lowerFusedAttentionToLoops(op, /*blockTiles=*/false, rewriter);
  Lowering l(op, rewriter);
  FailureOr<AttentionPlan> p = planAttention(l, op);
  if (failed(p))
    return failure();
  Value numHeads = p->heads.empty() ? l.idx(1) : p->heads.front();
  // A launch needs at least one block.
  Value nonEmpty = l.b.create<arith::CmpIOp>(
      arith::CmpIPredicate::ugt,
      l.b.create<arith::MulIOp>(p->g.numDst, numHeads), l.idx(0));
  l.guarded(l.b.create<arith::AndIOp>(p->inputsOk, nonEmpty), [&] {
    if (tileable(op, *p, *shape))
      launchTiles(l, *p, *shape, numHeads);
    else
      launchGroups(l, *p, *shape, numHeads);
  });
  return l.replaceWithBuffers(op, p->buffers());
}
