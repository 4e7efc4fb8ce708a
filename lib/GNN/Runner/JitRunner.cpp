//===- JitRunner.cpp - compile gnn functions and load them ----------------===//
//
// Part of gnnc. Compiling: the gnn-level passes, the compile cache's key
// and lookup, the lowering for the CPU or CUDA, code generation; loading:
// the objects linked against the runtime (RuntimeSymbols.cpp). Calls are
// Invocation.cpp's.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/JitRunner.h"
#include "DeviceMemory.h"
#include "GNN/InitAll.h"
#include "GNN/Pipelines/Pipelines.h"
#include "GNN/Runner/ObjectCode.h"
#include "GNN/Support/CompileCache.h"
#include "RunnerDetail.h"
#include "gnnc/cuda.h"
#include "gnnc/dense.h"
#include "gnnc/errors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"

#include <chrono>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace mlir;
using namespace mlir::gnn;

#ifndef GNN_OPENMP_LIBRARY
#define GNN_OPENMP_LIBRARY "libomp.so"
#endif

namespace {
using mlir::gnn::detail::error;

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

JitProgram::~JitProgram() = default;

llvm::Expected<std::unique_ptr<JitProgram>>
JitProgram::compile(OwningOpRef<ModuleOp> module, llvm::StringRef entry,
                    std::vector<std::string> names,
                    const CompileOptions &options) {
  auto fn = module->lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isExternal())
    return error("no function '" + entry + "' with a body in the program");
  llvm::Expected<EntryPoint> signature = detail::signatureOf(fn, names);
  if (!signature)
    return signature.takeError();
  auto program = compile(std::move(module), {entry.str()}, options);
  if (program)
    (*program)->entries.front() = std::move(*signature);
  return program;
}

llvm::Expected<std::unique_ptr<JitProgram>>
JitProgram::compile(OwningOpRef<ModuleOp> module,
                    llvm::ArrayRef<std::string> entries,
                    const CompileOptions &options) {
  auto program = compileModule(std::move(module), entries, options);
  // The module and the passes' and code generator's memory are freed now,
  // but malloc keeps the pages: handed back, they do not stay resident
  // under everything the program allocates next (200 MB of a 6-layer
  // training run's peak).
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  return program;
}

llvm::Expected<std::unique_ptr<JitProgram>>
JitProgram::compileModule(OwningOpRef<ModuleOp> module,
                          llvm::ArrayRef<std::string> entries,
                          const CompileOptions &options) {
  MLIRContext *ctx = module->getContext();
  std::unique_ptr<JitProgram> program(new JitProgram());
  program->resident = std::make_unique<detail::ResidentCopies>();
  for (const std::string &name : entries) {
    auto fn = module->lookupSymbol<func::FuncOp>(name);
    if (!fn || fn.isExternal())
      return error("no function '" + name + "' with a body in the program");
    llvm::Expected<EntryPoint> signature = detail::signatureOf(fn, {});
    if (!signature)
      return signature.takeError();
    program->entries.push_back(std::move(*signature));
  }

  auto start = std::chrono::steady_clock::now();
  auto last = start;
  // Adds the time since the last lap to `phase`.
  auto lap = [&](double &phase) {
    auto now = std::chrono::steady_clock::now();
    phase += std::chrono::duration<double>(now - last).count();
    last = now;
  };
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) {
    diagStream << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  program->device = options.device;
  program->runtime =
      options.runtime ? options.runtime : gnn_rt_default_runtime();
  // What the code depends on besides the program.
  std::string target =
      "device=cpu parallel=" + std::to_string(int(options.parallel)) +
      " checked=" + std::to_string(int(options.checked)) +
      " device-loops=" + std::to_string(int(options.deviceLoops));
  LowerToNVVMOptions nvvmOptions;
  if (options.device == Device::CUDA) {
    llvm::Expected<std::string> chip = cudaChip();
    if (!chip)
      return chip.takeError();
    DialectRegistry gpuRegistry;
    registerAllGPUToLLVMIRTranslations(gpuRegistry);
    ctx->appendDialectRegistry(gpuRegistry);
    nvvmOptions.fuse = options.fuse;
    nvvmOptions.chip = *chip;
    // PTX: the driver compiles it for the device (and caches the result),
    // so running needs no CUDA toolkit.
    nvvmOptions.format = "isa";
    nvvmOptions.asyncLaunches = options.asyncLaunches;
    program->asyncLaunches = nvvmOptions.asyncLaunches;
    target = "device=cuda chip=" + *chip + " format=isa async-launches=" +
             std::to_string(int(nvvmOptions.asyncLaunches));
  }

  // Only the entry points are called from outside: every other function
  // becomes private, and those no entry reaches are dropped before any
  // lowering spends time on them (a training module's undifferentiated
  // loss, for one).
  for (auto fn : module->getOps<func::FuncOp>())
    if (fn.isPublic() && !fn.isExternal() &&
        !llvm::is_contained(entries, fn.getSymName().str()))
      fn.setPrivate();
  PassManager gnnLevel(ctx);
  gnnLevel.addPass(createSymbolDCEPass());
  buildGNNLevelPipeline(gnnLevel, options.fuse);
  if (failed(gnnLevel.run(*module)))
    return error("lowering failed:\n" + diagStream.str());

  // The compile cache: the program after the gnn-level passes (with its
  // locations, which error messages show), how it is lowered, for which
  // host, by which build of gnnc and LLVM.
  std::string key;
  std::optional<std::vector<std::string>> objects;
  std::vector<std::string> entryNames;
  for (const EntryPoint &e : program->entries)
    entryNames.push_back(e.name);
  if (options.cache) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags().enableDebugInfo());
    std::string entryList = llvm::join(entryNames, ",");
    key = compileCacheKey({"gnnc compile cache 1", executableIdentity(),
                           LLVM_VERSION_STRING, hostTargetDescription(), target,
                           entryList, text});
    objects = options.cache->load(key);
  }
  program->info.cacheHit = objects.has_value();
  lap(program->info.passSeconds);

  if (!objects) {
    PassManager pm(ctx);
    if (options.device == Device::CUDA) {
      if (failed(buildNVVMCodegenPipeline(pm, nvvmOptions)))
        return error("cannot build the lowering pipeline");
    } else {
      LowerToCPUOptions cpuOptions;
      cpuOptions.fuse = options.fuse;
      cpuOptions.parallel = options.parallel;
      cpuOptions.checked = options.checked;
      cpuOptions.deviceLoops = options.deviceLoops;
      if (failed(buildCPUCodegenPipeline(pm, cpuOptions)))
        return error("cannot build the lowering pipeline");
    }
    if (failed(pm.run(*module)))
      return error("lowering failed:\n" + diagStream.str());
    lap(program->info.passSeconds);
    DialectRegistry registry;
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    registerOpenMPDialectTranslation(registry);
    ctx->appendDialectRegistry(registry);
    llvm::Expected<std::vector<std::string>> emitted =
        emitHostObjects(*module, entryNames, options.compileThreads);
    if (!emitted)
      return error("JIT compilation failed: " +
                   llvm::toString(emitted.takeError()));
    objects = std::move(*emitted);
    lap(program->info.llvmSeconds);
    if (options.cache)
      options.cache->storeOrWarn(key, *objects);
  }

  // Every BLAS call of a CPU program runs on its calling thread: parallel
  // programs split each dense layer over OpenMP's threads (a multithreaded
  // BLAS inside would compete with them for the cores), serial ones run on
  // one core.
  if (options.device == Device::CPU)
    gnn_rt_set_dense_threads(1);
  // Compiled code reports bad input and runs dense layers through the
  // runtime.
  std::map<std::string, void *> symbols =
      detail::linkedSymbols(options.device, program->asyncLaunches);
  std::vector<std::string> libraries;
  if (options.parallel && options.device == Device::CPU)
    libraries.push_back(GNN_OPENMP_LIBRARY);
  llvm::Expected<std::unique_ptr<ObjectJit>> jit =
      ObjectJit::load(*objects, symbols, libraries, options.perfMap);
  if (!jit)
    return error("JIT compilation failed: " + llvm::toString(jit.takeError()));
  program->jit = std::move(*jit);
  // Link everything now rather than at the first call.
  for (const EntryPoint &e : program->entries) {
    llvm::Expected<ObjectJit::PackedFunction> fn =
        program->jit->lookupPacked(e.name);
    if (!fn)
      return error("JIT compilation of '" + e.name +
                   "' failed: " + llvm::toString(fn.takeError()));
    program->packed.push_back(*fn);
  }
  lap(program->info.linkSeconds);
  program->info.seconds = std::chrono::duration<double>(last - start).count();
  return program;
}

llvm::Expected<RuntimeInstance>
mlir::gnn::createRuntime(const gnn_rt_settings &settings) {
  if (const char *problem = gnn_rt_settings_problem(&settings))
    return error(problem);
  RuntimeInstance runtime(gnn_rt_runtime_create(&settings));
  if (!runtime)
    return error("out of memory for a runtime instance");
  return runtime;
}

llvm::Expected<HostTensor> mlir::gnn::unifiedCopy(const HostTensor &t) {
  char message[512];
  size_t bytes = t.numBytes();
  void *block = gnn_cuda_alloc(bytes);
  if (!block || !gnn_cuda_copy(block, t.data(), bytes)) {
    gnn_cuda_free(block);
    (void)gnn_rt_take_error(message, sizeof(message));
    return error(llvm::Twine("cannot keep a tensor in unified memory: ") +
                 message);
  }
  HostTensor u;
  u.dtype = t.dtype;
  u.shape = t.shape;
  u.adopt(block, block, &gnn_cuda_free);
  return u;
}
