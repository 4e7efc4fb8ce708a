//===- GNNToLoops.cpp - lower gnn ops to loops ----------------------------===//
//
// Part of gnnc. Every gnn op becomes loops over memrefs: edge-wise ops loop
// over edges, receiving ops over destinations and their in-edges (CSR), the
// fused attention over destinations with an online softmax. Results are
// fresh buffers handed back as tensors, for one-shot bufferization. Where
// CPU cores and GPU threads want different loops, the LoopTarget says which.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "GNN/Conversion/Passes.h"
#include "GNN/Conversion/RuntimeReports.h"
#include "GNN/IR/GNNOps.h"
#include "InEdges.h"
#include "Lowering.h"
#include "LoweringPattern.h"
#include "gnnc/graph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

//===----------------------------------------------------------------------===//
// Op lowerings
//===----------------------------------------------------------------------===//

/// On GPU threads, a parallel iteration per edge and item, so that
/// neighbouring threads touch neighbouring elements; on CPU cores one per
/// edge, whose items the core loops over in vectors.
static LogicalResult lowerApplyEdges(ApplyEdgesOp op, const LoopTarget &target,
                                     RewriterBase &rewriter) {
  bool elementThreads = target.elementPerThread();
  Lowering l(op, rewriter);
  FailureOr<GraphParts> g = l.graph(op, op.getGraph());
  if (failed(g))
    return failure();
  SmallVector<Feature> inputs = l.features(op.getInputs());
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  ArrayRef<int64_t> item = getItemShape(resultType);

  MessageFnAttr fn = op.getFnAttr();
  Value dotExtent = l.dotExtent(fn, inputs);
  SmallVector<Value> extents = l.itemExtents(item, inputs);
  Value out = l.alloc(resultType, g->numEdges, extents);

  auto computeItem = [&](Value e, ValueRange at) {
    Lowering::EdgeRows rows{l.b.create<memref::LoadOp>(g->src, e),
                            l.b.create<memref::LoadOp>(g->dst, e), e};
    Value x;
    if (fn) {
      x = l.message(fn, inputs, rows, at, dotExtent);
      if (std::optional<ArrayAttr> post = op.getPost())
        for (Attribute unary : *post)
          x = l.applyUnary(cast<UnaryFnAttr>(unary), x);
    } else {
      SmallVector<Value> scalars;
      for (auto [i, f] : llvm::enumerate(inputs))
        scalars.push_back(l.load(f, rows.of(op.getInputTarget(i)), at));
      x = l.inlineBody(op.getBody(), scalars)[0];
    }
    SmallVector<Value> index = {e};
    llvm::append_range(index, at);
    l.b.create<memref::StoreOp>(x, out, index);
  };
  auto computeEdge = [&](Value e) {
    l.loopNest(extents, [&](ValueRange at) { computeItem(e, at); });
  };
  SmallVector<SizeCheck> checks;
  SmallVector<Value> fullExtents(extents);
  if (dotExtent)
    fullExtents.back() = dotExtent;
  for (auto [i, f] : llvm::enumerate(inputs)) {
    Target t = op.getInputTarget(i);
    checks.push_back(
        {f.memref, 0, Lowering::rowsOf(*g, t), Lowering::targetCode(t)});
    Lowering::addItemChecks(checks, f, fullExtents);
  }
  l.guarded(l.sizesMatch(checks), [&] {
    if (Value edges = op.getEdges()) {
      l.zero(out, resultType, g->numEdges, extents);
      l.forEachListedEdge(l.toMemref(edges), g->numEdges, computeEdge);
    } else if (elementThreads) {
      l.parallelItems(g->numEdges, extents, computeItem);
    } else {
      l.parallel(g->numEdges, computeEdge);
    }
  });
  return l.replaceWithBuffers(op, out);
}

namespace {
/// Initial value, combination and finish of a reduce function.
struct Reducer {
  ReduceKind kind;
  Value init(Lowering &l, Type t) {
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      return l.floatConst(t, 0.0);
    case ReduceKind::Max:
      return l.floatConst(t, -std::numeric_limits<double>::infinity());
    case ReduceKind::Min:
      return l.floatConst(t, std::numeric_limits<double>::infinity());
    }
    llvm_unreachable("unknown reduce kind");
  }
  Value combine(Lowering &l, Value acc, Value x) {
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      return l.b.create<arith::AddFOp>(acc, x);
    case ReduceKind::Max:
      return l.b.create<arith::MaximumFOp>(acc, x);
    case ReduceKind::Min:
      return l.b.create<arith::MinimumFOp>(acc, x);
    }
    llvm_unreachable("unknown reduce kind");
  }
  /// Nodes without messages get 0.
  Value finish(Lowering &l, Value acc, Value count) {
    Type t = acc.getType();
    Value none =
        l.b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, count, l.idx(0));
    if (kind == ReduceKind::Mean) {
      Value n = l.b.create<arith::UIToFPOp>(
          t, l.b.create<arith::IndexCastUIOp>(l.b.getI64Type(), count));
      acc = l.b.create<arith::DivFOp>(acc, n);
    }
    if (kind == ReduceKind::Sum)
      return acc;
    return l.b.create<arith::SelectOp>(none, l.floatConst(t, 0.0), acc);
  }
};
} // namespace

/// Destination-parallel aggregation of messages; shared by send_and_recv and
/// reduce (a reduce is copy_e).
static LogicalResult lowerReceive(Operation *op, Value graphValue, Value edges,
                                  ArrayRef<MessageFnAttr> messages,
                                  ArrayRef<ReduceKind> reducers,
                                  ArrayRef<SmallVector<Value>> messageInputs,
                                  RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  FailureOr<GraphParts> g = l.graph(op, graphValue);
  if (failed(g))
    return failure();
  Value mask = edges ? l.edgeMask(edges, g->numEdges) : Value();

  struct Output {
    MessageFnAttr fn;
    Reducer reducer;
    SmallVector<Feature> inputs;
    RankedTensorType type;
    SmallVector<Value> extents;
    Value dotExtent;
    Value buffer;
  };
  SmallVector<Output> outputs;
  for (auto [i, fn] : llvm::enumerate(messages)) {
    Output o{fn, Reducer{reducers[i]}, {}, {}, {}, {}, {}};
    o.inputs = l.features(messageInputs[i]);
    o.type = cast<RankedTensorType>(op->getResult(i).getType());
    o.extents = l.itemExtents(getItemShape(o.type), o.inputs);
    o.dotExtent = l.dotExtent(fn, o.inputs);
    o.buffer = l.alloc(o.type, g->numDst, o.extents);
    outputs.push_back(std::move(o));
  }

  SmallVector<SizeCheck> checks;
  for (Output &o : outputs) {
    SmallVector<Value> fullExtents(o.extents);
    if (o.dotExtent)
      fullExtents.back() = o.dotExtent;
    for (auto [j, f] : llvm::enumerate(o.inputs)) {
      Target t = o.fn.getTarget(j);
      checks.push_back(
          {f.memref, 0, Lowering::rowsOf(*g, t), Lowering::targetCode(t)});
      Lowering::addItemChecks(checks, f, fullExtents);
    }
  }
  l.guarded(l.sizesMatch(checks), [&] {
    l.parallel(g->numDst, [&](Value v) {
      auto at = [&](ValueRange item) {
        SmallVector<Value> index = {v};
        llvm::append_range(index, item);
        return index;
      };
      for (Output &o : outputs) {
        Type t = o.type.getElementType();
        l.loopNest(o.extents, [&](ValueRange item) {
          l.b.create<memref::StoreOp>(o.reducer.init(l, t), o.buffer, at(item));
        });
      }
      // One walk over the in-edges updates every output row.
      Value count = l.forEachInEdge(
          *g, v, mask, ValueRange{l.idx(0)},
          [&](Value u, Value e, ValueRange carried) {
            Lowering::EdgeRows rows{u, v, e};
            for (Output &o : outputs)
              l.loopNest(o.extents, [&](ValueRange item) {
                Value x = l.message(o.fn, o.inputs, rows, item, o.dotExtent);
                Value acc = l.b.create<memref::LoadOp>(o.buffer, at(item));
                l.b.create<memref::StoreOp>(o.reducer.combine(l, acc, x),
                                            o.buffer, at(item));
              });
            return SmallVector<Value>{
                l.b.create<arith::AddIOp>(carried[0], l.idx(1))};
          })[0];
      for (Output &o : outputs) {
        if (o.reducer.kind == ReduceKind::Sum)
          continue;
        l.loopNest(o.extents, [&](ValueRange item) {
          Value acc = l.b.create<memref::LoadOp>(o.buffer, at(item));
          l.b.create<memref::StoreOp>(o.reducer.finish(l, acc, count), o.buffer,
                                      at(item));
        });
      }
    });
  });
  SmallVector<Value> buffers;
  for (Output &o : outputs)
    buffers.push_back(o.buffer);
  return l.replaceWithBuffers(op, buffers);
}

static LogicalResult lowerSendAndRecv(SendAndRecvOp op,
                                      RewriterBase &rewriter) {
  SmallVector<MessageFnAttr> messages;
  SmallVector<ReduceKind> reducers;
  SmallVector<SmallVector<Value>> inputs;
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    messages.push_back(op.getMessage(i));
    reducers.push_back(op.getReducer(i));
    inputs.push_back(llvm::to_vector(op.getMessageInputs(i)));
  }
  return lowerReceive(op, op.getGraph(), op.getEdges(), messages, reducers,
                      inputs, rewriter);
}

static LogicalResult lowerReduce(ReduceOp op, RewriterBase &rewriter) {
  MessageFnAttr copyE = MessageFnAttr::parseName(op.getContext(), "copy_e");
  return lowerReceive(op, op.getGraph(), op.getEdges(), {copyE}, {op.getKind()},
                      {SmallVector<Value>{op.getInput()}}, rewriter);
}

/// As apply_edges: a parallel iteration per row and item (GPU threads), or
/// per row with a loop over its items (CPU cores).
static LogicalResult lowerApplyNodes(ApplyNodesOp op, const LoopTarget &target,
                                     RewriterBase &rewriter) {
  bool elementThreads = target.elementPerThread();
  Lowering l(op, rewriter);
  SmallVector<Feature> inputs = l.features(op.getInputs());
  // The results share one shape (the verifier's rule): one element loop
  // writes them all.
  auto type = cast<RankedTensorType>(op.getResult(0).getType());
  SmallVector<Value> extents = l.itemExtents(getItemShape(type), inputs);
  Value rows = l.dim(inputs[0].memref, 0);
  SmallVector<Value> outs;
  for (Value result : op.getResults())
    outs.push_back(
        l.alloc(cast<RankedTensorType>(result.getType()), rows, extents));
  SmallVector<SizeCheck> checks;
  for (const Feature &f : inputs) {
    checks.push_back({f.memref, 0, rows, kInputRowsCode});
    Lowering::addItemChecks(checks, f, extents);
  }
  auto computeItem = [&](Value r, ValueRange item) {
    SmallVector<Value> scalars;
    for (const Feature &f : inputs)
      scalars.push_back(l.load(f, r, item));
    // Dropout's mask depends on the element's position in the result.
    auto lowerOp = [&](Operation &bodyOp, IRMapping &mapping) -> Value {
      auto drop = dyn_cast<DropoutElementOp>(bodyOp);
      if (!drop)
        return {};
      return lowerDropoutElement(l, drop, mapping.lookup(drop.getInput()),
                                 l.flatIndex(r, item, extents));
    };
    SmallVector<Value> values = l.inlineBody(op.getBody(), scalars, lowerOp);
    SmallVector<Value> index = {r};
    llvm::append_range(index, item);
    for (auto [x, out] : llvm::zip(values, outs))
      l.b.create<memref::StoreOp>(x, out, index);
  };
  l.guarded(l.sizesMatch(checks), [&] {
    if (elementThreads) {
      l.parallelItems(rows, extents, computeItem);
      return;
    }
    l.parallel(rows, [&](Value r) {
      l.loopNest(extents, [&](ValueRange item) { computeItem(r, item); });
    });
  });
  return l.replaceWithBuffers(op, outs);
}

static LogicalResult lowerBroadcast(BroadcastOp op, const LoopTarget &target,
                                    RewriterBase &rewriter) {
  bool elementThreads = target.elementPerThread();
  Lowering l(op, rewriter);
  Value in = l.toMemrefView(op.getInput());
  Value like = l.toMemrefView(op.getLike());
  RankedTensorType type = op.getType();
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  int64_t offset = type.getRank() - inType.getRank();
  SmallVector<Value> extents, dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    extents.push_back(l.dim(like, d));
    if (type.isDynamicDim(d))
      dynamic.push_back(extents.back());
  }
  Value out = l.b.create<memref::AllocOp>(
      MemRefType::get(type.getShape(), type.getElementType()), dynamic);
  auto copyTo = [&](ValueRange at) {
    SmallVector<Value> from;
    for (int64_t d = 0; d < inType.getRank(); ++d)
      from.push_back(inType.getDimSize(d) == 1 ? l.idx(0) : at[offset + d]);
    Value x = l.b.create<memref::LoadOp>(in, from);
    l.b.create<memref::StoreOp>(x, out, at);
  };
  // A dynamic input dim must be the result's (the verifier cannot know).
  SmallVector<SizeCheck> checks;
  for (int64_t d = 0; d < inType.getRank(); ++d)
    if (inType.isDynamicDim(d))
      checks.push_back(
          {in, d, extents[offset + d],
           d == 0 && offset == 0 ? kInputRowsCode : kItemSizeCode});
  l.guarded(l.sizesMatch(checks), [&] {
    if (extents.empty()) {
      copyTo({});
      return;
    }
    ArrayRef<Value> inner = ArrayRef(extents).drop_front();
    auto copyItem = [&](Value first, ValueRange rest) {
      SmallVector<Value> at = {first};
      llvm::append_range(at, rest);
      copyTo(at);
    };
    if (elementThreads) {
      l.parallelItems(extents.front(), inner, copyItem);
      return;
    }
    l.parallel(extents.front(), [&](Value first) {
      l.loopNest(inner, [&](ValueRange rest) { copyItem(first, rest); });
    });
  });
  return l.replaceWithBuffers(op, out);
}

template <typename CountOp>
static LogicalResult lowerCount(CountOp op, Value GraphParts::*part,
                                RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  FailureOr<GraphParts> g = l.graph(op, op.getGraph());
  if (failed(g))
    return failure();
  l.rewriter.replaceOp(op, (*g).*part);
  return success();
}

static LogicalResult lowerEdgeEndpoints(EdgeEndpointsOp op,
                                        RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  if (failed(l.graph(op, op.getGraph())))
    return failure();
  SmallVector<Value> parts = *getGraphParts(op.getGraph());
  SmallVector<Value> endpoints;
  for (auto [result, part] :
       llvm::zip_equal(op.getResults(), ValueRange{parts[GNN_GRAPH_PART_SRC],
                                                   parts[GNN_GRAPH_PART_DST]}))
    endpoints.push_back(
        part.getType() == result.getType()
            ? part
            : l.b.create<tensor::CastOp>(result.getType(), part).getResult());
  l.rewriter.replaceOp(op, endpoints);
  return success();
}

/// On GPU threads, a parallel iteration per row and item, with bad ids
/// reported after the loop (checkedId with a slot), so that the GPU runs
/// the lookup.
static LogicalResult lowerGatherRows(GatherRowsOp op, const LoopTarget &target,
                                     RewriterBase &rewriter) {
  bool elementThreads = target.elementPerThread();
  Lowering l(op, rewriter);
  Feature source = l.feature(op.getSource());
  Value ids = l.toMemref(op.getIds());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  SmallVector<Value> extents = l.itemExtents(getItemShape(type), {source});
  Value rows = l.dim(ids, 0);
  Value out = l.alloc(type, rows, extents);
  Value limit = l.dim(source.memref, 0);
  // A bad id is reported; its row is zeros.
  auto copyItem = [&](Value i, Value inRange, Value r, ValueRange item) {
    SmallVector<Value> to = {i};
    llvm::append_range(to, item);
    Value x = l.ifElse(
        inRange, [&] { return SmallVector<Value>{l.load(source, r, item)}; },
        [&] { return SmallVector<Value>{l.zero(type.getElementType())}; })[0];
    l.b.create<memref::StoreOp>(x, out, to);
  };
  if (elementThreads) {
    Value slot = l.badIdSlot();
    l.parallelItems(rows, extents, [&](Value i, ValueRange item) {
      auto [inRange, r] = l.checkedId(ids, i, limit, slot);
      copyItem(i, inRange, r, item);
    });
    l.reportBadId(slot, ids, limit);
    return l.replaceWithBuffers(op, out);
  }
  l.parallel(rows, [&](Value i) {
    auto [inRange, r] = l.checkedId(ids, i, limit);
    l.loopNest(extents,
               [&](ValueRange item) { copyItem(i, inRange, r, item); });
  });
  return l.replaceWithBuffers(op, out);
}

/// `body(i, id)` for each entry i below `entries` whose id names one of
/// `rows` (the others are the scatter's bad ids, reported where it reads
/// them): in a parallel loop, or a serial one.
static void forEachIdInRange(Lowering &l, Value ids, Value rows, Value entries,
                             bool parallel,
                             function_ref<void(Value, Value)> body) {
  auto visit = [&](Value i) {
    Value id = l.b.create<memref::LoadOp>(ids, i);
    Value inRange =
        l.b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, id, rows);
    l.guarded(inRange, [&] { body(i, id); });
  };
  if (parallel) {
    l.parallel(entries, visit);
    return;
  }
  l.forLoop(l.idx(0), entries, ValueRange{}, [&](Value i, ValueRange) {
    visit(i);
    return SmallVector<Value>{};
  });
}

/// Repeated ids found by parallel loops: a slot per destination row takes
/// the smallest entry naming it (atomic min), and a second pass lowers a
/// one-element slot to each entry whose row's slot names an earlier one.
/// Returns the row slots and that slot (noBadId where no id repeats).
static std::pair<Value, Value> findRepeatedIds(Lowering &l, Value ids,
                                               Value rows, Value entries) {
  ImplicitLocOpBuilder &b = l.b;
  Value slots = l.i64Buffer(rows); // a slot per destination row
  l.parallel(
      rows, [&](Value r) { b.create<memref::StoreOp>(l.noBadId(), slots, r); });
  forEachIdInRange(
      l, ids, rows, entries, /*parallel=*/true, [&](Value i, Value id) {
        b.create<memref::AtomicRMWOp>(arith::AtomicRMWKind::minu, l.i64(i),
                                      slots, ValueRange{id});
      });
  Value repeated = l.badIdSlot();
  forEachIdInRange(
      l, ids, rows, entries, /*parallel=*/true, [&](Value i, Value id) {
        Value first = b.create<memref::LoadOp>(slots, id);
        Value later =
            b.create<arith::CmpIOp>(arith::CmpIPredicate::ne, first, l.i64(i));
        l.guarded(later, [&] { l.markSlot(repeated, i); });
      });
  // (The deallocation pipeline frees the slots.)
  return {slots, repeated};
}

/// The distinct-id check of checkScatterIds for GPU threads, where a
/// kernel cannot call the runtime and the host must not walk the ids:
/// findRepeatedIds, then the host reports the smallest repeated entry
/// after the loops, with the first entry of its id: the report the serial
/// pass would make, whatever the threads' order.
static void checkDistinctIdsInParallel(Lowering &l, Value ids, Value rows,
                                       Value entries) {
  ImplicitLocOpBuilder &b = l.b;
  auto [slots, repeated] = findRepeatedIds(l, ids, rows, entries);
  // Checked at the end of the block, as lookups' bad ids are, by the
  // runtime (after the kernels, or queued on their stream): the kernels
  // after it run without the host waiting for this one (a scatter with
  // repeated ids fails, whatever its rows hold).
  l.atEndOfBlock([&] {
    auto [line, column] = lineAndColumn(l.loc);
    l.callCheck(abi::kCheckRepeatedId,
                {repeated,
                 b.create<memref::CastOp>(l.stridedList(b.getIndexType()), ids),
                 b.create<memref::CastOp>(l.stridedList(b.getI64Type()), slots),
                 b.create<arith::ConstantIntOp>(line, 64),
                 b.create<arith::ConstantIntOp>(column, 64)});
  });
}

/// A scatter needs a source row per id, and without add distinct ids:
/// checks both before the scatter (with `distinct`, a pass over the ids
/// with a slot per destination row that holds the entry naming it: serial
/// on CPU cores, parallel with `parallelIds`) and reports the first
/// failure. Returns the number of entries to scatter: 0 when the source's
/// rows differ from the ids (which would read past the source). Repeated
/// ids are only reported (the call fails).
static Value checkScatterIds(Lowering &l, ScatterRowsOp op, Value ids,
                             Value rows, bool distinct,
                             bool parallelIds = false) {
  ImplicitLocOpBuilder &b = l.b;
  Location loc = l.loc;
  Value count = l.dim(ids, 0);
  Value sourceRows = b.create<tensor::DimOp>(op.getSource(), 0);
  Value same =
      b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, sourceRows, count);
  l.unless(same, [&] {
    b.create<func::CallOp>(
        abi::kRowsMismatch, TypeRange{},
        ValueRange{l.i64(sourceRows), l.i64(count),
                   b.create<arith::ConstantIntOp>(kInputRowsCode, 64)});
  });
  Value entries = b.create<arith::SelectOp>(same, count, l.idx(0));
  if (!distinct)
    return entries;
  if (parallelIds) {
    checkDistinctIdsInParallel(l, ids, rows, entries);
    return entries;
  }
  // Slot r: 1 + the entry that named row r, 0 if none did.
  Value slots = l.i64Buffer(rows); // a slot per destination row
  Value zero = b.create<arith::ConstantIntOp>(0, 64);
  l.forLoop(l.idx(0), rows, ValueRange{}, [&](Value r, ValueRange) {
    b.create<memref::StoreOp>(zero, slots, r);
    return SmallVector<Value>{};
  });
  forEachIdInRange(
      l, ids, rows, entries, /*parallel=*/false, [&](Value i, Value id) {
        Value earlier = b.create<memref::LoadOp>(slots, id);
        Value first =
            b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, earlier, zero);
        Value one = b.create<arith::ConstantIntOp>(1, 64);
        l.unless(first, [&] {
          // The id, the earlier entry and this one, at the op's place.
          buildBadValueReport(
              b, loc, GNN_RT_REPEATED_ID,
              {l.i64(id), b.create<arith::SubIOp>(earlier, one), l.i64(i)});
        });
        Value entry = b.create<arith::AddIOp>(l.i64(i), one);
        b.create<memref::StoreOp>(entry, slots, id);
      });
  // (The deallocation pipeline frees the slots.)
  return entries;
}

/// Row by row into `dest` itself, as tensor slices: bufferization writes
/// in place where `dest` is not read afterwards (a state or cache a loop
/// carries), and copies it once otherwise. Rows of the same static shape
/// only; others take the element loop below.
static Value scatterRowSlices(Lowering &l, ScatterRowsOp op) {
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Value dest = op.getDest();
  if (dest.getType() != type)
    dest = l.b.create<tensor::CastOp>(type, dest);
  Value ids = l.toMemref(op.getIds());
  Value rows = l.b.create<tensor::DimOp>(dest, 0);
  Value entries = checkScatterIds(l, op, ids, rows, /*distinct=*/true);
  SmallVector<OpFoldResult> sizes = {l.b.getIndexAttr(1)},
                            strides(type.getRank(), l.b.getIndexAttr(1));
  for (int64_t size : getItemShape(type))
    sizes.push_back(l.b.getIndexAttr(size));
  auto at = [&](Value row) {
    SmallVector<OpFoldResult> offsets(type.getRank(), l.b.getIndexAttr(0));
    offsets[0] = row;
    return offsets;
  };
  return l.forLoop(
      l.idx(0), entries, ValueRange{dest}, [&](Value i, ValueRange state) {
        auto [inRange, r] = l.checkedId(ids, i, rows);
        return SmallVector<Value>{l.ifElse(
            inRange,
            [&] {
              Value row = l.b.create<tensor::ExtractSliceOp>(
                  op.getSource(), at(i), sizes, strides);
              return SmallVector<Value>{l.b.create<tensor::InsertSliceOp>(
                  row, state[0], at(r), sizes, strides)};
            },
            [&] { return SmallVector<Value>{state[0]}; })[0]};
      })[0];
}

/// scatterRowSlices for GPU threads: an scf.forall over the entries' item
/// elements that inserts each into `dest` (a one-element slice), so that
/// bufferization writes in place as it does for the serial row slices (a
/// decoding step's cache rows), while the ids are checked by parallel loops
/// (reported at the end of the block). A bad id writes row 0 (the call
/// fails); with no row to write, the ids are only checked.
static Value scatterElementSlices(Lowering &l, ScatterRowsOp op) {
  ImplicitLocOpBuilder &b = l.b;
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Value dest = op.getDest();
  if (dest.getType() != type)
    dest = b.create<tensor::CastOp>(type, dest);
  Value ids = l.toMemref(op.getIds());
  Value rows = b.create<tensor::DimOp>(dest, 0);
  Value entries = checkScatterIds(l, op, ids, rows, /*distinct=*/true,
                                  /*parallelIds=*/true);
  Value slot = l.badIdSlot();
  Value empty =
      b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, rows, l.idx(0));
  l.parallel(b.create<arith::SelectOp>(empty, entries, l.idx(0)),
             [&](Value i) { l.checkedId(ids, i, rows, slot); });
  SmallVector<Value> extents = llvm::map_to_vector(
      getItemShape(type), [&](int64_t size) { return l.idx(size); });
  Value elements = b.create<arith::SelectOp>(empty, l.idx(0), entries);
  for (Value extent : extents)
    elements = b.create<arith::MulIOp>(elements, extent);
  SmallVector<OpFoldResult> ones(type.getRank(), b.getIndexAttr(1));
  auto forall = b.create<scf::ForallOp>(ArrayRef<OpFoldResult>{elements},
                                        ValueRange{dest},
                                        /*mapping=*/std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    // The element's entry and item indices.
    auto [i, item] = l.splitFlat(forall.getInductionVar(0), extents);
    auto [inRange, r] = l.checkedId(ids, i, rows, slot);
    SmallVector<OpFoldResult> from = {i}, to = {r};
    llvm::append_range(from, item);
    llvm::append_range(to, item);
    auto elementType = RankedTensorType::get(
        SmallVector<int64_t>(type.getRank(), 1), type.getElementType());
    Value element = b.create<tensor::ExtractSliceOp>(
        elementType, op.getSource(), from, ones, ones);
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    b.create<tensor::ParallelInsertSliceOp>(
        element, forall.getRegionIterArgs()[0], to, ones, ones);
  }
  l.reportBadId(slot, ids, rows);
  return forall.getResult(0);
}

/// Stores `value` as row `r`'s item element of `out`.
static void storeItem(Lowering &l, Value value, Value out, Value r,
                      ValueRange item) {
  SmallVector<Value> to = {r};
  llvm::append_range(to, item);
  l.b.create<memref::StoreOp>(value, out, to);
}

/// Adds entry i's item element of `source` to row r's of `out`.
static void addItem(Lowering &l, const Feature &source, Value out, Value i,
                    Value r, ValueRange item) {
  SmallVector<Value> at = {r};
  llvm::append_range(at, item);
  Value sum = l.b.create<arith::AddFOp>(l.b.create<memref::LoadOp>(out, at),
                                        l.load(source, i, item));
  l.b.create<memref::StoreOp>(sum, out, at);
}

/// `dest`'s rows into `out`, an iteration per element: on a GPU the copy is
/// a kernel too (on the host it would move the pages of both buffers there).
static void copyRowsOnThreads(Lowering &l, const Feature &dest, Value out,
                              Value rows, ArrayRef<Value> extents) {
  l.parallelItems(rows, extents, [&](Value r, ValueRange item) {
    storeItem(l, l.load(dest, r, item), out, r, item);
  });
}

/// The most destination rows an adding scatter on GPU threads sums by
/// scanning the whole list for each of its elements (an embedding table's
/// gradient over a small vocabulary): rows x list loads in all, each
/// thread's sum in a register.
constexpr int64_t kScannedRows = 64;

/// An adding scatter on GPU threads, with the sums of the serial loop bit
/// for bit (each row's entries added in list order) and no thread walking
/// the list through memory. With at most kScannedRows destination rows
/// (static), a thread per destination element walks the list and adds the
/// entries that name its row. Otherwise findRepeatedIds finds whether any
/// id repeats, and two loops follow that each read that answer on the device
/// (the host does not wait for it): where no id repeats, an iteration per
/// entry and item element adds into its own row (no two add into one);
/// where one does, an iteration per item element walks the list. `out`
/// holds `dest`'s rows where the entries are added.
static void scatterAddOnThreads(Lowering &l, ScatterRowsOp op, Value ids,
                                Value rows, Value entries,
                                ArrayRef<Value> extents, const Feature &source,
                                const Feature &dest, Value out) {
  ImplicitLocOpBuilder &b = l.b;
  Value slot = l.badIdSlot();
  int64_t staticRows =
      cast<RankedTensorType>(op.getResult().getType()).getDimSize(0);
  if (!ShapedType::isDynamic(staticRows) && staticRows <= kScannedRows) {
    l.parallel(entries, [&](Value i) { l.checkedId(ids, i, rows, slot); });
    l.parallelItems(rows, extents, [&](Value r, ValueRange item) {
      Value sum = l.forLoop(
          l.idx(0), entries, ValueRange{l.load(dest, r, item)},
          [&](Value i, ValueRange acc) {
            Value named = b.create<arith::CmpIOp>(
                arith::CmpIPredicate::eq, b.create<memref::LoadOp>(ids, i), r);
            return SmallVector<Value>{l.ifElse(
                named,
                [&] {
                  return SmallVector<Value>{
                      b.create<arith::AddFOp>(acc[0], l.load(source, i, item))};
                },
                [&] { return SmallVector<Value>{acc[0]}; })[0]};
          })[0];
      storeItem(l, sum, out, r, item);
    });
    l.reportBadId(slot, ids, rows);
    return;
  }
  copyRowsOnThreads(l, dest, out, rows, extents);
  // Read in each iteration: on the device, after the passes above.
  Value repeat = findRepeatedIds(l, ids, rows, entries).second;
  // Entry i's item element added to its row, if its id is good.
  auto addEntry = [&](Value i, ValueRange item) {
    auto [inRange, r] = l.checkedId(ids, i, rows, slot);
    l.guarded(inRange, [&] { addItem(l, source, out, i, r, item); });
  };
  l.parallelItems(entries, extents, [&](Value i, ValueRange item) {
    l.unless(l.slotMarked(repeat), [&] { addEntry(i, item); });
  });
  // No thread without entries; and not a static 1, which would fold the
  // loop of rows of one element into the host's code.
  Value threads = b.create<arith::MinUIOp>(entries, l.idx(1));
  l.parallelItems(threads, extents, [&](Value, ValueRange item) {
    l.guarded(l.slotMarked(repeat), [&] {
      l.forLoop(l.idx(0), entries, ValueRange{}, [&](Value i, ValueRange) {
        addEntry(i, item);
        return SmallVector<Value>{};
      });
    });
  });
  l.reportBadId(slot, ids, rows);
}

/// On GPU threads no loop of a scatter is the host's (a host loop would
/// wait for the kernels before it and move the buffers' pages there and
/// back: a decoding step's cache rows, a loss's gradient): the copy of
/// `dest` is a parallel loop, the ids' checks are too (reported at the end
/// of the block), a scatter without add writes an element per iteration,
/// and an adding scatter is scatterAddOnThreads.
static LogicalResult lowerScatterRows(ScatterRowsOp op,
                                      const LoopTarget &target,
                                      RewriterBase &rewriter) {
  bool elementThreads = target.elementPerThread();
  Lowering l(op, rewriter);
  auto type = cast<RankedTensorType>(op.getResult().getType());
  ArrayRef<int64_t> item = getItemShape(type);
  if (!op.getAdd() &&
      getItemShape(cast<RankedTensorType>(op.getSource().getType())) == item &&
      !llvm::any_of(item, ShapedType::isDynamic)) {
    l.rewriter.replaceOp(op, elementThreads ? scatterElementSlices(l, op)
                                            : scatterRowSlices(l, op));
    return success();
  }
  Feature source = l.feature(op.getSource());
  Feature dest = l.feature(op.getDest());
  Value ids = l.toMemref(op.getIds());
  SmallVector<Value> extents = l.itemExtents(item, {dest});
  Value rows = l.dim(dest.memref, 0);
  // (On a GPU the ids stay where they are: no host pass over them.)
  Value entries = checkScatterIds(l, op, ids, rows, /*distinct=*/!op.getAdd(),
                                  /*parallelIds=*/elementThreads);
  Value out = l.alloc(type, rows, extents);
  if (op.getAdd() && elementThreads) {
    scatterAddOnThreads(l, op, ids, rows, entries, extents, source, dest, out);
    return l.replaceWithBuffers(op, out);
  }
  if (elementThreads)
    copyRowsOnThreads(l, dest, out, rows, extents);
  else
    l.b.create<memref::CopyOp>(dest.memref, out);
  if (op.getAdd()) {
    // In list order: repeated ids add up the same on any number of threads.
    l.forLoop(l.idx(0), entries, ValueRange{}, [&](Value i, ValueRange) {
      auto [inRange, r] = l.checkedId(ids, i, rows);
      l.guarded(inRange, [&] {
        l.loopNest(extents, [&](ValueRange item) {
          addItem(l, source, out, i, r, item);
        });
      });
      return SmallVector<Value>{};
    });
    return l.replaceWithBuffers(op, out);
  }
  // Writes entry i's item element into row r.
  auto setItem = [&](Value i, Value r, ValueRange item) {
    storeItem(l, l.load(source, i, item), out, r, item);
  };
  if (elementThreads) {
    Value slot = l.badIdSlot();
    l.parallelItems(entries, extents, [&](Value i, ValueRange item) {
      auto [inRange, r] = l.checkedId(ids, i, rows, slot);
      l.guarded(inRange, [&] { setItem(i, r, item); });
    });
    l.reportBadId(slot, ids, rows);
    return l.replaceWithBuffers(op, out);
  }
  l.parallel(entries, [&](Value i) {
    auto [inRange, r] = l.checkedId(ids, i, rows);
    l.guarded(inRange, [&] {
      l.loopNest(extents, [&](ValueRange item) { setItem(i, r, item); });
    });
  });
  return l.replaceWithBuffers(op, out);
}

/// A sequential loop over [0, n) with one index carried value.
static Value countLoop(Lowering &l, Value n,
                       function_ref<Value(Value, Value)> body) {
  auto loop = l.b.create<scf::ForOp>(
      l.idx(0), n, l.idx(1), ValueRange{l.idx(0)},
      [&](OpBuilder &nested, Location, Value i, ValueRange acc) {
        OpBuilder::InsertionGuard guard(l.b);
        l.b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
        l.b.create<scf::YieldOp>(body(i, acc[0]));
      });
  return loop.getResult(0);
}

/// Builds the CSR of an edge list in O(edges + nodes). Edge lists of
/// different lengths, a node count outside [0, GNN_GRAPH_MAX_COUNT], an
/// edge with an id out of range or a failed allocation is reported to the
/// runtime and the graph becomes empty, so that nothing reads outside a
/// buffer before the caller sees the error. The edges are counted and placed
/// in chunks that suit `target`.
static LogicalResult lowerGraphFromCoo(GraphFromCooOp op,
                                       const LoopTarget &target,
                                       RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  ImplicitLocOpBuilder &b = l.b;
  Value src = l.toMemref(op.getSrc()), dst = l.toMemref(op.getDst());
  auto cmp = [&](arith::CmpIPredicate p, Value a, Value c) {
    return b.create<arith::CmpIOp>(p, a, c).getResult();
  };
  auto all = [&](ValueRange flags) {
    Value r = flags.front();
    for (Value f : flags.drop_front())
      r = b.create<arith::AndIOp>(r, f);
    return r;
  };
  // Shapes and counts first: nothing is read or allocated from them before
  // they are known to be sane.
  Value srcLength = l.dim(src, 0), dstLength = l.dim(dst, 0);
  Value lengthsOk = cmp(arith::CmpIPredicate::eq, srcLength, dstLength);
  l.unless(lengthsOk, [&] {
    b.create<func::CallOp>(abi::kBadCoo, TypeRange{},
                           ValueRange{l.i64(l.idx(GNN_RT_COO_LENGTHS)),
                                      l.i64(srcLength), l.i64(dstLength)});
  });
  Value maxCount = l.idx(GNN_GRAPH_MAX_COUNT);
  auto countOk = [&](Value n, int64_t kind) {
    Value ok = all({cmp(arith::CmpIPredicate::sge, n, l.idx(0)),
                    cmp(arith::CmpIPredicate::sle, n, maxCount)});
    l.unless(ok, [&] {
      b.create<func::CallOp>(
          abi::kBadCoo, TypeRange{},
          ValueRange{l.i64(l.idx(kind)), l.i64(n), l.i64(maxCount)});
    });
    return ok;
  };
  Value shapeOk = all({lengthsOk, countOk(op.getNumSrc(), GNN_RT_COO_SRC_COUNT),
                       countOk(op.getNumDst(), GNN_RT_COO_DST_COUNT)});
  Value edges = b.create<arith::SelectOp>(shapeOk, srcLength, l.idx(0));
  auto lt = [&](Value a, Value c) {
    return cmp(arith::CmpIPredicate::ult, a, c);
  };
  Value valid = countLoop(l, edges, [&](Value e, Value n) {
    Value s = b.create<memref::LoadOp>(src, e);
    Value d = b.create<memref::LoadOp>(dst, e);
    Value okSrc = lt(s, op.getNumSrc()), okDst = lt(d, op.getNumDst());
    Value ok = b.create<arith::AndIOp>(okSrc, okDst);
    l.unless(ok, [&] {
      Value badSrc = l.logicalNot(okSrc);
      Value node = b.create<arith::SelectOp>(badSrc, s, d);
      Value bound =
          b.create<arith::SelectOp>(badSrc, op.getNumSrc(), op.getNumDst());
      b.create<func::CallOp>(
          abi::kEdgeOutOfRange, TypeRange{},
          ValueRange{l.i64(e), l.i64(node), l.i64(bound),
                     b.create<arith::ExtUIOp>(b.getI64Type(), badSrc)});
    });
    return b.create<arith::AddIOp>(
        n, b.create<arith::SelectOp>(ok, l.idx(1), l.idx(0)));
  });
  Value allValid = all({shapeOk, cmp(arith::CmpIPredicate::eq, valid, edges)});
  auto orZero = [&](Value ok, Value v) {
    return b.create<arith::SelectOp>(ok, v, l.idx(0)).getResult();
  };
  Value wantEdges = orZero(allValid, edges),
        wantDst = orZero(allValid, op.getNumDst());
  // Allocations that fail (the runtime returns null) leave an empty graph.
  SmallVector<SizedBuffer> buffers;
  auto ids = [&](Value n) {
    Value buffer = l.idBuffer(n);
    buffers.push_back({buffer, n});
    return buffer;
  };
  Value src2 = ids(wantEdges), dst2 = ids(wantEdges);
  InEdgeIndex index =
      allocateInEdges(l, wantEdges, wantDst, buffers, chunksFor(target));
  Value memoryOk = checkAllocated(l, buffers, index, GNN_RT_COO_NO_MEMORY,
                                  wantDst, wantEdges);
  Value ok = all({allValid, memoryOk});
  Value numEdges = orZero(ok, edges), numSrc = orZero(ok, op.getNumSrc()),
        numDst = orZero(ok, op.getNumDst());
  fillInEdges(l, target, src, dst, numEdges, numDst, index, [&](Value e) {
    b.create<memref::StoreOp>(b.create<memref::LoadOp>(src, e), src2, e);
    b.create<memref::StoreOp>(b.create<memref::LoadOp>(dst, e), dst2, e);
  });
  Value inPtr = index.inPtr, inSrc = index.inSrc, inEid = index.inEid;
  l.rewriter.replaceOp(
      op, l.graphOf(op.getType(), numSrc, {src2, dst2, inPtr, inSrc, inEid}));
  return success();
}

/// The in-edges of the listed nodes: a sequential prefix sum of their
/// in-degrees gives the CSR, then each listed node copies its CSR row in
/// parallel. O(listed nodes + their in-edges); the parent's other edges are
/// never touched. A bad node id is reported and gets no edges.
static LogicalResult lowerInSubgraph(InSubgraphOp op, RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  FailureOr<GraphParts> g = l.graph(op, op.getGraph());
  if (failed(g))
    return failure();
  ImplicitLocOpBuilder &b = l.b;
  Value nodes = l.toMemref(op.getNodes());
  Value n = l.dim(nodes, 0), one = l.idx(1);
  Value inPtr = l.idBuffer(b.create<arith::AddIOp>(n, one));
  b.create<memref::StoreOp>(l.idx(0), inPtr, l.idx(0));
  /// The in-degree of listed node i (0 for a bad id, which is reported).
  auto degreeOf = [&](Value i) -> Value {
    auto [ok, v] = l.checkedId(nodes, i, g->numDst);
    Value first = b.create<memref::LoadOp>(g->inPtr, v);
    Value last = b.create<memref::LoadOp>(
        g->inPtr, ValueRange{b.create<arith::AddIOp>(v, one)});
    Value degree = b.create<arith::SubIOp>(last, first);
    return b.create<arith::SelectOp>(ok, degree, l.idx(0));
  };
  auto prefix = b.create<scf::ForOp>(
      l.idx(0), n, one, ValueRange{l.idx(0)},
      [&](OpBuilder &nested, Location, Value i, ValueRange acc) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        Value end = b.create<arith::AddIOp>(acc[0], degreeOf(i));
        b.create<memref::StoreOp>(end, inPtr,
                                  ValueRange{b.create<arith::AddIOp>(i, one)});
        b.create<scf::YieldOp>(end);
      });
  Value numEdges = prefix.getResult(0);
  Value src = l.idBuffer(numEdges), dst = l.idBuffer(numEdges),
        inSrc = l.idBuffer(numEdges), inEid = l.idBuffer(numEdges),
        eids = l.idBuffer(numEdges);
  l.parallel(n, [&](Value i) {
    Value first = b.create<memref::LoadOp>(nodes, i);
    first = b.create<arith::SelectOp>(
        b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, first, g->numDst),
        first, l.idx(0));
    Value from = b.create<memref::LoadOp>(g->inPtr, first);
    Value begin = b.create<memref::LoadOp>(inPtr, i);
    Value end = b.create<memref::LoadOp>(
        inPtr, ValueRange{b.create<arith::AddIOp>(i, one)});
    l.serial(begin, end, [&](Value slot) {
      Value at =
          b.create<arith::AddIOp>(from, b.create<arith::SubIOp>(slot, begin));
      Value u = b.create<memref::LoadOp>(g->inSrc, at);
      b.create<memref::StoreOp>(u, src, slot);
      b.create<memref::StoreOp>(i, dst, slot);
      b.create<memref::StoreOp>(u, inSrc, slot);
      b.create<memref::StoreOp>(slot, inEid, slot);
      b.create<memref::StoreOp>(b.create<memref::LoadOp>(g->inEid, at), eids,
                                slot);
    });
  });
  l.rewriter.replaceOp(op, {l.graphOf(op.getResult().getType(), g->numSrc,
                                      {src, dst, inPtr, inSrc, inEid}),
                            l.toTensor(eids)});
  return success();
}

/// Ids (in increasing order) of the rows or candidates for which `keep`
/// holds: one pass counts, a second fills. Sequential: O(rows).
static Value filterIds(Lowering &l, Value count, Value candidates, Value limit,
                       function_ref<Value(Value)> keep) {
  // Candidates outside [0, limit) are never kept.
  auto keepAt = [&](Value i) -> std::pair<Value, Value> {
    if (!candidates)
      return {i, keep(i)};
    Value id = l.b.create<memref::LoadOp>(candidates, i);
    Value inRange =
        l.b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, id, limit);
    auto branch = l.b.create<scf::IfOp>(
        inRange,
        [&](OpBuilder &t, Location) {
          OpBuilder::InsertionGuard g(l.b);
          l.b.setInsertionPoint(t.getInsertionBlock(), t.getInsertionPoint());
          l.b.create<scf::YieldOp>(keep(id));
        },
        [&](OpBuilder &f, Location) {
          f.create<scf::YieldOp>(
              l.loc, ValueRange{f.create<arith::ConstantIntOp>(l.loc, 0, 1)});
        });
    return {id, branch.getResult(0)};
  };
  auto walk = [&](function_ref<void(Value, Value, Value)> onKept,
                  bool counting) {
    auto loop = l.b.create<scf::ForOp>(
        l.idx(0), count, l.idx(1), ValueRange{l.idx(0)},
        [&](OpBuilder &nested, Location, Value i, ValueRange n) {
          OpBuilder::InsertionGuard guard(l.b);
          l.b.setInsertionPoint(nested.getInsertionBlock(),
                                nested.getInsertionPoint());
          auto [id, kept] = keepAt(i);
          auto branch = l.b.create<scf::IfOp>(
              kept,
              [&](OpBuilder &t, Location) {
                OpBuilder::InsertionGuard g(l.b);
                l.b.setInsertionPoint(t.getInsertionBlock(),
                                      t.getInsertionPoint());
                if (!counting)
                  onKept(id, n[0], kept);
                l.b.create<scf::YieldOp>(
                    ValueRange{l.b.create<arith::AddIOp>(n[0], l.idx(1))});
              },
              [&](OpBuilder &f, Location) {
                f.create<scf::YieldOp>(l.loc, n[0]);
              });
          l.b.create<scf::YieldOp>(branch.getResults());
        });
    return loop.getResult(0);
  };
  Value total = walk({}, /*counting=*/true);
  auto type = MemRefType::get({ShapedType::kDynamic}, l.b.getIndexType());
  Value out = l.b.create<memref::AllocOp>(type, ValueRange{total});
  walk([&](Value id, Value slot,
           Value) { l.b.create<memref::StoreOp>(id, out, slot); },
       /*counting=*/false);
  return out;
}

/// The single element of a predicate input at `row`.
static Value loadPredicateInput(Lowering &l, const Feature &f, Value row) {
  SmallVector<Value> index = {row};
  index.append(f.type.getRank() - 1, l.idx(0));
  return l.b.create<memref::LoadOp>(f.memref, index);
}

static LogicalResult lowerFilterNodes(FilterNodesOp op,
                                      RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  SmallVector<Feature> inputs = l.features(op.getInputs());
  Value rows = l.dim(inputs[0].memref, 0);
  Value candidates =
      op.getCandidates() ? l.toMemref(op.getCandidates()) : Value();
  Value count = candidates ? l.dim(candidates, 0) : rows;
  Value out = filterIds(l, count, candidates, rows, [&](Value row) {
    SmallVector<Value> scalars;
    for (const Feature &f : inputs)
      scalars.push_back(loadPredicateInput(l, f, row));
    return l.inlineBody(op.getBody(), scalars)[0];
  });
  return l.replaceWithBuffers(op, out);
}

static LogicalResult lowerFilterEdges(FilterEdgesOp op,
                                      RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  FailureOr<GraphParts> g = l.graph(op, op.getGraph());
  if (failed(g))
    return failure();
  SmallVector<Feature> inputs = l.features(op.getInputs());
  Value candidates =
      op.getCandidates() ? l.toMemref(op.getCandidates()) : Value();
  Value count = candidates ? l.dim(candidates, 0) : g->numEdges;
  Value out = filterIds(l, count, candidates, g->numEdges, [&](Value e) {
    Lowering::EdgeRows rows{l.b.create<memref::LoadOp>(g->src, e),
                            l.b.create<memref::LoadOp>(g->dst, e), e};
    SmallVector<Value> scalars;
    for (auto [i, f] : llvm::enumerate(inputs))
      scalars.push_back(loadPredicateInput(
          l, f, rows.of(cast<TargetAttr>(op.getRoles()[i]).getValue())));
    return l.inlineBody(op.getBody(), scalars)[0];
  });
  return l.replaceWithBuffers(op, out);
}

namespace {
/// A count op becomes the graph part it reads.
template <typename OpT>
void addCountLowering(RewritePatternSet &patterns, Value GraphParts::*part) {
  addLowering<OpT>(patterns, [part](OpT op, RewriterBase &rewriter) {
    return lowerCount(op, part, rewriter);
  });
}
} // namespace

void mlir::gnn::populateGNNToLoopsPatterns(RewritePatternSet &patterns,
                                           const LoopTarget &target) {
  addLowering<ApplyEdgesOp>(patterns,
                            [target](ApplyEdgesOp op, RewriterBase &rewriter) {
                              return lowerApplyEdges(op, target, rewriter);
                            });
  addLowering<SendAndRecvOp>(patterns, lowerSendAndRecv);
  addLowering<ReduceOp>(patterns, lowerReduce);
  addLowering<ApplyNodesOp>(patterns,
                            [target](ApplyNodesOp op, RewriterBase &rewriter) {
                              return lowerApplyNodes(op, target, rewriter);
                            });
  addLowering<DropoutOp>(patterns,
                         [target](DropoutOp op, RewriterBase &rewriter) {
                           return lowerDropout(op, target, rewriter);
                         });
  addLowering<SumToOp>(patterns, [target](SumToOp op, RewriterBase &rewriter) {
    return lowerSumTo(op, target, rewriter);
  });
  addLowering<BroadcastOp>(patterns,
                           [target](BroadcastOp op, RewriterBase &rewriter) {
                             return lowerBroadcast(op, target, rewriter);
                           });
  addLowering<FusedAttentionGradOp>(
      patterns, [target](FusedAttentionGradOp op, RewriterBase &rewriter) {
        return lowerFusedAttentionGrad(op, target, rewriter);
      });
  addLowering<FusedAttentionOp>(
      patterns, [target](FusedAttentionOp op, RewriterBase &rewriter) {
        return lowerFusedAttentionToLoops(op, target.attentionBlocks, rewriter);
      });
  addCountLowering<NumSrcNodesOp>(patterns, &GraphParts::numSrc);
  addCountLowering<NumDstNodesOp>(patterns, &GraphParts::numDst);
  addCountLowering<NumEdgesOp>(patterns, &GraphParts::numEdges);
  addLowering<EdgeEndpointsOp>(patterns, lowerEdgeEndpoints);
  addLowering<GatherRowsOp>(patterns,
                            [target](GatherRowsOp op, RewriterBase &rewriter) {
                              return lowerGatherRows(op, target, rewriter);
                            });
  addLowering<ScatterRowsOp>(
      patterns, [target](ScatterRowsOp op, RewriterBase &rewriter) {
        return lowerScatterRows(op, target, rewriter);
      });
  addLowering<FilterNodesOp>(patterns, lowerFilterNodes);
  addLowering<GraphFromCooOp>(
      patterns, [target](GraphFromCooOp op, RewriterBase &rewriter) {
        return lowerGraphFromCoo(op, target, rewriter);
      });
  addLowering<InSubgraphOp>(patterns, lowerInSubgraph);
  addLowering<FilterEdgesOp>(patterns, lowerFilterEdges);
  addLowering<LinearOp>(patterns,
                        [target](LinearOp op, RewriterBase &rewriter) {
                          return lowerLinear(op, target, rewriter);
                        });
  addLowering<LayerNormOp>(patterns, lowerLayerNorm);
  addLowering<LayerNormGradOp>(patterns, lowerLayerNormGrad);
  addLowering<OuterSumOp>(
      patterns, [target](OuterSumOp op, RewriterBase &rewriter) {
        return lowerOuterSum(op, target.parallelDense, rewriter);
      });
  addLowering<LogSoftmaxOp>(patterns, lowerLogSoftmax);
  addLowering<TapeCreateOp>(patterns, lowerTapeCreate);
  addLowering<TapePushOp>(patterns, lowerTapePush);
  addLowering<TapePopOp>(patterns, lowerTapePop);
  addLowering<TapeFreeOp>(patterns, lowerTapeFree);
  addLowering<TapeRefusedOp>(patterns, lowerTapeRefused);
  addLowering<ResultReadyOp>(patterns, lowerResultReady);
}
