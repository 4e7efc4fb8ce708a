//===- ObjectCode.cpp - host object code and a JIT that loads it ----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/ObjectCode.h"
#include "PerfMap.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <mutex>
#include <thread>

using namespace mlir;
using namespace mlir::gnn;

namespace {
constexpr llvm::StringLiteral kInit("_gnn_init");
constexpr llvm::StringLiteral kFini("_gnn_fini");
/// Code generation of a smaller module is not worth a split.
constexpr size_t kMinInstructionsToSplit = 2000;
/// Most parts a module is split into for code generation.
constexpr unsigned kMaxParts = 16;
/// A basic block longer than this is straight-line glue (a training step's
/// calls, an entry's unpacking of its arguments), not a loop body.
constexpr size_t kLongBlock = 2000;

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// The host target: position-independent code (the JIT maps objects
/// anywhere), -O2 code generation.
llvm::Expected<llvm::orc::JITTargetMachineBuilder> hostTarget() {
  initializeNativeTarget();
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> builder =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return builder.takeError();
  builder->setRelocationModel(llvm::Reloc::PIC_);
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  return builder;
}

/// Adds `void packedName(name)(void **args)` calling `_mlir_ciface_<name>`
/// with the values args[i] point at.
llvm::Error addPackedWrapper(llvm::Module &module, llvm::StringRef name) {
  llvm::Function *callee = module.getFunction(("_mlir_ciface_" + name).str());
  if (!callee || callee->isDeclaration())
    return error("no C interface for entry '" + name + "'");
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *wrapper = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false),
      llvm::GlobalValue::ExternalLinkage, packedName(name), module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  llvm::SmallVector<llvm::Value *> args;
  for (auto [i, param] : llvm::enumerate(callee->args())) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptr, wrapper->getArg(0), i);
    llvm::Value *at = b.CreateLoad(ptr, slot);
    args.push_back(b.CreateLoad(param.getType(), at));
  }
  llvm::Value *result = b.CreateCall(callee, args);
  if (!callee->getReturnType()->isVoidTy()) {
    llvm::Value *slot =
        b.CreateConstGEP1_64(ptr, wrapper->getArg(0), callee->arg_size());
    b.CreateStore(result, b.CreateLoad(ptr, slot));
  }
  b.CreateRetVoid();
  return llvm::Error::success();
}

/// Replaces the global constructor (or destructor) list `listName` by a
/// function `name` that calls them in order of priority (reversed for
/// destructors), so loaded objects need no initializer support.
void gatherInitializers(llvm::Module &module, llvm::StringRef listName,
                        llvm::StringRef name, bool reverse) {
  llvm::GlobalVariable *list = module.getNamedGlobal(listName);
  if (!list)
    return;
  std::vector<std::pair<uint64_t, llvm::Constant *>> calls;
  if (auto *array =
          llvm::dyn_cast_or_null<llvm::ConstantArray>(list->getInitializer()))
    for (llvm::Value *op : array->operands()) {
      auto *entry = llvm::cast<llvm::ConstantStruct>(op);
      auto *priority = llvm::cast<llvm::ConstantInt>(entry->getOperand(0));
      calls.push_back({priority->getZExtValue(), entry->getOperand(1)});
    }
  std::stable_sort(calls.begin(), calls.end(), [&](auto &a, auto &b) {
    return reverse ? a.first > b.first : a.first < b.first;
  });
  list->eraseFromParent();
  llvm::LLVMContext &ctx = module.getContext();
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                    name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  for (auto &[priority, callee] : calls)
    b.CreateCall(type, callee);
  b.CreateRetVoid();
}

/// Code generation of one module (in a context of its own) to an object.
llvm::Expected<std::string>
emitObject(llvm::Module &module,
           llvm::orc::JITTargetMachineBuilder targetBuilder) {
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      targetBuilder.createTargetMachine();
  if (!machine)
    return machine.takeError();
  llvm::SmallString<0> object;
  llvm::raw_svector_ostream out(object);
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, out, nullptr,
                                      llvm::CodeGenFileType::ObjectFile))
    return error("the host target cannot emit object files");
  codegen.run(module);
  return std::string(object.str());
}

/// Drops argument and result attributes that are not LLVM's (gnn.name,
/// gnn.runtime_context, ...): they mean nothing to LLVM, and translation
/// warns about each, printing the whole function every time.
void dropForeignParameterAttributes(ModuleOp module) {
  auto keep = [](DictionaryAttr attrs) -> DictionaryAttr {
    if (!attrs)
      return attrs;
    SmallVector<NamedAttribute> kept;
    for (NamedAttribute a : attrs)
      if (a.getName().getValue().starts_with("llvm."))
        kept.push_back(a);
    return DictionaryAttr::get(attrs.getContext(), kept);
  };
  module.walk([&](LLVM::LLVMFuncOp fn) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      fn.setArgAttrs(i, keep(fn.getArgAttrDict(i)));
    for (unsigned i = 0; i < fn.getNumResults(); ++i)
      fn.setResultAttrs(i, keep(fn.getResultAttrDict(i)));
  });
}

size_t instructionCount(const llvm::Module &module) {
  size_t n = 0;
  for (const llvm::Function &f : module)
    n += f.getInstructionCount();
  return n;
}
} // namespace

void mlir::gnn::optimizeForHost(llvm::Module &module,
                                llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassInstrumentationCallbacks instrumentation;
  instrumentation.registerShouldRunOptionalPassCallback(
      [](llvm::StringRef pass, llvm::Any) {
        return pass != "CalledValuePropagationPass";
      });
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = true;
  // Interleaved copies of a vectorized loop cost the fused attention's
  // short causal rows (workload (c) of gnn-bench-attention: 4.3 to 4.6 ms)
  // and gained the elementwise kernels nothing measurable.
  tuning.LoopInterleaving = false;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &instrumentation);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2)
      .run(module, modules);
}

void mlir::gnn::generateLongBlocksQuickly(llvm::Module &module) {
  auto computesOnVectors = [](const llvm::Function &f) {
    return llvm::any_of(llvm::instructions(f), [](const llvm::Instruction &i) {
      return i.getType()->isVectorTy();
    });
  };
  for (llvm::Function &f : module) {
    if (f.isDeclaration() || f.hasFnAttribute(llvm::Attribute::OptimizeNone))
      continue;
    if (llvm::none_of(f, [](const llvm::BasicBlock &block) {
          return block.size() > kLongBlock;
        }))
      continue;
    f.addFnAttr("tune-cpu", "generic");
    if (computesOnVectors(f))
      continue;
    // What LLVM's verifier requires of an optnone function.
    f.removeFnAttr(llvm::Attribute::AlwaysInline);
    f.removeFnAttr(llvm::Attribute::OptimizeForSize);
    f.removeFnAttr(llvm::Attribute::MinSize);
    f.addFnAttr(llvm::Attribute::NoInline);
    f.addFnAttr(llvm::Attribute::OptimizeNone);
  }
}

std::string mlir::gnn::hostTargetDescription() {
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> target = hostTarget();
  if (!target) {
    llvm::consumeError(target.takeError());
    return "unknown host target";
  }
  return target->getTargetTriple().str() + " " + target->getCPU() + " " +
         target->getFeatures().getString();
}

std::string mlir::gnn::packedName(llvm::StringRef name) {
  return ("_gnn_packed_" + name).str();
}

/// An error naming an op outside what translates to LLVM IR (the llvm and
/// omp dialects, and the GPU binaries and launches of a host program): the
/// first one, or, if casts between types that no conversion resolved are
/// all there is, the first of those.
static llvm::Error checkTranslatable(ModuleOp module) {
  // Code generation has no assembler for inline assembly (LLVM aborts on
  // it); gnn-run refuses such programs earlier (gnn-check-self-contained),
  // other callers get an error here.
  Operation *assembly = nullptr;
  module.walk([&](LLVM::InlineAsmOp op) {
    assembly = op;
    return WalkResult::interrupt();
  });
  auto where = [](Operation *op) {
    std::string text;
    llvm::raw_string_ostream(text) << op->getLoc();
    return text;
  };
  if (assembly)
    return error("'llvm.inline_asm' at " + where(assembly) +
                 ": inline assembly is not compiled");
  Operation *left = nullptr, *cast = nullptr;
  module.walk([&](Operation *op) {
    if (op == module.getOperation() ||
        isa_and_nonnull<LLVM::LLVMDialect, omp::OpenMPDialect>(
            op->getDialect()) ||
        isa<gpu::BinaryOp, gpu::LaunchFuncOp>(op))
      return WalkResult::advance();
    if (isa<UnrealizedConversionCastOp>(op)) {
      if (!cast)
        cast = op;
      return WalkResult::advance();
    }
    left = op;
    return WalkResult::interrupt();
  });
  if (!left)
    left = cast;
  if (!left)
    return llvm::Error::success();
  return error("'" + left->getName().getStringRef() + "' at " + where(left) +
               " has no lowering to LLVM in this pipeline");
}

llvm::Expected<std::vector<std::string>>
mlir::gnn::emitHostObjects(ModuleOp module, llvm::ArrayRef<std::string> entries,
                           unsigned threads) {
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> target = hostTarget();
  if (!target)
    return target.takeError();
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      target->createTargetMachine();
  if (!machine)
    return machine.takeError();

  // An op that no step of the lowering handled would fail the translation,
  // and inside an OpenMP region crash it (MLIR 19's OpenMP translation
  // outlines the region's half-converted body).
  if (llvm::Error e = checkTranslatable(module))
    return std::move(e);
  dropForeignParameterAttributes(module);
  llvm::LLVMContext ctx;
  // What the translation reports (an op no pipeline step lowered, with its
  // location) goes into the error.
  std::string diagnostics;
  std::unique_ptr<llvm::Module> llvmModule;
  {
    llvm::raw_string_ostream os(diagnostics);
    ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
      os << "\n" << d.getLocation() << ": " << d;
      return success();
    });
    llvmModule = translateModuleToLLVMIR(module, ctx, "gnnc");
  }
  if (!llvmModule)
    return error("could not convert to LLVM IR" + diagnostics);
  llvmModule->setTargetTriple((*machine)->getTargetTriple().str());
  llvmModule->setDataLayout((*machine)->createDataLayout());
  for (const std::string &entry : entries)
    if (llvm::Error e = addPackedWrapper(*llvmModule, entry))
      return std::move(e);
  gatherInitializers(*llvmModule, "llvm.global_ctors", kInit,
                     /*reverse=*/false);
  gatherInitializers(*llvmModule, "llvm.global_dtors", kFini,
                     /*reverse=*/true);
  // What the JIT looks up; every other function's signature is the
  // module's own. Rewritten before -O2, which then works on the loads and
  // stores (after it, the 24-layer training program took 2 s longer).
  std::vector<std::string> exported = {kInit.str(), kFini.str()};
  for (const std::string &entry : entries)
    exported.push_back(packedName(entry));
  returnLargeResultsThroughMemory(*llvmModule, exported);
  // A rewrite that broke the module would crash code generation (in
  // builds without LLVM's assertions): an error, which gnn-mutate also
  // looks for.
  {
    std::string problems;
    llvm::raw_string_ostream os(problems);
    if (llvm::verifyModule(*llvmModule, &os))
      return error(llvm::Twine(kInvalidAfterRewrite) + ":\n" + problems);
  }
  optimizeForHost(*llvmModule, **machine);
  generateLongBlocksQuickly(*llvmModule);

  // Code generation is the larger half of the work, and independent per
  // function: parts of the module, each in a context of its own (LLVM's
  // contexts are single-threaded), go to the cores. The code of each
  // function is the same however the module is split.
  if (threads == 0)
    threads = llvm::hardware_concurrency().compute_thread_count();
  unsigned parts = std::min(threads, kMaxParts);
  if (instructionCount(*llvmModule) < kMinInstructionsToSplit || parts < 2)
    parts = 1;
  if (parts == 1) {
    llvm::Expected<std::string> object = emitObject(*llvmModule, *target);
    if (!object)
      return object.takeError();
    return std::vector<std::string>{std::move(*object)};
  }
  std::vector<llvm::SmallVector<char, 0>> bitcode;
  llvm::SplitModule(
      *llvmModule, parts,
      [&](std::unique_ptr<llvm::Module> part) {
        llvm::raw_svector_ostream out(bitcode.emplace_back());
        llvm::WriteBitcodeToFile(*part, out);
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);
  // Each part's object, or why its code generation failed.
  std::vector<std::string> objects(bitcode.size()), failures(bitcode.size());
  std::vector<std::thread> workers;
  for (size_t i = 0; i < bitcode.size(); ++i)
    workers.emplace_back([&, i] {
      llvm::LLVMContext partContext;
      llvm::Expected<std::unique_ptr<llvm::Module>> part =
          llvm::parseBitcodeFile(
              llvm::MemoryBufferRef(
                  llvm::StringRef(bitcode[i].data(), bitcode[i].size()),
                  "part"),
              partContext);
      llvm::Expected<std::string> object =
          part ? emitObject(**part, *target) : part.takeError();
      if (object)
        objects[i] = std::move(*object);
      else
        failures[i] = llvm::toString(object.takeError());
    });
  for (std::thread &w : workers)
    w.join();
  for (const std::string &failure : failures)
    if (!failure.empty())
      return error("code generation failed: " + failure);
  return objects;
}

ObjectJit::~ObjectJit() {
  if (fini)
    fini();
}

llvm::Expected<std::unique_ptr<ObjectJit>>
ObjectJit::load(llvm::ArrayRef<std::string> objects,
                const std::map<std::string, void *> &symbols,
                llvm::ArrayRef<std::string> libraries, bool perfMap) {
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> target = hostTarget();
  if (!target)
    return target.takeError();
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(*target))
          .create();
  if (!jit)
    return jit.takeError();
  std::unique_ptr<ObjectJit> loaded(new ObjectJit());
  loaded->jit = std::move(*jit);
  llvm::orc::LLJIT &j = *loaded->jit;
  if (perfMap)
    listFunctionsForPerf(j);
  llvm::orc::JITDylib &main = j.getMainJITDylib();
  char prefix = j.getDataLayout().getGlobalPrefix();
  // Given symbols first; then the libraries and the process (libm, libc).
  llvm::orc::SymbolMap defined;
  for (const auto &[name, address] : symbols)
    if (address)
      defined[j.mangleAndIntern(name)] = {
          llvm::orc::ExecutorAddr::fromPtr(address),
          llvm::JITSymbolFlags::Exported};
  if (llvm::Error e = main.define(llvm::orc::absoluteSymbols(defined)))
    return std::move(e);
  for (const std::string &library : libraries) {
    auto generator =
        llvm::orc::DynamicLibrarySearchGenerator::Load(library.c_str(), prefix);
    if (!generator)
      return generator.takeError();
    main.addGenerator(std::move(*generator));
  }
  auto process =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return process.takeError();
  main.addGenerator(std::move(*process));
  for (auto [i, object] : llvm::enumerate(objects))
    if (llvm::Error e = j.addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
            object, "gnnc-object-" + std::to_string(i))))
      return std::move(e);
  // Initializers (absent from CPU programs) run once, now.
  if (auto init = j.lookup(kInit))
    init->toPtr<void (*)()>()();
  else
    llvm::consumeError(init.takeError());
  if (auto fini = j.lookup(kFini))
    loaded->fini = fini->toPtr<void (*)()>();
  else
    llvm::consumeError(fini.takeError());
  return loaded;
}

llvm::Expected<ObjectJit::PackedFunction>
ObjectJit::lookupPacked(llvm::StringRef name) {
  llvm::Expected<llvm::orc::ExecutorAddr> address =
      jit->lookup(packedName(name));
  if (!address)
    return address.takeError();
  return address->toPtr<PackedFunction>();
}
