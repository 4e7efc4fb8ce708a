//===- AttentionKernels.h - gnn.fused_attention as a GPU kernel -*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOGPU_ATTENTIONKERNELS_H
#define GNN_CONVERSION_GNNTOGPU_ATTENTIONKERNELS_H

#include "GNN/IR/GNNOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::gnn::loops {

/// A gpu.launch with a group of lanes per destination and head (warp
/// shuffles reduce the dot products), or a warp per 32 destinations of a
/// block graph; falls back to the loops for layouts the kernel does not
/// cover.
LogicalResult lowerFusedAttentionToGPU(FusedAttentionOp op,
                                       RewriterBase &rewriter);

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOGPU_ATTENTIONKERNELS_H
