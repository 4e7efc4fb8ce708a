//===- RowKernels.h - a warp per row for the ops that reduce rows -*- C++
//-*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOGPU_ROWKERNELS_H
#define GNN_CONVERSION_GNNTOGPU_ROWKERNELS_H

#include "GNN/IR/GNNOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::gnn::loops {

/// gpu.launch kernels of a warp per row (shuffles reduce the row); the
/// loop form for element types other than f32.
LogicalResult lowerLayerNormToGPU(LayerNormOp op, RewriterBase &rewriter);
LogicalResult lowerLayerNormGradToGPU(LayerNormGradOp op,
                                      RewriterBase &rewriter);
LogicalResult lowerLogSoftmaxToGPU(LogSoftmaxOp op, RewriterBase &rewriter);

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOGPU_ROWKERNELS_H
