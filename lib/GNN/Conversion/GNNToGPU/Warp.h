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

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOGPU_WARP_H
