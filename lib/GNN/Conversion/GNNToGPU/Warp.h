//===- Warp.h - warp-level pieces of the GPU kernels -------------*- C++
//-*-===//
//
// Part of gnnc. What the kernels of convert-gnn-to-gpu share about warps.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOGPU_WARP_H
#define GNN_CONVERSION_GNNTOGPU_WARP_H

#include "GNNToLoops/Lowering.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace mlir::gnn::loops {

/// Lanes of an NVIDIA warp.
constexpr int64_t kWarp = 32;

/// `x` of the lane whose id differs from this one's in the bits of
/// `offset` (a butterfly step over the whole warp).
inline Value shuffleXor(Lowering &l, Value x, int64_t offset) {
  auto i32 = [&](int64_t c) { return l.b.create<arith::ConstantIntOp>(c, 32); };
  return l.b
      .create<gpu::ShuffleOp>(l.loc, x, i32(offset), i32(kWarp),
                              gpu::ShuffleMode::XOR)
      .getShuffleResult();
}

/// The minimum or maximum of an index (a node id) over the warp, in every
/// lane: five butterfly steps on its 64 bits.
inline Value warpMinMax(Lowering &l, Value n, bool max) {
  Value x = l.b.create<arith::IndexCastOp>(l.b.getI64Type(), n);
  for (int64_t offset = kWarp / 2; offset > 0; offset /= 2) {
    Value other = shuffleXor(l, x, offset);
    x = max ? l.b.create<arith::MaxSIOp>(x, other).getResult()
            : l.b.create<arith::MinSIOp>(x, other).getResult();
  }
  return l.b.create<arith::IndexCastOp>(l.b.getIndexType(), x);
}

/// The dot product of a lane's registers `a` and `b` (of element type
/// `type`) in four interleaved partial sums: shorter dependency chains
/// than one running sum.
inline Value chainedDot(Lowering &l, Type type, ArrayRef<Value> a,
                        ArrayRef<Value> b) {
  constexpr size_t kChains = 4;
  SmallVector<Value> sums(std::min(kChains, a.size()), l.floatConst(type, 0.0));
  for (auto [j, x] : llvm::enumerate(a))
    sums[j % kChains] = l.b.create<math::FmaOp>(x, b[j], sums[j % kChains]);
  Value sum = sums.front();
  for (Value partial : llvm::drop_begin(sums))
    sum = l.b.create<arith::AddFOp>(sum, partial);
  return sum;
}

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOGPU_WARP_H
