//===- AttentionGrad.cpp - gnn.fused_attention_grad as loops --------------===//
//
// Part of gnnc. The backward of the fused attention in two passes that
// store no per-edge value. Per destination (in-edges): recompute the
// scores, and the weights' shift, norm and D = sum P dP (normalized; see
// AttentionGradPlan for why the weights have a norm of their own), and sum
// dq. Per source (out-edges, the reversed graph's in-edges): recompute each
// edge's weight from the destination's statistics and sum dk and dv. Each
// node's sums belong to one iteration of a parallel loop: no races, no atomics,
// results independent of threads. Runs of block-structured nodes go through
// GEMM tiles instead (BlockAttentionGrad.cpp); this file's loops take the other
// nodes.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "InEdges.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
/// Builds the loops of one gnn.fused_attention_grad with static feature
/// sizes (rows as vectors).
class AttentionGrad {
public:
  AttentionGrad(Lowering &l, FusedAttentionGradOp op, const LoopTarget &target)
      : l(l), op(op), target(target) {}

  LogicalResult build();

private:
  /// The dot product of two row vectors.
  Value dot(Value a, Value b) {
    return l.b.create<vector::ReductionOp>(vector::CombiningKind::ADD,
                                           l.b.create<arith::MulFOp>(a, b));
  }
  Value vload(VectorType type, Value memref, Value row, ValueRange head) {
    return l.b.create<vector::LoadOp>(type, memref, rowStart(l, row, head));
  }
  Value splat(VectorType type, Value x) {
    return l.b.create<vector::BroadcastOp>(type, x);
  }
  Value c(double x) { return l.floatConst(p.elem, x); }
  /// The scaled score before the clamp.
  Value score(Value qRow, Value kRow) {
    return l.b.create<arith::MulFOp>(dot(kRow, qRow), c(p.scale));
  }
  Value clamped(Value s) { return clampScore(l, p, s); }
  /// The weight of an edge with unclamped score `s` and the gradient of
  /// that score, given the destination's row `dst` of upstream data: (P,
  /// ds) normalized, (w, ds) otherwise.
  std::pair<Value, Value> edgeGradient(Value s, Value vRow, Value dst,
                                       ValueRange head);
  /// One head of a destination: its statistics (normalized) and dq.
  void destinationRow(Value dst, ValueRange head);
  /// One head of a source: dk and dv.
  void sourceRow(Value src, ValueRange head);
  /// Whether the rows go in chunks of kVectorLanes edges: every edge
  /// counts and feature sizes are whole vectors (chunkDots).
  bool chunked() const {
    return target.vectorLoops() && !p.mask && p.d % kVectorLanes == 0 &&
           p.dvSize % kVectorLanes == 0;
  }
  /// destinationRow and sourceRow in chunks of edges: the chunk's scores,
  /// weights and score gradients are vectors.
  void chunkedDestinationRow(Value dst, ValueRange head);
  void chunkedSourceRow(Value src, ValueRange head);

  Lowering &l;
  FusedAttentionGradOp op;
  AttentionGradPlan p;
  VectorType qType, vType;
  /// Kernels on a GPU take a node per thread: no vector chunks there, and
  /// the reversal in many chunks.
  const LoopTarget &target;
};
} // namespace

Value loops::clampScore(Lowering &l, const AttentionGradPlan &p, Value s) {
  if (!p.clamp)
    return s;
  Value lo = l.floatConst(s.getType(), p.clamp->first);
  Value hi = l.floatConst(s.getType(), p.clamp->second);
  return l.b.create<arith::MinimumFOp>(l.b.create<arith::MaximumFOp>(s, lo),
                                       hi);
}

Value loops::throughClamp(Lowering &l, const AttentionGradPlan &p, Value s,
                          Value ds) {
  if (!p.clamp)
    return ds;
  Value lo = l.floatConst(s.getType(), p.clamp->first);
  Value hi = l.floatConst(s.getType(), p.clamp->second);
  Value in = l.b.create<arith::AndIOp>(
      l.b.create<arith::CmpFOp>(arith::CmpFPredicate::OGE, s, lo),
      l.b.create<arith::CmpFOp>(arith::CmpFPredicate::OLE, s, hi));
  return l.b.create<arith::SelectOp>(in, ds, l.floatConst(ds.getType(), 0.0));
}

std::pair<Value, Value>
AttentionGrad::edgeGradient(Value s, Value vRow, Value dst, ValueRange head) {
  // w = exp(sc - shift) norm and ds = w (dout . v - offset): normalized, P
  // and P (dout . v - D); otherwise exp(sc) and w (dwv . v + dz).
  EdgeStatistics stats = edgeStatistics(l, p, dst, head);
  Value w = attentionWeights(l, p, s, stats.shift);
  if (stats.norm)
    w = l.b.create<arith::MulFOp>(w, stats.norm);
  Value dP = dot(vload(vType, p.grads[0].memref, dst, head), vRow);
  Value ds =
      l.b.create<arith::MulFOp>(w, l.b.create<arith::SubFOp>(dP, stats.offset));
  return {w, throughClamp(l, p, s, ds)};
}

void loops::storeOutDot(Lowering &l, const AttentionGradPlan &p, Value dst,
                        ValueRange head, Value out) {
  auto vType = cast<VectorType>(out.getType());
  Value dOut = l.b.create<vector::LoadOp>(vType, p.grads[0].memref,
                                          rowStart(l, dst, head));
  storeOffset(
      l, p, dst, head,
      l.b.create<vector::ReductionOp>(vector::CombiningKind::ADD,
                                      l.b.create<arith::MulFOp>(dOut, out)));
}

void loops::storeWeightSums(Lowering &l, const AttentionGradPlan &p, Value dst,
                            ValueRange head, Value weightedDP,
                            Value weightSum) {
  Value norm = inverseSum(l, weightSum);
  l.b.create<memref::StoreOp>(norm, p.norm, rowStart(l, dst, head));
  storeOffset(l, p, dst, head, l.b.create<arith::MulFOp>(weightedDP, norm));
}

void loops::storeOffset(Lowering &l, const AttentionGradPlan &p, Value dst,
                        ValueRange head, Value outDot) {
  // d lse / d score = P: the log-sum-exp's gradient shifts dP as D does.
  if (p.grads.size() == 2)
    outDot = l.b.create<arith::SubFOp>(
        outDot,
        l.b.create<memref::LoadOp>(p.grads[1].memref, rowStart(l, dst, head)));
  l.b.create<memref::StoreOp>(outDot, p.outDot, rowStart(l, dst, head));
}

Value loops::attentionWeights(Lowering &l, const AttentionGradPlan &p,
                              Value scaledScores, Value shift) {
  return l.b.create<math::ExpOp>(
      l.b.create<arith::SubFOp>(clampScore(l, p, scaledScores), shift));
}

void loops::storeStatistics(Lowering &l, const AttentionGradPlan &p, Value dst,
                            ValueRange head, Value max, Value z, Value acc) {
  auto vType = cast<VectorType>(acc.getType());
  Value norm = inverseSum(l, z);
  Value out = l.b.create<arith::MulFOp>(
      acc, l.b.create<vector::BroadcastOp>(vType, norm));
  l.b.create<memref::StoreOp>(max, p.shift, rowStart(l, dst, head));
  l.b.create<memref::StoreOp>(norm, p.norm, rowStart(l, dst, head));
  storeOutDot(l, p, dst, head, out);
}

/// A destination's statistic in `memref` (one of statisticBuffers'): from
/// `load` where given, else at the destination's row start.
static Value loadStatistic(Lowering &l, Value memref, Value dst,
                           ValueRange head, StatisticLoad load) {
  if (load)
    return load(memref);
  return l.b.create<memref::LoadOp>(memref, rowStart(l, dst, head));
}

Value loops::weightShift(Lowering &l, const AttentionGradPlan &p, Value dst,
                         ValueRange head, StatisticLoad load) {
  if (p.normalize)
    return loadStatistic(l, p.shift, dst, head, load);
  return l.floatConst(p.elem, 0.0);
}

Value loops::dpOffset(Lowering &l, const AttentionGradPlan &p, Value dst,
                      ValueRange head, StatisticLoad load) {
  if (p.normalize)
    return loadStatistic(l, p.outDot, dst, head, load);
  return l.b.create<arith::NegFOp>(
      loadStatistic(l, p.grads[1].memref, dst, head, load));
}

EdgeStatistics loops::edgeStatistics(Lowering &l, const AttentionGradPlan &p,
                                     Value dst, ValueRange head,
                                     StatisticLoad load) {
  EdgeStatistics stats;
  stats.shift = weightShift(l, p, dst, head, load);
  if (p.normalize)
    stats.norm = loadStatistic(l, p.norm, dst, head, load);
  stats.offset = dpOffset(l, p, dst, head, load);
  return stats;
}

SmallVector<Value> loops::statisticBuffers(const AttentionGradPlan &p) {
  if (p.normalize)
    return {p.shift, p.norm, p.outDot};
  return {p.grads[1].memref};
}

EdgeStatistics EdgeStatistics::splat(Lowering &l, VectorType type) const {
  auto lanes = [&](Value x) -> Value {
    return x ? l.b.create<vector::BroadcastOp>(type, x) : Value();
  };
  return {lanes(shift), lanes(norm), lanes(offset)};
}

std::pair<Value, Value> loops::scoreGradients(Lowering &l,
                                              const AttentionGradPlan &p,
                                              Value dots, Value dP,
                                              const EdgeStatistics &stats,
                                              Value valid, Value weights) {
  Type type = dots.getType();
  Value zeros = l.floatConst(type, 0.0);
  Value scale = l.floatConst(type, p.scale);
  Value s = l.b.create<arith::MulFOp>(dots, scale);
  Value w = weights ? weights : attentionWeights(l, p, s, stats.shift);
  if (stats.norm)
    w = l.b.create<arith::MulFOp>(w, stats.norm);
  Value ds = throughClamp(l, p, s,
                          l.b.create<arith::MulFOp>(
                              w, l.b.create<arith::SubFOp>(dP, stats.offset)));
  return {l.b.create<arith::SelectOp>(valid, w, zeros),
          l.b.create<arith::SelectOp>(
              valid, l.b.create<arith::MulFOp>(ds, scale), zeros)};
}

void AttentionGrad::chunkedDestinationRow(Value dst, ValueRange head) {
  auto chunkType = VectorType::get({kVectorLanes}, p.elem);
  // The chunk's raw scores q . k and dP = dout . v.
  auto scoresAndDP = [&](const EdgeChunk &chunk) -> std::pair<Value, Value> {
    return {chunkDots(l, p.elem, p.d, p.q.memref, dst, p.k.memref,
                      chunk.neighbors, head),
            chunkDots(l, p.elem, p.dvSize, p.grads[0].memref, dst, p.v.memref,
                      chunk.neighbors, head)};
  };
  if (p.savedLse.memref) {
    // The norm and D from the weights the score gradients use.
    Value shifts = splat(chunkType, weightShift(l, p, dst, head));
    Value zeros = l.floatConst(chunkType, 0.0);
    auto [first, last] = l.inSlots(p.g, dst);
    ValueRange sums = l.forLoop(
        first, last, ValueRange{zeros, zeros},
        [&](Value slot, ValueRange state) {
          EdgeChunk chunk = edgeChunk(l, p.g, slot, last);
          auto [dots, dP] = scoresAndDP(chunk);
          Value w = attentionWeights(
              l, p,
              l.b.create<arith::MulFOp>(dots, l.floatConst(chunkType, p.scale)),
              shifts);
          w = l.b.create<arith::SelectOp>(chunk.valid, w, zeros);
          return SmallVector<Value>{l.b.create<vector::FMAOp>(w, dP, state[0]),
                                    l.b.create<arith::AddFOp>(w, state[1])};
        },
        l.idx(kVectorLanes));
    auto total = [&](Value lanes) -> Value {
      return l.b.create<vector::ReductionOp>(vector::CombiningKind::ADD, lanes);
    };
    storeWeightSums(l, p, dst, head, total(sums[0]), total(sums[1]));
  } else if (p.normalize) {
    // The forward's chunked softmax gives the log-sum-exp and the output.
    AttentionPlan forward;
    forward.g = p.g;
    forward.q = p.q;
    forward.k = p.k;
    forward.val = p.v;
    forward.heads = p.heads;
    forward.elem = p.elem;
    forward.online = true;
    forward.scale = p.scale;
    forward.clamp = p.clamp;
    ChunkedSums sums = chunkedSoftmaxRow(l, forward, p.d, p.dvSize, dst, head);
    storeStatistics(l, p, dst, head, sums.max, sums.z, sums.acc);
  }
  EdgeStatistics stats = edgeStatistics(l, p, dst, head).splat(l, chunkType);
  auto [first, last] = l.inSlots(p.g, dst);
  Value sum = l.forLoop(
      first, last, ValueRange{l.floatConst(qType, 0.0)},
      [&](Value slot, ValueRange state) {
        EdgeChunk chunk = edgeChunk(l, p.g, slot, last);
        auto [dots, dP] = scoresAndDP(chunk);
        Value ds = scoreGradients(l, p, dots, dP, stats, chunk.valid).second;
        Value acc = state[0];
        for (auto [j, src] : llvm::enumerate(chunk.neighbors)) {
          Value f = l.b.create<vector::ExtractElementOp>(
              ds, l.b.create<arith::ConstantIndexOp>(j));
          acc = l.b.create<vector::FMAOp>(
              splat(qType, f), vload(qType, p.k.memref, src, head), acc);
        }
        return SmallVector<Value>{acc};
      },
      l.idx(kVectorLanes))[0];
  l.b.create<vector::StoreOp>(sum, p.dq, rowStart(l, dst, head));
}

void AttentionGrad::chunkedSourceRow(Value src, ValueRange head) {
  auto chunkType = VectorType::get({kVectorLanes}, p.elem);
  auto [first, last] = l.inSlots(p.r, src);
  SmallVector<Value> init = {l.floatConst(qType, 0.0),
                             l.floatConst(vType, 0.0)};
  ValueRange sums = l.forLoop(
      first, last, init,
      [&](Value slot, ValueRange state) {
        // The reversed graph's in-edges of a source: its destinations.
        EdgeChunk chunk = edgeChunk(l, p.r, slot, last);
        Value dots = chunkDots(l, p.elem, p.d, p.k.memref, src, p.q.memref,
                               chunk.neighbors, head);
        Value dP = chunkDots(l, p.elem, p.dvSize, p.v.memref, src,
                             p.grads[0].memref, chunk.neighbors, head);
        // Each lane's destination's statistics.
        Value zeros = l.floatConst(chunkType, 0.0);
        EdgeStatistics lanes{zeros, p.normalize ? zeros : Value(), zeros};
        for (auto [j, dst] : llvm::enumerate(chunk.neighbors)) {
          EdgeStatistics stats = edgeStatistics(l, p, dst, head);
          Value lane = l.b.create<arith::ConstantIndexOp>(j);
          auto insert = [&](Value x, Value into) -> Value {
            return x ? l.b.create<vector::InsertElementOp>(x, into, lane)
                     : Value();
          };
          lanes = {insert(stats.shift, lanes.shift),
                   insert(stats.norm, lanes.norm),
                   insert(stats.offset, lanes.offset)};
        }
        auto [w, ds] = scoreGradients(l, p, dots, dP, lanes, chunk.valid);
        Value dkSum = state[0], dvSum = state[1];
        for (auto [j, dst] : llvm::enumerate(chunk.neighbors)) {
          Value lane = l.b.create<arith::ConstantIndexOp>(j);
          Value f = l.b.create<vector::ExtractElementOp>(ds, lane);
          Value weight = l.b.create<vector::ExtractElementOp>(w, lane);
          dkSum = l.b.create<vector::FMAOp>(
              splat(qType, f), vload(qType, p.q.memref, dst, head), dkSum);
          dvSum = l.b.create<vector::FMAOp>(
              splat(vType, weight), vload(vType, p.grads[0].memref, dst, head),
              dvSum);
        }
        return SmallVector<Value>{dkSum, dvSum};
      },
      l.idx(kVectorLanes));
  l.b.create<vector::StoreOp>(sums[0], p.dk, rowStart(l, src, head));
  l.b.create<vector::StoreOp>(sums[1], p.dv, rowStart(l, src, head));
}

void AttentionGrad::destinationRow(Value dst, ValueRange head) {
  if (chunked())
    return chunkedDestinationRow(dst, head);
  Value qRow = vload(qType, p.q.memref, dst, head);
  if (p.savedLse.memref) {
    // The norm and D from the weights the score gradients use.
    Value shift = weightShift(l, p, dst, head);
    Value dOut = vload(vType, p.grads[0].memref, dst, head);
    SmallVector<Value> sums = l.forEachInEdge(
        p.g, dst, p.mask, ValueRange{c(0.0), c(0.0)},
        [&](Value src, Value, ValueRange state) {
          Value w = attentionWeights(
              l, p, score(qRow, vload(qType, p.k.memref, src, head)), shift);
          Value dP = dot(dOut, vload(vType, p.v.memref, src, head));
          return SmallVector<Value>{l.b.create<math::FmaOp>(w, dP, state[0]),
                                    l.b.create<arith::AddFOp>(w, state[1])};
        });
    storeWeightSums(l, p, dst, head, sums[0], sums[1]);
  } else if (p.normalize) {
    // The output and log-sum-exp, with a running maximum.
    double negInf = -std::numeric_limits<double>::infinity();
    SmallVector<Value> init = {c(negInf), c(0.0), l.floatConst(vType, 0.0)};
    SmallVector<Value> sums = l.forEachInEdge(
        p.g, dst, p.mask, init, [&](Value src, Value, ValueRange state) {
          Value sc = clamped(score(qRow, vload(qType, p.k.memref, src, head)));
          Value max = l.b.create<arith::MaximumFOp>(state[0], sc);
          Value rescale =
              l.b.create<math::ExpOp>(l.b.create<arith::SubFOp>(state[0], max));
          Value w = l.b.create<math::ExpOp>(l.b.create<arith::SubFOp>(sc, max));
          Value z = l.b.create<arith::AddFOp>(
              l.b.create<arith::MulFOp>(state[1], rescale), w);
          Value acc = l.b.create<vector::FMAOp>(
              splat(vType, w), vload(vType, p.v.memref, src, head),
              l.b.create<arith::MulFOp>(state[2], splat(vType, rescale)));
          return SmallVector<Value>{max, z, acc};
        });
    storeStatistics(l, p, dst, head, sums[0], sums[1], sums[2]);
  }
  Value sum = l.forEachInEdge(
      p.g, dst, p.mask, ValueRange{l.floatConst(qType, 0.0)},
      [&](Value src, Value, ValueRange state) {
        Value kRow = vload(qType, p.k.memref, src, head);
        Value s = score(qRow, kRow);
        Value ds =
            edgeGradient(s, vload(vType, p.v.memref, src, head), dst, head)
                .second;
        Value f = l.b.create<arith::MulFOp>(ds, c(p.scale));
        return SmallVector<Value>{
            l.b.create<vector::FMAOp>(splat(qType, f), kRow, state[0])};
      })[0];
  l.b.create<vector::StoreOp>(sum, p.dq, rowStart(l, dst, head));
}

void AttentionGrad::sourceRow(Value src, ValueRange head) {
  if (chunked())
    return chunkedSourceRow(src, head);
  // The reversed graph's destinations are the sources; its in-edges carry
  // the original edge ids, which the edge subset's mask is indexed by.
  Value kRow = vload(qType, p.k.memref, src, head);
  Value vRow = vload(vType, p.v.memref, src, head);
  SmallVector<Value> init = {l.floatConst(qType, 0.0),
                             l.floatConst(vType, 0.0)};
  SmallVector<Value> sums = l.forEachInEdge(
      p.r, src, p.mask, init, [&](Value dst, Value, ValueRange state) {
        Value qRow = vload(qType, p.q.memref, dst, head);
        auto [weight, ds] = edgeGradient(score(qRow, kRow), vRow, dst, head);
        Value f = l.b.create<arith::MulFOp>(ds, c(p.scale));
        Value dkSum =
            l.b.create<vector::FMAOp>(splat(qType, f), qRow, state[0]);
        Value upstream = vload(vType, p.grads[0].memref, dst, head);
        Value dvSum =
            l.b.create<vector::FMAOp>(splat(vType, weight), upstream, state[1]);
        return SmallVector<Value>{dkSum, dvSum};
      });
  l.b.create<vector::StoreOp>(sums[0], p.dk, rowStart(l, src, head));
  l.b.create<vector::StoreOp>(sums[1], p.dv, rowStart(l, src, head));
}

FailureOr<AttentionGradPlan> loops::planAttentionGrad(Lowering &l,
                                                      FusedAttentionGradOp op) {
  AttentionGradPlan p;
  FailureOr<GraphParts> graph = l.graph(op, op.getGraph());
  if (failed(graph))
    return failure();
  p.g = *graph;
  p.q = l.feature(op.getQuery());
  p.k = l.feature(op.getKey());
  p.v = l.feature(op.getValue());
  p.grads = l.features(op.getGrads());
  p.normalize = op.getNormalize();
  p.scale = op.getScale().convertToDouble();
  if (op.getClampLo())
    p.clamp = {op.getClampLo()->convertToDouble(),
               op.getClampHi()->convertToDouble()};
  p.elem = p.q.type.getElementType();
  ArrayRef<int64_t> qItem = getItemShape(p.q.type);
  p.d = qItem.back();
  p.dvSize = getItemShape(p.v.type).back();
  if (ShapedType::isDynamic(p.d) || ShapedType::isDynamic(p.dvSize))
    return op.emitOpError() << "needs static feature sizes to be lowered";
  p.heads = l.itemExtents(qItem.drop_back(), {p.q});
  p.mask = op.getEdges() ? l.edgeMask(op.getEdges(), p.g.numEdges) : Value();

  auto withHeads = [&](Value last) {
    SmallVector<Value> extents(p.heads);
    extents.push_back(last);
    return extents;
  };
  p.dq = l.alloc(cast<RankedTensorType>(op.getDquery().getType()), p.g.numDst,
                 withHeads(l.idx(p.d)));
  p.dk = l.alloc(cast<RankedTensorType>(op.getDkey().getType()), p.g.numSrc,
                 withHeads(l.idx(p.d)));
  p.dv = l.alloc(cast<RankedTensorType>(op.getDvalue().getType()), p.g.numSrc,
                 withHeads(l.idx(p.dvSize)));
  if (op.getSavedLse()) {
    p.savedLse = l.feature(op.getSavedLse());
    p.shift = p.savedLse.memref;
  }
  if (p.normalize) {
    // Per destination and head: the shift (unless saved), norm and D.
    SmallVector<int64_t> shape = {ShapedType::kDynamic};
    llvm::append_range(shape, qItem.drop_back());
    shape.push_back(1);
    auto statsType = MemRefType::get(shape, p.elem);
    SmallVector<Value> dynamic = {p.g.numDst};
    for (auto [i, size] : llvm::enumerate(qItem.drop_back()))
      if (ShapedType::isDynamic(size))
        dynamic.push_back(p.heads[i]);
    if (!p.shift)
      p.shift = l.b.create<memref::AllocOp>(statsType, dynamic);
    p.norm = l.b.create<memref::AllocOp>(statsType, dynamic);
    p.outDot = l.b.create<memref::AllocOp>(statsType, dynamic);
  }

  SmallVector<SizeCheck> checks = {
      {p.q.memref, 0, p.g.numDst, Lowering::targetCode(Target::Dst)},
      {p.k.memref, 0, p.g.numSrc, Lowering::targetCode(Target::Src)},
      {p.v.memref, 0, p.g.numSrc, Lowering::targetCode(Target::Src)}};
  Lowering::addItemChecks(checks, p.q, withHeads(l.idx(p.d)));
  Lowering::addItemChecks(checks, p.k, withHeads(l.idx(p.d)));
  Lowering::addItemChecks(checks, p.v, withHeads(l.idx(p.dvSize)));
  for (auto [i, grad] : llvm::enumerate(p.grads)) {
    checks.push_back(
        {grad.memref, 0, p.g.numDst, Lowering::targetCode(Target::Dst)});
    Lowering::addItemChecks(checks, grad,
                            withHeads(l.idx(i == 0 ? p.dvSize : 1)));
  }
  if (p.savedLse.memref) {
    checks.push_back(
        {p.savedLse.memref, 0, p.g.numDst, Lowering::targetCode(Target::Dst)});
    Lowering::addItemChecks(checks, p.savedLse, withHeads(l.idx(1)));
  }
  p.inputsOk = l.sizesMatch(checks);
  return p;
}

LogicalResult AttentionGrad::build() {
  FailureOr<AttentionGradPlan> plan = planAttentionGrad(l, op);
  if (failed(plan))
    return failure();
  p = *plan;
  qType = VectorType::get({p.d}, p.elem);
  vType = VectorType::get({p.dvSize}, p.elem);
  auto destinationPass = [&](Value dst, ValueRange head) {
    destinationRow(dst, head);
  };
  auto sourcePass = [&](Value src, ValueRange head) { sourceRow(src, head); };
  l.guarded(p.inputsOk, [&] {
    if (target.attentionGradBlocks() && blockTileable(p)) {
      blockTiledAttentionGrad(l, p, destinationPass, sourcePass);
      return;
    }
    // A parallel iteration per node and head (a GPU thread each).
    l.parallelItems(p.g.numDst, p.heads, destinationPass);
    p.r = reverseGraph(l, p.g, target);
    l.parallelItems(p.r.numDst, p.heads, sourcePass);
  });
  return l.replaceWithBuffers(op, {p.dq, p.dk, p.dv});
}

LogicalResult loops::lowerFusedAttentionGrad(FusedAttentionGradOp op,
                                             const LoopTarget &target,
                                             RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  return AttentionGrad(l, op, target).build();
}
