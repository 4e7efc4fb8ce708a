//===- CodegenTarget.cpp - compiling for the CPU or a CUDA device ---------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "CodegenTarget.h"
#include "RunnerDetail.h"

#include "GNN/Pipelines/Pipelines.h"
#include "gnnc/cuda.h"
#include "gnnc/dense.h"
#include "gnnc/errors.h"
#include "gnnc/memory.h"

#include "mlir/Target/LLVMIR/Dialect/All.h"

#ifndef GNN_OPENMP_LIBRARY
#define GNN_OPENMP_LIBRARY "libomp.so"
#endif

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::detail;

namespace {

/// Multithreaded host code (OpenMP), dense layers through the runtime's
/// BLAS, buffers from the runtime instance's pool.
class CpuTarget : public CodegenTarget {
public:
  explicit CpuTarget(const CompileOptions &options) {
    lowering.fuse = options.fuse;
    lowering.parallel = options.parallel;
    lowering.checked = options.checked;
    lowering.deviceLoops = options.deviceLoops;
  }

  std::string description() const override {
    return "device=cpu parallel=" + std::to_string(int(lowering.parallel)) +
           " checked=" + std::to_string(int(lowering.checked)) +
           " device-loops=" + std::to_string(int(lowering.deviceLoops));
  }
  LogicalResult buildPipeline(PassManager &pm) const override {
    return buildCPUCodegenPipeline(pm, lowering);
  }
  void prepareRuntime() const override {
    // Every BLAS call runs on its calling thread: parallel programs split
    // each dense layer over OpenMP's threads (a multithreaded BLAS inside
    // would compete with them for the cores), serial ones run on one core.
    gnn_rt_set_dense_threads(1);
  }
  std::map<std::string, void *> linkedSymbols() const override {
    std::map<std::string, void *> symbols =
        mlir::gnn::detail::linkedSymbols(Device::CPU, /*asyncLaunches=*/false);
    // Buffers come from the runtime instance's reusing pool.
    mlir::gnn::detail::addAllocator(symbols, &gnn_rt_alloc,
                                    &gnn_rt_aligned_alloc, &gnn_rt_free);
    return symbols;
  }
  std::vector<std::string> libraries() const override {
    if (lowering.parallel)
      return {GNN_OPENMP_LIBRARY};
    return {};
  }

private:
  LowerToCPUOptions lowering;
};

/// Kernels as PTX for device 0's architecture (the driver compiles it and
/// caches the result, so running needs no CUDA toolkit), host code around
/// them, buffers in unified memory (or, those only kernels touch, in
/// device memory), dense layers on cuBLAS.
class CudaTarget : public CodegenTarget {
public:
  CudaTarget(const CompileOptions &options, std::string chip) {
    lowering.fuse = options.fuse;
    lowering.chip = std::move(chip);
    lowering.format = "isa";
    lowering.asyncLaunches = options.asyncLaunches;
    lowering.deviceBuffers = options.deviceBuffers;
  }

  std::string description() const override {
    return "device=cuda chip=" + lowering.chip + " format=" + lowering.format +
           " async-launches=" + std::to_string(int(lowering.asyncLaunches)) +
           " device-buffers=" + std::to_string(int(lowering.deviceBuffers));
  }
  LogicalResult buildPipeline(PassManager &pm) const override {
    return buildNVVMCodegenPipeline(pm, lowering);
  }
  std::map<std::string, void *> linkedSymbols() const override {
    std::map<std::string, void *> symbols =
        mlir::gnn::detail::linkedSymbols(Device::CUDA, lowering.asyncLaunches);
    // Buffers live in unified memory, which host code and kernels share.
    mlir::gnn::detail::addAllocator(symbols, &gnn_cuda_alloc,
                                    &gnn_cuda_aligned_alloc, &gnn_cuda_free);
    return symbols;
  }
  bool asyncLaunches() const override { return lowering.asyncLaunches; }

private:
  LowerToNVVMOptions lowering;
};

/// The NVPTX chip to compile for: device 0's architecture, or the newest
/// LLVM 19 knows (the driver compiles its PTX for newer devices).
llvm::Expected<std::string> cudaChip() {
  char why[256];
  if (!gnn_cuda_init(why, sizeof(why)))
    return error(llvm::Twine("no CUDA device to run on: ") + why);
  int major = 0, minor = 0;
  if (!gnn_cuda_compute_capability(&major, &minor)) {
    char message[512];
    (void)gnn_rt_take_error(message, sizeof(message));
    return error(llvm::Twine("cannot query the CUDA device: ") + message);
  }
  if (major > 9)
    return std::string("sm_90");
  return "sm_" + std::to_string(major * 10 + minor);
}

} // namespace

llvm::Expected<std::unique_ptr<CodegenTarget>>
CodegenTarget::create(const CompileOptions &options, MLIRContext *ctx) {
  if (options.device == Device::CPU)
    return std::make_unique<CpuTarget>(options);
  llvm::Expected<std::string> chip = cudaChip();
  if (!chip)
    return chip.takeError();
  DialectRegistry gpuRegistry;
  registerAllGPUToLLVMIRTranslations(gpuRegistry);
  ctx->appendDialectRegistry(gpuRegistry);
  return std::make_unique<CudaTarget>(options, std::move(*chip));
}
