//===- DenseLayers.cpp - lower the dense node-wise layers -----------------===//
//
// Part of gnnc. gnn.linear becomes one call of the runtime's BLAS-backed
// dense layer over all rows; layer_norm and log_softmax become a parallel
// loop over rows with sequential reductions inside a row.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
/// The runtime's dense layers (runtime/include/gnnc/dense.h), called through
/// their C interface with memref descriptors.
constexpr llvm::StringLiteral kLinearFn = "gnn_rt_linear";
constexpr llvm::StringLiteral kLinearNoBiasFn = "gnn_rt_linear_nobias";
} // namespace

/// Declares runtime function `name` in `module` unless it is there.
static void declareRuntimeFunction(ModuleOp module, StringRef name,
                                   TypeRange inputs) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder b(module.getBodyRegion());
  auto fn = b.create<func::FuncOp>(module.getLoc(), name,
                                   b.getFunctionType(inputs, {}));
  fn.setPrivate();
  fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
}

LogicalResult mlir::gnn::loops::lowerLinear(LinearOp op) {
  Lowering l(op);
  Type f32 = l.b.getF32Type();
  auto matrix =
      MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, f32);
  auto vector = MemRefType::get({ShapedType::kDynamic}, f32);
  auto dynamic = [&](Value memref, MemRefType type) {
    return l.b.create<memref::CastOp>(l.loc, type, memref).getResult();
  };
  Value input = l.toMemref(op.getInput());
  Value weight = l.toMemref(op.getWeight());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Value out = l.alloc(type, l.dim(input, 0), {l.dim(weight, 0)});
  SmallVector<Value> args = {dynamic(input, matrix), dynamic(weight, matrix)};
  if (op.getBias())
    args.push_back(dynamic(l.toMemref(op.getBias()), vector));
  args.push_back(dynamic(out, matrix));
  StringRef callee = op.getBias() ? kLinearFn : kLinearNoBiasFn;
  declareRuntimeFunction(op->getParentOfType<ModuleOp>(), callee,
                         ValueRange(args).getTypes());
  l.b.create<func::CallOp>(l.loc, callee, TypeRange{}, args);
  return l.replaceWithBuffers(op, out);
}

/// A sequential sum of `term(j)` over j in [0, n).
static Value sumLoop(Lowering &l, Value n, Type type,
                     function_ref<Value(Value)> term) {
  auto loop = l.b.create<scf::ForOp>(
      l.loc, l.idx(0), n, l.idx(1), ValueRange{l.floatConst(type, 0.0)},
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
  l.guarded(ok, [&] {
    l.parallel(rows, [&](Value r) {
      auto x = [&](Value j) {
        return b.create<memref::LoadOp>(loc, input, ValueRange{r, j})
            .getResult();
      };
      Value mean = b.create<arith::DivFOp>(
          loc, sumLoop(l, width, f, [&](Value j) { return x(j); }), n);
      Value var = b.create<arith::DivFOp>(
          loc,
          sumLoop(l, width, f,
                  [&](Value j) {
                    Value c = b.create<arith::SubFOp>(loc, x(j), mean);
                    return b.create<arith::MulFOp>(loc, c, c).getResult();
                  }),
          n);
      Value inv =
          b.create<math::RsqrtOp>(loc, b.create<arith::AddFOp>(loc, var, eps));
      l.loopNest({width}, [&](ValueRange j) {
        Value c = b.create<arith::SubFOp>(loc, x(j[0]), mean);
        Value w = b.create<memref::LoadOp>(loc, weight, j[0]);
        Value s = b.create<arith::MulFOp>(
            loc, b.create<arith::MulFOp>(loc, c, inv), w);
        Value y = b.create<arith::AddFOp>(
            loc, s, b.create<memref::LoadOp>(loc, bias, j[0]));
        b.create<memref::StoreOp>(loc, y, out, ValueRange{r, j[0]});
      });
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
