//===- Pipelines.h - named gnn pass pipelines -------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_PIPELINES_PIPELINES_H
#define GNN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
namespace gnn {

struct LowerToCPUOptions : public PassPipelineOptions<LowerToCPUOptions> {
  PassOptions::Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Fuse attention into gnn.fused_attention first"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run outer loops on all cores through OpenMP"),
      llvm::cl::init(true)};
};

/// gnn IR on tensors to the LLVM dialect: (fusion,) loops, bufferization,
/// deallocation, OpenMP, LLVM.
LogicalResult buildLowerToCPUPipeline(OpPassManager &pm,
                                      const LowerToCPUOptions &options);

/// Registers `gnn-lower-to-cpu`.
void registerGNNPipelines();

} // namespace gnn
} // namespace mlir

#endif // GNN_PIPELINES_PIPELINES_H
