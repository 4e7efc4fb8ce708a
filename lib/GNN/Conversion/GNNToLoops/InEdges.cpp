//===- InEdges.cpp - the in-edge index of an edge list --------------------===//
//
// Part of gnnc. See InEdges.h.
//
//===----------------------------------------------------------------------===//

#include "InEdges.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

InEdgeIndex loops::allocateInEdges(Lowering &l, Value numEdges, Value numDst,
                                   SmallVectorImpl<SizedBuffer> &buffers,
                                   Chunking chunking) {
  ImplicitLocOpBuilder &b = l.b;
  auto ids = [&](Value n) {
    Value buffer = l.idBuffer(n);
    buffers.push_back({buffer, n});
    return buffer;
  };
  Value one = l.idx(1);
  InEdgeIndex index;
  index.inPtr = ids(b.create<arith::AddIOp>(numDst, one));
  index.inSrc = ids(numEdges);
  index.inEid = ids(numEdges);
  // At most countsPerEdge x edges / destinations chunks, so that the counts
  // take room in proportion to the edges. (One op per statement: the IR's
  // order must not depend on the compiler's order of evaluating arguments.)
  Value slots =
      b.create<arith::MulIOp>(numEdges, l.idx(chunking.countsPerEdge));
  Value destinations = b.create<arith::MaxUIOp>(numDst, one);
  Value perDestination = b.create<arith::DivUIOp>(slots, destinations);
  Value most = l.idx(chunking.maxChunks);
  index.chunks = b.create<arith::MaxUIOp>(
      one, b.create<arith::MinUIOp>(most, perDestination));
  index.counts = ids(b.create<arith::MulIOp>(index.chunks, numDst));
  return index;
}

Value loops::checkAllocated(Lowering &l, ArrayRef<SizedBuffer> buffers,
                            InEdgeIndex &index, int64_t badCooKind, Value nodes,
                            Value edges) {
  ImplicitLocOpBuilder &b = l.b;
  Value all = b.create<arith::ConstantIntOp>(1, 1);
  for (auto [buffer, n] : buffers) {
    Value address = b.create<arith::IndexCastOp>(
        b.getI64Type(),
        b.create<memref::ExtractAlignedPointerAsIndexOp>(buffer));
    Value ok = b.create<arith::OrIOp>(
        b.create<arith::CmpIOp>(arith::CmpIPredicate::ne, address,
                                l.i64(l.idx(0))),
        b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, n, l.idx(0)));
    all = b.create<arith::AndIOp>(all, ok);
  }
  l.unless(all, [&] {
    b.create<func::CallOp>(
        abi::kBadCoo, TypeRange{},
        ValueRange{l.i64(l.idx(badCooKind)), l.i64(nodes), l.i64(edges)});
  });
  index.inPtr =
      b.create<arith::SelectOp>(all, index.inPtr, l.idBuffer(l.idx(1)));
  return all;
}

void loops::runningTotals(Lowering &l, const LoopTarget &target, Value buffer,
                          Value n) {
  if (target.runningTotals) {
    target.runningTotals(l, buffer, n);
    return;
  }
  ImplicitLocOpBuilder &b = l.b;
  Value one = l.idx(1);
  b.create<memref::StoreOp>(l.idx(0), buffer, l.idx(0));
  l.serial(one, b.create<arith::AddIOp>(n, one), [&](Value v) {
    Value prev = b.create<memref::LoadOp>(
        buffer, ValueRange{b.create<arith::SubIOp>(v, one)});
    Value here = b.create<memref::LoadOp>(buffer, v);
    b.create<memref::StoreOp>(b.create<arith::AddIOp>(prev, here), buffer, v);
  });
}

void loops::fillInEdges(Lowering &l, const LoopTarget &target, Value src,
                        Value dst, Value numEdges, Value numDst,
                        const InEdgeIndex &index,
                        function_ref<void(Value)> perEdge) {
  ImplicitLocOpBuilder &b = l.b;
  Value one = l.idx(1);
  auto load = [&](Value buffer, Value i) -> Value {
    return b.create<memref::LoadOp>(buffer, i);
  };
  auto add = [&](Value x, Value y) -> Value {
    return b.create<arith::AddIOp>(x, y);
  };
  Value chunks = index.chunks, counts = index.counts, inPtr = index.inPtr;
  Value chunkSize = b.create<arith::CeilDivUIOp>(numEdges, chunks);
  // Chunk c's edges and its count of destination d.
  auto forChunk = [&](Value c, function_ref<void(Value)> body) {
    Value lo = b.create<arith::MinUIOp>(numEdges,
                                        b.create<arith::MulIOp>(c, chunkSize));
    l.serial(lo, b.create<arith::MinUIOp>(numEdges, add(lo, chunkSize)), body);
  };
  auto countAt = [&](Value c, Value d) {
    return add(b.create<arith::MulIOp>(c, numDst), d);
  };
  l.parallel(chunks, [&](Value c) {
    l.serial(l.idx(0), numDst, [&](Value d) {
      b.create<memref::StoreOp>(l.idx(0), counts, countAt(c, d));
    });
    forChunk(c, [&](Value e) {
      if (perEdge)
        perEdge(e);
      Value at = countAt(c, load(dst, e));
      b.create<memref::StoreOp>(add(load(counts, at), one), counts, at);
    });
  });
  // Per destination, its in-degree, and each chunk's first slot among the
  // destination's (chunks in order: slots follow edge ids).
  l.parallel(numDst, [&](Value d) {
    Value degree = l.forLoop(l.idx(0), chunks, ValueRange{l.idx(0)},
                             [&](Value c, ValueRange before) {
                               Value at = countAt(c, d);
                               Value n = load(counts, at);
                               b.create<memref::StoreOp>(before[0], counts, at);
                               return SmallVector<Value>{add(before[0], n)};
                             })[0];
    b.create<memref::StoreOp>(degree, inPtr, add(d, one));
  });
  runningTotals(l, target, inPtr, numDst);
  l.parallel(chunks, [&](Value c) {
    forChunk(c, [&](Value e) {
      Value d = load(dst, e);
      Value at = countAt(c, d);
      Value k = load(counts, at);
      b.create<memref::StoreOp>(add(k, one), counts, at);
      Value slot = add(load(inPtr, d), k);
      b.create<memref::StoreOp>(load(src, e), index.inSrc, slot);
      b.create<memref::StoreOp>(e, index.inEid, slot);
    });
  });
}

GraphParts loops::reverseGraph(Lowering &l, const GraphParts &g,
                               const LoopTarget &target) {
  ImplicitLocOpBuilder &b = l.b;
  // The reversal's destinations are g's sources.
  SmallVector<SizedBuffer> buffers;
  InEdgeIndex index =
      allocateInEdges(l, g.numEdges, g.numSrc, buffers, chunksFor(target));
  Value ok = checkAllocated(l, buffers, index, GNN_RT_COO_NO_MEMORY_REVERSAL,
                            g.numSrc, g.numEdges);
  auto orZero = [&](Value v) -> Value {
    return b.create<arith::SelectOp>(ok, v, l.idx(0));
  };
  GraphParts r;
  r.numSrc = g.numDst;
  r.src = g.dst;
  r.dst = g.src;
  r.numDst = orZero(g.numSrc);
  r.numEdges = orZero(g.numEdges);
  fillInEdges(l, target, r.src, r.dst, r.numEdges, r.numDst, index);
  r.inPtr = index.inPtr;
  r.inSrc = index.inSrc;
  r.inEid = index.inEid;
  return r;
}
