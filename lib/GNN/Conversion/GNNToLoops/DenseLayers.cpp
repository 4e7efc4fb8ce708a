//===- DenseLayers.cpp - lower the dense node-wise layers -----------------===//
//
// Part of gnnc. gnn.linear becomes calls of the runtime's BLAS-backed dense
// layer: one over all rows, or (parallel-dense) one per thread over a block
// of rows; layer_norm and log_softmax become a parallel loop over rows with
// reductions inside a row (layer_norm's lane-wise in vectors where the width
// allows).
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
/// The runtime's dense layers (runtime/include/gnnc/dense.h), called through
/// their C interface with memref descriptors.
constexpr llvm::StringLiteral kLinearFn = "gnn_rt_linear";
constexpr llvm::StringLiteral kLinearNoBiasFn = "gnn_rt_linear_nobias";
/// Vector width of layer norms over rows of a static width (AVX2: 8 floats).
constexpr int64_t kNormLanes = 8;
/// The OpenMP runtime's thread count, for splitting dense layers.
constexpr llvm::StringLiteral kMaxThreadsFn = "omp_get_max_threads";
} // namespace

void loops::declareFunction(ModuleOp module, StringRef name, TypeRange inputs,
                            TypeRange results, bool cInterface) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder b(module.getBodyRegion());
  auto fn = b.create<func::FuncOp>(module.getLoc(), name,
                                   b.getFunctionType(inputs, results));
  fn.setPrivate();
  if (cInterface)
    fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
}

/// Rows per runtime call below which splitting a layer does not pay.
constexpr int64_t kMinRowsPerCall = 16;

LogicalResult mlir::gnn::loops::lowerLinear(LinearOp op, bool parallelDense) {
  Lowering l(op);
  Type f32 = l.b.getF32Type();
  MLIRContext *ctx = l.b.getContext();
  // Row-major with any row stride and offset: a block of rows of a matrix
  // passes as a view, with the same descriptor as a whole matrix.
  auto matrix =
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, f32,
                      StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                                             {ShapedType::kDynamic, 1}));
  auto vector = MemRefType::get({ShapedType::kDynamic}, f32);
  auto castTo = [&](Value memref, MemRefType type) {
    return l.b.create<memref::CastOp>(l.loc, type, memref).getResult();
  };
  Value input = l.toMemref(op.getInput());
  Value weight = l.toMemref(op.getWeight());
  Value weightMatrix = castTo(weight, matrix);
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Value rows = l.dim(input, 0), cols = l.dim(input, 1);
  Value outCols = l.dim(weight, 0);
  Value out = l.alloc(type, rows, {outCols});
  Value bias =
      op.getBias() ? castTo(l.toMemref(op.getBias()), vector) : Value();
  StringRef callee = op.getBias() ? kLinearFn : kLinearNoBiasFn;
  auto module = op->getParentOfType<ModuleOp>();
  auto call = [&](Value x, Value y) {
    SmallVector<Value> args = {x, weightMatrix};
    if (bias)
      args.push_back(bias);
    args.push_back(y);
    declareFunction(module, callee, ValueRange(args).getTypes(), {},
                    /*cInterface=*/true);
    l.b.create<func::CallOp>(l.loc, callee, TypeRange{}, args);
  };
  if (!parallelDense) {
    call(castTo(input, matrix), castTo(out, matrix));
    return l.replaceWithBuffers(op, out);
  }
  // One call per thread (at least one call: it also checks the sizes).
  Type i32 = l.b.getI32Type();
  declareFunction(module, kMaxThreadsFn, {}, {i32}, /*cInterface=*/false);
  Value threads = l.b.create<arith::IndexCastOp>(
      l.loc, l.b.getIndexType(),
      l.b.create<func::CallOp>(l.loc, kMaxThreadsFn, TypeRange{i32})
          .getResult(0));
  Value perCall = l.b.create<arith::MaxUIOp>(
      l.loc,
      l.b.create<arith::CeilDivUIOp>(
          l.loc, rows, l.b.create<arith::MaxUIOp>(l.loc, threads, l.idx(1))),
      l.idx(kMinRowsPerCall));
  Value calls = l.b.create<arith::MaxUIOp>(
      l.loc, l.b.create<arith::CeilDivUIOp>(l.loc, rows, perCall), l.idx(1));
  l.parallel(calls, [&](Value i) {
    Value lo = l.b.create<arith::MulIOp>(l.loc, i, perCall);
    Value n = l.b.create<arith::MinUIOp>(
        l.loc, perCall, l.b.create<arith::SubIOp>(l.loc, rows, lo));
    auto rowsOf = [&](Value m, Value width) {
      SmallVector<OpFoldResult> offsets = {lo, l.b.getIndexAttr(0)},
                                sizes = {n, width},
                                strides = {l.b.getIndexAttr(1),
                                           l.b.getIndexAttr(1)};
      auto viewType = cast<MemRefType>(memref::SubViewOp::inferResultType(
          cast<MemRefType>(m.getType()), offsets, sizes, strides));
      return castTo(l.b.create<memref::SubViewOp>(l.loc, viewType, m, offsets,
                                                  sizes, strides),
                    matrix);
    };
    call(rowsOf(input, cols), rowsOf(out, outCols));
  });
  return l.replaceWithBuffers(op, out);
}

/// A sequential sum of `term(j)` over j in [0, n) by `step` (scalars, or
/// vectors summed lane-wise).
static Value sumLoop(Lowering &l, Value n, Type type,
                     function_ref<Value(Value)> term, int64_t step = 1) {
  auto loop = l.b.create<scf::ForOp>(
      l.loc, l.idx(0), n, l.idx(step), ValueRange{l.floatConst(type, 0.0)},
      [&](OpBuilder &nested, Location, Value j, ValueRange acc) {
        OpBuilder::InsertionGuard guard(l.b);
        l.b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
        l.b.create<scf::YieldOp>(
            l.loc,
            l.b.create<arith::AddFOp>(l.loc, acc[0], term(j)).getResult());
      });
  return loop.getResult(0);
}

/// A sequential maximum of row `r` of `memref` over [0, n); -inf if n = 0.
static Value maxLoop(Lowering &l, Value memref, Value r, Value n, Type type) {
  Value init = l.floatConst(type, -std::numeric_limits<double>::infinity());
  auto loop = l.b.create<scf::ForOp>(
      l.loc, l.idx(0), n, l.idx(1), ValueRange{init},
      [&](OpBuilder &nested, Location, Value j, ValueRange acc) {
        OpBuilder::InsertionGuard guard(l.b);
        l.b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
        Value x = l.b.create<memref::LoadOp>(l.loc, memref, ValueRange{r, j});
        l.b.create<scf::YieldOp>(
            l.loc, l.b.create<arith::MaximumFOp>(l.loc, acc[0], x).getResult());
      });
  return loop.getResult(0);
}

LogicalResult mlir::gnn::loops::lowerLayerNorm(LayerNormOp op) {
  Lowering l(op);
  OpBuilder &b = l.b;
  Location loc = l.loc;
  Value input = l.toMemref(op.getInput());
  Value weight = l.toMemref(op.getWeight()), bias = l.toMemref(op.getBias());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Type f = type.getElementType();
  Value rows = l.dim(input, 0), width = l.dim(input, 1);
  Value out = l.alloc(type, rows, {width});
  // Weight and bias are indexed up to the input's width.
  Value ok = l.sizesMatch(
      {{weight, 0, width, kItemSizeCode}, {bias, 0, width, kItemSizeCode}});
  Value n = b.create<arith::UIToFPOp>(
      loc, f, b.create<arith::IndexCastOp>(loc, b.getI64Type(), width));
  Value eps = l.floatConst(f, op.getEps().convertToDouble());
  // Rows of a static width that is a multiple of kNormLanes go kNormLanes
  // elements at a time: the sums accumulate lane-wise (no chain of scalar
  // adds) with one horizontal add per sum.
  int64_t staticWidth = type.getDimSize(1);
  int64_t lanes =
      !ShapedType::isDynamic(staticWidth) && staticWidth % kNormLanes == 0
          ? kNormLanes
          : 1;
  Type piece = lanes == 1 ? f : VectorType::get({lanes}, f);
  auto load = [&](Value memref, ValueRange index) -> Value {
    if (lanes == 1)
      return b.create<memref::LoadOp>(loc, memref, index);
    return b.create<vector::LoadOp>(loc, piece, memref, index);
  };
  auto splat = [&](Value scalar) -> Value {
    if (lanes == 1)
      return scalar;
    return b.create<vector::BroadcastOp>(loc, piece, scalar);
  };
  auto total = [&](Value sum) -> Value {
    if (lanes == 1)
      return sum;
    return b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD, sum);
  };
  l.guarded(ok, [&] {
    l.parallel(rows, [&](Value r) {
      auto x = [&](Value j) { return load(input, ValueRange{r, j}); };
      Value mean = b.create<arith::DivFOp>(
          loc,
          total(sumLoop(
              l, width, piece, [&](Value j) { return x(j); }, lanes)),
          n);
      Value meanPiece = splat(mean);
      Value var = b.create<arith::DivFOp>(
          loc,
          total(sumLoop(
              l, width, piece,
              [&](Value j) {
                Value c = b.create<arith::SubFOp>(loc, x(j), meanPiece);
                return b.create<arith::MulFOp>(loc, c, c).getResult();
              },
              lanes)),
          n);
      Value inv = splat(
          b.create<math::RsqrtOp>(loc, b.create<arith::AddFOp>(loc, var, eps)));
      l.serial(
          l.idx(0), width,
          [&](Value j) {
            Value c = b.create<arith::SubFOp>(loc, x(j), meanPiece);
            Value s = b.create<arith::MulFOp>(
                loc, b.create<arith::MulFOp>(loc, c, inv), load(weight, j));
            Value y = b.create<arith::AddFOp>(loc, s, load(bias, j));
            if (lanes == 1)
              b.create<memref::StoreOp>(loc, y, out, ValueRange{r, j});
            else
              b.create<vector::StoreOp>(loc, y, out, ValueRange{r, j});
          },
          lanes);
    });
  });
  return l.replaceWithBuffers(op, out);
}

LogicalResult mlir::gnn::loops::lowerLogSoftmax(LogSoftmaxOp op) {
  Lowering l(op);
  OpBuilder &b = l.b;
  Location loc = l.loc;
  Value input = l.toMemref(op.getInput());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Type f = type.getElementType();
  Value rows = l.dim(input, 0), width = l.dim(input, 1);
  Value out = l.alloc(type, rows, {width});
  l.parallel(rows, [&](Value r) {
    auto x = [&](Value j) {
      return b.create<memref::LoadOp>(loc, input, ValueRange{r, j}).getResult();
    };
    Value max = maxLoop(l, input, r, width, f);
    Value sum = sumLoop(l, width, f, [&](Value j) {
      return b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, x(j), max))
          .getResult();
    });
    Value shift =
        b.create<arith::AddFOp>(loc, max, b.create<math::LogOp>(loc, sum));
    l.loopNest({width}, [&](ValueRange j) {
      b.create<memref::StoreOp>(loc,
                                b.create<arith::SubFOp>(loc, x(j[0]), shift),
                                out, ValueRange{r, j[0]});
    });
  });
  return l.replaceWithBuffers(op, out);
}
