//===- GNNToLoops.cpp - lower gnn ops to loops ----------------------------===//
//
// Part of gnnc. Every gnn op becomes loops over memrefs: edge-wise ops loop
// over edges, receiving ops over destinations and their in-edges (CSR), the
// fused attention over destinations with an online softmax. Results are
// fresh buffers handed back as tensors, for one-shot bufferization.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/Passes.h"
#include "GNN/IR/GNNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_CONVERTGNNTOLOOPSPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// The runtime functions through which lowered code reports bad input.
constexpr llvm::StringLiteral kEdgeErrorFn = "gnn_rt_edge_out_of_range";
constexpr llvm::StringLiteral kRowsErrorFn = "gnn_rt_rows_mismatch";

/// A run-time size check: dim `dim` of `memref` must be `expected`; `code`
/// says what was compared (a target's rows, or kItemSizeCode).
struct SizeCheck {
  Value memref;
  int64_t dim;
  Value expected;
  int64_t code;
};
constexpr int64_t kInputRowsCode = 3, kItemSizeCode = 4;

/// Number of function arguments a graph becomes.
constexpr unsigned kGraphParts = 6;

/// The index arrays of a graph, as memrefs.
struct GraphParts {
  Value numSrc, src, dst, inPtr, inSrc, inEid;
  Value numDst, numEdges;
};

/// A feature as a memref with its tensor type (for broadcasting).
struct Feature {
  Value memref;
  RankedTensorType type;
};

class Lowering {
public:
  Lowering(Operation *op) : b(op->getContext()), loc(op->getLoc()) {
    b.setInsertionPoint(op);
  }

  Value idx(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }

  Value toMemref(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    return b.create<bufferization::ToMemrefOp>(loc, memrefType, tensor);
  }

  Feature feature(Value tensor) {
    return {toMemref(tensor), cast<RankedTensorType>(tensor.getType())};
  }

  SmallVector<Feature> features(ValueRange tensors) {
    return llvm::map_to_vector(tensors, [&](Value t) { return feature(t); });
  }

  Value toTensor(Value memref) {
    return b.create<bufferization::ToTensorOp>(loc, memref, /*restrict=*/true,
                                               /*writable=*/true);
  }

  Value dim(Value memref, int64_t i) {
    return b.create<memref::DimOp>(loc, memref, i);
  }

  /// The arrays of a graph that is a function argument or built by
  /// gnn.graph_from_coo (both lowered to a cast of the arrays).
  FailureOr<GraphParts> graph(Operation *user, Value graphValue) {
    auto cast = graphValue.getDefiningOp<UnrealizedConversionCastOp>();
    if (!cast || cast.getNumOperands() != kGraphParts)
      return user->emitOpError("uses a graph that is neither a function "
                               "argument nor built by gnn.graph_from_coo");
    GraphParts parts;
    parts.numSrc = cast.getOperand(0);
    parts.src = toMemref(cast.getOperand(1));
    parts.dst = toMemref(cast.getOperand(2));
    parts.inPtr = toMemref(cast.getOperand(3));
    parts.inSrc = toMemref(cast.getOperand(4));
    parts.inEid = toMemref(cast.getOperand(5));
    parts.numDst = b.create<arith::SubIOp>(loc, dim(parts.inPtr, 0), idx(1));
    parts.numEdges = dim(parts.src, 0);
    return parts;
  }

  /// Extents of the per-row dims of `type`: static sizes, or the size of the
  /// same (right-aligned) dim of an operand where it is not a broadcast 1.
  SmallVector<Value> itemExtents(ArrayRef<int64_t> item,
                                 ArrayRef<Feature> operands) {
    SmallVector<Value> extents;
    for (auto [i, size] : llvm::enumerate(item)) {
      if (!ShapedType::isDynamic(size)) {
        extents.push_back(idx(size));
        continue;
      }
      Value extent;
      for (const Feature &f : operands) {
        ArrayRef<int64_t> fItem = getItemShape(f.type);
        int64_t offset = int64_t(item.size()) - int64_t(fItem.size());
        int64_t j = int64_t(i) - offset;
        if (j < 0 || fItem[j] == 1)
          continue;
        extent = dim(f.memref, j + 1);
        break;
      }
      extents.push_back(extent ? extent : idx(1));
    }
    return extents;
  }

  /// The length a dot product sums over: the last dim of its broadcast
  /// operands (the result's is 1). Null for other message functions.
  Value dotExtent(MessageFnAttr fn, ArrayRef<Feature> operands) {
    if (!fn || fn.getOp() != BinaryOp::Dot)
      return {};
    SmallVector<int64_t> full = *broadcastItemShapes(
        getItemShape(operands[0].type), getItemShape(operands[1].type));
    return itemExtents(full, operands).back();
  }

  /// Loads f[row, broadcast(item)] where `item` indexes a per-row shape of
  /// rank >= f's.
  Value load(const Feature &f, Value row, ValueRange item) {
    ArrayRef<int64_t> fItem = getItemShape(f.type);
    SmallVector<Value> indices = {row};
    size_t offset = item.size() - fItem.size();
    for (auto [j, size] : llvm::enumerate(fItem))
      indices.push_back(size == 1 ? idx(0) : item[offset + j]);
    return b.create<memref::LoadOp>(loc, f.memref, indices);
  }

  Value alloc(RankedTensorType type, Value rows, ArrayRef<Value> extents) {
    SmallVector<Value> dynamic;
    if (type.isDynamicDim(0))
      dynamic.push_back(rows);
    for (auto [i, extent] : llvm::enumerate(extents))
      if (type.isDynamicDim(i + 1))
        dynamic.push_back(extent);
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    return b.create<memref::AllocOp>(loc, memrefType, dynamic);
  }

  Value floatConst(Type type, double value) {
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
  }

  Value applyUnary(UnaryFnAttr fn, Value x) {
    Type t = x.getType();
    switch (fn.getKind()) {
    case UnaryKind::Scale:
      return b.create<arith::MulFOp>(
          loc, x, floatConst(t, fn.getA().convertToDouble()));
    case UnaryKind::Clamp: {
      Value lo = b.create<arith::MaximumFOp>(
          loc, x, floatConst(t, fn.getA().convertToDouble()));
      return b.create<arith::MinimumFOp>(
          loc, lo, floatConst(t, fn.getB().convertToDouble()));
    }
    case UnaryKind::Exp:
      return b.create<math::ExpOp>(loc, x);
    case UnaryKind::Relu:
      return b.create<arith::MaximumFOp>(loc, x, floatConst(t, 0.0));
    case UnaryKind::Neg:
      return b.create<arith::NegFOp>(loc, x);
    }
    llvm_unreachable("unknown unary kind");
  }

  Value applyBinary(BinaryOp op, Value x, Value y) {
    switch (op) {
    case BinaryOp::Copy:
      return x;
    case BinaryOp::Add:
      return b.create<arith::AddFOp>(loc, x, y);
    case BinaryOp::Sub:
      return b.create<arith::SubFOp>(loc, x, y);
    case BinaryOp::Mul:
    case BinaryOp::Dot:
      return b.create<arith::MulFOp>(loc, x, y);
    case BinaryOp::Div:
      return b.create<arith::DivFOp>(loc, x, y);
    }
    llvm_unreachable("unknown binary op");
  }

  /// Rows of the operands of a message on edge (u, e, v).
  struct EdgeRows {
    Value src, dst, edge;
    Value of(Target t) const {
      return t == Target::Src ? src : t == Target::Dst ? dst : edge;
    }
  };

  /// One element of a built-in message at result item index `item`.
  Value message(MessageFnAttr fn, ArrayRef<Feature> operands,
                const EdgeRows &rows, ValueRange item, Value dotExtent) {
    if (fn.getOp() != BinaryOp::Dot) {
      Value x = load(operands[0], rows.of(fn.getLhs()), item);
      if (fn.getArity() == 1)
        return x;
      Value y = load(operands[1], rows.of(fn.getRhs()), item);
      return applyBinary(fn.getOp(), x, y);
    }
    // Sum over the last dim of the broadcast operands.
    Type elem = operands[0].type.getElementType();
    auto loop = b.create<scf::ForOp>(
        loc, idx(0), dotExtent, idx(1), ValueRange{floatConst(elem, 0.0)},
        [&](OpBuilder &nested, Location, Value d, ValueRange acc) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          SmallVector<Value> at(item.drop_back());
          at.push_back(d);
          Value x = load(operands[0], rows.of(fn.getLhs()), at);
          Value y = load(operands[1], rows.of(fn.getRhs()), at);
          Value sum = b.create<arith::AddFOp>(
              loc, acc[0], b.create<arith::MulFOp>(loc, x, y));
          b.create<scf::YieldOp>(loc, sum);
        });
    return loop.getResult(0);
  }

  /// Clones an elementwise body with its arguments bound to `scalars`.
  SmallVector<Value> inlineBody(Region &body, ValueRange scalars) {
    IRMapping mapping;
    Block &block = body.front();
    mapping.map(block.getArguments(), scalars);
    for (Operation &op : block.without_terminator())
      b.clone(op, mapping);
    SmallVector<Value> results;
    for (Value v : block.getTerminator()->getOperands())
      results.push_back(mapping.lookupOrDefault(v));
    return results;
  }

  /// scf.parallel over [0, n).
  void parallel(Value n, function_ref<void(Value)> body) {
    b.create<scf::ParallelOp>(loc, ValueRange{idx(0)}, ValueRange{n},
                              ValueRange{idx(1)},
                              [&](OpBuilder &nested, Location, ValueRange ivs) {
                                OpBuilder::InsertionGuard guard(b);
                                b.setInsertionPoint(nested.getInsertionBlock(),
                                                    nested.getInsertionPoint());
                                body(ivs[0]);
                              });
  }

  /// scf.for nest over the given extents.
  void loopNest(ArrayRef<Value> extents, function_ref<void(ValueRange)> body) {
    SmallVector<Value> lbs(extents.size(), idx(0)),
        steps(extents.size(), idx(1));
    scf::buildLoopNest(b, loc, lbs, extents, steps,
                       [&](OpBuilder &nested, Location, ValueRange ivs) {
                         OpBuilder::InsertionGuard guard(b);
                         b.setInsertionPoint(nested.getInsertionBlock(),
                                             nested.getInsertionPoint());
                         body(ivs);
                       });
  }

  /// Sets every element of a buffer with the given row count to zero.
  void zero(Value memref, RankedTensorType type, Value rows,
            ArrayRef<Value> extents) {
    Value z = floatConst(type.getElementType(), 0.0);
    parallel(rows, [&](Value r) {
      loopNest(extents, [&](ValueRange item) {
        SmallVector<Value> at = {r};
        llvm::append_range(at, item);
        b.create<memref::StoreOp>(loc, z, memref, at);
      });
    });
  }

  /// A per-edge byte mask of `edges` (1: listed); buffer deallocation frees
  /// it.
  Value edgeMask(Value edges, Value numEdges) {
    Value ids = toMemref(edges);
    auto type = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
    Value mask = b.create<memref::AllocOp>(loc, type, ValueRange{numEdges});
    Value zero = b.create<arith::ConstantIntOp>(loc, 0, 8);
    Value one = b.create<arith::ConstantIntOp>(loc, 1, 8);
    parallel(numEdges,
             [&](Value e) { b.create<memref::StoreOp>(loc, zero, mask, e); });
    forEachListedEdge(ids, numEdges, [&](Value e) {
      b.create<memref::StoreOp>(loc, one, mask, e);
    });
    return mask;
  }

  /// Runs `body` for each id of an edge list that is a valid edge id; ids
  /// out of range are ignored (a program never sees memory outside the
  /// graph).
  void forEachListedEdge(Value ids, Value numEdges,
                         function_ref<void(Value)> body) {
    parallel(dim(ids, 0), [&](Value i) {
      Value e = b.create<memref::LoadOp>(loc, ids, i);
      Value inRange =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, e, numEdges);
      auto guard = b.create<scf::IfOp>(loc, inRange, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&guard.getThenRegion().front());
      body(e);
    });
  }

  /// For each in-edge slot of destination v (skipping edges not in `mask`),
  /// runs `body(u, e)`; carries `init` values through `body`'s results.
  SmallVector<Value> forEachInEdge(
      const GraphParts &g, Value v, Value mask, ValueRange init,
      function_ref<SmallVector<Value>(Value, Value, ValueRange)> body) {
    Value first = b.create<memref::LoadOp>(loc, g.inPtr, v);
    Value last = b.create<memref::LoadOp>(
        loc, g.inPtr, ValueRange{b.create<arith::AddIOp>(loc, v, idx(1))});
    auto loop = b.create<scf::ForOp>(
        loc, first, last, idx(1), init,
        [&](OpBuilder &nested, Location, Value slot, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          Value u = b.create<memref::LoadOp>(loc, g.inSrc, slot);
          Value e = b.create<memref::LoadOp>(loc, g.inEid, slot);
          if (!mask) {
            b.create<scf::YieldOp>(loc, body(u, e, carried));
            return;
          }
          Value listed = b.create<arith::CmpIOp>(
              loc, arith::CmpIPredicate::ne,
              b.create<memref::LoadOp>(loc, mask, e),
              b.create<arith::ConstantIntOp>(loc, 0, 8));
          auto branch = b.create<scf::IfOp>(
              loc, listed,
              [&](OpBuilder &t, Location) {
                OpBuilder::InsertionGuard g2(b);
                b.setInsertionPoint(t.getInsertionBlock(),
                                    t.getInsertionPoint());
                b.create<scf::YieldOp>(loc, body(u, e, carried));
              },
              [&](OpBuilder &f, Location) {
                f.create<scf::YieldOp>(loc, carried);
              });
          b.create<scf::YieldOp>(loc, branch.getResults());
        });
    return loop.getResults();
  }

  /// Checks at run time that each feature has the rows its op needs (a
  /// tensor built inside the program may not); reports the first mismatch
  /// to the runtime. Returns whether all match.
  Value sizesMatch(ArrayRef<SizeCheck> checks) {
    Value all = b.create<arith::ConstantIntOp>(loc, 1, 1);
    for (auto [memref, dimension, expected, target] : checks) {
      Value rows = dim(memref, dimension);
      Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, rows,
                                         expected);
      auto report = b.create<scf::IfOp>(
          loc,
          b.create<arith::XOrIOp>(loc, ok,
                                  b.create<arith::ConstantIntOp>(loc, 1, 1)),
          /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&report.getThenRegion().front());
      auto i64 = [&](Value v) {
        return b.create<arith::IndexCastOp>(loc, b.getI64Type(), v).getResult();
      };
      b.create<func::CallOp>(
          loc, kRowsErrorFn, TypeRange{},
          ValueRange{i64(rows), i64(expected),
                     b.create<arith::ConstantIntOp>(loc, target, 64)});
      b.setInsertionPointAfter(report);
      all = b.create<arith::AndIOp>(loc, all, ok);
    }
    return all;
  }

  /// Adds checks that the dynamic per-row dims of `f` equal the op's
  /// (right-aligned) extents: the loops index them up to those extents.
  static void addItemChecks(SmallVectorImpl<SizeCheck> &checks,
                            const Feature &f, ArrayRef<Value> extents) {
    ArrayRef<int64_t> item = getItemShape(f.type);
    size_t offset = extents.size() - item.size();
    for (auto [j, size] : llvm::enumerate(item))
      if (ShapedType::isDynamic(size))
        checks.push_back(
            {f.memref, int64_t(j + 1), extents[offset + j], kItemSizeCode});
  }

  /// Hands `buffers` back as the op's results and erases the op.
  LogicalResult replaceWithBuffers(Operation *op, ValueRange buffers) {
    for (auto [result, buffer] : llvm::zip_equal(op->getResults(), buffers))
      result.replaceAllUsesWith(toTensor(buffer));
    op->erase();
    return success();
  }

  /// Runs `body` only if `ok`.
  void guarded(Value ok, function_ref<void()> body) {
    auto branch = b.create<scf::IfOp>(loc, ok, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    body();
  }

  /// The code of a target in row-mismatch reports.
  static int64_t targetCode(Target t) { return static_cast<int64_t>(t); }

  /// The row count features of `t` must have.
  static Value rowsOf(const GraphParts &g, Target t) {
    return t == Target::Src   ? g.numSrc
           : t == Target::Dst ? g.numDst
                              : g.numEdges;
  }

  OpBuilder b;
  Location loc;
};
} // namespace

//===----------------------------------------------------------------------===//
// Op lowerings
//===----------------------------------------------------------------------===//

static LogicalResult lowerApplyEdges(ApplyEdgesOp op) {
  Lowering l(op);
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

  auto computeEdge = [&](Value e) {
    Lowering::EdgeRows rows{l.b.create<memref::LoadOp>(l.loc, g->src, e),
                            l.b.create<memref::LoadOp>(l.loc, g->dst, e), e};
    l.loopNest(extents, [&](ValueRange at) {
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
      l.b.create<memref::StoreOp>(l.loc, x, out, index);
    });
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
      return l.b.create<arith::AddFOp>(l.loc, acc, x);
    case ReduceKind::Max:
      return l.b.create<arith::MaximumFOp>(l.loc, acc, x);
    case ReduceKind::Min:
      return l.b.create<arith::MinimumFOp>(l.loc, acc, x);
    }
    llvm_unreachable("unknown reduce kind");
  }
  /// Nodes without messages get 0.
  Value finish(Lowering &l, Value acc, Value count) {
    Type t = acc.getType();
    Value none = l.b.create<arith::CmpIOp>(l.loc, arith::CmpIPredicate::eq,
                                           count, l.idx(0));
    if (kind == ReduceKind::Mean) {
      Value n = l.b.create<arith::UIToFPOp>(
          l.loc, t,
          l.b.create<arith::IndexCastUIOp>(l.loc, l.b.getI64Type(), count));
      acc = l.b.create<arith::DivFOp>(l.loc, acc, n);
    }
    if (kind == ReduceKind::Sum)
      return acc;
    return l.b.create<arith::SelectOp>(l.loc, none, l.floatConst(t, 0.0), acc);
  }
};
} // namespace

/// Destination-parallel aggregation of messages; shared by send_and_recv and
/// reduce (a reduce is copy_e).
static LogicalResult lowerReceive(Operation *op, Value graphValue, Value edges,
                                  ArrayRef<MessageFnAttr> messages,
                                  ArrayRef<ReduceKind> reducers,
                                  ArrayRef<SmallVector<Value>> messageInputs) {
  Lowering l(op);
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
          l.b.create<memref::StoreOp>(l.loc, o.reducer.init(l, t), o.buffer,
                                      at(item));
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
                Value acc =
                    l.b.create<memref::LoadOp>(l.loc, o.buffer, at(item));
                l.b.create<memref::StoreOp>(l.loc, o.reducer.combine(l, acc, x),
                                            o.buffer, at(item));
              });
            return SmallVector<Value>{
                l.b.create<arith::AddIOp>(l.loc, carried[0], l.idx(1))};
          })[0];
      for (Output &o : outputs) {
        if (o.reducer.kind == ReduceKind::Sum)
          continue;
        l.loopNest(o.extents, [&](ValueRange item) {
          Value acc = l.b.create<memref::LoadOp>(l.loc, o.buffer, at(item));
          l.b.create<memref::StoreOp>(l.loc, o.reducer.finish(l, acc, count),
                                      o.buffer, at(item));
        });
      }
    });
  });
  SmallVector<Value> buffers;
  for (Output &o : outputs)
    buffers.push_back(o.buffer);
  return l.replaceWithBuffers(op, buffers);
}

static LogicalResult lowerSendAndRecv(SendAndRecvOp op) {
  SmallVector<MessageFnAttr> messages;
  SmallVector<ReduceKind> reducers;
  SmallVector<SmallVector<Value>> inputs;
  for (unsigned i = 0; i < op.getNumResults(); ++i) {
    messages.push_back(op.getMessage(i));
    reducers.push_back(op.getReducer(i));
    inputs.push_back(llvm::to_vector(op.getMessageInputs(i)));
  }
  return lowerReceive(op, op.getGraph(), op.getEdges(), messages, reducers,
                      inputs);
}

static LogicalResult lowerReduce(ReduceOp op) {
  MessageFnAttr copyE = MessageFnAttr::parseName(op.getContext(), "copy_e");
  return lowerReceive(op, op.getGraph(), op.getEdges(), {copyE}, {op.getKind()},
                      {SmallVector<Value>{op.getInput()}});
}

static LogicalResult lowerApplyNodes(ApplyNodesOp op) {
  Lowering l(op);
  SmallVector<Feature> inputs = l.features(op.getInputs());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  SmallVector<Value> extents = l.itemExtents(getItemShape(type), inputs);
  Value rows = l.dim(inputs[0].memref, 0);
  Value out = l.alloc(type, rows, extents);
  SmallVector<SizeCheck> checks;
  for (const Feature &f : inputs) {
    checks.push_back({f.memref, 0, rows, kInputRowsCode});
    Lowering::addItemChecks(checks, f, extents);
  }
  l.guarded(l.sizesMatch(checks), [&] {
    l.parallel(rows, [&](Value r) {
      l.loopNest(extents, [&](ValueRange item) {
        SmallVector<Value> scalars;
        for (const Feature &f : inputs)
          scalars.push_back(l.load(f, r, item));
        Value x = l.inlineBody(op.getBody(), scalars)[0];
        SmallVector<Value> index = {r};
        llvm::append_range(index, item);
        l.b.create<memref::StoreOp>(l.loc, x, out, index);
      });
    });
  });
  return l.replaceWithBuffers(op, out);
}

/// One pass over each destination's in-edges per head: weights are never
/// stored. With `normalize` and no clamp, a running maximum keeps exp finite.
static LogicalResult lowerFusedAttention(FusedAttentionOp op) {
  Lowering l(op);
  FailureOr<GraphParts> g = l.graph(op, op.getGraph());
  if (failed(g))
    return failure();
  Feature q = l.feature(op.getQuery()), k = l.feature(op.getKey()),
          val = l.feature(op.getValue());
  Value mask = op.getEdges() ? l.edgeMask(op.getEdges(), g->numEdges) : Value();
  auto outType = cast<RankedTensorType>(op.getResult(0).getType());
  Type t = outType.getElementType();
  ArrayRef<int64_t> vItem = getItemShape(val.type);
  // Heads: every per-row dim but the last.
  SmallVector<Value> headExtents =
      l.itemExtents(getItemShape(q.type).drop_back(), {q});
  Value d = l.itemExtents(getItemShape(q.type), {q}).back();
  Value dv = l.itemExtents(vItem, {val}).back();
  SmallVector<Value> outExtents(headExtents);
  outExtents.push_back(dv);
  Value out = l.alloc(outType, g->numDst, outExtents);
  Value zOut;
  if (!op.getNormalize()) {
    auto zType = cast<RankedTensorType>(op.getResult(1).getType());
    SmallVector<Value> zExtents(headExtents);
    zExtents.push_back(l.idx(1));
    zOut = l.alloc(zType, g->numDst, zExtents);
  }
  SmallVector<SizeCheck> checks = {
      {q.memref, 0, g->numDst, Lowering::targetCode(Target::Dst)},
      {k.memref, 0, g->numSrc, Lowering::targetCode(Target::Src)},
      {val.memref, 0, g->numSrc, Lowering::targetCode(Target::Src)}};
  SmallVector<Value> qkExtents(headExtents);
  qkExtents.push_back(d);
  Lowering::addItemChecks(checks, q, qkExtents);
  Lowering::addItemChecks(checks, k, qkExtents);
  Lowering::addItemChecks(checks, val, outExtents);
  Value inputsOk = l.sizesMatch(checks);
  bool online = op.getNormalize() && !op.getClampLo();
  double scale = op.getScale().convertToDouble();
  int64_t staticD = getItemShape(q.type).back();
  int64_t staticDv = vItem.back();
  bool vectorize = !ShapedType::isDynamic(staticD) &&
                   !ShapedType::isDynamic(staticDv) &&
                   getItemShape(k.type).back() == staticD;

  /// Clamps or not, as the op says.
  auto clampScore = [&](Value s) -> Value {
    if (!op.getClampLo())
      return s;
    s = l.b.create<arith::MaximumFOp>(
        l.loc, s, l.floatConst(t, op.getClampLo()->convertToDouble()));
    return l.b.create<arith::MinimumFOp>(
        l.loc, s, l.floatConst(t, op.getClampHi()->convertToDouble()));
  };

  if (vectorize) {
    // Rows of q, k and v are contiguous vectors: q stays in registers, the
    // weighted sum accumulates in registers, one dot and one FMA per edge.
    auto qType = VectorType::get({staticD}, t);
    auto vType = VectorType::get({staticDv}, t);
    l.guarded(inputsOk, [&] {
      l.parallel(g->numDst, [&](Value v) {
        l.loopNest(headExtents, [&](ValueRange head) {
          auto at = [&](Value row) {
            SmallVector<Value> index = {row};
            llvm::append_range(index, head);
            index.push_back(l.idx(0));
            return index;
          };
          Value qRow =
              l.b.create<vector::LoadOp>(l.loc, qType, q.memref, at(v));
          Value zeroVec = l.b.create<arith::ConstantOp>(
              l.loc, vType,
              DenseElementsAttr::get(vType, l.b.getFloatAttr(t, 0.0)));
          Value negInf =
              l.floatConst(t, -std::numeric_limits<double>::infinity());
          SmallVector<Value> init = {l.floatConst(t, 0.0), negInf, zeroVec};
          SmallVector<Value> carried = l.forEachInEdge(
              *g, v, mask, init, [&](Value u, Value, ValueRange state) {
                Value z = state[0], m = state[1], acc = state[2];
                Value kRow =
                    l.b.create<vector::LoadOp>(l.loc, qType, k.memref, at(u));
                Value prod = l.b.create<arith::MulFOp>(l.loc, kRow, qRow);
                Value dot = l.b.create<vector::ReductionOp>(
                    l.loc, vector::CombiningKind::ADD, prod);
                Value s = clampScore(l.b.create<arith::MulFOp>(
                    l.loc, dot, l.floatConst(t, scale)));
                Value w;
                if (online) {
                  Value newMax = l.b.create<arith::MaximumFOp>(l.loc, m, s);
                  Value factor = l.b.create<math::ExpOp>(
                      l.loc, l.b.create<arith::SubFOp>(l.loc, m, newMax));
                  z = l.b.create<arith::MulFOp>(l.loc, z, factor);
                  acc = l.b.create<arith::MulFOp>(
                      l.loc, acc,
                      l.b.create<vector::BroadcastOp>(l.loc, vType, factor));
                  m = newMax;
                  w = l.b.create<math::ExpOp>(
                      l.loc, l.b.create<arith::SubFOp>(l.loc, s, m));
                } else {
                  w = l.b.create<math::ExpOp>(l.loc, s);
                }
                Value vRow =
                    l.b.create<vector::LoadOp>(l.loc, vType, val.memref, at(u));
                acc = l.b.create<vector::FMAOp>(
                    l.loc, l.b.create<vector::BroadcastOp>(l.loc, vType, w),
                    vRow, acc);
                z = l.b.create<arith::AddFOp>(l.loc, z, w);
                return SmallVector<Value>{z, m, acc};
              });
          Value z = carried[0], acc = carried[2];
          if (zOut) {
            l.b.create<vector::StoreOp>(l.loc, acc, out, at(v));
            l.b.create<memref::StoreOp>(l.loc, z, zOut, at(v));
            return;
          }
          Value positive = l.b.create<arith::CmpFOp>(
              l.loc, arith::CmpFPredicate::OGT, z, l.floatConst(t, 0.0));
          Value inv = l.b.create<arith::SelectOp>(
              l.loc, positive,
              l.b.create<arith::DivFOp>(l.loc, l.floatConst(t, 1.0), z),
              l.floatConst(t, 0.0));
          l.b.create<vector::StoreOp>(
              l.loc,
              l.b.create<arith::MulFOp>(
                  l.loc, acc,
                  l.b.create<vector::BroadcastOp>(l.loc, vType, inv)),
              out, at(v));
        });
      });
    });
    SmallVector<Value> buffers = {out};
    if (zOut)
      buffers.push_back(zOut);
    return l.replaceWithBuffers(op, buffers);
  }

  l.guarded(inputsOk, [&] {
    l.parallel(g->numDst, [&](Value v) {
      l.loopNest(headExtents, [&](ValueRange head) {
        auto at = [&](Value row, Value last) {
          SmallVector<Value> index = {row};
          llvm::append_range(index, head);
          index.push_back(last);
          return index;
        };
        l.loopNest({dv}, [&](ValueRange c) {
          l.b.create<memref::StoreOp>(l.loc, l.floatConst(t, 0.0), out,
                                      at(v, c[0]));
        });
        Value negInf =
            l.floatConst(t, -std::numeric_limits<double>::infinity());
        SmallVector<Value> init = {l.floatConst(t, 0.0), negInf};
        SmallVector<Value> carried = l.forEachInEdge(
            *g, v, mask, init, [&](Value u, Value, ValueRange state) {
              Value z = state[0], m = state[1];
              auto dot = l.b.create<scf::ForOp>(
                  l.loc, l.idx(0), d, l.idx(1),
                  ValueRange{l.floatConst(t, 0.0)},
                  [&](OpBuilder &nested, Location, Value i, ValueRange acc) {
                    OpBuilder::InsertionGuard guard(l.b);
                    l.b.setInsertionPoint(nested.getInsertionBlock(),
                                          nested.getInsertionPoint());
                    Value x =
                        l.b.create<memref::LoadOp>(l.loc, k.memref, at(u, i));
                    Value y =
                        l.b.create<memref::LoadOp>(l.loc, q.memref, at(v, i));
                    l.b.create<scf::YieldOp>(
                        l.loc, ValueRange{l.b.create<arith::AddFOp>(
                                   l.loc, acc[0],
                                   l.b.create<arith::MulFOp>(l.loc, x, y))});
                  });
              Value s = l.b.create<arith::MulFOp>(l.loc, dot.getResult(0),
                                                  l.floatConst(t, scale));
              if (op.getClampLo()) {
                s = l.b.create<arith::MaximumFOp>(
                    l.loc, s,
                    l.floatConst(t, op.getClampLo()->convertToDouble()));
                s = l.b.create<arith::MinimumFOp>(
                    l.loc, s,
                    l.floatConst(t, op.getClampHi()->convertToDouble()));
              }
              Value w;
              if (online) {
                // Rescale what was summed so far when the maximum grows.
                Value newMax = l.b.create<arith::MaximumFOp>(l.loc, m, s);
                Value factor = l.b.create<math::ExpOp>(
                    l.loc, l.b.create<arith::SubFOp>(l.loc, m, newMax));
                z = l.b.create<arith::MulFOp>(l.loc, z, factor);
                l.loopNest({dv}, [&](ValueRange c) {
                  Value acc =
                      l.b.create<memref::LoadOp>(l.loc, out, at(v, c[0]));
                  l.b.create<memref::StoreOp>(
                      l.loc, l.b.create<arith::MulFOp>(l.loc, acc, factor), out,
                      at(v, c[0]));
                });
                m = newMax;
                w = l.b.create<math::ExpOp>(
                    l.loc, l.b.create<arith::SubFOp>(l.loc, s, m));
              } else {
                w = l.b.create<math::ExpOp>(l.loc, s);
              }
              z = l.b.create<arith::AddFOp>(l.loc, z, w);
              l.loopNest({dv}, [&](ValueRange c) {
                Value acc = l.b.create<memref::LoadOp>(l.loc, out, at(v, c[0]));
                Value x =
                    l.b.create<memref::LoadOp>(l.loc, val.memref, at(u, c[0]));
                l.b.create<memref::StoreOp>(
                    l.loc,
                    l.b.create<arith::AddFOp>(
                        l.loc, acc, l.b.create<arith::MulFOp>(l.loc, w, x)),
                    out, at(v, c[0]));
              });
              return SmallVector<Value>{z, m};
            });
        Value z = carried[0];
        if (zOut) {
          l.b.create<memref::StoreOp>(l.loc, z, zOut, at(v, l.idx(0)));
          return;
        }
        // wv / z; a node without in-edges has z = 0 and gets 0.
        Value positive = l.b.create<arith::CmpFOp>(
            l.loc, arith::CmpFPredicate::OGT, z, l.floatConst(t, 0.0));
        Value inv = l.b.create<arith::SelectOp>(
            l.loc, positive,
            l.b.create<arith::DivFOp>(l.loc, l.floatConst(t, 1.0), z),
            l.floatConst(t, 0.0));
        l.loopNest({dv}, [&](ValueRange c) {
          Value acc = l.b.create<memref::LoadOp>(l.loc, out, at(v, c[0]));
          l.b.create<memref::StoreOp>(
              l.loc, l.b.create<arith::MulFOp>(l.loc, acc, inv), out,
              at(v, c[0]));
        });
      });
    });
  });
  SmallVector<Value> buffers = {out};
  if (zOut)
    buffers.push_back(zOut);
  return l.replaceWithBuffers(op, buffers);
}

template <typename CountOp>
static LogicalResult lowerCount(CountOp op, Value GraphParts::*part) {
  Lowering l(op);
  FailureOr<GraphParts> g = l.graph(op, op.getGraph());
  if (failed(g))
    return failure();
  op.getResult().replaceAllUsesWith((*g).*part);
  op.erase();
  return success();
}

static LogicalResult lowerEdgeEndpoints(EdgeEndpointsOp op) {
  Lowering l(op);
  if (failed(l.graph(op, op.getGraph())))
    return failure();
  auto cast = op.getGraph().getDefiningOp<UnrealizedConversionCastOp>();
  for (auto [result, part] : llvm::zip_equal(
           op.getResults(), ValueRange{cast.getOperand(1), cast.getOperand(2)}))
    result.replaceAllUsesWith(
        part.getType() == result.getType()
            ? part
            : l.b.create<tensor::CastOp>(l.loc, result.getType(), part)
                  .getResult());
  op.erase();
  return success();
}

static LogicalResult lowerGatherRows(GatherRowsOp op) {
  Lowering l(op);
  Feature source = l.feature(op.getSource());
  Value ids = l.toMemref(op.getIds());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  SmallVector<Value> extents = l.itemExtents(getItemShape(type), {source});
  Value rows = l.dim(ids, 0);
  Value out = l.alloc(type, rows, extents);
  Value limit = l.dim(source.memref, 0);
  l.parallel(rows, [&](Value i) {
    Value r = l.b.create<memref::LoadOp>(l.loc, ids, i);
    // Ids outside the source read row 0's absence as zeros.
    Value inRange =
        l.b.create<arith::CmpIOp>(l.loc, arith::CmpIPredicate::ult, r, limit);
    l.loopNest(extents, [&](ValueRange item) {
      SmallVector<Value> to = {i};
      llvm::append_range(to, item);
      auto branch = l.b.create<scf::IfOp>(
          l.loc, inRange,
          [&](OpBuilder &t, Location) {
            OpBuilder::InsertionGuard g(l.b);
            l.b.setInsertionPoint(t.getInsertionBlock(), t.getInsertionPoint());
            l.b.create<scf::YieldOp>(l.loc, l.load(source, r, item));
          },
          [&](OpBuilder &f, Location) {
            OpBuilder::InsertionGuard g(l.b);
            l.b.setInsertionPoint(f.getInsertionBlock(), f.getInsertionPoint());
            l.b.create<scf::YieldOp>(l.loc,
                                     l.floatConst(type.getElementType(), 0.0));
          });
      l.b.create<memref::StoreOp>(l.loc, branch.getResult(0), out, to);
    });
  });
  return l.replaceWithBuffers(op, out);
}

static LogicalResult lowerScatterRows(ScatterRowsOp op) {
  Lowering l(op);
  Feature source = l.feature(op.getSource());
  Feature dest = l.feature(op.getDest());
  Value ids = l.toMemref(op.getIds());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  SmallVector<Value> extents = l.itemExtents(getItemShape(type), {dest});
  Value rows = l.dim(dest.memref, 0);
  Value out = l.alloc(type, rows, extents);
  l.b.create<memref::CopyOp>(l.loc, dest.memref, out);
  l.parallel(l.dim(ids, 0), [&](Value i) {
    Value r = l.b.create<memref::LoadOp>(l.loc, ids, i);
    Value inRange =
        l.b.create<arith::CmpIOp>(l.loc, arith::CmpIPredicate::ult, r, rows);
    auto guard = l.b.create<scf::IfOp>(l.loc, inRange, /*withElse=*/false);
    OpBuilder::InsertionGuard g(l.b);
    l.b.setInsertionPointToStart(&guard.getThenRegion().front());
    l.loopNest(extents, [&](ValueRange item) {
      SmallVector<Value> to = {r};
      llvm::append_range(to, item);
      l.b.create<memref::StoreOp>(l.loc, l.load(source, i, item), out, to);
    });
  });
  return l.replaceWithBuffers(op, out);
}

/// A sequential loop over [0, n) with one index carried value.
static Value countLoop(Lowering &l, Value n,
                       function_ref<Value(Value, Value)> body) {
  auto loop = l.b.create<scf::ForOp>(
      l.loc, l.idx(0), n, l.idx(1), ValueRange{l.idx(0)},
      [&](OpBuilder &nested, Location, Value i, ValueRange acc) {
        OpBuilder::InsertionGuard guard(l.b);
        l.b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
        l.b.create<scf::YieldOp>(l.loc, body(i, acc[0]));
      });
  return loop.getResult(0);
}

/// Builds the CSR of an edge list in O(edges + nodes). An edge with an id
/// out of range is reported to the runtime and the graph becomes empty, so
/// that nothing reads outside the features before the caller sees the error.
static LogicalResult lowerGraphFromCoo(GraphFromCooOp op) {
  Lowering l(op);
  OpBuilder &b = l.b;
  Location loc = l.loc;
  Value src = l.toMemref(op.getSrc()), dst = l.toMemref(op.getDst());
  Value edges = l.dim(src, 0);
  auto i64 = [&](Value v) {
    return b.create<arith::IndexCastOp>(loc, b.getI64Type(), v).getResult();
  };
  auto lt = [&](Value a, Value c) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, a, c);
  };
  Value valid = countLoop(l, edges, [&](Value e, Value n) {
    Value s = b.create<memref::LoadOp>(loc, src, e);
    Value d = b.create<memref::LoadOp>(loc, dst, e);
    Value okSrc = lt(s, op.getNumSrc()), okDst = lt(d, op.getNumDst());
    Value ok = b.create<arith::AndIOp>(loc, okSrc, okDst);
    auto report = b.create<scf::IfOp>(
        loc,
        b.create<arith::XOrIOp>(loc, ok,
                                b.create<arith::ConstantIntOp>(loc, 1, 1)),
        /*withElse=*/false);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&report.getThenRegion().front());
      Value badSrc = b.create<arith::XOrIOp>(
          loc, okSrc, b.create<arith::ConstantIntOp>(loc, 1, 1));
      Value node = b.create<arith::SelectOp>(loc, badSrc, s, d);
      Value bound = b.create<arith::SelectOp>(loc, badSrc, op.getNumSrc(),
                                              op.getNumDst());
      b.create<func::CallOp>(
          loc, kEdgeErrorFn, TypeRange{},
          ValueRange{i64(e), i64(node), i64(bound),
                     b.create<arith::ExtUIOp>(loc, b.getI64Type(), badSrc)});
    }
    return b.create<arith::AddIOp>(
        loc, n, b.create<arith::SelectOp>(loc, ok, l.idx(1), l.idx(0)));
  });
  Value allValid =
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, valid, edges);
  auto orZero = [&](Value v) {
    return b.create<arith::SelectOp>(loc, allValid, v, l.idx(0)).getResult();
  };
  Value numEdges = orZero(edges), numSrc = orZero(op.getNumSrc()),
        numDst = orZero(op.getNumDst());
  auto ids = [&](Value n) {
    auto type = MemRefType::get({ShapedType::kDynamic}, b.getIndexType());
    return b.create<memref::AllocOp>(loc, type, ValueRange{n}).getResult();
  };
  Value src2 = ids(numEdges), dst2 = ids(numEdges);
  Value inPtr = ids(b.create<arith::AddIOp>(loc, numDst, l.idx(1)));
  Value inSrc = ids(numEdges), inEid = ids(numEdges), cursor = ids(numDst);
  auto forRange = [&](Value lo, Value hi, function_ref<void(Value)> body) {
    b.create<scf::ForOp>(loc, lo, hi, l.idx(1), ValueRange{},
                         [&](OpBuilder &nested, Location, Value i, ValueRange) {
                           OpBuilder::InsertionGuard guard(b);
                           b.setInsertionPoint(nested.getInsertionBlock(),
                                               nested.getInsertionPoint());
                           body(i);
                           b.create<scf::YieldOp>(loc);
                         });
  };
  Value one = l.idx(1);
  forRange(l.idx(0), numEdges, [&](Value e) {
    b.create<memref::StoreOp>(loc, b.create<memref::LoadOp>(loc, src, e), src2,
                              e);
    b.create<memref::StoreOp>(loc, b.create<memref::LoadOp>(loc, dst, e), dst2,
                              e);
  });
  forRange(l.idx(0), b.create<arith::AddIOp>(loc, numDst, one), [&](Value v) {
    b.create<memref::StoreOp>(loc, l.idx(0), inPtr, v);
  });
  forRange(l.idx(0), numEdges, [&](Value e) {
    Value at = b.create<arith::AddIOp>(
        loc, b.create<memref::LoadOp>(loc, dst2, e), one);
    Value n = b.create<memref::LoadOp>(loc, inPtr, at);
    b.create<memref::StoreOp>(loc, b.create<arith::AddIOp>(loc, n, one), inPtr,
                              at);
  });
  forRange(one, b.create<arith::AddIOp>(loc, numDst, one), [&](Value v) {
    Value prev = b.create<memref::LoadOp>(
        loc, inPtr, ValueRange{b.create<arith::SubIOp>(loc, v, one)});
    Value cur = b.create<memref::LoadOp>(loc, inPtr, v);
    b.create<memref::StoreOp>(loc, b.create<arith::AddIOp>(loc, prev, cur),
                              inPtr, v);
  });
  forRange(l.idx(0), numDst, [&](Value v) {
    b.create<memref::StoreOp>(loc, b.create<memref::LoadOp>(loc, inPtr, v),
                              cursor, v);
  });
  // Stable: slots of a destination follow edge ids.
  forRange(l.idx(0), numEdges, [&](Value e) {
    Value d = b.create<memref::LoadOp>(loc, dst2, e);
    Value slot = b.create<memref::LoadOp>(loc, cursor, d);
    b.create<memref::StoreOp>(loc, b.create<arith::AddIOp>(loc, slot, one),
                              cursor, d);
    b.create<memref::StoreOp>(loc, b.create<memref::LoadOp>(loc, src2, e),
                              inSrc, slot);
    b.create<memref::StoreOp>(loc, e, inEid, slot);
  });
  SmallVector<Value> parts = {numSrc};
  for (Value buffer : {src2, dst2, inPtr, inSrc, inEid})
    parts.push_back(l.toTensor(buffer));
  auto cast = b.create<UnrealizedConversionCastOp>(
      loc, TypeRange{op.getResult().getType()}, parts);
  op.getResult().replaceAllUsesWith(cast.getResult(0));
  op.erase();
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
    Value id = l.b.create<memref::LoadOp>(l.loc, candidates, i);
    Value inRange =
        l.b.create<arith::CmpIOp>(l.loc, arith::CmpIPredicate::ult, id, limit);
    auto branch = l.b.create<scf::IfOp>(
        l.loc, inRange,
        [&](OpBuilder &t, Location) {
          OpBuilder::InsertionGuard g(l.b);
          l.b.setInsertionPoint(t.getInsertionBlock(), t.getInsertionPoint());
          l.b.create<scf::YieldOp>(l.loc, keep(id));
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
        l.loc, l.idx(0), count, l.idx(1), ValueRange{l.idx(0)},
        [&](OpBuilder &nested, Location, Value i, ValueRange n) {
          OpBuilder::InsertionGuard guard(l.b);
          l.b.setInsertionPoint(nested.getInsertionBlock(),
                                nested.getInsertionPoint());
          auto [id, kept] = keepAt(i);
          auto branch = l.b.create<scf::IfOp>(
              l.loc, kept,
              [&](OpBuilder &t, Location) {
                OpBuilder::InsertionGuard g(l.b);
                l.b.setInsertionPoint(t.getInsertionBlock(),
                                      t.getInsertionPoint());
                if (!counting)
                  onKept(id, n[0], kept);
                l.b.create<scf::YieldOp>(
                    l.loc, ValueRange{l.b.create<arith::AddIOp>(l.loc, n[0],
                                                                l.idx(1))});
              },
              [&](OpBuilder &f, Location) {
                f.create<scf::YieldOp>(l.loc, n[0]);
              });
          l.b.create<scf::YieldOp>(l.loc, branch.getResults());
        });
    return loop.getResult(0);
  };
  Value total = walk({}, /*counting=*/true);
  auto type = MemRefType::get({ShapedType::kDynamic}, l.b.getIndexType());
  Value out = l.b.create<memref::AllocOp>(l.loc, type, ValueRange{total});
  walk([&](Value id, Value slot,
           Value) { l.b.create<memref::StoreOp>(l.loc, id, out, slot); },
       /*counting=*/false);
  return out;
}

/// The single element of a predicate input at `row`.
static Value loadPredicateInput(Lowering &l, const Feature &f, Value row) {
  SmallVector<Value> index = {row};
  index.append(f.type.getRank() - 1, l.idx(0));
  return l.b.create<memref::LoadOp>(l.loc, f.memref, index);
}

static LogicalResult lowerFilterNodes(FilterNodesOp op) {
  Lowering l(op);
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

static LogicalResult lowerFilterEdges(FilterEdgesOp op) {
  Lowering l(op);
  FailureOr<GraphParts> g = l.graph(op, op.getGraph());
  if (failed(g))
    return failure();
  SmallVector<Feature> inputs = l.features(op.getInputs());
  Value candidates =
      op.getCandidates() ? l.toMemref(op.getCandidates()) : Value();
  Value count = candidates ? l.dim(candidates, 0) : g->numEdges;
  Value out = filterIds(l, count, candidates, g->numEdges, [&](Value e) {
    Lowering::EdgeRows rows{l.b.create<memref::LoadOp>(l.loc, g->src, e),
                            l.b.create<memref::LoadOp>(l.loc, g->dst, e), e};
    SmallVector<Value> scalars;
    for (auto [i, f] : llvm::enumerate(inputs))
      scalars.push_back(loadPredicateInput(
          l, f, rows.of(cast<TargetAttr>(op.getRoles()[i]).getValue())));
    return l.inlineBody(op.getBody(), scalars)[0];
  });
  return l.replaceWithBuffers(op, out);
}

//===----------------------------------------------------------------------===//
// Function signatures
//===----------------------------------------------------------------------===//

/// Replaces each graph argument by its index arrays, packed back into a
/// graph value by a cast that the op lowerings look through.
static LogicalResult expandGraphArguments(func::FuncOp fn) {
  MLIRContext *ctx = fn.getContext();
  auto ids = RankedTensorType::get({ShapedType::kDynamic}, IndexType::get(ctx));
  SmallVector<Type> parts = {IndexType::get(ctx), ids, ids, ids, ids, ids};
  for (Type t : fn.getResultTypes())
    if (isa<GraphType>(t))
      return fn.emitOpError("returns a graph, which cannot be lowered");
  SmallVector<Type> inputs;
  for (Type t : fn.getArgumentTypes()) {
    if (isa<GraphType>(t))
      llvm::append_range(inputs, parts);
    else
      inputs.push_back(t);
  }
  if (!fn.isExternal()) {
    Block &entry = fn.getBody().front();
    OpBuilder b(ctx);
    b.setInsertionPointToStart(&entry);
    for (int i = int(entry.getNumArguments()) - 1; i >= 0; --i) {
      BlockArgument arg = entry.getArgument(i);
      if (!isa<GraphType>(arg.getType()))
        continue;
      SmallVector<Value> values;
      for (auto [k, type] : llvm::enumerate(parts))
        values.push_back(entry.insertArgument(i + 1 + k, type, arg.getLoc()));
      auto cast = b.create<UnrealizedConversionCastOp>(
          arg.getLoc(), TypeRange{arg.getType()}, values);
      arg.replaceAllUsesWith(cast.getResult(0));
      entry.eraseArgument(i);
    }
  }
  fn.setFunctionType(FunctionType::get(ctx, inputs, fn.getResultTypes()));
  if (fn.isPublic())
    fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(ctx));
  return success();
}

namespace {
struct ConvertGNNToLoopsPass
    : public gnn::impl::ConvertGNNToLoopsPassBase<ConvertGNNToLoopsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto fn : module.getOps<func::FuncOp>())
      if (failed(expandGraphArguments(fn)))
        return signalPassFailure();
    WalkResult calls = module.walk([](func::CallOp call) {
      for (Type t : call.getOperandTypes())
        if (isa<GraphType>(t))
          return call.emitOpError("passes a graph to a call, which cannot be "
                                  "lowered"),
                 WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (calls.wasInterrupted())
      return signalPassFailure();

    // The runtime functions that lowered code reports bad input to.
    OpBuilder b(module.getBodyRegion());
    Type i64 = b.getI64Type();
    for (auto [name, arity] :
         {std::make_pair(kEdgeErrorFn, 4), std::make_pair(kRowsErrorFn, 3)}) {
      if (module.lookupSymbol(name))
        continue;
      auto decl = b.create<func::FuncOp>(
          module.getLoc(), name,
          b.getFunctionType(SmallVector<Type>(arity, i64), {}));
      decl.setPrivate();
    }

    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<GNNDialect>(op->getDialect()) && !isa<YieldOp>(op) &&
          !op->getParentOfType<ApplyEdgesOp>() &&
          !op->getParentOfType<ApplyNodesOp>() &&
          !op->getParentOfType<FilterNodesOp>() &&
          !op->getParentOfType<FilterEdgesOp>())
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      LogicalResult result =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case([](ApplyEdgesOp o) { return lowerApplyEdges(o); })
              .Case([](SendAndRecvOp o) { return lowerSendAndRecv(o); })
              .Case([](ReduceOp o) { return lowerReduce(o); })
              .Case([](ApplyNodesOp o) { return lowerApplyNodes(o); })
              .Case([](FusedAttentionOp o) { return lowerFusedAttention(o); })
              .Case([](NumSrcNodesOp o) {
                return lowerCount(o, &GraphParts::numSrc);
              })
              .Case([](NumDstNodesOp o) {
                return lowerCount(o, &GraphParts::numDst);
              })
              .Case([](NumEdgesOp o) {
                return lowerCount(o, &GraphParts::numEdges);
              })
              .Case([](EdgeEndpointsOp o) { return lowerEdgeEndpoints(o); })
              .Case([](GatherRowsOp o) { return lowerGatherRows(o); })
              .Case([](ScatterRowsOp o) { return lowerScatterRows(o); })
              .Case([](FilterNodesOp o) { return lowerFilterNodes(o); })
              .Case([](GraphFromCooOp o) { return lowerGraphFromCoo(o); })
              .Case([](FilterEdgesOp o) { return lowerFilterEdges(o); })
              .Default([](Operation *o) {
                return o->emitOpError("has no CPU lowering yet");
              });
      if (failed(result))
        return signalPassFailure();
    }
    // The graph casts are dead now.
    module.walk([](UnrealizedConversionCastOp cast) {
      if (cast.use_empty() && cast.getNumResults() == 1 &&
          isa<GraphType>(cast.getResult(0).getType()))
        cast.erase();
    });
  }
};
} // namespace
