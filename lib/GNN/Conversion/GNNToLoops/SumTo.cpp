//===- SumTo.cpp - lower gnn.sum_to to vector loops -----------------------===//
//
// Part of gnnc. gnn.sum_to sums a tensor over the dims its result lacks or
// has as a static 1: the gradients of broadcasts (bias and layer-norm
// weights summed over rows, per-row statistics summed over features).
// Each result element (or block of rows' partial sum, below) is summed in
// a fixed order by one iteration of a parallel loop, so results do not
// depend on the thread count; on the CPU in vectors of kVectorLanes (GPU
// kernels take one result element, or one block's partial sum of one, per
// thread):
//  - when the last dim is kept (sums over rows), a vector holds that many
//    neighbouring result elements, each summing its inputs in order, with
//    contiguous loads, kUnroll vectors at a time (independent chains of
//    adds). Summed over dim 0 alone (a bias's gradient), blocks of kRowBlock
//    rows are summed in parallel first and their sums added up after: each
//    thread reads the rows it (as a rule) wrote, instead of every thread
//    reading every row, and the block size, not the thread count, fixes
//    the order of the additions. GPU kernels sum that way too, a thread per
//    block and result element (a thread per result element summing every
//    row leaves most of a GPU idle: a bias has a few hundred), in a tree:
//    blocks of 32 rows, then blocks of 32 of their sums, then those sums;
//  - when it is summed (sums within a row), a vector holds partial sums of
//    every kVectorLanes-th input, added up at the end.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
/// Vectors of neighbouring result elements summed together (sums over rows).
constexpr int64_t kUnroll = 4;
/// Rows per partial sum of a sum over dim 0 on CPU cores (one level: each
/// thread's vectors stream its block's rows).
constexpr int64_t kRowBlock = 128;
/// On GPU threads, rows per partial sum and the levels of partial sums: a
/// tree of blocks of 32, whose every thread adds at most 32 numbers in a
/// chain (each a global memory latency) up to 32^3 rows, where one level
/// of 128 left 128 + rows / 128 in the longest chain and few threads.
constexpr int64_t kThreadRowBlock = 32, kThreadLevels = 2;

class SumToLowering {
public:
  SumToLowering(Lowering &l, Feature in, RankedTensorType type, bool vectors)
      : l(l), b(l.b), loc(l.loc), in(in), type(type), rank(in.type.getRank()),
        offset(rank - type.getRank()), lanes(vectors ? kVectorLanes : 1),
        vType(vectors ? Type(VectorType::get({lanes}, type.getElementType()))
                      : type.getElementType()) {
    // Input dim d is summed when the result lacks it or has a static 1
    // there; otherwise it follows result dim d - offset.
    for (int64_t d = 0; d < rank; ++d) {
      bool sum = d < offset || type.getDimSize(d - offset) == 1;
      (sum ? summed : kept).push_back(d);
      extents.push_back(l.dim(in.memref, d));
    }
  }

  /// The result buffer, filled.
  Value build();

private:
  /// Sums into result blocks of lanes along the (kept) last dim.
  void sumOverRows(Value out);
  /// Sums over dim 0 (the only summed dim) through per-block partial sums
  /// of `rowBlock` rows, whose sums are summed the same way `levels` - 1
  /// more times.
  void sumOverRowBlocks(Value out, int64_t rowBlock, int64_t levels);
  /// The input's lanes at `keptAt` (last: the first of kUnroll vectors)
  /// summed over `bounds` of the summed dims into `out` at `outAt`.
  void sumGroup(ArrayRef<Value> keptAt,
                ArrayRef<std::pair<Value, Value>> bounds, Value out,
                ArrayRef<Value> outAt);
  /// Sums the (summed) last dim and the other summed dims into each result
  /// element.
  void sumWithinRows(Value out);
  /// Runs `body` with the kept dims' indices (last dim excluded when
  /// `withLast` is false): parallel over the first of them.
  void forKept(bool withLast, function_ref<void(ArrayRef<Value>)> body);
  /// Folds `add` over [lo, hi) of each of `bounds` (the loop nest's
  /// indices), in row-major order, from `init`.
  SmallVector<Value>
  sumOver(ArrayRef<std::pair<Value, Value>> bounds, ValueRange init,
          function_ref<SmallVector<Value>(ValueRange, ValueRange)> add);
  /// [0, extent) of each of `dims`.
  SmallVector<std::pair<Value, Value>> wholeDims(ArrayRef<int64_t> dims) {
    return llvm::map_to_vector(
        dims, [&](int64_t d) { return std::make_pair(l.idx(0), extents[d]); });
  }
  /// Columns per iteration of a sum over rows.
  int64_t group() const { return lanes == 1 ? 1 : lanes * kUnroll; }
  /// Input indices: `keptAt` for kept dims (in order), `summedAt` for summed.
  SmallVector<Value> inputIndices(ArrayRef<Value> keptAt, ValueRange summedAt,
                                  Value last);
  /// Result indices of the kept input indices `keptAt`.
  SmallVector<Value> outputIndices(ArrayRef<Value> keptAt);
  /// The mask of the lanes from `j` that lie below `extent` (vectors only).
  Value laneMask(Value j, Value extent) {
    if (lanes == 1)
      return {};
    Value left = b.create<arith::SubIOp>(extent, j);
    return b.create<vector::CreateMaskOp>(
        VectorType::get({lanes}, b.getI1Type()),
        ValueRange{b.create<arith::MinSIOp>(left, l.idx(lanes))});
  }
  /// The lanes of the input at `at` under `mask` (0 in the others).
  Value load(ArrayRef<Value> at, Value mask) {
    if (lanes == 1)
      return b.create<memref::LoadOp>(in.memref, at);
    return b.create<vector::MaskedLoadOp>(vType, in.memref, at, mask,
                                          l.floatConst(vType, 0.0));
  }

  Lowering &l;
  ImplicitLocOpBuilder &b;
  Location loc;
  Feature in;
  RankedTensorType type;
  int64_t rank, offset, lanes;
  Type vType;
  SmallVector<int64_t> summed, kept;
  SmallVector<Value> extents;
};
} // namespace

Value SumToLowering::build() {
  SmallVector<Value> dynamic;
  for (int64_t d = offset; d < rank; ++d)
    if (type.isDynamicDim(d - offset))
      dynamic.push_back(extents[d]);
  Value out = b.create<memref::AllocOp>(
      MemRefType::get(type.getShape(), type.getElementType()), dynamic);
  if (rank == 0) {
    b.create<memref::StoreOp>(b.create<memref::LoadOp>(in.memref, ValueRange{}),
                              out, ValueRange{});
    return out;
  }
  if (rank > 1 && summed.size() == 1 && summed[0] == 0)
    sumOverRowBlocks(out, lanes == 1 ? kThreadRowBlock : kRowBlock,
                     lanes == 1 ? kThreadLevels : 1);
  else if (!kept.empty() && kept.back() == rank - 1)
    sumOverRows(out);
  else
    sumWithinRows(out);
  return out;
}

SmallVector<Value> SumToLowering::inputIndices(ArrayRef<Value> keptAt,
                                               ValueRange summedAt,
                                               Value last) {
  SmallVector<Value> at(rank);
  for (auto [d, index] : llvm::zip(kept, keptAt))
    at[d] = index;
  for (auto [d, index] : llvm::zip(summed, summedAt))
    at[d] = index;
  if (last)
    at[rank - 1] = last;
  return at;
}

SmallVector<Value> SumToLowering::outputIndices(ArrayRef<Value> keptAt) {
  SmallVector<Value> at(type.getRank(), l.idx(0));
  for (auto [d, index] : llvm::zip(kept, keptAt))
    at[d - offset] = index;
  return at;
}

void SumToLowering::forKept(bool withLast,
                            function_ref<void(ArrayRef<Value>)> body) {
  // With the last dim, its extent counts blocks of lanes.
  SmallVector<Value> counts;
  for (int64_t d : kept) {
    Value extent = extents[d];
    if (d == rank - 1 && withLast)
      extent = b.create<arith::CeilDivUIOp>(extent, l.idx(group()));
    counts.push_back(extent);
  }
  auto withIndices = [&](ValueRange ivs) {
    SmallVector<Value> at(ivs);
    if (withLast && !at.empty())
      at.back() = b.create<arith::MulIOp>(at.back(), l.idx(group()));
    body(at);
  };
  if (counts.empty())
    return body({});
  l.parallel(counts.front(), [&](Value first) {
    l.loopNest(ArrayRef(counts).drop_front(), [&](ValueRange rest) {
      SmallVector<Value> ivs = {first};
      llvm::append_range(ivs, rest);
      withIndices(ivs);
    });
  });
}

SmallVector<Value> SumToLowering::sumOver(
    ArrayRef<std::pair<Value, Value>> bounds, ValueRange init,
    function_ref<SmallVector<Value>(ValueRange, ValueRange)> add) {
  SmallVector<Value> lbs, ubs, steps(bounds.size(), l.idx(1));
  for (auto [lo, hi] : bounds) {
    lbs.push_back(lo);
    ubs.push_back(hi);
  }
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lbs, ubs, steps, init,
      [&](OpBuilder &nested, Location, ValueRange ivs, ValueRange acc) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        return scf::ValueVector(add(ivs, acc));
      });
  return nest.results.empty() ? SmallVector<Value>(init)
                              : SmallVector<Value>(nest.results);
}

void SumToLowering::sumGroup(ArrayRef<Value> keptAt,
                             ArrayRef<std::pair<Value, Value>> bounds,
                             Value out, ArrayRef<Value> outAt) {
  int64_t vectors = lanes == 1 ? 1 : kUnroll;
  Value zero = l.floatConst(vType, 0.0);
  // Vector u covers the lanes from column keptAt.back() + u * lanes.
  SmallVector<Value> columns, masks;
  for (int64_t u = 0; u < vectors; ++u) {
    columns.push_back(b.create<arith::AddIOp>(keptAt.back(), l.idx(u * lanes)));
    masks.push_back(laneMask(columns.back(), extents[rank - 1]));
  }
  SmallVector<Value> sums = sumOver(
      bounds, SmallVector<Value>(vectors, zero),
      [&](ValueRange ivs, ValueRange acc) {
        SmallVector<Value> next;
        for (int64_t u = 0; u < vectors; ++u) {
          SmallVector<Value> at = inputIndices(keptAt, ivs, {});
          at.back() = columns[u];
          next.push_back(b.create<arith::AddFOp>(acc[u], load(at, masks[u])));
        }
        return next;
      });
  for (int64_t u = 0; u < vectors; ++u) {
    SmallVector<Value> at(outAt);
    at.back() = b.create<arith::AddIOp>(outAt.back(), l.idx(u * lanes));
    if (lanes == 1)
      b.create<memref::StoreOp>(sums[u], out, at);
    else
      b.create<vector::MaskedStoreOp>(out, at, masks[u], sums[u]);
  }
}

void SumToLowering::sumOverRows(Value out) {
  forKept(/*withLast=*/true, [&](ArrayRef<Value> keptAt) {
    sumGroup(keptAt, wholeDims(summed), out, outputIndices(keptAt));
  });
}

void SumToLowering::sumOverRowBlocks(Value out, int64_t rowBlock,
                                     int64_t levels) {
  // partial[i] sums rows [i * rowBlock, (i + 1) * rowBlock) (buffer
  // deallocation frees it).
  Value rows = extents[0];
  Value blocks = b.create<arith::CeilDivUIOp>(rows, l.idx(rowBlock));
  SmallVector<int64_t> shape(in.type.getShape());
  shape[0] = ShapedType::kDynamic;
  auto partialType = MemRefType::get(shape, type.getElementType());
  SmallVector<Value> dynamic = {blocks};
  for (int64_t d = 1; d < rank; ++d)
    if (partialType.isDynamicDim(d))
      dynamic.push_back(extents[d]);
  Value partial = b.create<memref::AllocOp>(partialType, dynamic);
  auto rowsOf = [&](Value block) {
    Value lo = b.create<arith::MulIOp>(block, l.idx(rowBlock));
    Value hi = b.create<arith::MinUIOp>(
        rows, b.create<arith::AddIOp>(lo, l.idx(rowBlock)));
    return std::make_pair(lo, hi);
  };
  if (lanes == 1) {
    l.parallelItems(blocks, ArrayRef<Value>(extents).drop_front(),
                    [&](Value block, ValueRange item) {
                      SmallVector<Value> keptAt(item), partialAt = {block};
                      llvm::append_range(partialAt, keptAt);
                      auto [lo, hi] = rowsOf(block);
                      sumGroup(keptAt, {{lo, hi}}, partial, partialAt);
                    });
  } else {
    l.parallel(blocks, [&](Value block) {
      auto [lo, hi] = rowsOf(block);
      SmallVector<Value> inner(
          ArrayRef<Value>(extents).drop_front().drop_back());
      l.loopNest(inner, [&](ValueRange items) {
        l.serial(
            l.idx(0), extents[rank - 1],
            [&](Value column) {
              SmallVector<Value> keptAt(items);
              keptAt.push_back(column);
              SmallVector<Value> partialAt = {block};
              llvm::append_range(partialAt, keptAt);
              sumGroup(keptAt, {{lo, hi}}, partial, partialAt);
            },
            group());
      });
    });
  }
  // The blocks' sums, in block order.
  auto partialTensor = RankedTensorType::get(shape, type.getElementType());
  SumToLowering sums(l, Feature{partial, partialTensor}, type,
                     /*vectors=*/lanes > 1);
  if (levels > 1)
    sums.sumOverRowBlocks(out, rowBlock, levels - 1);
  else
    sums.sumOverRows(out);
}

void SumToLowering::sumWithinRows(Value out) {
  Value zero = l.floatConst(vType, 0.0);
  Value lastExtent = extents[rank - 1];
  forKept(/*withLast=*/false, [&](ArrayRef<Value> keptAt) {
    Value sum = sumOver(
        wholeDims(ArrayRef(summed).drop_back()), ValueRange{zero},
        [&](ValueRange ivs, ValueRange acc) {
          return SmallVector<Value>{l.forLoop(
              l.idx(0), lastExtent, acc,
              [&](Value j, ValueRange state) {
                Value x =
                    load(inputIndices(keptAt, ivs, j), laneMask(j, lastExtent));
                return SmallVector<Value>{b.create<arith::AddFOp>(state[0], x)};
              },
              l.idx(lanes))[0]};
        })[0];
    Value total =
        lanes == 1
            ? sum
            : b.create<vector::ReductionOp>(vector::CombiningKind::ADD, sum);
    b.create<memref::StoreOp>(total, out, outputIndices(keptAt));
  });
}

LogicalResult loops::lowerSumTo(SumToOp op, const LoopTarget &target,
                                RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  SumToLowering lowering(l, l.feature(op.getInput()), op.getType(),
                         target.vectorLoops());
  return l.replaceWithBuffers(op, lowering.build());
}
