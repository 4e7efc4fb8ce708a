//===- AttentionGrad.cpp - gnn.fused_attention_grad as loops --------------===//
//
// Part of gnnc. The backward of the fused attention in two passes that
// store no per-edge value. Per destination (in-edges): recompute the
// scores, the log-sum-exp and the output (normalized), keep the log-sum-exp
// and D = dout . out, and sum dq. Per source (out-edges, the reversed
// graph's in-edges): recompute each edge's weight from the destination's
// statistics and sum dk and dv. Each node's sums belong to one iteration of
// a parallel loop: no races, no atomics, results independent of threads.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"

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
  AttentionGrad(Lowering &l, FusedAttentionGradOp op) : l(l), op(op) {}

  LogicalResult build();

private:
  /// The dot product of two row vectors.
  Value dot(Value a, Value b) {
    return l.b.create<vector::ReductionOp>(
        l.loc, vector::CombiningKind::ADD,
        l.b.create<arith::MulFOp>(l.loc, a, b));
  }
  Value vload(VectorType type, Value memref, Value row, ValueRange head) {
    return l.b.create<vector::LoadOp>(l.loc, type, memref,
                                      rowStart(l, row, head));
  }
  Value splat(VectorType type, Value x) {
    return l.b.create<vector::BroadcastOp>(l.loc, type, x);
  }
  Value c(double x) { return l.floatConst(elem, x); }
  /// The scaled score before the clamp.
  Value score(Value qRow, Value kRow) {
    return l.b.create<arith::MulFOp>(l.loc, dot(kRow, qRow), c(scale));
  }
  Value clamped(Value s) {
    if (!clamp)
      return s;
    s = l.b.create<arith::MaximumFOp>(l.loc, s, c(clamp->first));
    return l.b.create<arith::MinimumFOp>(l.loc, s, c(clamp->second));
  }
  /// ds masked where the clamp is active (inclusive bounds pass it).
  Value throughClamp(Value s, Value ds) {
    if (!clamp)
      return ds;
    Value in = l.b.create<arith::AndIOp>(
        l.loc,
        l.b.create<arith::CmpFOp>(l.loc, arith::CmpFPredicate::OGE, s,
                                  c(clamp->first)),
        l.b.create<arith::CmpFOp>(l.loc, arith::CmpFPredicate::OLE, s,
                                  c(clamp->second)));
    return l.b.create<arith::SelectOp>(l.loc, in, ds, c(0.0));
  }
  /// The weight of an edge with clamped score `sc` and the gradient of its
  /// unclamped score `s`, given the destination's row `dst` of upstream
  /// data: (P, ds) normalized, (w, ds) otherwise.
  std::pair<Value, Value> edgeGradient(Value s, Value vRow, Value dst,
                                       ValueRange head);
  void destinationPass();
  void sourcePass();

  Lowering &l;
  FusedAttentionGradOp op;
  GraphParts g, r;
  Feature q, k, v;
  SmallVector<Feature> grads;
  Value mask, dq, dk, dv, lse, outDot;
  SmallVector<Value> heads;
  Type elem;
  VectorType qType, vType;
  double scale = 1.0;
  std::optional<std::pair<double, double>> clamp;
  bool normalize = false;
};
} // namespace

std::pair<Value, Value>
AttentionGrad::edgeGradient(Value s, Value vRow, Value dst, ValueRange head) {
  Value sc = clamped(s);
  if (normalize) {
    // P = exp(sc - lse); ds = P (dout . v - D).
    SmallVector<Value> index = {dst};
    llvm::append_range(index, head);
    Value p = l.b.create<math::ExpOp>(
        l.loc, l.b.create<arith::SubFOp>(
                   l.loc, sc, l.b.create<memref::LoadOp>(l.loc, lse, index)));
    Value dOut = vload(vType, grads[0].memref, dst, head);
    Value dP = dot(dOut, vRow);
    Value ds = l.b.create<arith::MulFOp>(
        l.loc, p,
        l.b.create<arith::SubFOp>(
            l.loc, dP, l.b.create<memref::LoadOp>(l.loc, outDot, index)));
    return {p, throughClamp(s, ds)};
  }
  // w = exp(sc); ds = w (dwv . v + dz).
  Value w = l.b.create<math::ExpOp>(l.loc, sc);
  Value dwv = vload(vType, grads[0].memref, dst, head);
  Value dz = l.b.create<memref::LoadOp>(l.loc, grads[1].memref,
                                        rowStart(l, dst, head));
  Value dw = l.b.create<arith::AddFOp>(l.loc, dot(dwv, vRow), dz);
  return {w, throughClamp(s, l.b.create<arith::MulFOp>(l.loc, w, dw))};
}

void AttentionGrad::destinationPass() {
  l.parallel(g.numDst, [&](Value dst) {
    l.loopNest(heads, [&](ValueRange head) {
      Value qRow = vload(qType, q.memref, dst, head);
      if (normalize) {
        // The output and log-sum-exp, with a running maximum.
        double negInf = -std::numeric_limits<double>::infinity();
        SmallVector<Value> init = {c(negInf), c(0.0), l.floatConst(vType, 0.0)};
        SmallVector<Value> sums = l.forEachInEdge(
            g, dst, mask, init, [&](Value src, Value, ValueRange state) {
              Value sc =
                  clamped(score(qRow, vload(qType, k.memref, src, head)));
              Value max = l.b.create<arith::MaximumFOp>(l.loc, state[0], sc);
              Value rescale = l.b.create<math::ExpOp>(
                  l.loc, l.b.create<arith::SubFOp>(l.loc, state[0], max));
              Value w = l.b.create<math::ExpOp>(
                  l.loc, l.b.create<arith::SubFOp>(l.loc, sc, max));
              Value z = l.b.create<arith::AddFOp>(
                  l.loc, l.b.create<arith::MulFOp>(l.loc, state[1], rescale),
                  w);
              Value acc = l.b.create<vector::FMAOp>(
                  l.loc, splat(vType, w), vload(vType, v.memref, src, head),
                  l.b.create<arith::MulFOp>(l.loc, state[2],
                                            splat(vType, rescale)));
              return SmallVector<Value>{max, z, acc};
            });
        Value out = l.b.create<arith::MulFOp>(
            l.loc, sums[2], splat(vType, inverseSum(l, sums[1])));
        SmallVector<Value> index = {dst};
        llvm::append_range(index, head);
        Value logSum = l.b.create<arith::AddFOp>(
            l.loc, sums[0], l.b.create<math::LogOp>(l.loc, sums[1]));
        l.b.create<memref::StoreOp>(l.loc, logSum, lse, index);
        l.b.create<memref::StoreOp>(
            l.loc, dot(vload(vType, grads[0].memref, dst, head), out), outDot,
            index);
      }
      Value sum = l.forEachInEdge(
          g, dst, mask, ValueRange{l.floatConst(qType, 0.0)},
          [&](Value src, Value, ValueRange state) {
            Value kRow = vload(qType, k.memref, src, head);
            Value s = score(qRow, kRow);
            Value ds =
                edgeGradient(s, vload(vType, v.memref, src, head), dst, head)
                    .second;
            Value f = l.b.create<arith::MulFOp>(l.loc, ds, c(scale));
            return SmallVector<Value>{l.b.create<vector::FMAOp>(
                l.loc, splat(qType, f), kRow, state[0])};
          })[0];
      l.b.create<vector::StoreOp>(l.loc, sum, dq, rowStart(l, dst, head));
    });
  });
}

void AttentionGrad::sourcePass() {
  // The reversed graph's destinations are the sources; its in-edges carry
  // the original edge ids, which the edge subset's mask is indexed by.
  l.parallel(r.numDst, [&](Value src) {
    l.loopNest(heads, [&](ValueRange head) {
      Value kRow = vload(qType, k.memref, src, head);
      Value vRow = vload(vType, v.memref, src, head);
      SmallVector<Value> init = {l.floatConst(qType, 0.0),
                                 l.floatConst(vType, 0.0)};
      SmallVector<Value> sums = l.forEachInEdge(
          r, src, mask, init, [&](Value dst, Value, ValueRange state) {
            Value qRow = vload(qType, q.memref, dst, head);
            auto [weight, ds] =
                edgeGradient(score(qRow, kRow), vRow, dst, head);
            Value f = l.b.create<arith::MulFOp>(l.loc, ds, c(scale));
            Value dkSum = l.b.create<vector::FMAOp>(l.loc, splat(qType, f),
                                                    qRow, state[0]);
            Value upstream = vload(vType, grads[0].memref, dst, head);
            Value dvSum = l.b.create<vector::FMAOp>(l.loc, splat(vType, weight),
                                                    upstream, state[1]);
            return SmallVector<Value>{dkSum, dvSum};
          });
      l.b.create<vector::StoreOp>(l.loc, sums[0], dk, rowStart(l, src, head));
      l.b.create<vector::StoreOp>(l.loc, sums[1], dv, rowStart(l, src, head));
    });
  });
}

LogicalResult AttentionGrad::build() {
  FailureOr<GraphParts> graph = l.graph(op, op.getGraph());
  FailureOr<GraphParts> reversed = l.graph(op, op.getReversed());
  if (failed(graph) || failed(reversed))
    return failure();
  g = *graph;
  r = *reversed;
  q = l.feature(op.getQuery());
  k = l.feature(op.getKey());
  v = l.feature(op.getValue());
  grads = l.features(op.getGrads());
  normalize = op.getNormalize();
  scale = op.getScale().convertToDouble();
  if (op.getClampLo())
    clamp = {op.getClampLo()->convertToDouble(),
             op.getClampHi()->convertToDouble()};
  elem = q.type.getElementType();
  ArrayRef<int64_t> qItem = getItemShape(q.type);
  int64_t d = qItem.back(), dvSize = getItemShape(v.type).back();
  if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dvSize))
    return op.emitOpError() << "needs static feature sizes to be lowered";
  qType = VectorType::get({d}, elem);
  vType = VectorType::get({dvSize}, elem);
  heads = l.itemExtents(qItem.drop_back(), {q});
  mask = op.getEdges() ? l.edgeMask(op.getEdges(), g.numEdges) : Value();

  auto withHeads = [&](Value last) {
    SmallVector<Value> extents(heads);
    extents.push_back(last);
    return extents;
  };
  dq = l.alloc(cast<RankedTensorType>(op.getDquery().getType()), g.numDst,
               withHeads(l.idx(d)));
  dk = l.alloc(cast<RankedTensorType>(op.getDkey().getType()), g.numSrc,
               withHeads(l.idx(d)));
  dv = l.alloc(cast<RankedTensorType>(op.getDvalue().getType()), g.numSrc,
               withHeads(l.idx(dvSize)));
  if (normalize) {
    // Per destination and head: the log-sum-exp and dout . out.
    SmallVector<int64_t> shape = {ShapedType::kDynamic};
    llvm::append_range(shape, qItem.drop_back());
    auto statsType = MemRefType::get(shape, elem);
    SmallVector<Value> dynamic = {g.numDst};
    for (auto [i, size] : llvm::enumerate(qItem.drop_back()))
      if (ShapedType::isDynamic(size))
        dynamic.push_back(heads[i]);
    lse = l.b.create<memref::AllocOp>(l.loc, statsType, dynamic);
    outDot = l.b.create<memref::AllocOp>(l.loc, statsType, dynamic);
  }

  SmallVector<SizeCheck> checks = {
      {q.memref, 0, g.numDst, Lowering::targetCode(Target::Dst)},
      {k.memref, 0, g.numSrc, Lowering::targetCode(Target::Src)},
      {v.memref, 0, g.numSrc, Lowering::targetCode(Target::Src)},
      // The reversed graph must mirror the graph.
      {r.inPtr, 0, l.b.create<arith::AddIOp>(l.loc, g.numSrc, l.idx(1)),
       Lowering::targetCode(Target::Src)},
      {r.src, 0, g.numEdges, Lowering::targetCode(Target::Edge)}};
  Lowering::addItemChecks(checks, q, withHeads(l.idx(d)));
  Lowering::addItemChecks(checks, k, withHeads(l.idx(d)));
  Lowering::addItemChecks(checks, v, withHeads(l.idx(dvSize)));
  for (auto [i, grad] : llvm::enumerate(grads)) {
    checks.push_back(
        {grad.memref, 0, g.numDst, Lowering::targetCode(Target::Dst)});
    Lowering::addItemChecks(checks, grad,
                            withHeads(l.idx(i == 0 ? dvSize : 1)));
  }
  l.guarded(l.sizesMatch(checks), [&] {
    destinationPass();
    sourcePass();
  });
  return l.replaceWithBuffers(op, {dq, dk, dv});
}

LogicalResult loops::lowerFusedAttentionGrad(FusedAttentionGradOp op,
                                             RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  return AttentionGrad(l, op).build();
}
