//===- Pipelines.cpp - named gnn pass pipelines ---------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Pipelines/Pipelines.h"
#include "GNN/Conversion/Passes.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToSCF/TosaToSCF.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
/// TOSA's ops to linalg, arith, tensor and scf (upstream's order).
void addTosaToLinalg(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(tosa::createTosaToSCF());
  // No TOSA validation: it would judge the gnn and arith ops around them
  // by TOSA's profiles (f64 "not legal").
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions(),
                              TosaToLinalgNamedOptions(), std::nullopt);
  pm.addNestedPass<func::FuncOp>(tosa::createTosaToTensor());
  pm.addNestedPass<func::FuncOp>(tosa::createTosaToArith());
}

/// Which gnn-to-loops conversion a lowering runs.
enum class OpForms {
  /// convert-gnn-to-loops: CPU cores.
  Cpu,
  /// convert-gnn-to-gpu: GPU kernels.
  Gpu,
  /// convert-gnn-to-gpu without attention kernels: the GPU's forms on the
  /// CPU, for tests.
  GpuOnCpu,
};

/// gnn ops to loops (and, for GPUs, attention kernels) over fresh buffers.
void addLoweringToBuffers(OpPassManager &pm, OpForms forms,
                          bool parallelDense) {
  bool gpuKernels = forms == OpForms::Gpu;
  // Dimension queries outside their operand's rank are undefined behavior
  // that upstream canonicalizations do not guard against: rejected as
  // written, and again once folding has made more indices constant.
  pm.addPass(gnn::createCheckDimIndicesPass());
  // Upstream tensor programs a user writes: TOSA ops and elementwise
  // arith/math on whole tensors become linalg ops, which bufferize and
  // then run as parallel loops (below). The gnn ops' own lowering makes
  // neither.
  addTosaToLinalg(pm);
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(gnn::createDecomposeTensorOpsPass());
  // Divisions, indices, slices, reshapes and sizes that come from run-time
  // values are checked (in every mode: a bad value is an error, not a trap
  // or a stray read); the lowering's own ops come after and check
  // themselves.
  gnn::GuardRuntimeValuesPassOptions guards;
  guards.hostOnly = gpuKernels;
  pm.addPass(gnn::createGuardRuntimeValuesPass(guards));
  if (forms == OpForms::Cpu) {
    gnn::ConvertGNNToLoopsPassOptions loops;
    loops.parallelDense = parallelDense;
    pm.addPass(gnn::createConvertGNNToLoopsPass(loops));
  } else {
    gnn::ConvertGNNToGPUPassOptions gpu;
    gpu.attentionKernels = gpuKernels;
    gpu.rowKernels = gpuKernels;
    gpu.scanKernels = gpuKernels;
    // The CPU runs the loops of the GPU forms as its own.
    gpu.attentionBlocks = !gpuKernels;
    gpu.parallelDense = parallelDense;
    pm.addPass(gnn::createConvertGNNToGPUPass(gpu));
  }
  // Errors go into the context the caller passes.
  pm.addPass(gnn::createGNNPassRuntimeContextPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(gnn::createCheckDimIndicesPass());

  // Programs leave their inputs as they were.
  pm.addPass(gnn::createReadOnlyArgumentsPass());
  // Slices within rows, where ops take their buffers, are copied first.
  pm.addPass(gnn::createCopyStridedViewsPass());
  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  // Loops (the ACT loop) carry values that each iteration rebuilds, e.g.
  // compacted rows scattered back; the deallocation pipeline frees them.
  bufferization.allowReturnAllocsFromLoops = true;
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  // Writes in place into a buffer from parallel iterations (the GPU form of
  // a scatter) are scf.forall until bufferization; then parallel loops like
  // the others.
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(gnn::createElementCopiesPass());
  // Updates of writable arguments (decoder caches) stay in the caller's
  // buffers rather than being returned, which deallocation would copy.
  pm.addPass(gnn::createReturnUpdatedArgumentsPass());
  // A kernel result that is only copied somewhere is written there (on a
  // GPU too: every buffer a GPU program sees is in unified memory, and a
  // copy would run on the host, moving the pages of both buffers there).
  pm.addPass(gnn::createKernelDestinationsPass());
  // Constants live in the host program's data; kernels read copies in
  // unified memory (freed by the deallocation pipeline below).
  if (gpuKernels)
    pm.addNestedPass<func::FuncOp>(gnn::createGlobalsToBuffersPass());
  // The deallocation pipeline (upstream's buffer-deallocation-pipeline),
  // with its simplification skipped for functions too large for it.
  pm.addPass(memref::createExpandReallocPass(/*emitDeallocs=*/false));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(gnn::createSimplifyDeallocationsPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // Buffers that deallocation must keep alive across loop iterations are
  // cloned.
  pm.addPass(createBufferizationToMemRefPass());
  // Linalg ops a program writes (fills, named ops, generics; the gnn
  // lowering makes none) become parallel loops, which run like the gnn
  // kernels' on OpenMP's threads or as GPU kernels.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // The GPU forms copy buffers by kernels, not by the host over unified
  // memory (on the CPU, the device-loops forms run them as parallel loops).
  if (forms != OpForms::Cpu)
    pm.addNestedPass<func::FuncOp>(gnn::createDeviceCopiesPass());
}

/// Host code (with OpenMP regions, or launches of GPU kernels) to LLVM.
void addHostToLLVM(OpPassManager &pm, bool openMP, bool gpu) {
  if (openMP) {
    pm.addPass(createConvertSCFToOpenMPPass());
    // Their threads allocate from the caller's runtime instance.
    pm.addPass(gnn::createGNNBindParallelThreadsPass());
  }
  // Complex arithmetic a program writes: real arithmetic and math, and the
  // pairs themselves as LLVM structs.
  pm.addPass(createConvertComplexToStandardPass());
  // Integer powers (math.ipowi), which LLVM has no intrinsic for, as
  // generated functions; float powers keep llvm.powi.
  ConvertMathToFuncsOptions mathFuncs;
  mathFuncs.minWidthOfFPowIExponent = 1024;
  pm.addPass(createConvertMathToFuncs(mathFuncs));
  ConvertVectorToLLVMPassOptions vectorOptions;
  vectorOptions.reassociateFPReductions = true;
  pm.addPass(createConvertVectorToLLVMPass(vectorOptions));
  // memref lowering before scf-to-cf: OpenMP regions hold alloca scopes,
  // which must stay single-block until memref-to-llvm inlines them.
  pm.addPass(memref::createExpandStridedMetadataPass());
  // Offsets of slices (the ACT step's k/v in a per-step cache).
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  // Buffers come from the runtime: unified memory for GPU kernels, a pool
  // that reuses large blocks across calls on the CPU (gnnc/memory.h).
  memrefOptions.useGenericFunctions = true;
  // Loop bodies free their stack buffers per iteration, also where no
  // OpenMP region scopes them (serial programs).
  pm.addPass(gnn::createScopeLoopAllocasPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertSCFToCFPass());
  // ceildivui and friends (launch sizes) become plain arithmetic; the
  // signed floor and ceiling first, exactly.
  pm.addPass(gnn::createExpandRoundedDivisionsPass());
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (tanh, erf, atan, cbrt, ...) calls the C
  // math library.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertComplexToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  if (openMP)
    pm.addPass(createConvertOpenMPToLLVMPass());
  if (gpu)
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}
} // namespace

void mlir::gnn::buildGNNLevelPipeline(OpPassManager &pm, bool fuse,
                                      bool gpuForms) {
  // Private functions that nothing calls are not compiled: the loop bodies
  // and conditions that differentiation replaced by their forward and tape
  // forms (a Universal Transformer's training program has four).
  pm.addPass(createSymbolDCEPass());
  if (fuse) {
    pm.addPass(gnn::createFuseAttentionPass());
    pm.addPass(gnn::createFuseAddendsPass());
    // After the addends: a sum folded into a dense layer costs nothing.
    // The CPU's dropout is vector code of its own, and its loops over many
    // buffers would not vectorize (gnn-fuse-elementwise).
    pm.addPass(gnn::createFuseElementwisePass(gnn::FuseElementwisePassOptions{
        /*dropouts=*/gpuForms, /*siblings=*/gpuForms}));
  }
  // Compile work follows the number of distinct kernels, not of ops.
  pm.addPass(gnn::createOutlineKernelsPass());
}

/// The CPU lowering after the gnn-level passes, up to buffers.
static void addCPULoweringToBuffers(OpPassManager &pm,
                                    const gnn::LowerToCPUOptions &options) {
  // Dense layers split over OpenMP's threads, so BLAS and the loops do not
  // compete for the cores.
  addLoweringToBuffers(pm,
                       options.deviceLoops ? OpForms::GpuOnCpu : OpForms::Cpu,
                       /*parallelDense=*/options.parallel);
}

void mlir::gnn::buildLowerToBuffersPipeline(OpPassManager &pm,
                                            const LowerToCPUOptions &options) {
  buildGNNLevelPipeline(pm, options.fuse, options.deviceLoops);
  addCPULoweringToBuffers(pm, options);
}

LogicalResult
mlir::gnn::buildCPUCodegenPipeline(OpPassManager &pm,
                                   const LowerToCPUOptions &options) {
  addCPULoweringToBuffers(pm, options);
  // Checked mode: bounds of every load, store and view, for runs under the
  // sanitizer job and for debugging kernels.
  if (options.checked)
    pm.addPass(createGenerateRuntimeVerificationPass());
  pm.addPass(gnn::createApproximateVectorMathPass());
  addHostToLLVM(pm, options.parallel, /*gpu=*/false);
  return success();
}

LogicalResult
mlir::gnn::buildLowerToCPUPipeline(OpPassManager &pm,
                                   const LowerToCPUOptions &options) {
  buildGNNLevelPipeline(pm, options.fuse, options.deviceLoops);
  return buildCPUCodegenPipeline(pm, options);
}

LogicalResult
mlir::gnn::buildLowerToNVVMPipeline(OpPassManager &pm,
                                    const LowerToNVVMOptions &options) {
  buildGNNLevelPipeline(pm, options.fuse, /*gpuForms=*/true);
  return buildNVVMCodegenPipeline(pm, options);
}

LogicalResult
mlir::gnn::buildNVVMCodegenPipeline(OpPassManager &pm,
                                    const LowerToNVVMOptions &options) {
  addLoweringToBuffers(pm, OpForms::Gpu, /*parallelDense=*/false);
  ParallelLoopsToGPUPassOptions offload;
  offload.blockSize = options.blockSize;
  pm.addPass(createParallelLoopsToGPUPass(offload));
  // Constants, sizes and index arithmetic the kernels use are computed in
  // them rather than passed: a kernel then divides by a constant (not by a
  // parameter: a 64-bit division's dozens of instructions) and LLVM sees
  // constant strides, which its alignment inference needs.
  pm.addNestedPass<func::FuncOp>(createGpuLauchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // Each distinct kernel compiled (by LLVM, then by the driver) once.
  pm.addPass(gnn::createGPUDedupKernelsPass());
  if (options.asyncLaunches)
    pm.addPass(gnn::createGPUAsyncLaunchesPass());
  // After the waits are placed: the allocators are runtime calls, which
  // that pass would take for host accesses.
  if (options.deviceBuffers)
    pm.addPass(gnn::createGPUPlaceBuffersPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  // Empty: the PTX version LLVM picks for the chip.
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(gnn::createGPUAssumeAlignedRowsPass());
  device.addPass(gnn::createGPUDataLayoutPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  device.addPass(createConvertSCFToCFPass());
  device.addPass(gnn::createExpandRoundedDivisionsPass());
  device.addPass(arith::createArithExpandOpsPass());
  device.addPass(gnn::createGPUMulHighPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  device.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());

  addHostToLLVM(pm, /*openMP=*/false, /*gpu=*/true);
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  // Kernels link libdevice (exp, log, ...) from the toolkit.
  binary.toolkitPath = options.cudaPath;
  if (binary.toolkitPath.empty())
    binary.toolkitPath = NVVM::getCUDAToolkitPath().str();
  if (binary.toolkitPath.empty())
    binary.toolkitPath = "/usr/local/cuda";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  return success();
}

void mlir::gnn::registerGNNPipelines() {
  PassPipelineRegistration<LowerToCPUOptions>(
      "gnn-lower-to-cpu",
      "Lowers gnn IR to the LLVM dialect for multithreaded CPU execution",
      [](OpPassManager &pm, const LowerToCPUOptions &options) {
        (void)buildLowerToCPUPipeline(pm, options);
      });
  PassPipelineRegistration<LowerToCPUOptions>(
      "gnn-lower-to-buffers",
      "The first half of gnn-lower-to-cpu: gnn IR to loops and runtime calls "
      "on buffers (bufferized, deallocated), before LLVM",
      [](OpPassManager &pm, const LowerToCPUOptions &options) {
        buildLowerToBuffersPipeline(pm, options);
      });
  PassPipelineRegistration<LowerToNVVMOptions>(
      "gnn-lower-to-nvvm",
      "Lowers gnn IR to host LLVM IR that launches NVVM kernels (PTX, cubin "
      "or fatbin), with buffers in unified memory",
      [](OpPassManager &pm, const LowerToNVVMOptions &options) {
        (void)buildLowerToNVVMPipeline(pm, options);
      });
}
