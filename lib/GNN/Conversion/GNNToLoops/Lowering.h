//===- Lowering.h - shared helpers of the gnn-to-loops lowering -*- C++ -*-===//
//
// Part of gnnc. Builders for loops over memrefs that every op lowering of
// convert-gnn-to-loops uses: graph arrays, features with broadcasting,
// parallel loops, run-time checks and handing buffers back as tensors.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOLOOPS_LOWERING_H
#define GNN_CONVERSION_GNNTOLOOPS_LOWERING_H

#include "GNN/Conversion/GraphParts.h"
#include "GNN/Conversion/LoopTarget.h"
#include "GNN/Conversion/RuntimeABI.h"
#include "GNN/IR/GNNOps.h"
#include "gnnc/errors.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::gnn::loops {
/// f32 lanes of the vectors the CPU loops compute in (AVX2's 8).
constexpr int64_t kVectorLanes = 8;

/// A run-time size check: dim `dim` of `memref` must be `expected`; `code`
/// says what was compared (a gnn_rt_size_target).
struct SizeCheck {
  Value memref;
  int64_t dim;
  Value expected;
  int64_t code;
};
constexpr int64_t kInputRowsCode = GNN_RT_SIZE_INPUT_ROWS,
                  kItemSizeCode = GNN_RT_SIZE_ITEM;

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

/// Declares function `name` in `module` unless it is there; with
/// `cInterface`, calls pass memrefs as pointers to their descriptors.
void declareFunction(ModuleOp module, StringRef name, TypeRange inputs,
                     TypeRange results, bool cInterface);

class Lowering {
public:
  /// Lowers `op` through `rewriter` (a pattern's), building before it.
  Lowering(Operation *op, RewriterBase &rewriter)
      : rewriter(rewriter), b(op->getLoc(), rewriter), loc(op->getLoc()) {
    rewriter.setInsertionPoint(op);
    b.setInsertionPoint(op);
  }

  Value idx(int64_t v) { return b.create<arith::ConstantIndexOp>(v); }

  /// The buffer of an op's input. Lowered ops only read their inputs (they
  /// write fresh buffers), so bufferization need not copy one that is read
  /// again later or belongs to the caller.
  Value toMemref(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    return b.create<bufferization::ToMemrefOp>(memrefType, tensor,
                                               /*read_only=*/true);
  }

  /// Like toMemref, for inputs that may be slices of a larger buffer at any
  /// offset and row stride (a step's rows of a per-step k/v cache whose
  /// rows hold every step): row-major within a row, any offset and distance
  /// between rows, so bufferization hands over the slice without a copy.
  Value toMemrefView(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto rowMajor = MemRefType::get(type.getShape(), type.getElementType());
    SmallVector<int64_t> strides = getStridesAndOffset(rowMajor).first;
    if (strides.size() > 1)
      strides.front() = ShapedType::kDynamic;
    auto layout =
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides);
    auto memrefType =
        MemRefType::get(type.getShape(), type.getElementType(), layout);
    return b.create<bufferization::ToMemrefOp>(memrefType, tensor,
                                               /*read_only=*/true);
  }

  Feature feature(Value tensor) {
    return {toMemrefView(tensor), cast<RankedTensorType>(tensor.getType())};
  }

  SmallVector<Feature> features(ValueRange tensors) {
    return llvm::map_to_vector(tensors, [&](Value t) { return feature(t); });
  }

  Value toTensor(Value memref) {
    return b.create<bufferization::ToTensorOp>(memref, /*restrict=*/true,
                                               /*writable=*/true);
  }

  Value dim(Value memref, int64_t i) {
    return b.create<memref::DimOp>(memref, i);
  }

  /// The arrays of a graph: after gnn-decompose-graphs and the lowering of
  /// the ops that build graphs, every graph is a cast of its parts.
  FailureOr<GraphParts> graph(Operation *user, Value graphValue) {
    FailureOr<SmallVector<Value>> cast = getGraphParts(graphValue);
    if (failed(cast))
      return user->emitOpError("uses a graph whose parts are unknown: it is "
                               "neither decomposed nor built by a gnn op");
    ArrayRef<Value> p = *cast;
    GraphParts parts;
    parts.numSrc = p[GNN_GRAPH_PART_NUM_SRC];
    parts.src = toMemref(p[GNN_GRAPH_PART_SRC]);
    parts.dst = toMemref(p[GNN_GRAPH_PART_DST]);
    parts.inPtr = toMemref(p[GNN_GRAPH_PART_IN_PTR]);
    parts.inSrc = toMemref(p[GNN_GRAPH_PART_IN_SRC]);
    parts.inEid = toMemref(p[GNN_GRAPH_PART_IN_EID]);
    parts.numDst = b.create<arith::SubIOp>(dim(parts.inPtr, 0), idx(1));
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
    return b.create<memref::LoadOp>(f.memref, indices);
  }

  Value alloc(RankedTensorType type, Value rows, ArrayRef<Value> extents) {
    SmallVector<Value> dynamic;
    if (type.isDynamicDim(0))
      dynamic.push_back(rows);
    for (auto [i, extent] : llvm::enumerate(extents))
      if (type.isDynamicDim(i + 1))
        dynamic.push_back(extent);
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    return b.create<memref::AllocOp>(memrefType, dynamic);
  }

  /// A float constant, or a splat of one for a vector type.
  Value floatConst(Type type, double value) {
    if (auto vector = dyn_cast<VectorType>(type))
      return b.create<arith::ConstantOp>(
          vector, DenseElementsAttr::get(
                      vector, b.getFloatAttr(vector.getElementType(), value)));
    return b.create<arith::ConstantOp>(b.getFloatAttr(type, value));
  }

  /// The zero of any element type (float, integer or index).
  Value zero(Type type) {
    return b.create<arith::ConstantOp>(cast<TypedAttr>(b.getZeroAttr(type)));
  }

  Value applyUnary(UnaryFnAttr fn, Value x) {
    Type t = x.getType();
    switch (fn.getKind()) {
    case UnaryKind::Scale:
      return b.create<arith::MulFOp>(
          x, floatConst(t, fn.getA().convertToDouble()));
    case UnaryKind::Clamp: {
      Value lo = b.create<arith::MaximumFOp>(
          x, floatConst(t, fn.getA().convertToDouble()));
      return b.create<arith::MinimumFOp>(
          lo, floatConst(t, fn.getB().convertToDouble()));
    }
    case UnaryKind::Exp:
      return b.create<math::ExpOp>(x);
    case UnaryKind::Relu:
      return b.create<arith::MaximumFOp>(x, floatConst(t, 0.0));
    case UnaryKind::Neg:
      return b.create<arith::NegFOp>(x);
    }
    llvm_unreachable("unknown unary kind");
  }

  Value applyBinary(BinaryOp op, Value x, Value y) {
    switch (op) {
    case BinaryOp::Copy:
      return x;
    case BinaryOp::Add:
      return b.create<arith::AddFOp>(x, y);
    case BinaryOp::Sub:
      return b.create<arith::SubFOp>(x, y);
    case BinaryOp::Mul:
    case BinaryOp::Dot:
      return b.create<arith::MulFOp>(x, y);
    case BinaryOp::Div:
      return b.create<arith::DivFOp>(x, y);
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
        idx(0), dotExtent, idx(1), ValueRange{floatConst(elem, 0.0)},
        [&](OpBuilder &nested, Location, Value d, ValueRange acc) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          SmallVector<Value> at(item.drop_back());
          at.push_back(d);
          Value x = load(operands[0], rows.of(fn.getLhs()), at);
          Value y = load(operands[1], rows.of(fn.getRhs()), at);
          Value sum =
              b.create<arith::AddFOp>(acc[0], b.create<arith::MulFOp>(x, y));
          b.create<scf::YieldOp>(sum);
        });
    return loop.getResult(0);
  }

  /// Clones an elementwise body with its arguments bound to `scalars`.
  /// `lowerOp`, where given, lowers the body ops that are not cloned as
  /// they are (those whose value depends on the element's position): it
  /// returns their replacement, or null to clone.
  SmallVector<Value>
  inlineBody(Region &body, ValueRange scalars,
             function_ref<Value(Operation &, IRMapping &)> lowerOp = nullptr) {
    return cloneElementBodyResults(b, body, scalars, lowerOp);
  }

  /// A sequential scf.for over [lo, hi) by `step`.
  void serial(Value lo, Value hi, function_ref<void(Value)> body,
              int64_t step = 1) {
    b.create<scf::ForOp>(lo, hi, idx(step), ValueRange{},
                         [&](OpBuilder &nested, Location, Value i, ValueRange) {
                           OpBuilder::InsertionGuard guard(b);
                           b.setInsertionPoint(nested.getInsertionBlock(),
                                               nested.getInsertionPoint());
                           body(i);
                           b.create<scf::YieldOp>();
                         });
  }

  /// Whether entry `i` of an id list is below `bound`; if not, reports it to
  /// the runtime, or, given `badSlot` (from badIdSlot: loops that run on a
  /// GPU, where a kernel cannot call the runtime), lowers the slot to the
  /// entry's position atomically, for reportBadId after the loop (the
  /// smallest position wins, whatever the threads' order). Returns the flag
  /// and an id that is safe to index with (0 in place of a bad one; callers
  /// make sure nothing is read through it when `bound` is 0).
  std::pair<Value, Value> checkedId(Value ids, Value i, Value bound,
                                    Value badSlot = Value()) {
    Value id = b.create<memref::LoadOp>(ids, i);
    Value ok = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, id, bound);
    unless(ok, [&] {
      if (badSlot)
        markSlot(badSlot, i);
      else
        b.create<func::CallOp>(abi::kIdOutOfRange, TypeRange{},
                               ValueRange{i64(i), i64(id), i64(bound)});
    });
    return {ok, b.create<arith::SelectOp>(ok, id, idx(0))};
  }

  /// The slot of checkedId's device form, and its report, at the end of
  /// the op's block: on a GPU the host reads the slot after the kernel, and
  /// there it waits once for every lookup of the block rather than after
  /// each. The kernels in between read no bad row (a bad id reads row 0 or
  /// nothing), and the slot and the ids stay allocated until the report.
  Value badIdSlot() {
    Value slot =
        b.create<memref::AllocOp>(MemRefType::get({1}, b.getI64Type()));
    b.create<memref::StoreOp>(noBadId(), slot, idx(0));
    return slot;
  }
  /// Lowers a badIdSlot-form slot to position `i` atomically (the smallest
  /// position wins, whatever the threads' order).
  void markSlot(Value slot, Value i) {
    b.create<memref::AtomicRMWOp>(arith::AtomicRMWKind::minu, i64(i), slot,
                                  ValueRange{idx(0)});
  }
  /// Whether a badIdSlot-form slot was lowered (read where it is built: on
  /// the device inside a kernel).
  Value slotMarked(Value slot) {
    Value held = b.create<memref::LoadOp>(slot, idx(0));
    return b.create<arith::CmpIOp>(arith::CmpIPredicate::ne, held, noBadId());
  }
  void reportBadId(Value slot, Value ids, Value bound) {
    atEndOfBlock([&] {
      // The runtime reads the slot and the entry it names: on the host
      // after the kernels, or (launches that do not wait) queued on their
      // stream, so that the host need not wait here.
      callCheck(abi::kCheckBadId,
                {slot,
                 b.create<memref::CastOp>(stridedList(b.getIndexType()), ids),
                 i64(bound)});
    });
  }

  /// Calls the runtime's check `name` (C interface, declared in the module
  /// on first use) with `args`.
  void callCheck(StringRef name, ValueRange args) {
    declareFunction(
        b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>(), name,
        args.getTypes(), {}, /*cInterface=*/true);
    b.create<func::CallOp>(name, TypeRange{}, args);
  }

  /// A 1-D memref type of `element` of any offset and stride: how the
  /// runtime's checks take a list (one C descriptor for every layout).
  MemRefType stridedList(Type element) {
    return MemRefType::get({ShapedType::kDynamic}, element,
                           StridedLayoutAttr::get(b.getContext(),
                                                  ShapedType::kDynamic,
                                                  {ShapedType::kDynamic}));
  }

  /// Builds `body` at the end of the insertion block (before its
  /// terminator): where the device forms read what their kernels found,
  /// so that a GPU's host waits there once.
  void atEndOfBlock(function_ref<void()> body) {
    OpBuilder::InsertionGuard guard(b);
    Block *block = b.getInsertionBlock();
    if (!block->empty() && block->back().hasTrait<OpTrait::IsTerminator>())
      b.setInsertionPoint(&block->back());
    body();
  }

  /// A graph of type `type` made of the given parts: the source count and
  /// the src, dst, inPtr, inSrc, inEid buffers (distinct), to replace the
  /// op's graph result with.
  Value graphOf(Type type, Value numSrc, ArrayRef<Value> buffers) {
    SmallVector<Value> parts = {numSrc};
    for (Value buffer : buffers)
      parts.push_back(toTensor(buffer));
    return b.create<UnrealizedConversionCastOp>(TypeRange{type}, parts)
        .getResult(0);
  }

  /// A new 1-D index buffer of `n` entries.
  Value idBuffer(Value n) {
    auto type = MemRefType::get({ShapedType::kDynamic}, b.getIndexType());
    return b.create<memref::AllocOp>(type, ValueRange{n});
  }
  /// An i64 buffer of `n` elements (what atomics update: index is not an
  /// integer type to memref.atomic_rmw).
  Value i64Buffer(Value n) {
    auto type = MemRefType::get({ShapedType::kDynamic}, b.getI64Type());
    return b.create<memref::AllocOp>(type, ValueRange{n});
  }

  /// scf.parallel over [0, n).
  void parallel(Value n, function_ref<void(Value)> body) {
    b.create<scf::ParallelOp>(ValueRange{idx(0)}, ValueRange{n},
                              ValueRange{idx(1)},
                              [&](OpBuilder &nested, Location, ValueRange ivs) {
                                OpBuilder::InsertionGuard guard(b);
                                b.setInsertionPoint(nested.getInsertionBlock(),
                                                    nested.getInsertionPoint());
                                body(ivs[0]);
                              });
  }

  /// One scf.parallel over [0, n) x the given extents, flattened (the last
  /// extent varies fastest): a parallel iteration per node and item, where
  /// the items of a node are independent (e.g. its heads), so that a GPU
  /// gets a thread for each.
  void parallelItems(Value n, ArrayRef<Value> extents,
                     function_ref<void(Value, ValueRange)> body) {
    Value total = n;
    for (Value e : extents)
      total = b.create<arith::MulIOp>(total, e);
    parallel(total, [&](Value flat) {
      auto [row, item] = splitFlat(flat, extents);
      body(row, item);
    });
  }

  /// The row and item indices of the row-major position `flat` in rows of
  /// the given item extents (the last varies fastest).
  std::pair<Value, SmallVector<Value>> splitFlat(Value flat,
                                                 ArrayRef<Value> extents) {
    SmallVector<Value> item(extents.size());
    for (size_t i = extents.size(); i-- > 0;) {
      item[i] = b.create<arith::RemUIOp>(flat, extents[i]);
      flat = b.create<arith::DivUIOp>(flat, extents[i]);
    }
    return {flat, item};
  }

  /// The row-major index of item `item` of row `r` in a buffer whose rows
  /// have the given item extents.
  Value flatIndex(Value r, ValueRange item, ArrayRef<Value> extents) {
    Value flat = r;
    for (auto [i, extent] : llvm::zip_equal(item, extents))
      flat = b.create<arith::AddIOp>(b.create<arith::MulIOp>(flat, extent), i);
    return flat;
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
        b.create<memref::StoreOp>(z, memref, at);
      });
    });
  }

  /// A per-edge byte mask of `edges` (1: listed); buffer deallocation frees
  /// it.
  Value edgeMask(Value edges, Value numEdges) {
    Value ids = toMemref(edges);
    auto type = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
    Value mask = b.create<memref::AllocOp>(type, ValueRange{numEdges});
    Value zero = b.create<arith::ConstantIntOp>(0, 8);
    Value one = b.create<arith::ConstantIntOp>(1, 8);
    parallel(numEdges,
             [&](Value e) { b.create<memref::StoreOp>(zero, mask, e); });
    forEachListedEdge(ids, numEdges, [&](Value e) {
      b.create<memref::StoreOp>(one, mask, e);
    });
    return mask;
  }

  /// Runs `body` for each id of an edge list that is a valid edge id; ids
  /// out of range are ignored (a program never sees memory outside the
  /// graph).
  void forEachListedEdge(Value ids, Value numEdges,
                         function_ref<void(Value)> body) {
    parallel(dim(ids, 0), [&](Value i) {
      Value e = b.create<memref::LoadOp>(ids, i);
      Value inRange =
          b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, e, numEdges);
      auto guard = b.create<scf::IfOp>(inRange, /*withElse=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&guard.getThenRegion().front());
      body(e);
    });
  }

  /// Destination v's CSR slots [first, last).
  std::pair<Value, Value> inSlots(const GraphParts &g, Value v) {
    Value first = b.create<memref::LoadOp>(g.inPtr, v);
    Value last = b.create<memref::LoadOp>(
        g.inPtr, ValueRange{b.create<arith::AddIOp>(v, idx(1))});
    return {first, last};
  }

  /// For each in-edge slot of destination v (skipping edges not in `mask`),
  /// runs `body(u, e)`; carries `init` values through `body`'s results.
  SmallVector<Value> forEachInEdge(
      const GraphParts &g, Value v, Value mask, ValueRange init,
      function_ref<SmallVector<Value>(Value, Value, ValueRange)> body) {
    auto [first, last] = inSlots(g, v);
    auto loop = b.create<scf::ForOp>(
        first, last, idx(1), init,
        [&](OpBuilder &nested, Location, Value slot, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          Value u = b.create<memref::LoadOp>(g.inSrc, slot);
          Value e = b.create<memref::LoadOp>(g.inEid, slot);
          if (!mask) {
            b.create<scf::YieldOp>(body(u, e, carried));
            return;
          }
          Value listed = b.create<arith::CmpIOp>(
              arith::CmpIPredicate::ne, b.create<memref::LoadOp>(mask, e),
              b.create<arith::ConstantIntOp>(0, 8));
          auto branch = b.create<scf::IfOp>(
              listed,
              [&](OpBuilder &t, Location) {
                OpBuilder::InsertionGuard g2(b);
                b.setInsertionPoint(t.getInsertionBlock(),
                                    t.getInsertionPoint());
                b.create<scf::YieldOp>(body(u, e, carried));
              },
              [&](OpBuilder &f, Location) {
                f.create<scf::YieldOp>(loc, carried);
              });
          b.create<scf::YieldOp>(branch.getResults());
        });
    return loop.getResults();
  }

  /// Checks at run time that each feature has the rows its op needs (a
  /// tensor built inside the program may not); reports the first mismatch
  /// to the runtime. Returns whether all match.
  Value sizesMatch(ArrayRef<SizeCheck> checks) {
    Value all = b.create<arith::ConstantIntOp>(1, 1);
    for (auto [memref, dimension, expected, target] : checks) {
      Value rows = dim(memref, dimension);
      Value ok =
          b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, rows, expected);
      unless(ok, [&] {
        b.create<func::CallOp>(
            abi::kRowsMismatch, TypeRange{},
            ValueRange{i64(rows), i64(expected),
                       b.create<arith::ConstantIntOp>(target, 64)});
      });
      all = b.create<arith::AndIOp>(all, ok);
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
    SmallVector<Value> tensors;
    for (Value buffer : buffers)
      tensors.push_back(toTensor(buffer));
    rewriter.replaceOp(op, tensors);
    return success();
  }

  Value logicalNot(Value flag) {
    return b.create<arith::XOrIOp>(flag, b.create<arith::ConstantIntOp>(1, 1));
  }

  /// Runs `report` only if `ok` is false.
  void unless(Value ok, function_ref<void()> report) {
    guarded(logicalNot(ok), report);
  }

  /// badIdSlot's value while no entry is bad.
  Value noBadId() { return b.create<arith::ConstantIntOp>(abi::kNoEntry, 64); }

  Value i64(Value index) {
    return b.create<arith::IndexCastOp>(b.getI64Type(), index);
  }

  /// An scf.for over [lb, ub) by `step` (1 if null) carrying `init`;
  /// `body(i, state)` returns the next state.
  ValueRange forLoop(Value lb, Value ub, ValueRange init,
                     function_ref<SmallVector<Value>(Value, ValueRange)> body,
                     Value step = Value()) {
    return b
        .create<scf::ForOp>(
            loc, lb, ub, step ? step : idx(1), init,
            [&](OpBuilder &nested, Location, Value i, ValueRange state) {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPoint(nested.getInsertionBlock(),
                                  nested.getInsertionPoint());
              b.create<scf::YieldOp>(body(i, state));
            })
        .getResults();
  }

  /// An scf.while carrying `init` while `cond(state)` holds; `body(state)`
  /// returns the next state.
  ValueRange whileLoop(ValueRange init, function_ref<Value(ValueRange)> cond,
                       function_ref<SmallVector<Value>(ValueRange)> body) {
    auto inBlock = [&](OpBuilder &nested, auto build) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(nested.getInsertionBlock(),
                          nested.getInsertionPoint());
      build();
    };
    return b
        .create<scf::WhileOp>(
            loc, init.getTypes(), init,
            [&](OpBuilder &nested, Location, ValueRange state) {
              inBlock(nested,
                      [&] { b.create<scf::ConditionOp>(cond(state), state); });
            },
            [&](OpBuilder &nested, Location, ValueRange state) {
              inBlock(nested, [&] { b.create<scf::YieldOp>(body(state)); });
            })
        .getResults();
  }

  /// An scf.if yielding `thenValues()` or `elseValues()`.
  ValueRange ifElse(Value cond, function_ref<SmallVector<Value>()> thenValues,
                    function_ref<SmallVector<Value>()> elseValues) {
    auto branch = [&](function_ref<SmallVector<Value>()> values) {
      return [&, values](OpBuilder &nested, Location) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        b.create<scf::YieldOp>(values());
      };
    };
    return b
        .create<scf::IfOp>(loc, cond, branch(thenValues), branch(elseValues))
        .getResults();
  }

  /// Runs `body` only if `ok`.
  void guarded(Value ok, function_ref<void()> body) {
    auto branch = b.create<scf::IfOp>(ok, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    body();
  }

  /// The code of a target in row-mismatch reports.
  static int64_t targetCode(Target t) {
    switch (t) {
    case Target::Src:
      return GNN_RT_SIZE_SRC_NODES;
    case Target::Dst:
      return GNN_RT_SIZE_DST_NODES;
    case Target::Edge:
      return GNN_RT_SIZE_EDGES;
    }
    llvm_unreachable("unknown target");
  }

  /// The row count features of `t` must have.
  static Value rowsOf(const GraphParts &g, Target t) {
    return t == Target::Src   ? g.numSrc
           : t == Target::Dst ? g.numDst
                              : g.numEdges;
  }

  /// The pattern's rewriter: ops are replaced and erased through it.
  RewriterBase &rewriter;
  /// Builds at the op's location; a copy of the rewriter's builder, so the
  /// rewriter hears of every op created.
  ImplicitLocOpBuilder b;
  Location loc;
};

/// Lowerings of the dense node-wise layers (DenseLayers.cpp).
LogicalResult lowerLinear(LinearOp op, const LoopTarget &target,
                          RewriterBase &rewriter);
LogicalResult lowerLayerNorm(LayerNormOp op, RewriterBase &rewriter);
LogicalResult lowerLayerNormGrad(LayerNormGradOp op, RewriterBase &rewriter);
LogicalResult lowerOuterSum(OuterSumOp op, bool parallelDense,
                            RewriterBase &rewriter);
LogicalResult lowerLogSoftmax(LogSoftmaxOp op, RewriterBase &rewriter);
/// What every form of a layer norm (or its gradient) starts from, shared
/// with the GPU's kernels: the operands as buffers, the results allocated,
/// the rows and width (and the width as a float), eps, and whether the
/// run-time checks of the operands against the input held (each failure
/// reported to the runtime).
struct LayerNormBuffers {
  Value input, weight, bias, out;
  Value rows, width, n, eps, ok;
};
LayerNormBuffers prepareLayerNorm(Lowering &l, LayerNormOp op);
struct LayerNormGradBuffers {
  /// `addend` is null without one.
  Value input, weight, grad, addend, dx, dxh;
  Value rows, width, n, eps, ok;
};
LayerNormGradBuffers prepareLayerNormGrad(Lowering &l, LayerNormGradOp op);

/// gnn.dropout (Dropout.cpp): in vector loops on CPU cores, else one
/// element per parallel iteration.
LogicalResult lowerDropout(DropoutOp op, const LoopTarget &target,
                           RewriterBase &rewriter);

/// gnn.dropout_element of `x` at the element whose row-major index in the
/// apply_nodes result is `flat` (an index): `x` scaled, or zero (Dropout.cpp).
Value lowerDropoutElement(Lowering &l, DropoutElementOp op, Value x,
                          Value flat);

/// gnn.sum_to (SumTo.cpp): in vector loops on CPU cores, else one result
/// element per parallel iteration.
LogicalResult lowerSumTo(SumToOp op, const LoopTarget &target,
                         RewriterBase &rewriter);

/// The element's name in the runtime's symbols (as MLIR prints it) and its
/// size in bytes, for values the runtime copies (tapes, announced results).
std::pair<std::string, int64_t> elementOf(RankedTensorType type);

/// Tapes of loop iterations (Tape.cpp): calls of the runtime's gnn_rt_tape.
LogicalResult lowerTapeCreate(TapeCreateOp op, RewriterBase &rewriter);
LogicalResult lowerTapePush(TapePushOp op, RewriterBase &rewriter);
LogicalResult lowerTapePop(TapePopOp op, RewriterBase &rewriter);
LogicalResult lowerTapeFree(TapeFreeOp op, RewriterBase &rewriter);
LogicalResult lowerTapeRefused(TapeRefusedOp op, RewriterBase &rewriter);

/// gnn.result_ready (ResultReady.cpp): a call of the runtime's
/// gnn_rt_result_ready with the value's buffer.
LogicalResult lowerResultReady(ResultReadyOp op, RewriterBase &rewriter);

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOLOOPS_LOWERING_H
