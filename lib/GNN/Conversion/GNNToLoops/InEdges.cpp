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

/// fillInEdges' passes: `guard`, where given, is a one-element flag
/// (badIdSlot's form) that each parallel iteration reads on the device and
/// runs only when it is set; then in_ptr is left as it is (its totals are
/// known) and only the slots are placed.
static void fillInEdgeChunks(Lowering &l, const LoopTarget &target, Value src,
                             Value dst, Value numEdges, Value numDst,
                             const InEdgeIndex &index,
                             function_ref<void(Value)> perEdge, Value guard) {
  ImplicitLocOpBuilder &b = l.b;
  Value one = l.idx(1);
  auto load = [&](Value buffer, Value i) -> Value {
    return b.create<memref::LoadOp>(buffer, i);
  };
  auto add = [&](Value x, Value y) -> Value {
    return b.create<arith::AddIOp>(x, y);
  };
  auto parallel = [&](Value n, function_ref<void(Value)> body) {
    l.parallel(n, [&](Value i) {
      if (!guard)
        return body(i);
      l.guarded(l.slotMarked(guard), [&] { body(i); });
    });
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
  parallel(chunks, [&](Value c) {
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
  parallel(numDst, [&](Value d) {
    Value degree = l.forLoop(l.idx(0), chunks, ValueRange{l.idx(0)},
                             [&](Value c, ValueRange before) {
                               Value at = countAt(c, d);
                               Value n = load(counts, at);
                               b.create<memref::StoreOp>(before[0], counts, at);
                               return SmallVector<Value>{add(before[0], n)};
                             })[0];
    if (!guard)
      b.create<memref::StoreOp>(degree, inPtr, add(d, one));
  });
  if (!guard)
    runningTotals(l, target, inPtr, numDst);
  parallel(chunks, [&](Value c) {
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

void loops::fillInEdges(Lowering &l, const LoopTarget &target, Value src,
                        Value dst, Value numEdges, Value numDst,
                        const InEdgeIndex &index,
                        function_ref<void(Value)> perEdge) {
  fillInEdgeChunks(l, target, src, dst, numEdges, numDst, index, perEdge,
                   Value());
}

/// fillInEdges for GPU threads where each destination's sources are likely
/// a range that edge ids follow (the reversal of a complete, causal or
/// bipartite block: a source's destinations): passes over the edges that
/// no thread walks, in place of chunks that each thread walks (a chunk of
/// the 6-layer Transformer's source graph is about 900 edges). Each
/// destination's in-degree and smallest source are found by atomic adds
/// and mins (integers: the same whatever the threads' order); an edge's
/// slot is its destination's first plus its source's distance from the
/// smallest. A second pass checks that every edge kept its slot and that
/// slots follow edge ids; where one did not (sources that are not a range,
/// repeated edges, ids out of order), the chunks place them as fillInEdges
/// does, each of their loops reading that answer on the device. Either way
/// the index is fillInEdges' own.
static void fillInEdgeRanges(Lowering &l, const LoopTarget &target, Value src,
                             Value dst, Value numEdges, Value numDst,
                             const InEdgeIndex &index) {
  ImplicitLocOpBuilder &b = l.b;
  Value one = l.idx(1);
  auto load = [&](Value buffer, Value i) -> Value {
    return b.create<memref::LoadOp>(buffer, i);
  };
  auto add = [&](Value x, Value y) -> Value {
    return b.create<arith::AddIOp>(x, y);
  };
  Value degree = l.i64Buffer(numDst), least = l.i64Buffer(numDst);
  Value broken = l.badIdSlot();
  Value zero = b.create<arith::ConstantIntOp>(0, 64);
  l.parallel(numDst, [&](Value d) {
    b.create<memref::StoreOp>(zero, degree, d);
    b.create<memref::StoreOp>(l.noBadId(), least, d);
  });
  l.parallel(numEdges, [&](Value e) {
    Value d = load(dst, e);
    b.create<memref::AtomicRMWOp>(arith::AtomicRMWKind::addi,
                                  b.create<arith::ConstantIntOp>(1, 64), degree,
                                  ValueRange{d});
    b.create<memref::AtomicRMWOp>(arith::AtomicRMWKind::minu,
                                  l.i64(load(src, e)), least, ValueRange{d});
  });
  l.parallel(numDst, [&](Value d) {
    b.create<memref::StoreOp>(
        b.create<arith::IndexCastOp>(b.getIndexType(), load(degree, d)),
        index.inPtr, add(d, one));
  });
  runningTotals(l, target, index.inPtr, numDst);
  // Edge e's distance from its destination's smallest source, and whether
  // that lies within its in-degree.
  auto placeOf = [&](Value e) {
    Value d = load(dst, e);
    Value distance =
        b.create<arith::SubIOp>(l.i64(load(src, e)), load(least, d));
    Value within = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, distance,
                                           load(degree, d));
    Value slot = add(load(index.inPtr, d),
                     b.create<arith::IndexCastOp>(b.getIndexType(), distance));
    return std::make_tuple(d, within, slot);
  };
  l.parallel(numEdges, [&](Value e) {
    auto [d, within, slot] = placeOf(e);
    l.guarded(within, [&, slot = slot] {
      b.create<memref::StoreOp>(load(src, e), index.inSrc, slot);
      b.create<memref::StoreOp>(e, index.inEid, slot);
    });
    l.unless(within, [&] { l.markSlot(broken, e); });
  });
  l.parallel(numEdges, [&](Value e) {
    auto [d, within, slot] = placeOf(e);
    l.guarded(within, [&, d = d, slot = slot] {
      Value next = add(slot, one);
      Value kept = b.create<arith::CmpIOp>(arith::CmpIPredicate::eq,
                                           load(index.inEid, slot), e);
      Value last = b.create<arith::CmpIOp>(arith::CmpIPredicate::uge, next,
                                           load(index.inPtr, add(d, one)));
      // (The next slot's edge is only read where there is one.)
      Value inOrder = l.ifElse(
          last, [&] { return SmallVector<Value>{last}; },
          [&] {
            return SmallVector<Value>{b.create<arith::CmpIOp>(
                arith::CmpIPredicate::ugt, load(index.inEid, next), e)};
          })[0];
      l.unless(b.create<arith::AndIOp>(kept, inOrder),
               [&] { l.markSlot(broken, e); });
    });
  });
  fillInEdgeChunks(l, target, src, dst, numEdges, numDst, index, nullptr,
                   broken);
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
  if (target.elementPerThread())
    fillInEdgeRanges(l, target, r.src, r.dst, r.numEdges, r.numDst, index);
  else
    fillInEdges(l, target, r.src, r.dst, r.numEdges, r.numDst, index);
  r.inPtr = index.inPtr;
  r.inSrc = index.inSrc;
  r.inEid = index.inEid;
  return r;
}
