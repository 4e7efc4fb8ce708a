//===- JitRunner.cpp - compile gnn functions and load them ----------------===//
//
// Part of gnnc. Compiling: the gnn-level passes, the compile cache's key
// and lookup, the lowering for the device (CodegenTarget.h), code
// generation; loading: the objects linked against the runtime
// (RuntimeSymbols.cpp). Calls are Invocation.cpp's.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/JitRunner.h"
#include "CodegenTarget.h"
#include "DeviceMemory.h"
#include "GNN/InitAll.h"
#include "GNN/Pipelines/Pipelines.h"
#include "GNN/Runner/ObjectCode.h"
#include "GNN/Support/CompileCache.h"
#include "RunnerDetail.h"
#include "gnnc/cuda.h"
#include "gnnc/errors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
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

namespace {
using mlir::gnn::detail::error;
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
  llvm::Expected<std::unique_ptr<detail::CodegenTarget>> target =
      detail::CodegenTarget::create(options, ctx);
  if (!target)
    return target.takeError();
  program->asyncLaunches = (*target)->asyncLaunches();

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
  buildGNNLevelPipeline(gnnLevel, options.fuse,
                        options.device == Device::CUDA || options.deviceLoops);
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
                           LLVM_VERSION_STRING, hostTargetDescription(),
                           (*target)->description(), entryList, text});
    objects = options.cache->load(key);
  }
  program->info.cacheHit = objects.has_value();
  lap(program->info.passSeconds);

  if (!objects) {
    PassManager pm(ctx);
    if (failed((*target)->buildPipeline(pm)))
      return error("cannot build the lowering pipeline");
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

  (*target)->prepareRuntime();
  // Compiled code reports bad input and runs dense layers through the
  // runtime.
  llvm::Expected<std::unique_ptr<ObjectJit>> jit =
      ObjectJit::load(*objects, (*target)->linkedSymbols(),
                      (*target)->libraries(), options.perfMap);
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
