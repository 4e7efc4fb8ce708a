//===- RuntimeSymbols.cpp - what compiled programs link against ----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "RunnerDetail.h"

#include "GNN/Conversion/RuntimeABI.h"
#include "gnnc/cuda.h"
#include "gnnc/dense.h"
#include "gnnc/errors.h"
#include "gnnc/memory.h"
#include "gnnc/runtime.h"
#include "gnnc/tape.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

using namespace mlir;
using namespace mlir::gnn;

std::map<std::string, void *> mlir::gnn::runtimeSymbols(Device device,
                                                        bool asyncLaunches) {
  auto fn = [](auto *address) { return reinterpret_cast<void *>(address); };
  // Each listed function's CPU and GPU implementation: dense layers and the
  // backward's products run on cuBLAS when the program runs on the GPU.
  struct Binding {
    llvm::StringRef name;
    void *cpu, *gpu;
    /// A GPU program with asynchronous launches (default: gpu).
    void *gpuAsync = nullptr;
  };
  const Binding bindings[] = {
      {abi::kLinear, fn(&_mlir_ciface_gnn_rt_linear), fn(&gnn_cuda_linear),
       fn(&gnn_cuda_linear_queued)},
      {abi::kLinearNoBias, fn(&_mlir_ciface_gnn_rt_linear_nobias),
       fn(&gnn_cuda_linear_nobias), fn(&gnn_cuda_linear_nobias_queued)},
      {abi::kGemm, fn(&_mlir_ciface_gnn_rt_gemm), fn(&gnn_cuda_gemm),
       fn(&gnn_cuda_gemm_queued)},
      {abi::kGemmAt, fn(&_mlir_ciface_gnn_rt_gemm_at), fn(&gnn_cuda_gemm_at),
       fn(&gnn_cuda_gemm_at_queued)},
      // Only the CPU's block tiles transpose (convert-gnn-to-loops builds
      // none in device form); a GPU program has the host's function bound.
      {abi::kTranspose, fn(&_mlir_ciface_gnn_rt_transpose),
       fn(&_mlir_ciface_gnn_rt_transpose)},
      {abi::kEdgeOutOfRange, fn(&gnn_rt_edge_out_of_range),
       fn(&gnn_rt_edge_out_of_range)},
      {abi::kRowsMismatch, fn(&gnn_rt_rows_mismatch),
       fn(&gnn_rt_rows_mismatch)},
      {abi::kBadCoo, fn(&gnn_rt_bad_coo), fn(&gnn_rt_bad_coo)},
      {abi::kIdOutOfRange, fn(&gnn_rt_id_out_of_range),
       fn(&gnn_rt_id_out_of_range)},
      // After the kernels: on the host, or queued on their stream.
      {abi::kCheckBadId, fn(&_mlir_ciface_gnn_rt_check_bad_id),
       fn(&_mlir_ciface_gnn_rt_check_bad_id),
       fn(&_mlir_ciface_gnn_cuda_check_bad_id_queued)},
      {abi::kCheckRepeatedId, fn(&_mlir_ciface_gnn_rt_check_repeated_id),
       fn(&_mlir_ciface_gnn_rt_check_repeated_id),
       fn(&_mlir_ciface_gnn_cuda_check_repeated_id_queued)},
      {abi::kBadValue, fn(&gnn_rt_bad_value), fn(&gnn_rt_bad_value)},
      // Host code allocates a GPU program's tensors (in unified memory).
      {abi::kAllocationLimit, fn(&gnn_rt_allocation_limit_bytes),
       fn(&gnn_rt_allocation_limit_bytes)},
      // A GPU program's tape keeps its buffers in unified memory; with
      // asynchronous launches its copies are queued after the kernels.
      {abi::kTapeCreate, fn(&gnn_rt_tape_create), fn(&gnn_cuda_tape_create),
       fn(&gnn_cuda_tape_create_queued)},
      {abi::kTapeFree, fn(&gnn_rt_tape_free), fn(&gnn_rt_tape_free)},
      {abi::kTapeRefused, fn(&gnn_rt_tape_refused), fn(&gnn_rt_tape_refused)},
      // Only CPU programs call it (their OpenMP threads).
      {abi::kContextBind, fn(&gnn_rt_context_bind), fn(&gnn_rt_context_bind)},
      // A GPU program's results are in unified memory, which the host's
      // hook reads; with asynchronous launches, possibly before the kernels
      // that write them end (the trainer announces on the CPU only).
      {abi::kResultReady, fn(&gnn_rt_result_ready), fn(&gnn_rt_result_ready)},
      // Only GPU programs call it; on the CPU nothing is ever in flight.
      {abi::kWaitForLaunches, fn(&gnn_cuda_wait_for_launches),
       fn(&gnn_cuda_wait_for_launches)},
      // Only GPU programs call them (gnn-gpu-place-buffers).
      {abi::kDeviceAlloc, fn(&_mlir_ciface_gnn_cuda_alloc_device),
       fn(&_mlir_ciface_gnn_cuda_alloc_device)},
      {abi::kHostAlloc, fn(&_mlir_ciface_gnn_cuda_alloc_host),
       fn(&_mlir_ciface_gnn_cuda_alloc_host)},
  };
  std::map<std::string, void *> symbols;
  for (const abi::RuntimeFunction &f : abi::kRuntimeFunctions) {
    const Binding *b = llvm::find_if(
        bindings, [&](const Binding &b) { return b.name == f.name; });
    void *bound = nullptr;
    if (b != std::end(bindings))
      bound = device == Device::CPU          ? b->cpu
              : asyncLaunches && b->gpuAsync ? b->gpuAsync
                                             : b->gpu;
    symbols[abi::symbolOf(f)] = bound;
  }
  // One push and one pop serve every element type and rank.
  for (const std::string &name : abi::tapePushSymbols())
    symbols[name] = fn(&gnn_rt_tape_push);
  for (const std::string &name : abi::tapePopSymbols())
    symbols[name] = fn(&gnn_rt_tape_pop);
  return symbols;
}

std::map<std::string, void *>
mlir::gnn::detail::linkedSymbols(Device device, bool asyncLaunches) {
  // Compiled code reports bad input and runs dense layers through the
  // runtime.
  std::map<std::string, void *> symbols = runtimeSymbols(device, asyncLaunches);
  auto add = [&](llvm::StringRef name, auto *fn) {
    symbols[name.str()] = reinterpret_cast<void *>(fn);
  };
  // Launches go through gnnc's CUDA runtime (only called when compiled for
  // CUDA).
  add("mgpuModuleLoad", &gnn_cuda_module_load);
  add("mgpuModuleLoadJIT", &gnn_cuda_module_load_jit);
  add("mgpuModuleUnload", &gnn_cuda_module_unload);
  add("mgpuModuleGetFunction", &gnn_cuda_module_get_function);
  add("mgpuLaunchKernel", &gnn_cuda_launch_kernel);
  add("mgpuStreamCreate", &gnn_cuda_stream_create);
  add("mgpuStreamDestroy", &gnn_cuda_stream_destroy);
  add("mgpuStreamSynchronize", &gnn_cuda_stream_synchronize);
  // MLIR's runtime copy between strided memrefs.
  add("memrefCopy", &memrefCopy);
  return symbols;
}
