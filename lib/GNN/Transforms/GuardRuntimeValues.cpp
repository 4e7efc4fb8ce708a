//===- GuardRuntimeValues.cpp - ops valid only for some run-time values ---===//
//
// Part of gnnc. Upstream ops that a program writes are undefined for some
// operand values: integer division by zero traps, an index past the end
// reads or writes outside the buffer, a reshape to a shape of another
// element count views memory the tensor does not own, and a size from the
// inputs can ask for more memory than the machine has. Where such values
// are known only at run time, this pass checks them before the op and
// reports a bad one to the runtime (gnn_rt_bad_value, gnnc/errors.h), which
// fails the call; the op then runs on a stand-in that is safe (a divisor of
// one, a zero, an empty tensor, the destination unchanged) so that nothing
// traps before the caller takes the error.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/RuntimeReports.h"
#include "GNN/IR/GNNDialect.h"
#include "GNN/Transforms/Passes.h"
#include "gnnc/errors.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ShapedOpInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GUARDRUNTIMEVALUESPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
namespace abi = mlir::gnn::abi;

namespace {

/// Bytes of one element of `type` (a guess of 8 for types without a
/// width: a limit check needs only the order of magnitude).
int64_t bytesOf(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  if (auto complex = dyn_cast<ComplexType>(type))
    return 2 * bytesOf(complex.getElementType());
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getNumElements() * bytesOf(vector.getElementType());
  return 8;
}

/// An empty tensor of `type`: every dynamic dimension 0.
Value emptyOf(OpBuilder &b, Location loc, RankedTensorType type) {
  SmallVector<Value> sizes(type.getNumDynamicDims(),
                           b.create<arith::ConstantIndexOp>(loc, 0));
  return b.create<tensor::EmptyOp>(loc, type, sizes);
}

/// What integer range analysis proves of the program's integers before any
/// guard goes in, so that values no input can make bad go unchecked: a
/// divisor such as `%q | 1`, an index clamped with `minsi`/`maxsi` or taken
/// `remui` by a tensor's static size. Guards that later replace operands
/// make values the analysis has not seen: those count as unknown. (Ranges
/// that `nsw`/`nuw` flags narrow rest on the program's own promise: a
/// program that breaks it is undefined in LLVM as well.)
class KnownRanges {
public:
  explicit KnownRanges(Operation *root) {
    // Dead-code analysis and constant propagation are what the sparse
    // range analysis needs to see the live blocks and the loops' bounds.
    solver.load<dataflow::DeadCodeAnalysis>();
    solver.load<dataflow::SparseConstantPropagation>();
    solver.load<dataflow::IntegerRangeAnalysis>();
    solved = succeeded(solver.initializeAndRun(root));
  }

  /// Whether `value` is never `x` (an integer of its own width).
  bool excludes(Value value, const APInt &x) const {
    std::optional<ConstantIntRanges> range = of(value);
    if (!range || range->umin().getBitWidth() != x.getBitWidth())
      return false;
    return x.ult(range->umin()) || x.ugt(range->umax()) ||
           x.slt(range->smin()) || x.sgt(range->smax());
  }

  /// Whether the index `value` is in [0, size).
  bool within(Value value, int64_t size) const {
    std::optional<ConstantIntRanges> range = of(value);
    return range && range->smin().isNonNegative() &&
           range->smax().slt(APInt(range->smax().getBitWidth(), size,
                                   /*isSigned=*/true));
  }

private:
  std::optional<ConstantIntRanges> of(Value value) const {
    if (!solved)
      return std::nullopt;
    auto *state = solver.lookupState<dataflow::IntegerValueRangeLattice>(value);
    if (!state || state->getValue().isUninitialized())
      return std::nullopt;
    return state->getValue().getValue();
  }

  DataFlowSolver solver;
  bool solved = false;
};

/// Builds the checks for one op, in front of it.
class Guard {
public:
  Guard(Operation *op, bool unsignedValues = false)
      : op(op), b(op), loc(op->getLoc()), unsignedValues(unsignedValues) {}

  Value constant(int64_t value) {
    return b.create<arith::ConstantIntOp>(loc, value, 64);
  }
  Value index(int64_t value) {
    return b.create<arith::ConstantIndexOp>(loc, value);
  }
  /// `v` (an index or an integer) as an i64.
  Value i64(Value v) {
    Type type = v.getType();
    if (type.isInteger(64))
      return v;
    if (type.isIndex())
      return b.create<arith::IndexCastOp>(loc, b.getI64Type(), v);
    if (type.getIntOrFloatBitWidth() < 64)
      return unsignedValues
                 ? b.create<arith::ExtUIOp>(loc, b.getI64Type(), v).getResult()
                 : b.create<arith::ExtSIOp>(loc, b.getI64Type(), v).getResult();
    return b.create<arith::TruncIOp>(loc, b.getI64Type(), v);
  }
  Value cmp(arith::CmpIPredicate predicate, Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, predicate, x, y);
  }
  Value both(Value x, Value y) { return b.create<arith::AndIOp>(loc, x, y); }
  Value either(Value x, Value y) { return b.create<arith::OrIOp>(loc, x, y); }
  Value negate(Value x) {
    return b.create<arith::XOrIOp>(loc, x,
                                   b.create<arith::ConstantIntOp>(loc, 1, 1));
  }

  /// The call that reports `kind` with up to five values (missing ones 0).
  void emitReport(OpBuilder &at, gnn_rt_value_error kind,
                  ArrayRef<Value> values) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(at.getInsertionBlock(), at.getInsertionPoint());
    SmallVector<Value> wide;
    for (Value v : values)
      wide.push_back(i64(v));
    gnn::buildBadValueReport(b, loc, kind, wide);
  }

  /// Reports `kind` when `bad` holds.
  void reportIf(Value bad, gnn_rt_value_error kind, ArrayRef<Value> values) {
    auto ifOp = b.create<scf::IfOp>(loc, bad, /*withElseRegion=*/false);
    OpBuilder inside = ifOp.getThenBodyBuilder();
    emitReport(inside, kind, values);
  }

  /// Replaces the op by `scf.if ok { op } else { report; stand-in }`, the
  /// report naming the first failed check.
  template <typename StandIn>
  void runIf(Value ok, ArrayRef<std::pair<Value, SmallVector<Value>>> failures,
             gnn_rt_value_error kind, StandIn standIn) {
    auto ifOp = b.create<scf::IfOp>(loc, op->getResultTypes(), ok,
                                    /*withElseRegion=*/true);
    // (Without results, a store's, the branches come with their yields and
    // there is no stand-in.)
    bool results = op->getNumResults() > 0;
    OpBuilder then(ifOp.thenBlock(), ifOp.thenBlock()->end());
    if (!results)
      then.setInsertionPoint(ifOp.thenYield());
    Operation *clone = then.clone(*op);
    if (results)
      then.create<scf::YieldOp>(loc, clone->getResults());

    OpBuilder::InsertionGuard guard(b);
    if (results)
      b.setInsertionPointToEnd(ifOp.elseBlock());
    else
      b.setInsertionPoint(ifOp.elseYield());
    emitReport(b, kind, firstOf(failures));
    if (results)
      b.create<scf::YieldOp>(loc, ValueRange{standIn(b)});
    op->replaceAllUsesWith(ifOp.getResults());
    op->erase();
  }

  /// `r` where `ok` holds, else `otherwise`.
  OpFoldResult choose(Value ok, OpFoldResult r, int64_t otherwise) {
    Value v = getValueOrCreateConstantIndexOp(b, loc, r);
    return b.create<arith::SelectOp>(loc, ok, v, index(otherwise)).getResult();
  }

  /// The values of the first failed check: a chain of selects from the
  /// last.
  SmallVector<Value>
  firstOf(ArrayRef<std::pair<Value, SmallVector<Value>>> failures) {
    SmallVector<Value> values = failures.back().second;
    for (auto it = failures.rbegin() + 1; it != failures.rend(); ++it)
      for (auto [i, v] : llvm::enumerate(it->second))
        values[i] =
            b.create<arith::SelectOp>(loc, it->first, i64(v), i64(values[i]));
    return values;
  }

  Operation *op;
  OpBuilder b;
  Location loc;
  bool unsignedValues;
};

//===----------------------------------------------------------------------===//
// Integer division
//===----------------------------------------------------------------------===//

/// Reports `kind` when any lane of the vector `bad` holds, with `values`
/// (vectors of as many lanes, in one dimension) at the first such lane.
void reportFirstLane(Guard &g, Value bad, gnn_rt_value_error kind,
                     ArrayRef<Value> values) {
  int64_t lanes = cast<VectorType>(bad.getType()).getNumElements();
  Value any =
      g.b.create<vector::ReductionOp>(g.loc, vector::CombiningKind::OR, bad);
  auto ifOp = g.b.create<scf::IfOp>(g.loc, any, /*withElseRegion=*/false);
  OpBuilder inside = ifOp.getThenBodyBuilder();
  // A chain of selects from the last lane: the first bad lane's values win.
  SmallVector<Value> first(values.size());
  for (int64_t lane = lanes - 1; lane >= 0; --lane) {
    Value isBad = inside.create<vector::ExtractOp>(g.loc, bad, lane);
    for (auto [i, v] : llvm::enumerate(values)) {
      Value x = inside.create<vector::ExtractOp>(g.loc, v, lane);
      first[i] = first[i]
                     ? inside.create<arith::SelectOp>(g.loc, isBad, x, first[i])
                     : x;
    }
  }
  g.emitReport(inside, kind, first);
}

/// Integer division by zero, and signed division of the smallest value by
/// -1: reported, and the divisor replaced by 1 where either holds. Vectors
/// of a fixed size are checked lane by lane, a branch per kind taken when
/// any lane fails it, reporting the first such lane's values.
void guardDivision(Operation *op, const KnownRanges &known) {
  Value dividend = op->getOperand(0), divisor = op->getOperand(1);
  Type type = divisor.getType();
  auto vector = dyn_cast<VectorType>(type);
  Type element = getElementTypeOrSelf(type);
  bool isSigned = isa<arith::DivSIOp, arith::RemSIOp, arith::CeilDivSIOp,
                      arith::FloorDivSIOp>(op);
  unsigned width = element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
  APInt smallest = APInt::getSignedMinValue(width);
  APInt allOnes = APInt::getAllOnes(width);
  // Which checks the divisor needs: none for a constant other than 0 and
  // -1 (a splat vector constant counts as its value), or for values the
  // known ranges exclude.
  std::optional<int64_t> constant = getConstantIntValue(divisor);
  bool mayBeZero = constant ? *constant == 0
                            : !known.excludes(divisor, APInt::getZero(width));
  bool mayOverflow =
      isSigned && (constant ? *constant == -1
                            : !known.excludes(divisor, allOnes) &&
                                  !known.excludes(dividend, smallest));
  if (!mayBeZero && !mayOverflow)
    return;

  Guard g(op, /*unsignedValues=*/!isSigned);
  auto literal = [&](const APInt &value) -> Value {
    if (vector)
      return g.b.create<arith::ConstantOp>(
          g.loc, DenseElementsAttr::get(vector, value));
    if (type.isIndex())
      return g.b.create<arith::ConstantIndexOp>(g.loc, value.getSExtValue());
    return g.b.create<arith::ConstantOp>(g.loc,
                                         g.b.getIntegerAttr(type, value));
  };
  // Vectors' lanes in one dimension, for the reductions and the extracts.
  auto lanes = [&](Value v) -> Value {
    if (!vector || vector.getRank() == 1)
      return v;
    return g.b.create<vector::ShapeCastOp>(
        g.loc,
        VectorType::get({vector.getNumElements()},
                        cast<VectorType>(v.getType()).getElementType()),
        v);
  };
  auto report = [&](Value bad, gnn_rt_value_error kind,
                    ArrayRef<Value> values) {
    if (vector)
      reportFirstLane(g, lanes(bad), kind, values);
    else
      g.reportIf(bad, kind, values);
  };
  Value shownDividend = lanes(dividend);
  Value bad;
  if (mayBeZero) {
    Value zero = literal(APInt::getZero(width));
    Value isZero = g.cmp(arith::CmpIPredicate::eq, divisor, zero);
    report(isZero, GNN_RT_DIVISION_BY_ZERO, {shownDividend});
    bad = isZero;
  }
  if (mayOverflow) {
    // (One statement each: the IR comes out in a fixed order.)
    Value isSmallest =
        g.cmp(arith::CmpIPredicate::eq, dividend, literal(smallest));
    Value isMinusOne =
        g.cmp(arith::CmpIPredicate::eq, divisor, literal(allOnes));
    Value overflows = g.both(isSmallest, isMinusOne);
    report(overflows, GNN_RT_DIVISION_OVERFLOW,
           {shownDividend, lanes(divisor)});
    bad = bad ? g.either(bad, overflows) : overflows;
  }
  Value one = literal(APInt(width, 1));
  op->setOperand(1, g.b.create<arith::SelectOp>(g.loc, bad, one, divisor));
}

//===----------------------------------------------------------------------===//
// Indices
//===----------------------------------------------------------------------===//

/// The tensor that `value` is with elements replaced: through inserts into
/// it and the branches of an scf.if (as the guards build them) that both
/// come from one tensor; `value` itself where neither applies. Either way
/// it has `value`'s shape.
Value shapeSource(Value value, int depth = 0) {
  if (depth > 8)
    return value;
  while (true) {
    Operation *def = value.getDefiningOp();
    if (auto insert = dyn_cast_or_null<tensor::InsertOp>(def)) {
      value = insert.getDest();
    } else if (auto slice = dyn_cast_or_null<tensor::InsertSliceOp>(def)) {
      value = slice.getDest();
    } else if (auto ifOp = dyn_cast_or_null<scf::IfOp>(def);
               ifOp && ifOp.elseBlock()) {
      unsigned n = cast<OpResult>(value).getResultNumber();
      Value then = shapeSource(ifOp.thenYield().getOperand(n), depth + 1);
      if (then != shapeSource(ifOp.elseYield().getOperand(n), depth + 1))
        return value;
      value = then;
    } else {
      return value;
    }
  }
}

/// Whether `i` is provably in [0, size of `tensor` in `dim`): the induction
/// variable of a loop from a non-negative constant up to that size (or a
/// constant no larger), with a positive step, or a value whose known range
/// lies within a static size.
bool provablyInRange(Value i, Value tensor, int64_t dim,
                     const KnownRanges &known) {
  auto shaped = cast<ShapedType>(tensor.getType());
  if (std::optional<int64_t> c = getConstantIntValue(i))
    return !shaped.isDynamicDim(dim) && *c >= 0 && *c < shaped.getDimSize(dim);
  if (!shaped.isDynamicDim(dim) && known.within(i, shaped.getDimSize(dim)))
    return true;
  auto arg = dyn_cast<BlockArgument>(i);
  if (!arg)
    return false;
  Value lower, upper;
  if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp())) {
    if (arg != loop.getInductionVar())
      return false;
    lower = loop.getLowerBound();
    upper = loop.getUpperBound();
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (!step || *step <= 0)
      return false;
  } else if (auto loop =
                 dyn_cast<scf::ParallelOp>(arg.getOwner()->getParentOp())) {
    unsigned n = arg.getArgNumber();
    lower = loop.getLowerBound()[n];
    upper = loop.getUpperBound()[n];
    std::optional<int64_t> step = getConstantIntValue(loop.getStep()[n]);
    if (!step || *step <= 0)
      return false;
  } else {
    return false;
  }
  std::optional<int64_t> low = getConstantIntValue(lower);
  if (!low || *low < 0)
    return false;
  if (std::optional<int64_t> high = getConstantIntValue(upper))
    return !shaped.isDynamicDim(dim) && *high <= shaped.getDimSize(dim);
  // The loop's bound is the tensor's own size (or that of the value it was
  // made from by inserts, or that a loop carries from it: inserts keep the
  // shape), or the size a new tensor was made with.
  Value source = shapeSource(tensor);
  while (auto carried = dyn_cast<BlockArgument>(source)) {
    auto loop = dyn_cast<scf::ForOp>(carried.getOwner()->getParentOp());
    if (!loop || carried == loop.getInductionVar() ||
        shapeSource(loop.getTiedLoopYieldedValue(carried)->get()) != carried)
      break;
    source = shapeSource(loop.getTiedLoopInit(carried)->get());
  }
  if (auto dimOp = upper.getDefiningOp<ShapedDimOpInterface>())
    if (getConstantIntValue(dimOp.getDimension()) == dim &&
        (dimOp.getShapedValue() == source || dimOp.getShapedValue() == tensor))
      return true;
  auto empty = source.getDefiningOp<tensor::EmptyOp>();
  return empty && empty.getType().isDynamicDim(dim) &&
         empty.getDynamicSize(dim) == upper;
}

/// The size of `tensor` in `dim`, as an index.
Value sizeOf(Guard &g, Value tensor, int64_t dim) {
  auto type = cast<ShapedType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return g.index(type.getDimSize(dim));
  if (isa<TensorType>(type))
    return g.b.create<tensor::DimOp>(g.loc, tensor, dim);
  return g.b.create<memref::DimOp>(g.loc, tensor, dim);
}

/// Guards an element access of `tensor` at `indices`; `standIn` builds the
/// value of a failed access.
template <typename StandIn>
void guardAccess(Operation *op, Value tensor, ValueRange indices,
                 const KnownRanges &known, StandIn standIn) {
  SmallVector<int64_t> unproven;
  for (auto [dim, i] : llvm::enumerate(indices))
    if (!provablyInRange(i, tensor, dim, known))
      unproven.push_back(dim);
  if (unproven.empty())
    return;
  Guard g(op);
  Value ok;
  SmallVector<std::pair<Value, SmallVector<Value>>> failures;
  for (int64_t dim : unproven) {
    Value i = indices[dim], size = sizeOf(g, tensor, dim);
    // (Unsigned: a negative index is as far out as can be.)
    Value in = g.cmp(arith::CmpIPredicate::ult, i, size);
    ok = ok ? g.both(ok, in) : in;
    failures.push_back({g.negate(in), {i, size, g.index(dim)}});
  }
  g.runIf(ok, failures, GNN_RT_INDEX_OUT_OF_RANGE, standIn);
}

/// A read (tensor.extract, memref.load) out of range gives 0 (elements
/// without a zero attribute are left unguarded).
void guardRead(Operation *op, Value shaped, ValueRange indices,
               const KnownRanges &known) {
  TypedAttr zero = dyn_cast_or_null<TypedAttr>(
      OpBuilder(op).getZeroAttr(op->getResult(0).getType()));
  if (!zero)
    return;
  guardAccess(op, shaped, indices, known, [&](OpBuilder &b) {
    return b.create<arith::ConstantOp>(op->getLoc(), zero).getResult();
  });
}

void guardStore(memref::StoreOp op, const KnownRanges &known) {
  guardAccess(op, op.getMemRef(), op.getIndices(), known,
              [](OpBuilder &) { return Value(); });
}

void guardInsert(tensor::InsertOp op, const KnownRanges &known) {
  Value dest = op.getDest();
  guardAccess(op, dest, op.getIndices(), known,
              [&](OpBuilder &) { return dest; });
}

void guardDim(tensor::DimOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getSource().getType());
  if (!type || getConstantIntValue(op.getIndex()))
    return; // constant indices: gnn-check-dim-indices
  Guard g(op);
  Value rank = g.index(type.getRank());
  Value ok = g.cmp(arith::CmpIPredicate::ult, op.getIndex(), rank);
  g.runIf(ok, {{g.negate(ok), {op.getIndex(), rank}}}, GNN_RT_DIM_OUT_OF_RANGE,
          [&](OpBuilder &b) {
            return b.create<arith::ConstantIndexOp>(op.getLoc(), 0).getResult();
          });
}

//===----------------------------------------------------------------------===//
// Slices
//===----------------------------------------------------------------------===//

/// Whether a slice of `size` from `offset` with `stride` fits in [0,
/// extent), all static.
bool fitsStatically(int64_t offset, int64_t size, int64_t stride,
                    int64_t extent) {
  if (offset < 0 || size < 0 || stride < 0)
    return false;
  if (size == 0)
    return offset <= extent;
  return offset < extent &&
         (stride == 0 || (size - 1) <= (extent - 1 - offset) / stride);
}

/// The checks of one dimension of a slice; null if it provably fits.
Value sliceFits(Guard &g, OpFoldResult offset, OpFoldResult size,
                OpFoldResult stride, Value tensor, int64_t dim) {
  auto type = cast<ShapedType>(tensor.getType());
  std::optional<int64_t> o = getConstantIntValue(offset),
                         s = getConstantIntValue(size),
                         t = getConstantIntValue(stride);
  if (o && s && t && !type.isDynamicDim(dim) &&
      fitsStatically(*o, *s, *t, type.getDimSize(dim)))
    return Value();
  auto value = [&](OpFoldResult r) {
    return getValueOrCreateConstantIndexOp(g.b, g.loc, r);
  };
  Value ov = value(offset), sv = value(size), tv = value(stride),
        n = sizeOf(g, tensor, dim);
  using P = arith::CmpIPredicate;
  Value zero = g.index(0), one = g.index(1);
  Value nonNegative =
      g.both(g.both(g.cmp(P::sge, ov, zero), g.cmp(P::sge, sv, zero)),
             g.cmp(P::sge, tv, zero));
  Value empty = g.both(g.cmp(P::eq, sv, zero), g.cmp(P::sle, ov, n));
  // The last element's offset, o + (s - 1) * t < n, without overflow:
  // s - 1 <= (n - 1 - o) / t (for t > 0; any s for t = 0).
  Value room = g.b.create<arith::SubIOp>(
      g.loc, g.b.create<arith::SubIOp>(g.loc, n, one), ov);
  Value steps = g.b.create<arith::SubIOp>(g.loc, sv, one);
  Value reach;
  if (t && *t == 1) {
    reach = g.cmp(P::sle, steps, room);
  } else {
    Value strideZero = g.cmp(P::eq, tv, zero);
    Value divisor = g.b.create<arith::SelectOp>(g.loc, strideZero, one, tv);
    Value most = g.b.create<arith::DivUIOp>(g.loc, room, divisor);
    reach = g.either(strideZero, g.cmp(P::sle, steps, most));
  }
  Value inside =
      g.both(g.both(g.cmp(P::slt, ov, n), g.cmp(P::sgt, sv, zero)), reach);
  return g.both(nonNegative, g.either(empty, inside));
}

/// The checks of a slice's dimensions (offsets, sizes and strides into
/// `tensor`) that do not provably fit.
struct SliceChecks {
  Value ok;
  SmallVector<std::pair<Value, SmallVector<Value>>> failures;
  SmallVector<int64_t> dims;
};

template <typename SliceOp>
SliceChecks checkSlice(Guard &g, SliceOp op, Value tensor,
                       const KnownRanges &known) {
  SliceChecks checks;
  SmallVector<OpFoldResult> offsets = op.getMixedOffsets(),
                            sizes = op.getMixedSizes(),
                            strides = op.getMixedStrides();
  auto value = [&](OpFoldResult r) {
    return getValueOrCreateConstantIndexOp(g.b, g.loc, r);
  };
  for (int64_t dim = 0, e = offsets.size(); dim < e; ++dim) {
    // All of a dimension from 0: the tensor's own size.
    auto whole = dyn_cast_if_present<Value>(sizes[dim]);
    auto dimOp = whole ? whole.getDefiningOp<tensor::DimOp>() : nullptr;
    if (dimOp && dimOp.getSource() == tensor &&
        getConstantIntValue(dimOp.getIndex()) == dim &&
        isConstantIntValue(offsets[dim], 0))
      continue;
    // One element at an index that is in range.
    auto at = dyn_cast_if_present<Value>(offsets[dim]);
    if (at && isConstantIntValue(sizes[dim], 1) &&
        provablyInRange(at, tensor, dim, known))
      continue;
    Value fits =
        sliceFits(g, offsets[dim], sizes[dim], strides[dim], tensor, dim);
    if (!fits)
      continue;
    checks.ok = checks.ok ? g.both(checks.ok, fits) : fits;
    checks.dims.push_back(dim);
    checks.failures.push_back(
        {g.negate(fits),
         {value(offsets[dim]), value(sizes[dim]), sizeOf(g, tensor, dim),
          g.index(dim), value(strides[dim])}});
  }
  return checks;
}

/// An extract_slice that does not fit reads nothing: its offsets become 0,
/// its dynamic sizes 0 and its strides 1 (no branch: a view in one branch
/// and a new tensor in the other would differ in layout once bufferized).
/// A static size that the source may lack is read from a new tensor of
/// that size instead of the source.
void guardExtractSlice(tensor::ExtractSliceOp op, const KnownRanges &known) {
  Guard g(op);
  Value source = op.getSource();
  SliceChecks checks = checkSlice(g, op, source, known);
  if (checks.failures.empty())
    return;
  g.reportIf(g.negate(checks.ok), GNN_RT_SLICE_OUT_OF_RANGE,
             g.firstOf(checks.failures));

  auto sourceType = cast<RankedTensorType>(source.getType());
  SmallVector<OpFoldResult> offsets = op.getMixedOffsets(),
                            sizes = op.getMixedSizes(),
                            strides = op.getMixedStrides();
  // Whether some checked dimension has a static size that the source may
  // not have: then every dimension reads from the stand-in tensor.
  bool standInSource = llvm::any_of(checks.dims, [&](int64_t dim) {
    std::optional<int64_t> size = getConstantIntValue(sizes[dim]);
    return size &&
           (sourceType.isDynamicDim(dim) || sourceType.getDimSize(dim) < *size);
  });
  SmallVector<int64_t> clamped =
      standInSource ? llvm::to_vector(llvm::seq<int64_t>(0, sizes.size()))
                    : checks.dims;
  for (int64_t dim : clamped) {
    offsets[dim] = g.choose(checks.ok, offsets[dim], 0);
    strides[dim] = g.choose(checks.ok, strides[dim], 1);
    if (!getConstantIntValue(sizes[dim]))
      sizes[dim] = g.choose(checks.ok, sizes[dim], 0);
  }
  if (standInSource) {
    SmallVector<Value> extents;
    for (int64_t dim = 0; dim < sourceType.getRank(); ++dim)
      if (sourceType.isDynamicDim(dim))
        extents.push_back(g.index(getConstantIntValue(sizes[dim]).value_or(0)));
    Value empty = g.b.create<tensor::EmptyOp>(g.loc, sourceType, extents);
    source = g.b.create<arith::SelectOp>(g.loc, checks.ok, source, empty);
  }
  auto guarded = g.b.create<tensor::ExtractSliceOp>(g.loc, op.getType(), source,
                                                    offsets, sizes, strides);
  op.replaceAllUsesWith(guarded.getResult());
  op.erase();
}

/// An insert_slice that does not fit, or whose source lacks the slice's
/// sizes, leaves its destination as it was.
void guardInsertSlice(tensor::InsertSliceOp op, const KnownRanges &known) {
  Guard g(op);
  Value dest = op.getDest(), source = op.getSource();
  SliceChecks checks = checkSlice(g, op, dest, known);
  SmallVector<OpFoldResult> sizes = op.getMixedSizes();
  SmallVector<std::pair<Value, SmallVector<Value>>> sourceFailures;
  Value ok = checks.ok;
  auto sourceType = cast<ShapedType>(source.getType());
  if (sourceType.getRank() == int64_t(sizes.size())) {
    for (int64_t dim = 0, e = sizes.size(); dim < e; ++dim) {
      std::optional<int64_t> s = getConstantIntValue(sizes[dim]);
      if (s && !sourceType.isDynamicDim(dim))
        continue; // the verifier compares static sizes
      Value have = sizeOf(g, source, dim),
            want = getValueOrCreateConstantIndexOp(g.b, g.loc, sizes[dim]);
      if (have == want)
        continue;
      Value same = g.cmp(arith::CmpIPredicate::eq, have, want);
      ok = ok ? g.both(ok, same) : same;
      sourceFailures.push_back({g.negate(same), {have, want, g.index(dim)}});
    }
  }
  auto keepDest = [&](OpBuilder &) { return dest; };
  if (checks.failures.empty() && sourceFailures.empty())
    return;
  // Only offsets or strides in question, with static sizes the destination
  // has: they are clamped as an extract_slice's are, so that an
  // extract_slice and an insert_slice of the same slice stay alike and
  // bufferize in place (a per-step cache).
  auto destType = cast<RankedTensorType>(dest.getType());
  bool clampable =
      sourceFailures.empty() && llvm::all_of(checks.dims, [&](int64_t dim) {
        std::optional<int64_t> size = getConstantIntValue(sizes[dim]);
        return size && !destType.isDynamicDim(dim) &&
               *size <= destType.getDimSize(dim);
      });
  if (clampable) {
    g.reportIf(g.negate(checks.ok), GNN_RT_SLICE_OUT_OF_RANGE,
               g.firstOf(checks.failures));
    SmallVector<OpFoldResult> offsets = op.getMixedOffsets(),
                              strides = op.getMixedStrides();
    for (int64_t dim : checks.dims) {
      offsets[dim] = g.choose(checks.ok, offsets[dim], 0);
      strides[dim] = g.choose(checks.ok, strides[dim], 1);
    }
    auto guarded = g.b.create<tensor::InsertSliceOp>(g.loc, source, dest,
                                                     offsets, sizes, strides);
    op.replaceAllUsesWith(guarded.getResult());
    op.erase();
    return;
  }
  if (checks.failures.empty()) {
    g.runIf(ok, sourceFailures, GNN_RT_SLICE_SOURCE_SIZE, keepDest);
    return;
  }
  if (!sourceFailures.empty()) {
    // Both kinds: a wrong source size is reported only with the slice in
    // range (a report names one kind).
    Value sourceBad;
    for (auto &f : sourceFailures)
      sourceBad = sourceBad ? g.either(sourceBad, f.first) : f.first;
    g.reportIf(g.both(sourceBad, checks.ok), GNN_RT_SLICE_SOURCE_SIZE,
               g.firstOf(sourceFailures));
  }
  g.runIf(ok, checks.failures, GNN_RT_SLICE_OUT_OF_RANGE, keepDest);
}

//===----------------------------------------------------------------------===//
// Reshapes
//===----------------------------------------------------------------------===//

/// An element count: the product of `sizes`, with a flag for a negative
/// size or a product of 2^63 or more.
struct Count {
  Value elements, overflows;
};

Count countOf(Guard &g, ArrayRef<Value> sizes) {
  using P = arith::CmpIPredicate;
  Value product = g.constant(1), bad;
  Value zero = g.constant(0), max = g.constant(INT64_MAX);
  for (Value size : sizes) {
    Value s = g.i64(size);
    Value negative = g.cmp(P::slt, s, zero);
    // product * s > INT64_MAX  <=>  product > INT64_MAX / s (s > 0).
    Value positive = g.cmp(P::sgt, s, zero);
    Value divisor =
        g.b.create<arith::SelectOp>(g.loc, positive, s, g.constant(1));
    Value most = g.b.create<arith::DivSIOp>(g.loc, max, divisor);
    Value overflows = g.both(positive, g.cmp(P::sgt, product, most));
    Value flag = g.either(negative, overflows);
    bad = bad ? g.either(bad, flag) : flag;
    product = g.b.create<arith::MulIOp>(g.loc, product, s);
  }
  if (!bad)
    bad = g.b.create<arith::ConstantIntOp>(g.loc, 0, 1);
  return {product, bad};
}

void guardReshape(tensor::ReshapeOp op) {
  auto shapeType = cast<RankedTensorType>(op.getShape().getType());
  auto sourceType = cast<RankedTensorType>(op.getSource().getType());
  auto resultType = dyn_cast<RankedTensorType>(op.getType());
  if (!resultType || !shapeType.hasStaticShape() ||
      (sourceType.hasStaticShape() && resultType.hasStaticShape()))
    return; // static: the verifier compares the counts
  Guard g(op);
  SmallVector<Value> sourceSizes, shapeSizes;
  for (int64_t dim = 0; dim < sourceType.getRank(); ++dim)
    sourceSizes.push_back(sizeOf(g, op.getSource(), dim));
  for (int64_t i = 0; i < shapeType.getDimSize(0); ++i)
    shapeSizes.push_back(g.b.create<tensor::ExtractOp>(g.loc, op.getShape(),
                                                       ValueRange{g.index(i)}));
  Count have = countOf(g, sourceSizes), want = countOf(g, shapeSizes);
  Value wantOrFlag = g.b.create<arith::SelectOp>(g.loc, want.overflows,
                                                 g.constant(-1), want.elements);
  Value ok =
      g.both(g.negate(want.overflows),
             g.cmp(arith::CmpIPredicate::eq, want.elements, have.elements));
  g.runIf(ok, {{g.negate(ok), {wantOrFlag, have.elements}}},
          GNN_RT_RESHAPE_COUNT,
          [&](OpBuilder &b) { return emptyOf(b, op.getLoc(), resultType); });
}

//===----------------------------------------------------------------------===//
// Allocations
//===----------------------------------------------------------------------===//

/// The runtime's allocation limit, asked once per function at its entry
/// (it does not change during a run) rather than at each allocation, which
/// may lie in a loop.
class AllocationLimits {
public:
  Value at(Operation *op) {
    auto fn = op->getParentOfType<FunctionOpInterface>();
    // Where an isolated region lies between, the entry's value is not
    // visible: ask at the allocation.
    if (!fn || fn.isExternal() ||
        op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>() != fn)
      return askAt(OpBuilder(op), op->getLoc());
    Value &limit = limits[fn];
    if (!limit)
      limit = askAt(OpBuilder::atBlockBegin(&fn.getFunctionBody().front()),
                    fn.getLoc());
    return limit;
  }

private:
  static Value askAt(OpBuilder b, Location loc) {
    return b
        .create<func::CallOp>(loc, abi::kAllocationLimit,
                              TypeRange{b.getI64Type()}, ValueRange{})
        .getResult(0);
  }
  DenseMap<Operation *, Value> limits;
};

/// Bounds the dynamic sizes of a new tensor or buffer: above the runtime's
/// limit, the sizes become 0 and the call fails.
void guardAllocation(Operation *op, MutableOperandRange sizes, ShapedType type,
                     AllocationLimits &limits) {
  if (sizes.empty())
    return;
  Guard g(op);
  SmallVector<Value> all;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (!type.isDynamicDim(dim))
      all.push_back(g.constant(type.getDimSize(dim)));
  for (OpOperand &size : sizes)
    all.push_back(size.get());
  Count count = countOf(g, all);
  int64_t elementBytes = std::max<int64_t>(1, bytesOf(type.getElementType()));
  Value limit = limits.at(op);
  Value most =
      g.b.create<arith::DivSIOp>(g.loc, limit, g.constant(elementBytes));
  Value tooLarge = g.either(
      count.overflows, g.cmp(arith::CmpIPredicate::sgt, count.elements, most));
  Value shown = g.b.create<arith::SelectOp>(g.loc, count.overflows,
                                            g.constant(-1), count.elements);
  g.reportIf(tooLarge, GNN_RT_ALLOCATION_TOO_LARGE,
             {shown, g.constant(elementBytes), limit});
  Value zero = g.index(0);
  for (OpOperand &size : sizes)
    size.set(g.b.create<arith::SelectOp>(g.loc, tooLarge, zero, size.get()));
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Whether `op` lies in a body that the lowering compiles on its own terms:
/// a gnn op's (its kernels check their own inputs) or, with `hostOnly`, a
/// loop that becomes a device kernel (which cannot call the runtime).
bool skipped(Operation *op, bool hostOnly) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (isa_and_nonnull<gnn::GNNDialect>(parent->getDialect()))
      return true;
    if (hostOnly && isa<linalg::LinalgOp, scf::ParallelOp, scf::ForallOp,
                        tensor::GenerateOp>(parent))
      return true;
  }
  return false;
}

void declare(ModuleOp module, StringRef name, FunctionType type) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto fn = b.create<func::FuncOp>(module.getLoc(), name, type);
  fn.setPrivate();
}

struct GuardRuntimeValuesPass
    : gnn::impl::GuardRuntimeValuesPassBase<GuardRuntimeValuesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
              arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(
              op)) {
        // Scalable vectors have no lane count to report from.
        auto vector = dyn_cast<VectorType>(op->getOperand(1).getType());
        if (vector && vector.isScalable())
          return;
      } else if (!isa<tensor::ExtractOp, tensor::InsertOp, tensor::DimOp,
                      memref::LoadOp, memref::StoreOp, tensor::ExtractSliceOp,
                      tensor::InsertSliceOp, tensor::ReshapeOp, tensor::EmptyOp,
                      tensor::SplatOp, tensor::GenerateOp,
                      bufferization::AllocTensorOp, memref::AllocOp,
                      memref::AllocaOp>(op)) {
        return;
      }
      if (!skipped(op, hostOnly))
        ops.push_back(op);
    });
    if (ops.empty())
      return;

    MLIRContext *ctx = module.getContext();
    Type i64 = IntegerType::get(ctx, 64);
    declare(module, abi::kBadValue,
            FunctionType::get(ctx, SmallVector<Type>(8, i64), {}));
    declare(module, abi::kAllocationLimit, FunctionType::get(ctx, {}, {i64}));

    // Ranges of the program as written, before any guard changes it.
    KnownRanges known(module);
    AllocationLimits limits;
    // (In program order: an allocation's guard replaces its sizes before
    // the accesses after it are judged, so that no access is proven by a
    // size that the guard may set to 0.)
    for (Operation *op : ops) {
      llvm::TypeSwitch<Operation *>(op)
          .Case([&](tensor::ExtractOp e) {
            guardRead(e, e.getTensor(), e.getIndices(), known);
          })
          .Case([&](tensor::InsertOp i) { guardInsert(i, known); })
          .Case([&](memref::LoadOp l) {
            guardRead(l, l.getMemRef(), l.getIndices(), known);
          })
          .Case([&](memref::StoreOp s) { guardStore(s, known); })
          .Case<tensor::DimOp>(guardDim)
          .Case([&](tensor::ExtractSliceOp e) { guardExtractSlice(e, known); })
          .Case([&](tensor::InsertSliceOp i) { guardInsertSlice(i, known); })
          .Case<tensor::ReshapeOp>(guardReshape)
          .Case<tensor::EmptyOp, tensor::SplatOp, bufferization::AllocTensorOp,
                memref::AllocOp, memref::AllocaOp>([&](auto a) {
            guardAllocation(a, a.getDynamicSizesMutable(), a.getType(), limits);
          })
          .Case([&](tensor::GenerateOp gen) {
            guardAllocation(gen, gen.getDynamicExtentsMutable(), gen.getType(),
                            limits);
          })
          .Default(
              [&](Operation *division) { guardDivision(division, known); });
    }
  }
};
} // namespace
