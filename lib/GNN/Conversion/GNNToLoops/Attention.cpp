//===- Attention.cpp - gnn.fused_attention as loops -----------------------===//
//
// Part of gnnc. One pass over each destination's in-edges per head: weights
// are never stored. With `normalize` and no clamp, a running maximum keeps
// exp finite (online softmax).
//
//===----------------------------------------------------------------------===//

#include "Attention.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

FailureOr<AttentionPlan> loops::planAttention(Lowering &l,
                                              FusedAttentionOp op) {
  FailureOr<GraphParts> g = l.graph(op, op.getGraph());
  if (failed(g))
    return failure();
  AttentionPlan p;
  p.g = *g;
  p.q = l.feature(op.getQuery());
  p.k = l.feature(op.getKey());
  p.val = l.feature(op.getValue());
  p.mask = op.getEdges() ? l.edgeMask(op.getEdges(), g->numEdges) : Value();
  auto outType = cast<RankedTensorType>(op.getResult(0).getType());
  p.elem = outType.getElementType();
  ArrayRef<int64_t> qItem = getItemShape(p.q.type);
  p.heads = l.itemExtents(qItem.drop_back(), {p.q});
  p.d = l.itemExtents(qItem, {p.q}).back();
  p.dv = l.itemExtents(getItemShape(p.val.type), {p.val}).back();
  SmallVector<Value> outExtents(p.heads);
  outExtents.push_back(p.dv);
  p.out = l.alloc(outType, g->numDst, outExtents);
  if (!op.getNormalize()) {
    auto zType = cast<RankedTensorType>(op.getResult(1).getType());
    SmallVector<Value> zExtents(p.heads);
    zExtents.push_back(l.idx(1));
    p.zOut = l.alloc(zType, g->numDst, zExtents);
  } else if (op.getNumResults() == 2) {
    auto lseType = cast<RankedTensorType>(op.getResult(1).getType());
    SmallVector<Value> lseExtents(p.heads);
    lseExtents.push_back(l.idx(1));
    p.lseOut = l.alloc(lseType, g->numDst, lseExtents);
  }
  SmallVector<SizeCheck> checks = {
      {p.q.memref, 0, g->numDst, Lowering::targetCode(Target::Dst)},
      {p.k.memref, 0, g->numSrc, Lowering::targetCode(Target::Src)},
      {p.val.memref, 0, g->numSrc, Lowering::targetCode(Target::Src)}};
  SmallVector<Value> qkExtents(p.heads);
  qkExtents.push_back(p.d);
  Lowering::addItemChecks(checks, p.q, qkExtents);
  Lowering::addItemChecks(checks, p.k, qkExtents);
  Lowering::addItemChecks(checks, p.val, outExtents);
  p.inputsOk = l.sizesMatch(checks);
  p.online = op.getNormalize() && !op.getClampLo();
  p.scale = op.getScale().convertToDouble();
  if (op.getClampLo())
    p.clamp = {op.getClampLo()->convertToDouble(),
               op.getClampHi()->convertToDouble()};
  return p;
}

Value loops::attentionScore(Lowering &l, const AttentionPlan &p, Value dot) {
  // Scalars or vectors of dot products.
  auto constant = [&](double x) { return l.floatConst(dot.getType(), x); };
  Value s = l.b.create<arith::MulFOp>(dot, constant(p.scale));
  if (!p.clamp)
    return s;
  s = l.b.create<arith::MaximumFOp>(s, constant(p.clamp->first));
  return l.b.create<arith::MinimumFOp>(s, constant(p.clamp->second));
}

SoftmaxStep loops::softmaxStep(Lowering &l, const AttentionPlan &p, Value max,
                               Value score) {
  if (!p.online)
    return {l.b.create<math::ExpOp>(score), Value(), max};
  // Rescale what was summed so far when the maximum grows.
  Value newMax = l.b.create<arith::MaximumFOp>(max, score);
  Value rescale =
      l.b.create<math::ExpOp>(l.b.create<arith::SubFOp>(max, newMax));
  Value weight =
      l.b.create<math::ExpOp>(l.b.create<arith::SubFOp>(score, newMax));
  return {weight, rescale, newMax};
}

Value loops::inverseSum(Lowering &l, Value z) {
  Type t = z.getType();
  Value positive = l.b.create<arith::CmpFOp>(arith::CmpFPredicate::OGT, z,
                                             l.floatConst(t, 0.0));
  return l.b.create<arith::SelectOp>(
      positive, l.b.create<arith::DivFOp>(l.floatConst(t, 1.0), z),
      l.floatConst(t, 0.0));
}

SourceRange loops::sourceRange(Lowering &l, const GraphParts &g, Value first,
                               Value degree) {
  Value hasSlots =
      l.b.create<arith::CmpIOp>(arith::CmpIPredicate::ugt, degree, l.idx(0));
  // Loaded only with slots: `first` may be one past the last slot.
  Value lo = l.ifElse(
      hasSlots,
      [&] {
        return SmallVector<Value>{l.b.create<memref::LoadOp>(g.inSrc, first)};
      },
      [&] { return SmallVector<Value>{l.idx(0)}; })[0];
  Value contiguous = l.forLoop(
      l.idx(0), degree, ValueRange{l.b.create<arith::ConstantIntOp>(1, 1)},
      [&](Value j, ValueRange ok) {
        Value u = l.b.create<memref::LoadOp>(
            g.inSrc, ValueRange{l.b.create<arith::AddIOp>(first, j)});
        Value expected = l.b.create<arith::AddIOp>(lo, j);
        return SmallVector<Value>{l.b.create<arith::AndIOp>(
            ok[0],
            l.b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, u, expected))};
      })[0];
  return {lo, contiguous};
}

SmallVector<Value> loops::rowStart(Lowering &l, Value row, ValueRange head,
                                   int64_t column) {
  SmallVector<Value> index = {row};
  llvm::append_range(index, head);
  index.push_back(l.idx(column));
  return index;
}

Value loops::logSumExp(Lowering &l, const AttentionPlan &p, Value max,
                       Value z) {
  Value logZ = l.b.create<math::LogOp>(z);
  return p.online ? l.b.create<arith::AddFOp>(max, logZ) : logZ;
}

void loops::storeVectorResult(Lowering &l, const AttentionPlan &p, Value acc,
                              Value z, Value max, ValueRange index) {
  if (p.zOut) {
    l.b.create<vector::StoreOp>(acc, p.out, index);
    l.b.create<memref::StoreOp>(z, p.zOut, index);
    return;
  }
  if (p.lseOut)
    l.b.create<memref::StoreOp>(logSumExp(l, p, max, z), p.lseOut, index);
  Value inverse =
      l.b.create<vector::BroadcastOp>(acc.getType(), inverseSum(l, z));
  l.b.create<vector::StoreOp>(l.b.create<arith::MulFOp>(acc, inverse), p.out,
                              index);
}

/// Rows of q, k and v are contiguous vectors and an edge subset is given (a
/// per-edge mask, checked edge by edge): q stays in registers, the weighted
/// sum accumulates in registers, one dot and one FMA per listed edge.
static void vectorizedAttention(Lowering &l, const AttentionPlan &p, int64_t d,
                                int64_t dv) {
  Type t = p.elem;
  auto qType = VectorType::get({d}, t);
  auto vType = VectorType::get({dv}, t);
  l.parallel(p.g.numDst, [&](Value v) {
    l.loopNest(p.heads, [&](ValueRange head) {
      auto at = [&](Value row) { return rowStart(l, row, head); };
      auto broadcast = [&](Value x) {
        return l.b.create<vector::BroadcastOp>(vType, x);
      };
      Value qRow = l.b.create<vector::LoadOp>(qType, p.q.memref, at(v));
      Value zeroVec = l.floatConst(vType, 0.0);
      Value negInf = l.floatConst(t, -std::numeric_limits<double>::infinity());
      SmallVector<Value> init = {l.floatConst(t, 0.0), negInf, zeroVec};
      SmallVector<Value> carried = l.forEachInEdge(
          p.g, v, p.mask, init, [&](Value u, Value, ValueRange state) {
            Value z = state[0], acc = state[2];
            Value kRow = l.b.create<vector::LoadOp>(qType, p.k.memref, at(u));
            Value dot = l.b.create<vector::ReductionOp>(
                vector::CombiningKind::ADD,
                l.b.create<arith::MulFOp>(kRow, qRow));
            SoftmaxStep step =
                softmaxStep(l, p, state[1], attentionScore(l, p, dot));
            if (step.rescale) {
              z = l.b.create<arith::MulFOp>(z, step.rescale);
              acc = l.b.create<arith::MulFOp>(acc, broadcast(step.rescale));
            }
            Value vRow = l.b.create<vector::LoadOp>(vType, p.val.memref, at(u));
            acc = l.b.create<vector::FMAOp>(broadcast(step.weight), vRow, acc);
            z = l.b.create<arith::AddFOp>(z, step.weight);
            return SmallVector<Value>{z, step.max, acc};
          });
      storeVectorResult(l, p, carried[2], carried[0], carried[1], at(v));
    });
  });
}

/// Edges per chunk of the chunked kernels: one vector of scores. chunkDots'
/// shuffle tree needs as many edges as lanes.
constexpr int64_t kChunk = kVectorLanes;

Value loops::chunkDots(Lowering &l, Type elem, int64_t d, Value a, Value row,
                       Value bFeature, ArrayRef<Value> rows, ValueRange head) {
  assert(rows.size() == size_t(kChunk) && d % kChunk == 0);
  auto pieceType = VectorType::get({kChunk}, elem);
  auto at = [&](Value r, int64_t c) { return rowStart(l, r, head, c); };
  SmallVector<Value> partial(kChunk, l.floatConst(pieceType, 0.0));
  for (int64_t c = 0; c < d; c += kChunk) {
    Value x = l.b.create<vector::LoadOp>(pieceType, a, at(row, c));
    for (int64_t j = 0; j < kChunk; ++j) {
      Value y = l.b.create<vector::LoadOp>(pieceType, bFeature, at(rows[j], c));
      partial[j] = l.b.create<vector::FMAOp>(y, x, partial[j]);
    }
  }
  // Each level adds neighbouring groups of lanes of two vectors, halving
  // the vectors and doubling the group: lane j of the last is row j's sum.
  auto level = [&](ArrayRef<Value> in, int64_t group) {
    SmallVector<Value> out;
    for (size_t i = 0; i + 1 < in.size(); i += 2) {
      SmallVector<int64_t> lo, hi;
      for (int64_t lane = 0; lane < kChunk; ++lane) {
        // Lanes come in blocks of 2 * group: the first half from in[i], the
        // second from in[i + 1]; lo takes the even groups, hi the odd ones.
        int64_t block = lane / (2 * group), within = lane % (2 * group);
        int64_t from = within < group ? 0 : kChunk;
        int64_t base = block * 2 * group + within % group;
        lo.push_back(from + base);
        hi.push_back(from + base + group);
      }
      Value even = l.b.create<vector::ShuffleOp>(in[i], in[i + 1], lo);
      Value odd = l.b.create<vector::ShuffleOp>(in[i], in[i + 1], hi);
      out.push_back(l.b.create<arith::AddFOp>(even, odd));
    }
    return out;
  };
  SmallVector<Value> sums(partial);
  for (int64_t group = 1; sums.size() > 1; group *= 2)
    sums = level(sums, group);
  return sums[0];
}

EdgeChunk loops::edgeChunk(Lowering &l, const GraphParts &g, Value slot,
                           Value last) {
  EdgeChunk chunk;
  Value count = l.b.create<arith::SubIOp>(last, slot);
  for (int64_t j = 0; j < kChunk; ++j) {
    // The first slot of a chunk is always an edge.
    Value s = j == 0 ? slot
                     : l.b.create<arith::SelectOp>(
                           l.b.create<arith::CmpIOp>(arith::CmpIPredicate::slt,
                                                     l.idx(j), count),
                           l.b.create<arith::AddIOp>(slot, l.idx(j)), slot);
    chunk.neighbors.push_back(l.b.create<memref::LoadOp>(g.inSrc, s));
  }
  chunk.valid = l.b.create<vector::CreateMaskOp>(
      VectorType::get({kChunk}, l.b.getI1Type()),
      ValueRange{l.b.create<arith::MinUIOp>(count, l.idx(kChunk))});
  return chunk;
}

/// Rows of q, k and v are contiguous vectors and every in-edge counts: edges
/// go in chunks of kChunk. The chunk's scores form one vector, so the
/// running maximum, the rescale (one exp per chunk instead of one per edge)
/// and the weights (one vector exp) are computed once per chunk. Slots past
/// the last edge repeat the chunk's first edge with weight 0.
ChunkedSums loops::chunkedSoftmaxRow(Lowering &l, const AttentionPlan &p,
                                     int64_t d, int64_t dv, Value v,
                                     ValueRange head) {
  Type t = p.elem;
  auto qType = VectorType::get({d}, t);
  auto vType = VectorType::get({dv}, t);
  auto chunkType = VectorType::get({kChunk}, t);
  double negInf = -std::numeric_limits<double>::infinity();
  auto [first, last] = l.inSlots(p.g, v);
  auto at = [&](Value row) { return rowStart(l, row, head); };
  auto broadcast = [&](Value x) {
    return l.b.create<vector::BroadcastOp>(vType, x);
  };
  // chunkDots takes q and k in pieces; otherwise whole q rows.
  bool inPieces = d % kChunk == 0;
  Value qRow =
      inPieces ? Value() : l.b.create<vector::LoadOp>(qType, p.q.memref, at(v));
  SmallVector<Value> init = {l.floatConst(t, 0.0), l.floatConst(t, negInf),
                             l.floatConst(vType, 0.0)};
  ValueRange result = l.forLoop(
      first, last, init,
      [&](Value slot, ValueRange state) {
        Value z = state[0], max = state[1], acc = state[2];
        EdgeChunk chunk = edgeChunk(l, p.g, slot, last);
        Value dots;
        if (inPieces) {
          dots = chunkDots(l, t, d, p.q.memref, v, p.k.memref, chunk.neighbors,
                           head);
        } else {
          dots = l.floatConst(chunkType, 0.0);
          for (auto [j, u] : llvm::enumerate(chunk.neighbors)) {
            Value kRow = l.b.create<vector::LoadOp>(qType, p.k.memref, at(u));
            dots = l.b.create<vector::InsertElementOp>(
                l.b.create<vector::ReductionOp>(
                    vector::CombiningKind::ADD,
                    l.b.create<arith::MulFOp>(kRow, qRow)),
                dots, l.b.create<arith::ConstantIndexOp>(j));
          }
        }
        // Slots past the last edge score -inf (weight 0).
        Value scores =
            l.b.create<arith::SelectOp>(chunk.valid, attentionScore(l, p, dots),
                                        l.floatConst(chunkType, negInf));
        Value weights;
        if (p.online) {
          Value newMax = l.b.create<arith::MaximumFOp>(
              max, l.b.create<vector::ReductionOp>(
                       vector::CombiningKind::MAXIMUMF, scores));
          Value rescale =
              l.b.create<math::ExpOp>(l.b.create<arith::SubFOp>(max, newMax));
          weights = l.b.create<math::ExpOp>(l.b.create<arith::SubFOp>(
              scores, l.b.create<vector::BroadcastOp>(chunkType, newMax)));
          z = l.b.create<arith::MulFOp>(z, rescale);
          acc = l.b.create<arith::MulFOp>(acc, broadcast(rescale));
          max = newMax;
        } else {
          weights = l.b.create<math::ExpOp>(scores);
        }
        for (int64_t j = 0; j < kChunk; ++j) {
          Value w = l.b.create<vector::ExtractElementOp>(
              weights, l.b.create<arith::ConstantIndexOp>(j));
          Value vRow = l.b.create<vector::LoadOp>(vType, p.val.memref,
                                                  at(chunk.neighbors[j]));
          acc = l.b.create<vector::FMAOp>(broadcast(w), vRow, acc);
        }
        z = l.b.create<arith::AddFOp>(
            z, l.b.create<vector::ReductionOp>(vector::CombiningKind::ADD,
                                               weights));
        return SmallVector<Value>{z, max, acc};
      },
      l.idx(kChunk));
  return {result[0], result[1], result[2]};
}

void loops::chunkedAttentionRow(Lowering &l, const AttentionPlan &p, int64_t d,
                                int64_t dv, Value v, ValueRange head) {
  ChunkedSums sums = chunkedSoftmaxRow(l, p, d, dv, v, head);
  storeVectorResult(l, p, sums.acc, sums.z, sums.max, rowStart(l, v, head));
}

/// Every in-edge counts: destinations go in tiles of kDstTile, heads outside
/// the tile: neighbouring destinations mostly share sources, so one head's
/// key and value rows stay in cache across the tile.
static void chunkedAttention(Lowering &l, const AttentionPlan &p, int64_t d,
                             int64_t dv) {
  constexpr int64_t kDstTile = 32;
  Value tiles = l.b.create<arith::CeilDivUIOp>(p.g.numDst, l.idx(kDstTile));
  l.parallel(tiles, [&](Value tile) {
    Value lo = l.b.create<arith::MulIOp>(tile, l.idx(kDstTile));
    Value hi = l.b.create<arith::MinUIOp>(
        l.b.create<arith::AddIOp>(lo, l.idx(kDstTile)), p.g.numDst);
    l.loopNest(p.heads, [&](ValueRange head) {
      l.serial(lo, hi,
               [&](Value v) { chunkedAttentionRow(l, p, d, dv, v, head); });
    });
  });
}

/// Any sizes: the weighted sum accumulates in the output row.
static void scalarAttention(Lowering &l, const AttentionPlan &p) {
  Type t = p.elem;
  l.parallel(p.g.numDst, [&](Value v) {
    l.loopNest(p.heads, [&](ValueRange head) {
      auto at = [&](Value row, Value last) {
        SmallVector<Value> index = {row};
        llvm::append_range(index, head);
        index.push_back(last);
        return index;
      };
      // out[v, head, :] = f(out[v, head, :]).
      auto updateRow = [&](function_ref<Value(Value, Value)> f) {
        l.loopNest({p.dv}, [&](ValueRange c) {
          Value acc = l.b.create<memref::LoadOp>(p.out, at(v, c[0]));
          l.b.create<memref::StoreOp>(f(acc, c[0]), p.out, at(v, c[0]));
        });
      };
      l.loopNest({p.dv}, [&](ValueRange c) {
        l.b.create<memref::StoreOp>(l.floatConst(t, 0.0), p.out, at(v, c[0]));
      });
      Value negInf = l.floatConst(t, -std::numeric_limits<double>::infinity());
      SmallVector<Value> init = {l.floatConst(t, 0.0), negInf};
      SmallVector<Value> carried = l.forEachInEdge(
          p.g, v, p.mask, init, [&](Value u, Value, ValueRange state) {
            Value z = state[0];
            auto dot = l.b.create<scf::ForOp>(
                l.idx(0), p.d, l.idx(1), ValueRange{l.floatConst(t, 0.0)},
                [&](OpBuilder &nested, Location, Value i, ValueRange acc) {
                  OpBuilder::InsertionGuard guard(l.b);
                  l.b.setInsertionPoint(nested.getInsertionBlock(),
                                        nested.getInsertionPoint());
                  Value x = l.b.create<memref::LoadOp>(p.k.memref, at(u, i));
                  Value y = l.b.create<memref::LoadOp>(p.q.memref, at(v, i));
                  l.b.create<scf::YieldOp>(ValueRange{l.b.create<arith::AddFOp>(
                      acc[0], l.b.create<arith::MulFOp>(x, y))});
                });
            SoftmaxStep step = softmaxStep(
                l, p, state[1], attentionScore(l, p, dot.getResult(0)));
            if (step.rescale) {
              z = l.b.create<arith::MulFOp>(z, step.rescale);
              updateRow([&](Value acc, Value) {
                return l.b.create<arith::MulFOp>(acc, step.rescale);
              });
            }
            z = l.b.create<arith::AddFOp>(z, step.weight);
            updateRow([&](Value acc, Value c) {
              Value x = l.b.create<memref::LoadOp>(p.val.memref, at(u, c));
              return l.b.create<arith::AddFOp>(
                  acc, l.b.create<arith::MulFOp>(step.weight, x));
            });
            return SmallVector<Value>{z, step.max};
          });
      Value z = carried[0];
      if (p.zOut) {
        l.b.create<memref::StoreOp>(z, p.zOut, at(v, l.idx(0)));
        return;
      }
      if (p.lseOut)
        l.b.create<memref::StoreOp>(logSumExp(l, p, carried[1], z), p.lseOut,
                                    at(v, l.idx(0)));
      Value inv = inverseSum(l, z);
      updateRow([&](Value acc, Value) {
        return l.b.create<arith::MulFOp>(acc, inv);
      });
    });
  });
}

/// The widest q or v row kept in one vector value.
constexpr int64_t kMaxVectorWidth = 1024;

LogicalResult loops::lowerFusedAttentionToLoops(FusedAttentionOp op,
                                                bool blockTiles,
                                                RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  FailureOr<AttentionPlan> p = planAttention(l, op);
  if (failed(p))
    return failure();
  int64_t d = getItemShape(p->q.type).back();
  int64_t dv = getItemShape(p->val.type).back();
  // Rows of q and the weighted sum live in vector registers; beyond
  // kMaxVectorWidth (far past any register file) the scalar form is used.
  bool vectorize = !ShapedType::isDynamic(d) && !ShapedType::isDynamic(dv) &&
                   d <= kMaxVectorWidth && dv <= kMaxVectorWidth &&
                   getItemShape(p->k.type).back() == d;
  l.guarded(p->inputsOk, [&] {
    if (vectorize && blockTiles && blockTileable(*p))
      blockTiledAttention(l, *p, d, dv);
    else if (vectorize && !p->mask)
      chunkedAttention(l, *p, d, dv);
    else if (vectorize)
      vectorizedAttention(l, *p, d, dv);
    else
      scalarAttention(l, *p);
  });
  return l.replaceWithBuffers(op, p->buffers());
}
