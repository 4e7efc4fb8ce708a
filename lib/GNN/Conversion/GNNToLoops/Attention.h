//===- Attention.h - lowerings of gnn.fused_attention -----------*- C++ -*-===//
//
// Part of gnnc. What the CPU loops and the GPU kernel of the fused attention
// share: operands, output buffers, run-time checks and the online-softmax
// arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOLOOPS_ATTENTION_H
#define GNN_CONVERSION_GNNTOLOOPS_ATTENTION_H

#include "Lowering.h"

namespace mlir::gnn::loops {

/// Operands, outputs and checks of one gnn.fused_attention.
struct AttentionPlan {
  GraphParts g;
  Feature q, k, val;
  /// Per-edge byte mask of the listed edges, or null (all edges).
  Value mask;
  /// Extents of the head dims (every per-row dim but the last).
  SmallVector<Value> heads;
  /// Feature sizes of q/k and of v.
  Value d, dv;
  /// The weighted sums (normalized or not); without `normalize` z, with it
  /// the log-sum-exp when the op returns it.
  Value out, zOut, lseOut;
  /// Whether the run-time size checks passed (mismatches are reported).
  Value inputsOk;
  Type elem;
  /// Keep a running maximum (normalize without clamp).
  bool online;
  double scale;
  std::optional<std::pair<double, double>> clamp;

  SmallVector<Value> buffers() const {
    SmallVector<Value> result = {out};
    if (zOut)
      result.push_back(zOut);
    if (lseOut)
      result.push_back(lseOut);
    return result;
  }
};

/// Allocates the outputs and emits the size checks of `op` at `l`'s
/// insertion point.
FailureOr<AttentionPlan> planAttention(Lowering &l, FusedAttentionOp op);

/// The score of an edge from its dot product: scaled, then clamped.
Value attentionScore(Lowering &l, const AttentionPlan &p, Value dot);

/// One edge's step of the softmax sum with running maximum `max`: the
/// edge's weight, the factor that rescales what was summed so far (null
/// when not `online`) and the new maximum.
struct SoftmaxStep {
  Value weight, rescale, max;
};
SoftmaxStep softmaxStep(Lowering &l, const AttentionPlan &p, Value max,
                        Value score);

/// 1 / z, or 0 for a node without in-edges (z = 0).
Value inverseSum(Lowering &l, Value z);

/// Whether CSR slots [first, first + degree) list the sources lo, lo + 1,
/// ... in order (what a structured graph promises), with lo the first
/// slot's source (0 and true without slots).
struct SourceRange {
  Value lo, contiguous;
};
SourceRange sourceRange(Lowering &l, const GraphParts &g, Value first,
                        Value degree);

/// The index of element `column` (default 0) of row `row`, head `head` of a
/// feature.
SmallVector<Value> rowStart(Lowering &l, Value row, ValueRange head,
                            int64_t column = 0);

/// log(z) + `max` for the softmax sums of a destination (`max` counts only
/// when `online`): the log-sum-exp of its scores, -inf without in-edges.
Value logSumExp(Lowering &l, const AttentionPlan &p, Value max, Value z);

/// Writes a destination's weighted sum `acc` (a vector) and sum of weights
/// `z` at `index`: both without `normalize`, else their quotient (and the
/// log-sum-exp, from `max` as logSumExp takes it, when the op returns it).
void storeVectorResult(Lowering &l, const AttentionPlan &p, Value acc, Value z,
                       Value max, ValueRange index);

/// The softmax sums of one destination and head: the sum of weights, the
/// running maximum (with `online`) and the weighted sum of value rows.
struct ChunkedSums {
  Value z, max, acc;
};

/// Destination v and head `head` over all its in-edges, in chunks of
/// kVectorLanes edges (static feature sizes d of q/k and dv of v, no edge
/// mask): its softmax sums.
ChunkedSums chunkedSoftmaxRow(Lowering &l, const AttentionPlan &p, int64_t d,
                              int64_t dv, Value v, ValueRange head);

/// chunkedSoftmaxRow with the destination's results stored.
void chunkedAttentionRow(Lowering &l, const AttentionPlan &p, int64_t d,
                         int64_t dv, Value v, ValueRange head);

/// kVectorLanes in-edge slots from `slot` of a node whose slots end at
/// `last`: their neighbors (slots past `last` repeat the first one) and
/// which lanes are edges.
struct EdgeChunk {
  SmallVector<Value> neighbors;
  Value valid;
};
EdgeChunk edgeChunk(Lowering &l, const GraphParts &g, Value slot, Value last);

/// The dot products of row `row` of feature `a` with rows `rows`
/// (kVectorLanes of them) of feature `b`, as one vector, for a static
/// feature size d that is a multiple of kVectorLanes: each row accumulates
/// lane-wise products of kVectorLanes-wide pieces (FMAs, no reduction per
/// row), then one transposing tree of shuffles and adds sums all partial
/// vectors at once (7 adds instead of a horizontal sum per row).
Value chunkDots(Lowering &l, Type elem, int64_t d, Value a, Value row, Value b,
                ArrayRef<Value> rows, ValueRange head);

/// Whether the block-tiled kernel serves `op`: every in-edge listed,
/// float32 rows of static sizes with the same head dims in q, k and v.
bool blockTileable(const AttentionPlan &p);

/// Tiles of destinations that share a source range against chunks of those
/// sources, scores and weighted sums through the runtime's GEMM
/// (BlockAttention.cpp). Calls the runtime: CPU only.
void blockTiledAttention(Lowering &l, const AttentionPlan &p, int64_t d,
                         int64_t dv);

/// Loops over destinations (scf.parallel), vectorized for static sizes;
/// with `blockTiles`, through blockTiledAttention where it serves.
LogicalResult lowerFusedAttentionToLoops(FusedAttentionOp op, bool blockTiles,
                                         RewriterBase &rewriter);

/// Operands, outputs and statistics of one gnn.fused_attention_grad.
struct AttentionGradPlan {
  /// The graph, and its reversal (the sources' out-edges as in-edges),
  /// which the lowering builds (reverseGraph) before a pass over sources.
  GraphParts g, r;
  Feature q, k, v;
  /// The upstream gradients: of the output (normalized), else of wv and z.
  SmallVector<Feature> grads;
  /// Per-edge byte mask of the listed edges, or null (all edges).
  Value mask;
  Value dq, dk, dv;
  /// Per destination and head, with `normalize` ([N, heads..., 1]), what
  /// the source pass reads: the weights' shift (the forward's log-sum-exp
  /// when saved, else the recomputed maximum), their norm, and D - dlse
  /// (D = sum P dP over the destination's edges). An edge's weight P is
  /// exp(clamped score - shift) * norm, norm being 1 / the sum of
  /// exp(clamped score - shift) over the destination's edges. Why the
  /// norm: a float32 log-sum-exp of scores in the hundreds is off by up to
  /// half its ulp (1.5e-5 at 300), and weights that sum to 1 only within
  /// that leave the score gradients' sum over a destination (0 in exact
  /// arithmetic) at that fraction of D, which the gradients of the queries
  /// and the keys' biases carry; weights normalized by their own sum keep
  /// it to rounding.
  Value shift, norm, outDot;
  /// The forward's log-sum-exp, when saved (else recomputed).
  Feature savedLse;
  SmallVector<Value> heads;
  Type elem;
  /// Static feature sizes of q/k and of v.
  int64_t d = 0, dvSize = 0;
  double scale = 1.0;
  std::optional<std::pair<double, double>> clamp;
  bool normalize = false;
  /// Whether the run-time size checks passed (mismatches are reported).
  Value inputsOk;
};

/// The operands of `op`, its results and (normalized) the statistics'
/// buffers allocated, and its size checks emitted at `l`'s insertion point
/// (not yet the reversal `r`).
FailureOr<AttentionGradPlan> planAttentionGrad(Lowering &l,
                                               FusedAttentionGradOp op);

/// The clamped score (`s` itself without a clamp); scalars or vectors.
Value clampScore(Lowering &l, const AttentionGradPlan &p, Value s);
/// `ds` where the clamp passes the unclamped score `s` (inclusive bounds),
/// else 0; scalars or vectors.
Value throughClamp(Lowering &l, const AttentionGradPlan &p, Value s, Value ds);

/// Stores a destination's statistics from its softmax sums (running
/// maximum, sum of weights z and weighted sum of value rows): the maximum
/// as the shift, 1 / z as the norm, and D (storeOutDot) with out the
/// weighted sum times 1 / z.
void storeStatistics(Lowering &l, const AttentionGradPlan &p, Value dst,
                     ValueRange head, Value max, Value z, Value acc);

/// Stores D = dout . out - dlse of a destination from its output row `out`
/// (a vector); dlse counts when the op has the log-sum-exp's gradient.
void storeOutDot(Lowering &l, const AttentionGradPlan &p, Value dst,
                 ValueRange head, Value out);

/// Stores D - dlse of a destination given D (a scalar).
void storeOffset(Lowering &l, const AttentionGradPlan &p, Value dst,
                 ValueRange head, Value outDot);

/// Stores the norm and D - dlse of a destination whose shift was given
/// (saved), from the sums over its edges of w = exp(clamped score - shift)
/// (`weightSum`) and of w dP (`weightedDP`).
void storeWeightSums(Lowering &l, const AttentionGradPlan &p, Value dst,
                     ValueRange head, Value weightedDP, Value weightSum);

/// The unnormalized weights exp(clamped score - shift) of `scaledScores`
/// (raw dot products times the scale; scalars or vectors).
Value attentionWeights(Lowering &l, const AttentionGradPlan &p,
                       Value scaledScores, Value shift);

/// A destination's statistics as its edges use them, read after the
/// destination pass: an edge's weight is exp(clamped score - shift) times
/// `norm` (null: 1) and its score's gradient weight * (dP - offset).
/// Normalized: (the shift, the norm, D - dlse); otherwise (0, null, -dz).
/// Scalars, or vectors of lanes (splat, or one destination per lane).
struct EdgeStatistics {
  Value shift, norm, offset;
  /// The same statistics in every lane of `type`.
  EdgeStatistics splat(Lowering &l, VectorType type) const;
};
/// Reads a destination's statistic from one of statisticBuffers' (where
/// the caller has it elsewhere, such as staged in shared memory); null: a
/// load at the destination's row start.
using StatisticLoad = function_ref<Value(Value memref)>;
EdgeStatistics edgeStatistics(Lowering &l, const AttentionGradPlan &p,
                              Value dst, ValueRange head,
                              StatisticLoad load = {});
/// edgeStatistics' shift and offset alone: passes that compute D
/// themselves need the shift before D is stored, and store the offset
/// after.
Value weightShift(Lowering &l, const AttentionGradPlan &p, Value dst,
                  ValueRange head, StatisticLoad load = {});
Value dpOffset(Lowering &l, const AttentionGradPlan &p, Value dst,
               ValueRange head, StatisticLoad load = {});
/// The buffers edgeStatistics reads ([node, head..., 1] each).
SmallVector<Value> statisticBuffers(const AttentionGradPlan &p);

/// For vectors of edges: from their raw dot products q . k and dP = dout .
/// v, and the statistics of their destinations (vectors), the weights and
/// scale * (the scores' gradients), both zero on lanes not `valid` (chosen
/// after the arithmetic, so those lanes may hold anything). `weights`, if
/// given, are the unnormalized weights the shift gives, computed before.
std::pair<Value, Value> scoreGradients(Lowering &l, const AttentionGradPlan &p,
                                       Value dots, Value dP,
                                       const EdgeStatistics &stats, Value valid,
                                       Value weights = {});

/// One head of one node of a pass of the backward (its index in the graph
/// the pass walks).
using NodeHeadBody = function_ref<void(Value node, ValueRange head)>;

/// Whether the block-tiled backward serves `p` (as blockTileable).
bool blockTileable(const AttentionGradPlan &p);

/// The backward in block tiles (BlockAttentionGrad.cpp): one pass where
/// the graph splits into blocks, else runs of destinations, then runs of
/// sources of the graph's reversal (built into `p.r` first), through the
/// runtime's GEMM; the other nodes through `destinationRow` and `sourceRow`.
/// CPU only.
void blockTiledAttentionGrad(Lowering &l, AttentionGradPlan &p,
                             NodeHeadBody destinationRow,
                             NodeHeadBody sourceRow);

/// gnn.fused_attention_grad as two parallel passes over nodes (CPU and
/// GPU alike: the parallel loops map to kernels); on CPU cores, a node's
/// edges in vector chunks where sizes allow, and through
/// blockTiledAttentionGrad where it serves (the target's attention blocks).
LogicalResult lowerFusedAttentionGrad(FusedAttentionGradOp op,
                                      const LoopTarget &target,
                                      RewriterBase &rewriter);

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOLOOPS_ATTENTION_H
