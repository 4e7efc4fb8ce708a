//===- LargeResultsTest.cpp - large results returned through memory -------===//
//
// Part of gnnc. returnLargeResultsThroughMemory over hand-built IR: which
// functions it rewrites, and that the rewritten module computes what the
// original did (both run by LLVM's JIT).
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/ObjectCode.h"

#include "llvm/BinaryFormat/Dwarf.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/DIBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <array>

namespace {
using namespace llvm;

/// { i64, { i64, [3 x i64] }, [30 x i64] }: 35 scalars, nested.
StructType *resultType(LLVMContext &ctx) {
  Type *i64 = Type::getInt64Ty(ctx);
  auto *inner = StructType::get(ctx, {i64, ArrayType::get(i64, 3)});
  return StructType::get(ctx, {i64, inner, ArrayType::get(i64, 30)});
}
constexpr unsigned kScalars = 35;

/// `name(i64 x)` returning resultType whose k-th scalar (in order) is
/// x * (k + 1), built by a chain of insertvalues as lowered code builds it.
Function *producer(Module &module, StringRef name) {
  LLVMContext &ctx = module.getContext();
  StructType *type = resultType(ctx);
  auto *fn =
      Function::Create(FunctionType::get(type, {Type::getInt64Ty(ctx)}, false),
                       GlobalValue::ExternalLinkage, name, module);
  IRBuilder<> b(BasicBlock::Create(ctx, "entry", fn));
  Value *result = PoisonValue::get(type);
  unsigned k = 0;
  auto next = [&] { return b.CreateMul(fn->getArg(0), b.getInt64(++k)); };
  result = b.CreateInsertValue(result, next(), {0});
  result = b.CreateInsertValue(result, next(), {1, 0});
  for (unsigned i = 0; i < 3; ++i)
    result = b.CreateInsertValue(result, next(), {1, 1, i});
  for (unsigned i = 0; i < 30; ++i)
    result = b.CreateInsertValue(result, next(), {2, i});
  b.CreateRet(result);
  return fn;
}

/// The test module: `big` (rewritten), `kept` (the same, but exported),
/// and callers of each way a result is used.
std::unique_ptr<Module> testModule(LLVMContext &ctx) {
  auto module = std::make_unique<Module>("m", ctx);
  Function *big = producer(*module, "big");
  producer(*module, "kept");
  Type *i64 = Type::getInt64Ty(ctx);
  auto *ptr = PointerType::getUnqual(ctx);
  StructType *type = resultType(ctx);
  // sum(x): fields read one by one, one through a sub-struct.
  {
    auto *fn = Function::Create(FunctionType::get(i64, {i64}, false),
                                GlobalValue::ExternalLinkage, "sum", *module);
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", fn));
    Value *r = b.CreateCall(big, {fn->getArg(0)});
    Value *inner = b.CreateExtractValue(r, {1});
    Value *sum = b.CreateAdd(b.CreateExtractValue(r, {0}),
                             b.CreateExtractValue(inner, {1, 2}));
    sum = b.CreateAdd(sum, b.CreateExtractValue(r, {2, 29}));
    b.CreateRet(sum);
  }
  // store(out, x): the whole result stored, as a C interface wrapper does.
  {
    auto *fn = Function::Create(
        FunctionType::get(Type::getVoidTy(ctx), {ptr, i64}, false),
        GlobalValue::ExternalLinkage, "store", *module);
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", fn));
    b.CreateStore(b.CreateCall(big, {fn->getArg(1)}), fn->getArg(0));
    b.CreateRetVoid();
  }
  // forward(out, x): the whole result used otherwise (returned by an
  // exported function, whose signature stays).
  {
    auto *fn =
        Function::Create(FunctionType::get(type, {i64}, false),
                         GlobalValue::ExternalLinkage, "forward", *module);
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", fn));
    b.CreateRet(b.CreateCall(big, {fn->getArg(0)}));
    auto *store = Function::Create(
        FunctionType::get(Type::getVoidTy(ctx), {ptr, i64}, false),
        GlobalValue::ExternalLinkage, "storeForwarded", *module);
    IRBuilder<> s(BasicBlock::Create(ctx, "entry", store));
    s.CreateStore(s.CreateCall(fn, {store->getArg(1)}), store->getArg(0));
    s.CreateRetVoid();
  }
  return module;
}

const std::vector<std::string> kExported = {"kept", "forward", "sum", "store",
                                            "storeForwarded"};

/// What the module's functions compute, run by LLVM's JIT: sum(7), and
/// store(7), storeForwarded(5) into arrays.
struct Outputs {
  int64_t sum = 0;
  std::array<int64_t, kScalars> stored{}, forwarded{};
};

Outputs run(std::unique_ptr<Module> module, std::unique_ptr<LLVMContext> ctx) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  auto jit = cantFail(orc::LLJITBuilder().create());
  cantFail(jit->addIRModule(
      orc::ThreadSafeModule(std::move(module), std::move(ctx))));
  Outputs o;
  o.sum = cantFail(jit->lookup("sum")).toPtr<int64_t (*)(int64_t)>()(7);
  cantFail(jit->lookup("store"))
      .toPtr<void (*)(int64_t *, int64_t)>()(o.stored.data(), 7);
  cantFail(jit->lookup("storeForwarded"))
      .toPtr<void (*)(int64_t *, int64_t)>()(o.forwarded.data(), 5);
  return o;
}
} // namespace

TEST(LargeResults, OnlyUnexportedFunctionsAreRewritten) {
  LLVMContext ctx;
  std::unique_ptr<Module> module = testModule(ctx);
  // `big` with debug info, which moves with its body.
  module->addModuleFlag(Module::Warning, "Debug Info Version",
                        DEBUG_METADATA_VERSION);
  DIBuilder di(*module);
  DIFile *file = di.createFile("m.mlir", "/");
  di.createCompileUnit(dwarf::DW_LANG_C, file, "gnnc", true, "", 0);
  DISubprogram *subprogram =
      di.createFunction(file, "big", "big", file, 1,
                        di.createSubroutineType(di.getOrCreateTypeArray({})), 1,
                        DINode::FlagZero, DISubprogram::SPFlagDefinition);
  module->getFunction("big")->setSubprogram(subprogram);
  for (Instruction &i : instructions(*module->getFunction("big")))
    i.setDebugLoc(DILocation::get(ctx, 1, 1, subprogram));
  di.finalize();
  ASSERT_FALSE(verifyModule(*module, &errs()));

  mlir::gnn::returnLargeResultsThroughMemory(*module, kExported);
  EXPECT_FALSE(verifyModule(*module, &errs()));

  Function *big = module->getFunction("big");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->getSubprogram(), subprogram);
  EXPECT_TRUE(big->getReturnType()->isVoidTy());
  ASSERT_EQ(big->arg_size(), 2u);
  EXPECT_TRUE(big->getArg(0)->getType()->isPointerTy());
  // The insertvalue chain is gone: one store per top-level field.
  for (Instruction &i : instructions(*big))
    EXPECT_FALSE(isa<InsertValueInst>(i));
  for (User *user : big->users()) {
    auto *call = cast<CallInst>(user);
    EXPECT_TRUE(isa<AllocaInst>(call->getArgOperand(0)));
  }
  EXPECT_TRUE(isa<StructType>(module->getFunction("kept")->getReturnType()));
  EXPECT_TRUE(isa<StructType>(module->getFunction("forward")->getReturnType()));
}

TEST(LargeResults, SmallResultsAndIndirectUsesStay) {
  LLVMContext ctx;
  auto module = std::make_unique<Module>("m", ctx);
  Type *i64 = Type::getInt64Ty(ctx);
  // Under kLargeResultScalars scalars.
  auto *small = StructType::get(ctx, {i64, ArrayType::get(i64, 30)});
  static_assert(31 < mlir::gnn::kLargeResultScalars);
  auto *fn = Function::Create(FunctionType::get(small, {}, false),
                              GlobalValue::InternalLinkage, "small", *module);
  IRBuilder<> b(BasicBlock::Create(ctx, "entry", fn));
  b.CreateRet(PoisonValue::get(small));
  // Large, but its address is taken.
  Function *big = producer(*module, "big");
  auto *holder =
      new GlobalVariable(*module, big->getType(), true,
                         GlobalValue::InternalLinkage, big, "address");
  (void)holder;
  mlir::gnn::returnLargeResultsThroughMemory(*module, {});
  EXPECT_FALSE(verifyModule(*module, &errs()));
  EXPECT_EQ(module->getFunction("small")->getReturnType(), small);
  EXPECT_TRUE(isa<StructType>(module->getFunction("big")->getReturnType()));
}

TEST(LargeResults, RewrittenModuleComputesTheSame) {
  auto ctx = std::make_unique<LLVMContext>();
  std::unique_ptr<Module> module = testModule(*ctx);
  Outputs before = run(std::move(module), std::move(ctx));

  ctx = std::make_unique<LLVMContext>();
  module = testModule(*ctx);
  mlir::gnn::returnLargeResultsThroughMemory(*module, kExported);
  ASSERT_FALSE(verifyModule(*module, &errs()));
  Outputs after = run(std::move(module), std::move(ctx));

  // x * (k + 1) for scalars 1, 4 and 35.
  EXPECT_EQ(before.sum, 7 * 1 + 7 * 5 + 7 * 35);
  for (unsigned k = 0; k < kScalars; ++k) {
    EXPECT_EQ(before.stored[k], int64_t(7 * (k + 1)));
    EXPECT_EQ(before.forwarded[k], int64_t(5 * (k + 1)));
  }
  EXPECT_EQ(after.sum, before.sum);
  EXPECT_EQ(after.stored, before.stored);
  EXPECT_EQ(after.forwarded, before.forwarded);
}
