//===- JitRunner.cpp - compile and run gnn functions on the CPU -----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/JitRunner.h"
#include "GNN/Conversion/RuntimeABI.h"
#include "GNN/IR/GNNOps.h"
#include "GNN/InitAll.h"
#include "GNN/Pipelines/Pipelines.h"
#include "GNN/Runner/ObjectCode.h"
#include "GNN/Support/CompileCache.h"
#include "gnnc/cuda.h"
#include "gnnc/dense.h"
#include "gnnc/errors.h"
#include "gnnc/graph.h"
#include "gnnc/memory.h"
#include "gnnc/tape.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"

#include <chrono>
#include <cstdlib>
#include <deque>
#include <set>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace mlir;
using namespace mlir::gnn;

// From libomp, which runs the parallel loops of compiled code.
extern "C" void omp_set_num_threads(int);
extern "C" int omp_get_max_threads(void);

#ifndef GNN_OPENMP_LIBRARY
#define GNN_OPENMP_LIBRARY "libomp.so"
#endif

namespace {
llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::optional<DType> dtypeOf(Type type) {
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  if (type.isIndex() || type.isInteger(64))
    return DType::I64;
  if (type.isInteger(32))
    return DType::I32;
  if (type.isInteger(8))
    return DType::I8;
  if (type.isInteger(1))
    return DType::Bool;
  return std::nullopt;
}

/// Row requirements that gnn ops (GraphFeatureOpInterface) put on the
/// entry's tensor arguments.
std::vector<RowRequirement> collectRequirements(func::FuncOp fn) {
  std::vector<RowRequirement> out;
  auto argIndex = [&](Value v) -> std::optional<unsigned> {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &fn.getBody().front())
      return std::nullopt;
    return arg.getArgNumber();
  };
  auto kindOf = [](RowKind kind) {
    switch (kind) {
    case RowKind::SrcNodes:
      return RowRequirement::SrcRows;
    case RowKind::DstNodes:
      return RowRequirement::DstRows;
    case RowKind::Edges:
      return RowRequirement::EdgeRows;
    case RowKind::EdgeIds:
      return RowRequirement::EdgeIds;
    }
    llvm_unreachable("unknown row kind");
  };
  fn.walk([&](GraphFeatureOpInterface op) {
    SmallVector<FeatureRows> rows;
    op.getRowRequirements(rows);
    std::optional<unsigned> g = argIndex(op.getFeatureGraph());
    for (const FeatureRows &r : rows)
      if (std::optional<unsigned> t = argIndex(r.feature); g && t)
        out.push_back({*t, *g, kindOf(r.kind)});
  });
  return out;
}

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

/// Where arguments live during a call: in place on the CPU, in unified
/// memory copies (freed with this object) for a GPU.
class ArgumentPlacement {
public:
  explicit ArgumentPlacement(Device device) : device(device) {}
  ArgumentPlacement(const ArgumentPlacement &) = delete;
  ArgumentPlacement &operator=(const ArgumentPlacement &) = delete;
  ~ArgumentPlacement() {
    for (void *copy : copies)
      gnn_cuda_free(copy);
  }

  /// Sets `placed` to the buffer to hand compiled code (null data stays
  /// null on the CPU: an empty tensor); false after the runtime reported
  /// why not. Storage in unified memory (a trainer's parameters and
  /// moments) is handed over as it is.
  bool place(const void *data, size_t bytes, const void *&placed) {
    placed = data;
    if (device == Device::CPU || gnn_cuda_is_unified(data))
      return true;
    void *copy = gnn_cuda_alloc(bytes);
    if (!copy)
      return false;
    copies.push_back(copy);
    if (!gnn_cuda_copy(copy, data, bytes))
      return false;
    placed = copy;
    return true;
  }

private:
  Device device;
  std::vector<void *> copies;
};

/// A memref descriptor {allocated, aligned, offset, sizes..., strides...}.
std::vector<int64_t> descriptor(const void *data,
                                const std::vector<int64_t> &shape) {
  std::vector<int64_t> d = {reinterpret_cast<int64_t>(data),
                            reinterpret_cast<int64_t>(data), 0};
  d.insert(d.end(), shape.begin(), shape.end());
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  d.insert(d.end(), strides.begin(), strides.end());
  return d;
}
} // namespace

/// Sizes bound as graph counts are (GNN_GRAPH_MAX_COUNT). A tensor with no
/// elements costs no memory at any size, but compiled code still walks its
/// rows: its sizes are bounded far lower (a [2^40, 0] input ran for
/// minutes).
static llvm::Error checkExtents(const std::string &name, const HostTensor &t) {
  constexpr int64_t kMaxEmptyExtent = int64_t(1) << 24;
  bool empty = llvm::is_contained(t.shape, 0);
  for (auto [d, size] : llvm::enumerate(t.shape)) {
    if (size > GNN_GRAPH_MAX_COUNT)
      return error("argument '" + name + "' has size " + llvm::Twine(size) +
                   " in dimension " + llvm::Twine(d) + ", more than 2^40");
    if (empty && size > kMaxEmptyExtent)
      return error("argument '" + name + "' has no elements but size " +
                   llvm::Twine(size) + " in dimension " + llvm::Twine(d) +
                   ", more than 2^24");
  }
  return llvm::Error::success();
}

/// The signature of `fn`; `names` override `gnn.name` argument attributes.
static llvm::Expected<EntryPoint>
signatureOf(func::FuncOp fn, llvm::ArrayRef<std::string> names) {
  EntryPoint entry;
  entry.name = fn.getSymName().str();
  for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
    Parameter p;
    if (i < names.size() && !names[i].empty())
      p.name = names[i];
    else if (auto name = fn.getArgAttrOfType<StringAttr>(
                 i, gnn::GNNDialect::kNameAttrName))
      p.name = name.str();
    else
      p.name = "arg" + std::to_string(i);
    auto writable = fn.getArgAttrOfType<BoolAttr>(
        i, bufferization::BufferizationDialect::kWritableAttrName);
    p.writable = writable && writable.getValue();
    if (isa<GraphType>(type)) {
      p.isGraph = true;
    } else if (auto tensor = dyn_cast<RankedTensorType>(type)) {
      std::optional<DType> dtype = dtypeOf(tensor.getElementType());
      if (!dtype)
        return error("argument '" + p.name + "' of '" + entry.name +
                     "' has unsupported element type");
      p.dtype = *dtype;
      p.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    } else {
      return error("argument '" + p.name + "' of '" + entry.name +
                   "' must be a graph or a ranked tensor");
    }
    entry.parameters.push_back(std::move(p));
  }
  for (auto [i, type] : llvm::enumerate(fn.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<DType> dtype =
        tensor ? dtypeOf(tensor.getElementType()) : std::nullopt;
    if (!dtype)
      return error("result #" + llvm::Twine(i) + " of '" + entry.name +
                   "' must be a ranked tensor of a supported element type");
    Parameter p;
    if (auto name = fn.getResultAttrOfType<StringAttr>(
            i, gnn::GNNDialect::kNameAttrName))
      p.name = name.str();
    else
      p.name = "result" + std::to_string(i);
    p.dtype = *dtype;
    p.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    if (auto updated = fn.getResultAttrOfType<StringAttr>(
            i, gnn::GNNDialect::kUpdatesAttrName)) {
      auto it = llvm::find_if(entry.parameters, [&](const Parameter &a) {
        return a.writable && a.name == updated.getValue() &&
               a.dtype == p.dtype && a.shape == p.shape;
      });
      if (it == entry.parameters.end())
        return error("result '" + p.name + "' of '" + entry.name +
                     "' updates '" + updated.getValue() +
                     "', which is not a writable argument of its type");
      p.updates = unsigned(it - entry.parameters.begin());
    }
    entry.results.push_back(std::move(p));
  }
  // Arguments are bound and results written by name: two of one name would
  // bind one of them twice, or lose one.
  for (auto [kind, list] : {std::pair{"arguments", &entry.parameters},
                            {"results", &entry.results}}) {
    llvm::StringMap<size_t> seen;
    for (auto [i, p] : llvm::enumerate(*list))
      if (auto [it, fresh] = seen.try_emplace(p.name, i); !fresh)
        return error(llvm::Twine(kind) + " #" + llvm::Twine(it->second) +
                     " and #" + llvm::Twine(i) + " of '" + entry.name +
                     "' are both named '" + p.name + "'");
  }
  entry.requirements = collectRequirements(fn);
  return entry;
}

JitProgram::~JitProgram() {
  for (auto &[data, resident] : resident)
    gnn_cuda_free(resident.copy);
}

bool JitProgram::placeResident(const void *data, size_t bytes,
                               const void *&placed) {
  placed = data;
  if (gnn_cuda_is_unified(data))
    return true;
  std::lock_guard<std::mutex> lock(residentMutex);
  ResidentCopy &r = resident[data];
  if (!r.copy || r.bytes != bytes) {
    gnn_cuda_free(r.copy);
    r = {gnn_cuda_alloc(bytes), bytes};
    if (!r.copy || !gnn_cuda_copy(r.copy, data, bytes)) {
      gnn_cuda_free(r.copy);
      resident.erase(data);
      return false;
    }
  }
  placed = r.copy;
  return true;
}

llvm::Expected<std::unique_ptr<JitProgram>>
JitProgram::compile(OwningOpRef<ModuleOp> module, llvm::StringRef entry,
                    std::vector<std::string> names,
                    const CompileOptions &options) {
  auto fn = module->lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isExternal())
    return error("no function '" + entry + "' with a body in the program");
  llvm::Expected<EntryPoint> signature = signatureOf(fn, names);
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
  for (const std::string &name : entries) {
    auto fn = module->lookupSymbol<func::FuncOp>(name);
    if (!fn || fn.isExternal())
      return error("no function '" + name + "' with a body in the program");
    llvm::Expected<EntryPoint> signature = signatureOf(fn, {});
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
  bool onGPU = options.device == Device::CUDA;
  std::map<std::string, void *> symbols =
      runtimeSymbols(options.device, program->asyncLaunches);
  auto add = [&](llvm::StringRef name, auto *fn) {
    symbols[name.str()] = reinterpret_cast<void *>(fn);
  };
  // Buffers: unified memory for a GPU, the runtime's reusing pool on the
  // CPU. Launches go through gnnc's CUDA runtime (only called when compiled
  // for CUDA).
  add("_mlir_memref_to_llvm_alloc", onGPU ? &gnn_cuda_alloc : &gnn_rt_alloc);
  add("_mlir_memref_to_llvm_aligned_alloc",
      onGPU ? &gnn_cuda_aligned_alloc : &gnn_rt_aligned_alloc);
  add("_mlir_memref_to_llvm_free", onGPU ? &gnn_cuda_free : &gnn_rt_free);
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
  if (settings.threads < 0)
    return error("a runtime's thread count must not be negative");
  if (settings.tape_budget_bytes < 0)
    return error("a runtime's tape budget must not be negative");
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
      {abi::kBadValue, fn(&gnn_rt_bad_value), fn(&gnn_rt_bad_value)},
      // Host code allocates a GPU program's tensors (in unified memory).
      {abi::kAllocationLimit, fn(&gnn_rt_allocation_limit_bytes),
       fn(&gnn_rt_allocation_limit_bytes)},
      // A GPU program's tape keeps its buffers in unified memory.
      {abi::kTapeCreate, fn(&gnn_rt_tape_create), fn(&gnn_cuda_tape_create)},
      {abi::kTapeFree, fn(&gnn_rt_tape_free), fn(&gnn_rt_tape_free)},
      // Only GPU programs call it; on the CPU nothing is ever in flight.
      {abi::kWaitForLaunches, fn(&gnn_cuda_wait_for_launches),
       fn(&gnn_cuda_wait_for_launches)},
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

void JitProgram::setThreads(int threads) {
  // "All cores" is OpenMP's own default: OMP_NUM_THREADS where the user set
  // it (a container's CPU quota does not show in the affinity mask that
  // OpenMP counts cores by), the cores this process may run on otherwise.
  // Read before the first call here changes the calling thread's setting.
  static const int allCores = omp_get_max_threads();
  omp_set_num_threads(threads > 0 ? threads : allCores);
}

const EntryPoint *JitProgram::lookup(llvm::StringRef name) const {
  for (const EntryPoint &e : entries)
    if (e.name == name)
      return &e;
  return nullptr;
}

llvm::Expected<std::vector<HostTensor>>
JitProgram::run(llvm::StringRef name, llvm::ArrayRef<Argument> args,
                int threads) {
  const EntryPoint *entry = lookup(name);
  if (!entry)
    return error("the program has no entry '" + name + "'");
  return run(*entry, args, threads);
}

llvm::Expected<std::map<std::string, HostTensor>>
JitProgram::runNamed(llvm::StringRef name, Binder bind, int threads) {
  const EntryPoint *entry = lookup(name);
  if (!entry)
    return error("the program has no entry '" + name + "'");
  std::vector<Argument> args;
  for (auto [i, p] : llvm::enumerate(entry->parameters)) {
    llvm::Expected<Argument> a = bind(p, i);
    if (!a)
      return a.takeError();
    args.push_back(*a);
  }
  llvm::Expected<std::vector<HostTensor>> results = run(*entry, args, threads);
  if (!results)
    return results.takeError();
  std::map<std::string, HostTensor> named;
  for (auto [p, t] : llvm::zip_equal(entry->results, *results))
    named[p.name] = std::move(t);
  return named;
}

namespace {
llvm::Error check(const EntryPoint &entry, llvm::ArrayRef<Argument> args) {
  const std::vector<Parameter> &parameters = entry.parameters;
  if (args.size() != parameters.size())
    return error("expected " + llvm::Twine(parameters.size()) +
                 " arguments, got " + llvm::Twine(args.size()));
  for (auto [i, p] : llvm::enumerate(parameters)) {
    const Argument &a = args[i];
    if (p.isGraph) {
      if (!a.graph)
        return error("argument '" + p.name + "' must be a graph");
      continue;
    }
    if (!a.value())
      return error("argument '" + p.name + "' must be a tensor");
    if (a.updated && !p.writable)
      return error("argument '" + p.name +
                   "' is read-only; it cannot be updated in place");
    const HostTensor &t = *a.value();
    if (t.dtype != p.dtype)
      return error("argument '" + p.name + "' has dtype " + dtypeName(t.dtype) +
                   ", expected " + dtypeName(p.dtype));
    if (t.shape.size() != p.shape.size())
      return error("argument '" + p.name + "' has rank " +
                   llvm::Twine(t.shape.size()) + ", expected " +
                   llvm::Twine(p.shape.size()));
    for (auto [d, size] : llvm::enumerate(p.shape))
      if (!ShapedType::isDynamic(size) && t.shape[d] != size)
        return error("argument '" + p.name + "' has size " +
                     llvm::Twine(t.shape[d]) + " in dimension " +
                     llvm::Twine(d) + ", expected " + llvm::Twine(size));
    if (llvm::Error e = checkExtents(p.name, t))
      return e;
  }
  for (const RowRequirement &r : entry.requirements) {
    const gnn_graph &g = *args[r.graphArg].graph;
    const HostTensor &t = *args[r.arg].value();
    const std::string &name = parameters[r.arg].name;
    const std::string &graphName = parameters[r.graphArg].name;
    int64_t rows = t.shape.empty() ? 0 : t.shape[0];
    auto expect = [&](int64_t n, const char *what) -> llvm::Error {
      if (rows == n)
        return llvm::Error::success();
      return error("argument '" + name + "' has " + llvm::Twine(rows) +
                   " rows, but graph '" + graphName + "' has " +
                   llvm::Twine(n) + " " + what);
    };
    switch (r.kind) {
    case RowRequirement::SrcRows:
      if (auto e = expect(g.num_src, "source nodes"))
        return e;
      break;
    case RowRequirement::DstRows:
      if (auto e = expect(g.num_dst, "destination nodes"))
        return e;
      break;
    case RowRequirement::EdgeRows:
      if (auto e = expect(g.num_edges, "edges"))
        return e;
      break;
    case RowRequirement::EdgeIds:
      for (int64_t i = 0; i < t.numElements(); ++i)
        if (t.as<int64_t>()[i] < 0 || t.as<int64_t>()[i] >= g.num_edges)
          return error("argument '" + name + "' holds edge id " +
                       llvm::Twine(t.as<int64_t>()[i]) + ", but graph '" +
                       graphName + "' has " + llvm::Twine(g.num_edges) +
                       " edges");
      break;
    }
  }
  return llvm::Error::success();
}
} // namespace

namespace {
/// Binds the calling thread to a run's context while it lives.
class BoundContext {
public:
  explicit BoundContext(gnn_rt_context *context)
      : before(gnn_rt_context_bind(context)) {}
  ~BoundContext() { gnn_rt_context_bind(before); }

private:
  gnn_rt_context *before;
};
} // namespace

llvm::Expected<std::vector<HostTensor>>
JitProgram::run(const EntryPoint &entry, llvm::ArrayRef<Argument> args,
                int threads) {
  if (auto e = check(entry, args))
    return std::move(e);
  const std::vector<Parameter> &parameters = entry.parameters;
  const std::vector<Parameter> &results = entry.results;
  // Storage of every argument value, then pointers to each for the packed
  // call: result pointer first, then descriptors and scalars.
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<int64_t> scalars;
  descriptors.reserve(args.size() * 6 + 1);
  scalars.reserve(args.size());
  std::vector<void *> pointers;
  pointers.reserve(args.size() * 6 + 1);
  std::vector<void *> packedArgs;
  std::set<const void *> inputBuffers;
  // Writable parameters: the storage the caller handed over, or a private
  // copy; where the program updated them (the argument's buffer).
  std::map<unsigned, HostTensor *> updatedTensors;
  std::map<unsigned, const void *> updatedBuffers;
  std::deque<HostTensor> privateCopies;

  // Updates of writable arguments are not returned.
  size_t resultWords = 0;
  for (const Parameter &r : results)
    if (!r.updates)
      resultWords += 3 + 2 * r.shape.size();
  std::vector<int64_t> resultStorage(std::max<size_t>(resultWords, 1));
  // A function whose results are all updates returns nothing: no result
  // pointer.
  bool returnsResults = llvm::any_of(
      results, [](const Parameter &r) { return !r.updates.has_value(); });
  if (returnsResults) {
    pointers.push_back(resultStorage.data());
    packedArgs.push_back(&pointers.back());
  }
  // This run's errors go into a context of its own (the first argument),
  // bound to this thread while it runs, so that the runtime's own failures
  // (libraries, GPU driver) go there too; buffers come from the instance's
  // pool.
  std::unique_ptr<gnn_rt_context, void (*)(gnn_rt_context *)> context(
      gnn_rt_context_create_in(runtime), &gnn_rt_context_destroy);
  if (!context)
    return error("out of memory for the runtime context");
  BoundContext bound(context.get());
  gnn_rt_context_set_tape_budget(context.get(), tapeBudget);
  if (threads == kInstanceThreads) {
    gnn_rt_settings settings;
    gnn_rt_runtime_settings(runtime, &settings);
    threads = settings.threads;
  }
  setThreads(threads);
  void *contextArgument = context.get();
  packedArgs.push_back(&contextArgument);
  char message[512];
  auto takeError = [&] {
    return gnn_rt_context_take_error(context.get(), message, sizeof(message));
  };
  ArgumentPlacement placement(device);
  auto addBuffer = [&](const void *data, size_t bytes,
                       const std::vector<int64_t> &shape,
                       bool constant) -> llvm::Error {
    const void *placed = nullptr;
    bool resident = constant && device == Device::CUDA;
    if (!(resident ? placeResident(data, bytes, placed)
                   : placement.place(data, bytes, placed))) {
      (void)takeError();
      return error(llvm::Twine("cannot place an argument on the device: ") +
                   message);
    }
    descriptors.push_back(descriptor(placed, shape));
    inputBuffers.insert(placed);
    pointers.push_back(descriptors.back().data());
    packedArgs.push_back(&pointers.back());
    return llvm::Error::success();
  };
  for (auto [i, p] : llvm::enumerate(parameters)) {
    if (p.isGraph) {
      // The parts in gnn_graph_part order (the graph type conversion's).
      const gnn_graph &g = *args[i].graph;
      scalars.push_back(g.num_src);
      packedArgs.push_back(&scalars.back());
      std::pair<const int64_t *, int64_t> arrays[GNN_GRAPH_NUM_PARTS];
      arrays[GNN_GRAPH_PART_SRC] = {g.src, g.num_edges};
      arrays[GNN_GRAPH_PART_DST] = {g.dst, g.num_edges};
      arrays[GNN_GRAPH_PART_IN_PTR] = {g.in_ptr, g.num_dst + 1};
      arrays[GNN_GRAPH_PART_IN_SRC] = {g.in_src, g.num_edges};
      arrays[GNN_GRAPH_PART_IN_EID] = {g.in_eid, g.num_edges};
      static_assert(GNN_GRAPH_PART_NUM_SRC == 0, "the count comes first");
      for (int part = GNN_GRAPH_PART_SRC; part < GNN_GRAPH_NUM_PARTS; ++part) {
        auto [array, n] = arrays[part];
        if (llvm::Error e = addBuffer(array, n * sizeof(int64_t), {n},
                                      /*constant=*/false))
          return std::move(e);
      }
      continue;
    }
    const HostTensor *t = args[i].value();
    if (p.writable)
      t = updatedTensors[i] =
          args[i].updated ? args[i].updated : &privateCopies.emplace_back(*t);
    if (llvm::Error e =
            addBuffer(t->data(), t->numElements() * dtypeSize(t->dtype),
                      t->shape, args[i].constant))
      return std::move(e);
    if (p.writable)
      updatedBuffers[i] = reinterpret_cast<const void *>(descriptors.back()[0]);
  }

  packed[&entry - entries.data()](packedArgs.data());
  if (device == Device::CUDA)
    (void)gnn_cuda_synchronize(); // failures are reported
  bool failedInside = takeError();

  // The update of writable argument i: a view of the storage the caller
  // handed over (a GPU program's update is copied back into it first,
  // unless that storage is the unified memory it updated), or the private
  // copy.
  auto updatedResult = [&](unsigned i) {
    HostTensor &in = *updatedTensors[i];
    if (device == Device::CUDA && in.numBytes() > 0 &&
        in.data() != updatedBuffers[i] &&
        !gnn_cuda_copy(in.data(), updatedBuffers[i], in.numBytes()))
      failedInside |= takeError();
    if (!args[i].updated)
      return std::move(in);
    return in.view();
  };
  std::vector<HostTensor> outputs;
  std::set<void *> released;
  std::vector<void *> copied;
  const int64_t *word = resultStorage.data();
  for (const Parameter &r : results) {
    if (r.updates) {
      outputs.push_back(updatedResult(*r.updates));
      continue;
    }
    size_t rank = r.shape.size();
    auto *allocated = reinterpret_cast<void *>(word[0]);
    auto *aligned = reinterpret_cast<char *>(word[1]);
    int64_t offset = word[2];
    HostTensor t;
    t.dtype = r.dtype;
    t.shape.assign(word + 3, word + 3 + rank);
    const int64_t *strides = word + 3 + rank;
    word += 3 + 2 * rank;
    size_t elem = dtypeSize(r.dtype);
    int64_t count = t.numElements();
    bool rowMajor = true;
    for (int64_t d = int64_t(rank) - 1, stride = 1; d >= 0; --d) {
      rowMajor &= t.shape[d] <= 1 || strides[d] == stride;
      stride *= t.shape[d];
    }
    const char *from = aligned + offset * elem;
    // Buffers the program allocated are ours: a row-major CPU result is
    // taken over as it is (the first result in a buffer; the runtime's pool
    // gets it back when the tensor goes); others are freed once every result
    // is copied (results may share a buffer). An input handed back is not
    // ours.
    bool owned = allocated && !inputBuffers.count(allocated) &&
                 !released.count(allocated);
    if (owned)
      released.insert(allocated);
    if (owned && rowMajor && device == Device::CPU) {
      t.adopt(allocated, const_cast<char *>(from), &gnn_rt_free);
      outputs.push_back(std::move(t));
      continue;
    }
    t.allocate();
    // Strided results are copied element by element in row order. A GPU
    // result comes to the host by the copy engines: a row-major one straight
    // into the tensor, a strided one as all the elements it spans.
    std::vector<char> staged;
    bool onGPU = device == Device::CUDA && count > 0;
    if (onGPU && !rowMajor) {
      int64_t span = 1;
      for (size_t d = 0; d < rank; ++d)
        span += (t.shape[d] - 1) * strides[d];
      staged.resize(span * elem);
      from = staged.data();
    }
    if (onGPU && !gnn_cuda_copy(rowMajor ? t.data() : staged.data(),
                                aligned + offset * elem,
                                rowMajor ? count * elem : staged.size()))
      failedInside |= takeError();
    std::vector<int64_t> index(rank, 0);
    if (rowMajor && count > 0 && !onGPU)
      std::memcpy(t.data(), from, count * elem);
    for (int64_t n = 0; !rowMajor && n < count; ++n) {
      int64_t at = 0;
      for (size_t d = 0; d < rank; ++d)
        at += index[d] * strides[d];
      std::memcpy(static_cast<char *>(t.data()) + n * elem, from + at * elem,
                  elem);
      for (int d = int(rank) - 1; d >= 0; --d) {
        if (++index[d] < t.shape[d])
          break;
        index[d] = 0;
      }
    }
    if (owned)
      copied.push_back(allocated);
    outputs.push_back(std::move(t));
  }
  for (void *buffer : copied) {
    if (device == Device::CUDA)
      gnn_cuda_free(buffer);
    else
      gnn_rt_free(buffer);
  }
  if (failedInside)
    return error(llvm::Twine(message));
  return outputs;
}
