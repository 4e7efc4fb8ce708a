//===- ObjectCodeTest.cpp - which functions get quick code generation -----===//
//
// Part of gnnc. generateLongBlocksQuickly over hand-built IR: long glue
// blocks get `optnone` (fast instruction selection), short functions and
// long blocks that compute on vectors keep -O2 code generation.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/ObjectCode.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

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
