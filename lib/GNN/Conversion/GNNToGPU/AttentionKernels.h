//===- AttentionKernels.h - gnn.fused_attention as a GPU kernel -*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOGPU_ATTENTIONKERNELS_H
#define GNN_CONVERSION_GNNTOGPU_ATTENTIONKERNELS_H

#include "GNN/Conversion/LoopTarget.h"
#include "GNN/IR/GNNOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::gnn::loops {

/// A gpu.launch with a group of lanes per destination and head (warp
/// shuffles reduce the dot products), or a warp per 32 destinations of a
/// block graph; falls back to the loops for layouts the kernel does not
/// cover.
LogicalResult lowerFusedAttentionToGPU(FusedAttentionOp op,
                                       RewriterBase &rewriter);

/// Who runs the lanes of the attention backward's tiles: warps of a
/// gpu.launch walking the union of their lanes' ranges, or the iterations of
/// a parallel loop, each walking its own (the same arithmetic on a CPU).
enum class TileThreads { Warps, Loops };

/// gnn.fused_attention_grad over a graph that promises source ranges
/// (complete, causal, bipartite) as a lane per node (AttentionGradKernels.cpp);
/// fails to match (the loop form serves) for general graphs, edge subsets,
/// non-f32 rows, more than one head dim and rows that do not fit in
/// registers.
LogicalResult lowerFusedAttentionGradToTiles(FusedAttentionGradOp op,
                                             const LoopTarget &target,
                                             TileThreads threads,
                                             RewriterBase &rewriter);

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOGPU_ATTENTIONKERNELS_H
