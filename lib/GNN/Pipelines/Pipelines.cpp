//===- Pipelines.cpp - named gnn pass pipelines ---------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Pipelines/Pipelines.h"
#include "GNN/Conversion/Passes.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

LogicalResult
mlir::gnn::buildLowerToCPUPipeline(OpPassManager &pm,
                                   const LowerToCPUOptions &options) {
  if (options.fuse)
    pm.addPass(createFuseAttentionPass());
  pm.addPass(createConvertGNNToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  // Loops (the ACT loop) carry values that each iteration rebuilds, e.g.
  // compacted rows scattered back; the deallocation pipeline frees them.
  bufferization.allowReturnAllocsFromLoops = true;
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  bufferization::buildBufferDeallocationPipeline(
      pm, bufferization::BufferDeallocationPipelineOptions());
  // Buffers that deallocation must keep alive across loop iterations are
  // cloned.
  pm.addPass(createBufferizationToMemRefPass());

  if (options.parallel)
    pm.addPass(createConvertSCFToOpenMPPass());
  ConvertVectorToLLVMPassOptions vectorOptions;
  vectorOptions.reassociateFPReductions = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorOptions));
  // memref lowering before scf-to-cf: OpenMP regions hold alloca scopes,
  // which must stay single-block until memref-to-llvm inlines them.
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Offsets of slices (the ACT step's k/v in a per-step cache).
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  return success();
}

void mlir::gnn::registerGNNPipelines() {
  PassPipelineRegistration<LowerToCPUOptions>(
      "gnn-lower-to-cpu",
      "Lowers gnn IR to the LLVM dialect for multithreaded CPU execution",
      [](OpPassManager &pm, const LowerToCPUOptions &options) {
        (void)buildLowerToCPUPipeline(pm, options);
      });
}
