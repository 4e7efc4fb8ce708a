//===- RowKernels.cpp - a warp per row for the ops that reduce rows ------===//
//
// Part of gnnc. Layer norm, its gradient and log-softmax reduce along each
// row before they write it; a sum within rows (gnn.sum_to of the last dim:
// a log-softmax's gradient) is nothing but that reduction. As loops on GPU
// threads a row is one thread that walks its elements alone, and neighbouring
// threads read addresses a row apart. Here a warp takes a row: lane j takes
// elements j, j + 32, ... (one coalesced load per step of the warp), keeps its
// partial sum, and five butterfly shuffles give every lane the row's total; the
// warp then writes the row with the same stride. A block holds four warps, four
// rows.
//
// Every lane of a warp shares its row, so a warp past the last row skips
// the body as a whole and the shuffles always see 32 active lanes.
//
// A sum of a whole column into one element (a loss summed over its tokens)
// is the same reduction turned on its side: one warp walks the column, lane
// j its elements j, j + 32, ... As loops it would be one iteration, which
// the host runs (scf.parallel folds a loop of one iteration into its
// parent), waiting for the kernels before it and reading their pages.
//
//===----------------------------------------------------------------------===//

#include "RowKernels.h"
#include "Warp.h"

#include <limits>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
constexpr int64_t kWarpsPerBlock = 4;

/// One warp's row: lane `lane` of the row at indices `lead` (all but the
/// last), whose `width` elements it visits with a stride of a warp.
struct WarpRow {
  Lowering &l;
  SmallVector<Value> lead;
  Value lane, width;

  /// The sum (or maximum) over the row of `term(j)`, in every lane.
  Value reduce(bool max, function_ref<Value(Value)> term) {
    Type f32 = l.b.getF32Type();
    Value init =
        l.floatConst(f32, max ? -std::numeric_limits<double>::infinity() : 0.0);
    auto combine = [&](Value a, Value b) -> Value {
      if (max)
        return l.b.create<arith::MaximumFOp>(a, b);
      return l.b.create<arith::AddFOp>(a, b);
    };
    Value partial = l.forLoop(
                         lane, width, init,
                         [&](Value j, ValueRange acc) -> SmallVector<Value> {
                           return {combine(acc[0], term(j))};
                         },
                         l.idx(kWarp))
                        .front();
    for (int64_t offset = kWarp / 2; offset > 0; offset /= 2)
      partial = combine(partial, shuffleXor(l, partial, offset));
    return partial;
  }

  /// Runs `body(j)` for each of the lane's elements.
  void forEach(function_ref<void(Value)> body) {
    l.forLoop(
        lane, width, {},
        [&](Value j, ValueRange) -> SmallVector<Value> {
          body(j);
          return {};
        },
        l.idx(kWarp));
  }

  Value load(Value memref, Value j) {
    return l.b.create<memref::LoadOp>(memref, at(j));
  }
  void store(Value value, Value memref, Value j) {
    l.b.create<memref::StoreOp>(value, memref, at(j));
  }
  SmallVector<Value> at(Value j) {
    SmallVector<Value> indices = lead;
    indices.push_back(j);
    return indices;
  }
};

/// Launches a warp per row of a tensor whose dims but the last have
/// `extents` (none if there are no rows); `body` builds one warp's work.
void launchWarpPerRow(Lowering &l, ArrayRef<Value> extents, Value width,
                      function_ref<void(WarpRow &)> body) {
  Value rows = l.idx(1);
  for (Value e : extents)
    rows = l.b.create<arith::MulIOp>(rows, e);
  Value nonEmpty =
      l.b.create<arith::CmpIOp>(arith::CmpIPredicate::ugt, rows, l.idx(0));
  l.guarded(nonEmpty, [&] {
    Value blocks = l.b.create<arith::CeilDivUIOp>(rows, l.idx(kWarpsPerBlock));
    Value one = l.idx(1);
    auto launch = l.b.create<gpu::LaunchOp>(blocks, one, one, l.idx(kWarp),
                                            l.idx(kWarpsPerBlock), one);
    OpBuilder::InsertionGuard guard(l.b);
    l.b.setInsertionPointToStart(&launch.getBody().front());
    Value row = l.b.create<arith::AddIOp>(
        l.b.create<arith::MulIOp>(launch.getBlockIds().x,
                                  l.idx(kWarpsPerBlock)),
        launch.getThreadIds().y);
    Value valid =
        l.b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, row, rows);
    l.guarded(valid, [&] {
      // The row's indices, the last dim fastest.
      SmallVector<Value> lead(extents.size());
      Value rest = row;
      for (size_t d = extents.size(); d-- > 1;) {
        lead[d] = l.b.create<arith::RemUIOp>(rest, extents[d]);
        rest = l.b.create<arith::DivUIOp>(rest, extents[d]);
      }
      lead[0] = rest;
      WarpRow warp{l, lead, launch.getThreadIds().x, width};
      body(warp);
    });
    l.b.create<gpu::TerminatorOp>();
  });
}

bool isF32Rows(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isF32();
}

/// The row's mean and 1 / sqrt(var + eps), the variance biased, as the loop
/// form computes them.
std::pair<Value, Value> rowMoments(WarpRow &w, Value input, Value n,
                                   Value eps) {
  ImplicitLocOpBuilder &b = w.l.b;
  Value mean = b.create<arith::DivFOp>(
      w.reduce(false, [&](Value j) { return w.load(input, j); }), n);
  Value var = b.create<arith::DivFOp>(
      w.reduce(false,
               [&](Value j) -> Value {
                 Value c = b.create<arith::SubFOp>(w.load(input, j), mean);
                 return b.create<arith::MulFOp>(c, c);
               }),
      n);
  return {mean, b.create<math::RsqrtOp>(b.create<arith::AddFOp>(var, eps))};
}
} // namespace

LogicalResult loops::lowerLayerNormToGPU(LayerNormOp op,
                                         RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  ImplicitLocOpBuilder &b = l.b;
  LayerNormBuffers p = prepareLayerNorm(l, op);
  l.guarded(p.ok, [&] {
    launchWarpPerRow(l, {p.rows}, p.width, [&](WarpRow &w) {
      auto [mean, inv] = rowMoments(w, p.input, p.n, p.eps);
      w.forEach([&](Value j) {
        Value c = b.create<arith::SubFOp>(w.load(p.input, j), mean);
        Value s =
            b.create<arith::MulFOp>(b.create<arith::MulFOp>(c, inv),
                                    b.create<memref::LoadOp>(p.weight, j));
        w.store(b.create<arith::AddFOp>(s, b.create<memref::LoadOp>(p.bias, j)),
                p.out, j);
      });
    });
  });
  return l.replaceWithBuffers(op, p.out);
}

LogicalResult loops::lowerLayerNormGradToGPU(LayerNormGradOp op,
                                             RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  ImplicitLocOpBuilder &b = l.b;
  LayerNormGradBuffers p = prepareLayerNormGrad(l, op);
  l.guarded(p.ok, [&] {
    launchWarpPerRow(l, {p.rows}, p.width, [&](WarpRow &w) {
      auto [mean, inv] = rowMoments(w, p.input, p.n, p.eps);
      auto normalized = [&](Value j) -> Value {
        return b.create<arith::MulFOp>(
            b.create<arith::SubFOp>(w.load(p.input, j), mean), inv);
      };
      auto g = [&](Value j) -> Value {
        return b.create<arith::MulFOp>(w.load(p.grad, j),
                                       b.create<memref::LoadOp>(p.weight, j));
      };
      Value meanG = b.create<arith::DivFOp>(w.reduce(false, g), p.n);
      Value meanGX = b.create<arith::DivFOp>(
          w.reduce(false,
                   [&](Value j) -> Value {
                     return b.create<arith::MulFOp>(g(j), normalized(j));
                   }),
          p.n);
      w.forEach([&](Value j) {
        Value xh = normalized(j);
        Value d = b.create<arith::SubFOp>(b.create<arith::SubFOp>(g(j), meanG),
                                          b.create<arith::MulFOp>(xh, meanGX));
        Value scaled = b.create<arith::MulFOp>(inv, d);
        if (p.addend)
          scaled = b.create<arith::AddFOp>(scaled, w.load(p.addend, j));
        w.store(scaled, p.dx, j);
        w.store(b.create<arith::MulFOp>(w.load(p.grad, j), xh), p.dxh, j);
      });
    });
  });
  return l.replaceWithBuffers(op, {p.dx, p.dxh});
}

LogicalResult loops::lowerLogSoftmaxToGPU(LogSoftmaxOp op,
                                          RewriterBase &rewriter) {
  if (!isF32Rows(op.getInput()))
    return rewriter.notifyMatchFailure(op, "the row kernel reduces f32");
  Lowering l(op, rewriter);
  ImplicitLocOpBuilder &b = l.b;
  Value input = l.toMemref(op.getInput());
  auto type = cast<RankedTensorType>(op.getResult().getType());
  Value rows = l.dim(input, 0), width = l.dim(input, 1);
  Value out = l.alloc(type, rows, {width});
  launchWarpPerRow(l, {rows}, width, [&](WarpRow &w) {
    Value max = w.reduce(true, [&](Value j) { return w.load(input, j); });
    Value sum = w.reduce(false, [&](Value j) -> Value {
      return b.create<math::ExpOp>(
          b.create<arith::SubFOp>(w.load(input, j), max));
    });
    Value shift = b.create<arith::AddFOp>(max, b.create<math::LogOp>(sum));
    w.forEach([&](Value j) {
      w.store(b.create<arith::SubFOp>(w.load(input, j), shift), out, j);
    });
  });
  return l.replaceWithBuffers(op, out);
}

LogicalResult loops::lowerRowSumToGPU(SumToOp op, RewriterBase &rewriter) {
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto type = cast<RankedTensorType>(op.getType());
  int64_t rank = in.getRank();
  // Only the last dim is summed: every other dim is kept (not a static 1
  // that the input lacks), the last is a static 1 the input does not have.
  bool rowSum = rank >= 2 && type.getRank() == rank &&
                in.getElementType().isF32() && type.getShape().back() == 1 &&
                in.getShape().back() != 1;
  for (int64_t d = 0; rowSum && d + 1 < rank; ++d)
    rowSum = type.getDimSize(d) != 1 || in.getDimSize(d) == 1;
  if (!rowSum)
    return rewriter.notifyMatchFailure(op, "not a sum within rows");
  Lowering l(op, rewriter);
  Value input = l.toMemref(op.getInput());
  SmallVector<Value> extents;
  for (int64_t d = 0; d + 1 < rank; ++d)
    extents.push_back(l.dim(input, d));
  Value width = l.dim(input, rank - 1);
  SmallVector<Value> items(extents.begin() + 1, extents.end());
  items.push_back(l.idx(1));
  Value out = l.alloc(type, extents.front(), items);
  launchWarpPerRow(l, extents, width, [&](WarpRow &w) {
    Value total = w.reduce(false, [&](Value j) { return w.load(input, j); });
    Value first =
        l.b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, w.lane, l.idx(0));
    l.guarded(first, [&] { w.store(total, out, l.idx(0)); });
  });
  return l.replaceWithBuffers(op, out);
}

LogicalResult loops::lowerColumnTotalToGPU(SumToOp op, RewriterBase &rewriter) {
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto type = cast<RankedTensorType>(op.getType());
  // Dim 0 is summed and every other input dim is a static 1, into a result
  // of one element.
  bool total = in.getRank() >= 1 && in.getElementType().isF32() &&
               llvm::all_of(in.getShape().drop_front(),
                            [](int64_t d) { return d == 1; }) &&
               llvm::all_of(type.getShape(), [](int64_t d) { return d == 1; });
  if (!total)
    return rewriter.notifyMatchFailure(op, "not a column summed into one");
  Lowering l(op, rewriter);
  Value input = l.toMemref(op.getInput());
  Value rows = l.dim(input, 0);
  Value out = l.b.create<memref::AllocOp>(
      MemRefType::get(type.getShape(), type.getElementType()));
  Value one = l.idx(1);
  auto launch =
      l.b.create<gpu::LaunchOp>(one, one, one, l.idx(kWarp), one, one);
  {
    OpBuilder::InsertionGuard guard(l.b);
    l.b.setInsertionPointToStart(&launch.getBody().front());
    WarpRow warp{l, {}, launch.getThreadIds().x, rows};
    Value sum = warp.reduce(false, [&](Value i) -> Value {
      SmallVector<Value> at(in.getRank(), l.idx(0));
      at.front() = i;
      return l.b.create<memref::LoadOp>(input, at);
    });
    Value first = l.b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, warp.lane,
                                            l.idx(0));
    l.guarded(first, [&] {
      l.b.create<memref::StoreOp>(sum, out,
                                  SmallVector<Value>(type.getRank(), l.idx(0)));
    });
    l.b.create<gpu::TerminatorOp>();
  }
  return l.replaceWithBuffers(op, out);
}
