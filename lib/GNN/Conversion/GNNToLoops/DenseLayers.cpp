//===- DenseLayers.cpp - lower the dense node-wise layers -----------------===//
//
// Part of gnnc. gnn.linear becomes calls of the runtime's BLAS-backed dense
// layer: one over all rows, or (parallel-dense) one per thread over a block
// of rows; layer_norm and log_softmax become a parallel loop over rows with
// reductions inside a row, in vector pieces where the width is static.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
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

/// Runs `body(lo, n)` in parallel for blocks [lo, lo + n) of [0, rows): one
/// per OpenMP thread, of at least kMinRowsPerCall rows, at least one block
/// (so that the runtime call inside also checks the sizes of empty inputs).
static void forEachThreadBlock(Lowering &l, ModuleOp module, Value rows,
                               function_ref<void(Value lo, Value n)> body) {
  Type i32 = l.b.getI32Type();
  declareFunction(module, kMaxThreadsFn, {}, {i32}, /*cInterface=*/false);
  Value threads = l.b.create<arith::IndexCastOp>(
      l.b.getIndexType(),
      l.b.create<func::CallOp>(kMaxThreadsFn, TypeRange{i32}).getResult(0));
  Value perCall = l.b.create<arith::MaxUIOp>(
      l.b.create<arith::CeilDivUIOp>(
          rows, l.b.create<arith::MaxUIOp>(threads, l.idx(1))),
      l.idx(kMinRowsPerCall));
  Value calls = l.b.create<arith::MaxUIOp>(
      l.b.create<arith::CeilDivUIOp>(rows, perCall), l.idx(1));
  l.parallel(calls, [&](Value i) {
    Value lo = l.b.create<arith::MulIOp>(i, perCall);
    Value n = l.b.create<arith::MinUIOp>(perCall,
                                         l.b.create<arith::SubIOp>(rows, lo));
    body(lo, n);
  });
}

/// The block [row, row + rows) x [col, col + cols) of a matrix, as a
/// strided matrix of type `matrix`.
static Value matrixBlock(Lowering &l, Value m, Value row, Value rows, Value col,
                         Value cols, MemRefType matrix) {
  // Constant offsets and sizes as attributes: a static layout where known.
  SmallVector<OpFoldResult> offsets = getAsOpFoldResult(ValueRange{row, col}),
                            sizes = getAsOpFoldResult(ValueRange{rows, cols}),
                            strides = {l.b.getIndexAttr(1),
                                       l.b.getIndexAttr(1)};
  auto viewType = cast<MemRefType>(memref::SubViewOp::inferResultType(
      cast<MemRefType>(m.getType()), offsets, sizes, strides));
  return l.b.create<memref::CastOp>(
      matrix,
      l.b.create<memref::SubViewOp>(viewType, m, offsets, sizes, strides));
}

namespace {
/// A row of `width` elements taken in pieces: with a static width,
/// kVectorLanes-wide vectors up to the last whole one, then single elements;
/// with a dynamic width, single elements. Reductions accumulate lane-wise
/// (no chain of scalar adds) with one horizontal reduction per row.
class RowPieces {
public:
  RowPieces(Lowering &l, Type elem, int64_t staticWidth, Value width)
      : l(l), elem(elem), width(width),
        vector(VectorType::get({kVectorLanes}, elem)),
        whole(ShapedType::isDynamic(staticWidth)
                  ? 0
                  : staticWidth - staticWidth % kVectorLanes) {}

  /// The piece of type `piece` (elem or the vector) at `index`.
  Value load(Type piece, Value memref, ValueRange index) {
    if (piece == elem)
      return l.b.create<memref::LoadOp>(memref, index);
    return l.b.create<vector::LoadOp>(piece, memref, index);
  }

  void store(Value value, Value memref, ValueRange index) {
    if (value.getType() == elem)
      l.b.create<memref::StoreOp>(value, memref, index);
    else
      l.b.create<vector::StoreOp>(value, memref, index);
  }

  Value splat(Type piece, Value scalar) {
    if (piece == elem)
      return scalar;
    return l.b.create<vector::BroadcastOp>(piece, scalar);
  }

  /// `term(j, piece)` over the row combined by `kind` (ADD or MAXIMUMF),
  /// starting from `init`.
  Value reduce(vector::CombiningKind kind, double init,
               function_ref<Value(Value, Type)> term) {
    auto combine = [&](Value a, Value b) -> Value {
      if (kind == vector::CombiningKind::ADD)
        return l.b.create<arith::AddFOp>(a, b);
      return l.b.create<arith::MaximumFOp>(a, b);
    };
    Value acc = l.floatConst(elem, init);
    if (whole > 0) {
      Value lanes = l.forLoop(
          l.idx(0), l.idx(whole), ValueRange{l.floatConst(vector, init)},
          [&](Value j, ValueRange state) {
            return SmallVector<Value>{combine(state[0], term(j, vector))};
          },
          l.idx(kVectorLanes))[0];
      acc = l.b.create<vector::ReductionOp>(kind, lanes);
    }
    return l.forLoop(
        l.idx(whole), width, ValueRange{acc}, [&](Value j, ValueRange state) {
          return SmallVector<Value>{combine(state[0], term(j, elem))};
        })[0];
  }

  /// `body(j, piece)` for every piece of the row.
  void forEach(function_ref<void(Value, Type)> body) {
    if (whole > 0)
      l.serial(
          l.idx(0), l.idx(whole), [&](Value j) { body(j, vector); },
          kVectorLanes);
    l.serial(l.idx(whole), width, [&](Value j) { body(j, elem); });
  }

private:
  Lowering &l;
  Type elem;
  Value width;
  VectorType vector;
  int64_t whole;
};
} // namespace

LogicalResult mlir::gnn::loops::lowerLinear(LinearOp op,
                                            const LoopTarget &target,
                                            RewriterBase &rewriter) {
  Lowering l(op, rewriter);
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
    return l.b.create<memref::CastOp>(type, memref).getResult();
  };
  Value input = l.toMemref(op.getInput());
  Value weight = l.toMemref(op.getWeight());
  Value weightMatrix = castTo(weight, matrix);
  auto type = cast<RankedTensorType>(op.getResult().getType());
  bool transposed = op.getTransposeWeight();
  Value rows = l.dim(input, 0), cols = l.dim(input, 1);
  Value outCols = l.dim(weight, transposed ? 1 : 0);
  Value out = l.alloc(type, rows, {outCols});
  Value bias =
      op.getBias() ? castTo(l.toMemref(op.getBias()), vector) : Value();
  Value addend = op.getAddend() ? l.toMemref(op.getAddend()) : Value();
  RowPieces row(l, f32, type.getDimSize(1), outCols);
  // With an addend, each thread's block of rows starts as addend (+ bias)
  // and the product adds into it while the block is in cache: one pass over
  // the rows instead of a product that writes them and a kernel that reads
  // them again.
  bool parallelDense = target.parallelDense;
  bool accumulate = addend && parallelDense;
  StringRef callee = transposed || accumulate ? abi::kGemm
                     : bias                   ? abi::kLinear
                                              : abi::kLinearNoBias;
  auto module = op->getParentOfType<ModuleOp>();
  auto call = [&](Value x, Value y) {
    SmallVector<Value> args = {x, weightMatrix};
    if (bias && callee == abi::kLinear)
      args.push_back(bias);
    args.push_back(y);
    if (callee == abi::kGemm) {
      // y = x @ weight, or x @ transpose(weight) for a layer's product.
      int32_t flags = abi::kGemmLayer | (transposed ? 0 : abi::kGemmTransposeB);
      llvm::append_range(args,
                         ValueRange{l.b.create<arith::ConstantIntOp>(flags, 32),
                                    l.floatConst(f32, 1.0),
                                    l.floatConst(f32, accumulate ? 1.0 : 0.0)});
    }
    declareFunction(module, callee, ValueRange(args).getTypes(), {},
                    /*cInterface=*/true);
    l.b.create<func::CallOp>(callee, TypeRange{}, args);
  };
  // Row r of out becomes addend + out where the product is already there,
  // else addend (+ bias), which the product then adds into.
  auto addRow = [&](Value r, bool withProduct) {
    row.forEach([&](Value j, Type t) {
      Value sum = row.load(t, addend, {r, j});
      if (withProduct)
        sum = l.b.create<arith::AddFOp>(sum, row.load(t, out, {r, j}));
      else if (bias)
        sum = l.b.create<arith::AddFOp>(sum, row.load(t, bias, j));
      row.store(sum, out, {r, j});
    });
  };
  // The addend has the result's rows and width.
  Value ok = addend ? l.sizesMatch({{addend, 0, rows, kInputRowsCode},
                                    {addend, 1, outCols, kItemSizeCode}})
                    : Value();
  if (!parallelDense) {
    call(castTo(input, matrix), castTo(out, matrix));
    if (addend && target.elementPerThread()) {
      // On GPU threads an element per iteration: a row per thread (a vector
      // loop over its columns) left most of the GPU idle, each warp's
      // loads 32 rows apart (the 6-layer model's residuals: 60 a step).
      l.guarded(ok, [&] {
        l.parallelItems(rows, {outCols}, [&](Value r, ValueRange j) {
          SmallVector<Value> at = {r, j[0]};
          // (One op per statement: the IR's order must not depend on the
          // compiler's order of evaluating arguments.)
          Value product = l.b.create<memref::LoadOp>(out, at);
          Value residual = l.b.create<memref::LoadOp>(addend, at);
          Value sum = l.b.create<arith::AddFOp>(residual, product);
          l.b.create<memref::StoreOp>(sum, out, at);
        });
      });
    } else if (addend) {
      l.guarded(ok, [&] {
        l.parallel(rows, [&](Value r) { addRow(r, /*withProduct=*/true); });
      });
    }
    return l.replaceWithBuffers(op, out);
  }
  // One call per thread, over a block of rows.
  auto blocks = [&] {
    forEachThreadBlock(l, module, rows, [&](Value lo, Value n) {
      if (accumulate)
        l.serial(lo, l.b.create<arith::AddIOp>(lo, n),
                 [&](Value r) { addRow(r, /*withProduct=*/false); });
      // In this order on every compiler (argument order is unspecified).
      Value outRows = matrixBlock(l, out, lo, n, l.idx(0), outCols, matrix);
      Value inRows = matrixBlock(l, input, lo, n, l.idx(0), cols, matrix);
      call(inRows, outRows);
    });
  };
  if (addend)
    l.guarded(ok, blocks);
  else
    blocks();
  return l.replaceWithBuffers(op, out);
}

LogicalResult mlir::gnn::loops::lowerOuterSum(OuterSumOp op, bool parallelDense,
                                              RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  Type f32 = l.b.getF32Type();
  auto matrix = MemRefType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic}, f32,
      StridedLayoutAttr::get(l.b.getContext(), ShapedType::kDynamic,
                             {ShapedType::kDynamic, 1}));
  auto asMatrix = [&](Value m) -> Value {
    return l.b.create<memref::CastOp>(matrix, m);
  };
  Value lhs = l.toMemref(op.getLhs()), rhs = l.toMemref(op.getRhs());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Value outRows = l.dim(lhs, 1), outCols = l.dim(rhs, 1);
  Value out = l.alloc(type, outRows, {outCols});
  auto call = [&](Value lhsCols, Value outBlock) {
    SmallVector<Value> args = {lhsCols, asMatrix(rhs), outBlock,
                               l.floatConst(f32, 1.0), l.floatConst(f32, 0.0)};
    declareFunction(op->getParentOfType<ModuleOp>(), abi::kGemmAt,
                    ValueRange(args).getTypes(), {}, /*cInterface=*/true);
    l.b.create<func::CallOp>(abi::kGemmAt, TypeRange{}, args);
  };
  if (!parallelDense) {
    call(asMatrix(lhs), asMatrix(out));
    return l.replaceWithBuffers(op, out);
  }
  // Row i of the result takes column i of lhs: one call per thread, over a
  // block of the result's rows (no sum crosses blocks).
  forEachThreadBlock(
      l, op->getParentOfType<ModuleOp>(), outRows, [&](Value lo, Value n) {
        Value outBlock = matrixBlock(l, out, lo, n, l.idx(0), outCols, matrix);
        Value lhsCols =
            matrixBlock(l, lhs, l.idx(0), l.dim(lhs, 0), lo, n, matrix);
        call(lhsCols, outBlock);
      });
  return l.replaceWithBuffers(op, out);
}

/// The mean of row r of `input` and 1 / sqrt(var + eps), with the biased
/// variance over its `n` elements.
static std::pair<Value, Value> rowMoments(Lowering &l, RowPieces &row,
                                          Value input, Value r, Value n,
                                          Value eps) {
  ImplicitLocOpBuilder &b = l.b;
  auto x = [&](Value j, Type t) { return row.load(t, input, {r, j}); };
  Value mean = b.create<arith::DivFOp>(
      row.reduce(vector::CombiningKind::ADD, 0.0, x), n);
  Value var = b.create<arith::DivFOp>(
      row.reduce(vector::CombiningKind::ADD, 0.0,
                 [&](Value j, Type t) {
                   Value c =
                       b.create<arith::SubFOp>(x(j, t), row.splat(t, mean));
                   return b.create<arith::MulFOp>(c, c).getResult();
                 }),
      n);
  Value inv = b.create<math::RsqrtOp>(b.create<arith::AddFOp>(var, eps));
  return {mean, inv};
}

/// The width of `input`'s rows as a float of type `f`.
static Value widthOf(Lowering &l, Type f, Value width) {
  return l.b.create<arith::UIToFPOp>(
      f, l.b.create<arith::IndexCastOp>(l.b.getI64Type(), width));
}

LayerNormBuffers mlir::gnn::loops::prepareLayerNorm(Lowering &l,
                                                    LayerNormOp op) {
  LayerNormBuffers p;
  p.input = l.toMemref(op.getInput());
  p.weight = l.toMemref(op.getWeight());
  p.bias = l.toMemref(op.getBias());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Type f = type.getElementType();
  p.rows = l.dim(p.input, 0);
  p.width = l.dim(p.input, 1);
  p.out = l.alloc(type, p.rows, {p.width});
  // Weight and bias are indexed up to the input's width.
  p.ok = l.sizesMatch({{p.weight, 0, p.width, kItemSizeCode},
                       {p.bias, 0, p.width, kItemSizeCode}});
  p.n = widthOf(l, f, p.width);
  p.eps = l.floatConst(f, op.getEps().convertToDouble());
  return p;
}

LayerNormGradBuffers
mlir::gnn::loops::prepareLayerNormGrad(Lowering &l, LayerNormGradOp op) {
  LayerNormGradBuffers p;
  p.input = l.toMemref(op.getInput());
  p.grad = l.toMemref(op.getGrad());
  p.weight = l.toMemref(op.getWeight());
  if (op.getAddend())
    p.addend = l.toMemref(op.getAddend());
  auto type = cast<RankedTensorType>(op.getInputGrad().getType());
  Type f = type.getElementType();
  p.rows = l.dim(p.input, 0);
  p.width = l.dim(p.input, 1);
  p.dx = l.alloc(type, p.rows, {p.width});
  p.dxh = l.alloc(type, p.rows, {p.width});
  // The weight is indexed up to the input's width, the gradients' rows
  // with the input's.
  SmallVector<SizeCheck> checks = {{p.weight, 0, p.width, kItemSizeCode},
                                   {p.grad, 0, p.rows, kInputRowsCode},
                                   {p.grad, 1, p.width, kItemSizeCode}};
  if (p.addend)
    llvm::append_range(
        checks, ArrayRef<SizeCheck>{{p.addend, 0, p.rows, kInputRowsCode},
                                    {p.addend, 1, p.width, kItemSizeCode}});
  p.ok = l.sizesMatch(checks);
  p.n = widthOf(l, f, p.width);
  p.eps = l.floatConst(f, op.getEps().convertToDouble());
  return p;
}

LogicalResult mlir::gnn::loops::lowerLayerNorm(LayerNormOp op,
                                               RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  ImplicitLocOpBuilder &b = l.b;
  LayerNormBuffers p = prepareLayerNorm(l, op);
  auto type = cast<RankedTensorType>(op.getResult().getType());
  RowPieces row(l, type.getElementType(), type.getDimSize(1), p.width);
  l.guarded(p.ok, [&] {
    l.parallel(p.rows, [&](Value r) {
      auto x = [&](Value j, Type t) { return row.load(t, p.input, {r, j}); };
      auto [mean, inv] = rowMoments(l, row, p.input, r, p.n, p.eps);
      row.forEach([&](Value j, Type t) {
        Value c = b.create<arith::SubFOp>(x(j, t), row.splat(t, mean));
        Value s = b.create<arith::MulFOp>(
            b.create<arith::MulFOp>(c, row.splat(t, inv)),
            row.load(t, p.weight, j));
        row.store(b.create<arith::AddFOp>(s, row.load(t, p.bias, j)), p.out,
                  {r, j});
      });
    });
  });
  return l.replaceWithBuffers(op, p.out);
}

LogicalResult mlir::gnn::loops::lowerLayerNormGrad(LayerNormGradOp op,
                                                   RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  ImplicitLocOpBuilder &b = l.b;
  LayerNormGradBuffers p = prepareLayerNormGrad(l, op);
  auto type = cast<RankedTensorType>(op.getInputGrad().getType());
  RowPieces row(l, type.getElementType(), type.getDimSize(1), p.width);
  l.guarded(p.ok, [&] {
    l.parallel(p.rows, [&](Value r) {
      auto x = [&](Value j, Type t) { return row.load(t, p.input, {r, j}); };
      auto dy = [&](Value j, Type t) { return row.load(t, p.grad, {r, j}); };
      auto [mean, inv] = rowMoments(l, row, p.input, r, p.n, p.eps);
      auto normalized = [&](Value j, Type t) -> Value {
        Value c = b.create<arith::SubFOp>(x(j, t), row.splat(t, mean));
        return b.create<arith::MulFOp>(c, row.splat(t, inv));
      };
      auto g = [&](Value j, Type t) -> Value {
        return b.create<arith::MulFOp>(dy(j, t), row.load(t, p.weight, j));
      };
      Value meanG = b.create<arith::DivFOp>(
          row.reduce(vector::CombiningKind::ADD, 0.0, g), p.n);
      Value meanGX = b.create<arith::DivFOp>(
          row.reduce(vector::CombiningKind::ADD, 0.0,
                     [&](Value j, Type t) {
                       return b.create<arith::MulFOp>(g(j, t), normalized(j, t))
                           .getResult();
                     }),
          p.n);
      row.forEach([&](Value j, Type t) {
        Value xh = normalized(j, t);
        Value d = b.create<arith::SubFOp>(
            b.create<arith::SubFOp>(g(j, t), row.splat(t, meanG)),
            b.create<arith::MulFOp>(xh, row.splat(t, meanGX)));
        Value scaled = b.create<arith::MulFOp>(row.splat(t, inv), d);
        if (p.addend)
          scaled =
              b.create<arith::AddFOp>(scaled, row.load(t, p.addend, {r, j}));
        row.store(scaled, p.dx, {r, j});
        row.store(b.create<arith::MulFOp>(dy(j, t), xh), p.dxh, {r, j});
      });
    });
  });
  return l.replaceWithBuffers(op, {p.dx, p.dxh});
}

LogicalResult mlir::gnn::loops::lowerLogSoftmax(LogSoftmaxOp op,
                                                RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  ImplicitLocOpBuilder &b = l.b;
  Location loc = l.loc;
  Value input = l.toMemref(op.getInput());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Type f = type.getElementType();
  Value rows = l.dim(input, 0), width = l.dim(input, 1);
  Value out = l.alloc(type, rows, {width});
  RowPieces row(l, f, type.getDimSize(1), width);
  l.parallel(rows, [&](Value r) {
    auto x = [&](Value j, Type t) { return row.load(t, input, {r, j}); };
    Value max = row.reduce(vector::CombiningKind::MAXIMUMF,
                           -std::numeric_limits<double>::infinity(), x);
    Value sum =
        row.reduce(vector::CombiningKind::ADD, 0.0, [&](Value j, Type t) {
          return b
              .create<math::ExpOp>(
                  loc, b.create<arith::SubFOp>(x(j, t), row.splat(t, max)))
              .getResult();
        });
    Value shift = b.create<arith::AddFOp>(max, b.create<math::LogOp>(sum));
    row.forEach([&](Value j, Type t) {
      row.store(b.create<arith::SubFOp>(x(j, t), row.splat(t, shift)), out,
                {r, j});
    });
  });
  return l.replaceWithBuffers(op, out);
}
