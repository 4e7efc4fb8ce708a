//===- RunningTotals.cpp - running totals of an index buffer on a GPU -----===//
//
// Part of gnnc. The in_ptr of an in-edge index from in-degrees (the
// attention backward's reversal, gnn.graph_from_coo) without the host: one
// block of kScanThreads threads, thread t owning a contiguous segment of
// ceil(n / kScanThreads) elements. A thread sums its segment; the warps
// scan the threads' sums with shuffles, and the first warp scans the
// warps' totals through shared memory; a second sweep over the segment
// writes the totals. Integer sums: the same totals as the serial loop.
//
//===----------------------------------------------------------------------===//

#include "RunningTotals.h"
#include "Warp.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
constexpr int64_t kScanWarps = kScanThreads / kWarp;
static_assert(kScanWarps <= kWarp, "one warp scans the warps' totals");

/// The inclusive scan of i64 `x` over the warp's lanes.
Value warpInclusiveScan(Lowering &l, Value x, Value lane) {
  ImplicitLocOpBuilder &b = l.b;
  auto i32 = [&](int64_t c) { return b.create<arith::ConstantIntOp>(c, 32); };
  for (int64_t offset = 1; offset < kWarp; offset *= 2) {
    Value below = b.create<gpu::ShuffleOp>(x, i32(offset), i32(kWarp),
                                           gpu::ShuffleMode::UP)
                      .getShuffleResult();
    Value has =
        b.create<arith::CmpIOp>(arith::CmpIPredicate::uge, lane, l.idx(offset));
    x = b.create<arith::SelectOp>(has, b.create<arith::AddIOp>(x, below), x);
  }
  return x;
}
} // namespace

void loops::blockRunningTotals(Lowering &l, Value buffer, Value n) {
  ImplicitLocOpBuilder &b = l.b;
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  Value one = l.idx(1);
  // The warps' totals in shared memory: dynamic shared memory (a value, not
  // a workgroup attribution, which buffer deallocation would take for a
  // buffer the kernel owns).
  auto launch = b.create<gpu::LaunchOp>(
      one, one, one, l.idx(kScanThreads), one, one,
      b.create<arith::ConstantIntOp>(kScanWarps * sizeof(int64_t), 32));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Attribute workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value bytes = b.create<gpu::DynamicSharedMemoryOp>(
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, workgroup));
  Value warpTotals = b.create<memref::ViewOp>(
      MemRefType::get({kScanWarps}, i64, MemRefLayoutAttrInterface{},
                      workgroup),
      bytes, l.idx(0), ValueRange{});
  Value t = launch.getThreadIds().x;
  Value warp = b.create<arith::DivUIOp>(t, l.idx(kWarp));
  Value lane = b.create<arith::RemUIOp>(t, l.idx(kWarp));
  // Elements [lo, hi) of the buffer, within 1..n.
  Value segment = b.create<arith::CeilDivUIOp>(n, l.idx(kScanThreads));
  Value start =
      b.create<arith::MinUIOp>(n, b.create<arith::MulIOp>(t, segment));
  Value end =
      b.create<arith::MinUIOp>(n, b.create<arith::AddIOp>(start, segment));
  Value lo = b.create<arith::AddIOp>(start, one);
  Value hi = b.create<arith::AddIOp>(end, one);
  auto load = [&](Value i) -> Value {
    return l.i64(b.create<memref::LoadOp>(buffer, i));
  };
  Value zero = b.create<arith::ConstantIntOp>(0, 64);
  Value own =
      l.forLoop(lo, hi, zero, [&](Value i, ValueRange acc) {
         return SmallVector<Value>{b.create<arith::AddIOp>(acc[0], load(i))};
       }).front();
  Value inWarp = warpInclusiveScan(l, own, lane);
  Value lastLane =
      b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, lane, l.idx(kWarp - 1));
  l.guarded(lastLane,
            [&] { b.create<memref::StoreOp>(inWarp, warpTotals, warp); });
  b.create<gpu::BarrierOp>();
  Value firstWarp =
      b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, warp, l.idx(0));
  l.guarded(firstWarp, [&] {
    Value total = b.create<memref::LoadOp>(warpTotals, lane);
    b.create<memref::StoreOp>(warpInclusiveScan(l, total, lane), warpTotals,
                              lane);
  });
  b.create<gpu::BarrierOp>();
  // The total of every element before the segment.
  Value warpsBefore = l.ifElse(
      b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, warp, l.idx(0)),
      [&] { return SmallVector<Value>{zero}; },
      [&] {
        return SmallVector<Value>{b.create<memref::LoadOp>(
            warpTotals, ValueRange{b.create<arith::SubIOp>(warp, one)})};
      })[0];
  Value before = b.create<arith::AddIOp>(warpsBefore,
                                         b.create<arith::SubIOp>(inWarp, own));
  l.forLoop(lo, hi, before, [&](Value i, ValueRange acc) {
    Value total = b.create<arith::AddIOp>(acc[0], load(i));
    b.create<memref::StoreOp>(
        b.create<arith::IndexCastOp>(b.getIndexType(), total), buffer, i);
    return SmallVector<Value>{total};
  });
  Value first = b.create<arith::CmpIOp>(arith::CmpIPredicate::eq, t, l.idx(0));
  l.guarded(first,
            [&] { b.create<memref::StoreOp>(l.idx(0), buffer, l.idx(0)); });
  b.create<gpu::TerminatorOp>();
}
