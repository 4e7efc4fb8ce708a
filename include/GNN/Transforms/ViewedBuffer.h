//===- ViewedBuffer.h - the buffer behind a view ----------------*- C++ -*-===//
//
// Part of gnnc. What the passes after bufferization that follow buffers
// (gnn-kernel-destinations, gnn-device-copies, gnn-gpu-async-launches) ask
// of a memref: which buffer's memory it is.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TRANSFORMS_VIEWEDBUFFER_H
#define GNN_TRANSFORMS_VIEWEDBUFFER_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::gnn {
/// The buffer `v` views, through casts and view-like ops (subviews,
/// reshapes), or `v`.
inline Value viewedBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto cast = dyn_cast<memref::CastOp>(def))
      v = cast.getSource();
    else if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else
      break;
  }
  return v;
}
} // namespace mlir::gnn

#endif // GNN_TRANSFORMS_VIEWEDBUFFER_H
