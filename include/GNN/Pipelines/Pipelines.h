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
  PassOptions::Option<bool> checked{
      *this, "checked",
      llvm::cl::desc("Check every memref access against its bounds at run "
                     "time (a failed check prints its op and aborts)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> deviceLoops{
      *this, "device-loops",
      llvm::cl::desc("Lower gnn ops in their GPU forms, attention and row "
                     "reductions as loops (convert-gnn-to-gpu{attention-"
                     "kernels=false row-kernels=false}): the GPU forms' "
                     "arithmetic, run on the CPU for tests"),
      llvm::cl::init(false)};
};

/// The gnn-level rewrites every lowering begins with (when `fuse`: attention
/// fusion and element-wise ops merged, with dropouts and independent ops
/// of one shape too for the GPU forms, `gpuForms`: CUDA or the CPU's
/// device-loops; identical kernels outlined once). Their result is still
/// gnn IR; the compile cache keys programs by it.
void buildGNNLevelPipeline(OpPassManager &pm, bool fuse, bool gpuForms);

/// gnn IR on tensors to the LLVM dialect: the gnn-level passes, loops,
/// bufferization, deallocation, OpenMP, LLVM.
LogicalResult buildLowerToCPUPipeline(OpPassManager &pm,
                                      const LowerToCPUOptions &options);
/// buildLowerToCPUPipeline without its gnn-level passes (for IR that has
/// been through buildGNNLevelPipeline).
LogicalResult buildCPUCodegenPipeline(OpPassManager &pm,
                                      const LowerToCPUOptions &options);

/// The first half of buildLowerToCPUPipeline: (fusion,) loops and calls on
/// buffers, deallocated; what the CPU gets before it becomes LLVM. For
/// reading (which copies bufferization kept) and tests.
void buildLowerToBuffersPipeline(OpPassManager &pm,
                                 const LowerToCPUOptions &options);

struct LowerToNVVMOptions : public PassPipelineOptions<LowerToNVVMOptions> {
  PassOptions::Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Fuse attention into gnn.fused_attention first"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture, e.g. sm_80 or sm_90"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features, e.g. +ptx80 (default: LLVM's for the "
                     "chip)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binaries: isa (PTX), bin (cubin, through "
                     "ptxas) or fatbin"),
      llvm::cl::init("bin")};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit (libdevice, ptxas; default: $CUDA_ROOT, "
                     "$CUDA_HOME, $CUDA_PATH or /usr/local/cuda)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of kernels made from loops"),
      llvm::cl::init(128)};
  PassOptions::Option<bool> asyncLaunches{
      *this, "async-launches",
      llvm::cl::desc("Launch kernels without waiting for each; the host "
                     "waits before it touches memory "
                     "(gnn-gpu-async-launches)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> deviceBuffers{
      *this, "device-buffers",
      llvm::cl::desc("Allocate the buffers that only kernels and cuBLAS "
                     "touch in device memory and those only the host "
                     "touches in host memory, not unified memory "
                     "(gnn-gpu-place-buffers)"),
      llvm::cl::init(false)};
};

/// Lowers gnn IR to host LLVM IR that launches NVVM kernels through the
/// gpu-to-llvm runtime ABI (mgpu* functions), with every buffer allocated
/// through `_mlir_memref_to_llvm_alloc` (unified memory, in gnnc's CUDA
/// runtime), so that code left on the host and kernels share buffers.
LogicalResult buildLowerToNVVMPipeline(OpPassManager &pm,
                                       const LowerToNVVMOptions &options);
/// buildLowerToNVVMPipeline without its gnn-level passes.
LogicalResult buildNVVMCodegenPipeline(OpPassManager &pm,
                                       const LowerToNVVMOptions &options);

/// Registers `gnn-lower-to-cpu`, `gnn-lower-to-buffers` and
/// `gnn-lower-to-nvvm`.
void registerGNNPipelines();

} // namespace gnn
} // namespace mlir

#endif // GNN_PIPELINES_PIPELINES_H
