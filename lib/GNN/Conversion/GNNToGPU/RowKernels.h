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

/// gpu.launch kernels of a warp per row (shuffles reduce the row).
LogicalResult lowerLayerNormToGPU(LayerNormOp op, RewriterBase &rewriter);
LogicalResult lowerLayerNormGradToGPU(LayerNormGradOp op,
                                      RewriterBase &rewriter);
/// Fails to match (the loop form serves) unless the rows are f32.
LogicalResult lowerLogSoftmaxToGPU(LogSoftmaxOp op, RewriterBase &rewriter);
/// A gnn.sum_to of f32 that sums the last dim alone (a log-softmax's or an
/// attention weight's gradient summed within each row); fails to match
/// otherwise.
LogicalResult lowerRowSumToGPU(SumToOp op, RewriterBase &rewriter);
/// A gnn.sum_to of f32 that sums a column (dim 0; the other dims static
/// 1s) into one element, as one warp; fails to match otherwise.
LogicalResult lowerColumnTotalToGPU(SumToOp op, RewriterBase &rewriter);

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOGPU_ROWKERNELS_H
