//===- ObjectCodeTest.cpp - which functions get quick code generation -----===//
//
// Part of gnnc. generateLongBlocksQuickly over hand-built IR: long glue
// blocks get `optnone` (fast instruction selection), short functions and
// long blocks that compute on vectors keep -O2 code generation.
// optimizeForHost vectorizes an elementwise loop.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/ObjectCode.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <gtest/gtest.h>

namespace {
/// `void name(ptr)` whose one block loads and stores `count` times (three
/// instructions each, with the address), from
/// the pointer's elements (as glue unpacks descriptors), in scalars or in
/// vectors of four floats.
llvm::Function *straightLine(llvm::Module &module, llvm::StringRef name,
                             unsigned count, bool vectors) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false),
      llvm::GlobalValue::ExternalLinkage, name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Type *element =
      vectors ? llvm::Type::getFloatTy(ctx) : llvm::Type::getInt64Ty(ctx);
  llvm::Type *value =
      vectors ? llvm::FixedVectorType::get(element, 4) : element;
  for (unsigned i = 0; i < count; ++i) {
    llvm::Value *at = b.CreateConstGEP1_64(element, fn->getArg(0), 4 * i);
    b.CreateStore(b.CreateLoad(value, at), at);
  }
  b.CreateRetVoid();
  return fn;
}
} // namespace

TEST(ObjectCode, LongGlueBlocksAreGeneratedQuickly) {
  llvm::LLVMContext ctx;
  llvm::Module module("m", ctx);
  llvm::Function *glue = straightLine(module, "glue", 1500, false);
  llvm::Function *arithmetic = straightLine(module, "arithmetic", 1500, true);
  llvm::Function *shortGlue = straightLine(module, "short", 500, false);
  llvm::Function *small = straightLine(module, "small", 1500, false);
  small->addFnAttr(llvm::Attribute::MinSize);
  small->addFnAttr(llvm::Attribute::AlwaysInline);
  mlir::gnn::generateLongBlocksQuickly(module);
  // What LLVM requires of optnone functions holds.
  EXPECT_FALSE(llvm::verifyModule(module, &llvm::errs()));
  EXPECT_TRUE(small->hasFnAttribute(llvm::Attribute::OptimizeNone));

  EXPECT_TRUE(glue->hasFnAttribute(llvm::Attribute::OptimizeNone));
  EXPECT_TRUE(glue->hasFnAttribute(llvm::Attribute::NoInline));
  EXPECT_EQ(glue->getFnAttribute("tune-cpu").getValueAsString(), "generic");

  EXPECT_FALSE(arithmetic->hasFnAttribute(llvm::Attribute::OptimizeNone));
  EXPECT_EQ(arithmetic->getFnAttribute("tune-cpu").getValueAsString(),
            "generic");

  EXPECT_FALSE(shortGlue->hasFnAttribute(llvm::Attribute::OptimizeNone));
  EXPECT_FALSE(shortGlue->hasFnAttribute("tune-cpu"));
}

TEST(ObjectCode, ElementwiseLoopsAreVectorizedForTheHost) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  ASSERT_TRUE(bool(builder)) << llvm::toString(builder.takeError());
  auto machine = builder->createTargetMachine();
  ASSERT_TRUE(bool(machine)) << llvm::toString(machine.takeError());

  // c[i] = a[i] * a[i] + b[i] for i < n, as a lowered elementwise kernel.
  llvm::LLVMContext ctx;
  llvm::Module module("m", ctx);
  module.setTargetTriple((*machine)->getTargetTriple().str());
  module.setDataLayout((*machine)->createDataLayout());
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *f32 = llvm::Type::getFloatTy(ctx);
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr, ptr, i64},
                              false),
      llvm::GlobalValue::ExternalLinkage, "kernel", module);
  for (unsigned i = 0; i < 3; ++i)
    fn->addParamAttr(i, llvm::Attribute::NoAlias);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto *loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  auto *exit = llvm::BasicBlock::Create(ctx, "exit", fn);
  llvm::IRBuilder<> b(entry);
  b.CreateCondBr(b.CreateICmpSGT(fn->getArg(3), b.getInt64(0)), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode *i = b.CreatePHI(i64, 2);
  i->addIncoming(b.getInt64(0), entry);
  llvm::Value *a = b.CreateLoad(f32, b.CreateGEP(f32, fn->getArg(0), i));
  llvm::Value *c = b.CreateLoad(f32, b.CreateGEP(f32, fn->getArg(1), i));
  b.CreateStore(b.CreateFAdd(b.CreateFMul(a, a), c),
                b.CreateGEP(f32, fn->getArg(2), i));
  llvm::Value *next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, fn->getArg(3)), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  ASSERT_FALSE(llvm::verifyModule(module, &llvm::errs()));

  mlir::gnn::optimizeForHost(module, **machine);
  bool vectors = llvm::any_of(llvm::instructions(*fn), [](auto &inst) {
    return inst.getType()->isVectorTy() &&
           inst.getOpcode() == llvm::Instruction::FMul;
  });
  EXPECT_TRUE(vectors) << "the product is computed one float at a time";
}

// Inline assembly is an error, not an abort in code generation (found by
// gnn-mutate on test/Transforms/gnn-check-self-contained.mlir's input).
TEST(ObjectCode, InlineAssemblyIsAnErrorNotACrash) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::LLVM::LLVMDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
llvm.func @poke() {
  llvm.inline_asm has_side_effects "ud2", "" : () -> ()
  llvm.return
}
)mlir",
                                              &context);
  ASSERT_TRUE(module);
  auto objects = mlir::gnn::emitHostObjects(*module, {}, /*threads=*/1);
  ASSERT_FALSE(bool(objects));
  std::string message = llvm::toString(objects.takeError());
  EXPECT_NE(message.find("inline assembly is not compiled"), std::string::npos)
      << message;
}
