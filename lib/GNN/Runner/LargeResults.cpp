//===- LargeResults.cpp - large results returned through memory -----------===//
//
// Part of gnnc. A function with many results returns them as one LLVM
// struct (a training step's gradient function returns a buffer descriptor
// per parameter: 700 descriptors, 4,900 scalars, at 24 layers). Code
// generation handles such a struct as one value of thousands of parts: each
// `insertvalue` building it and each `extractvalue` reading it at a call
// copies all of them, so its time grew as the square of the result count,
// 8.5 of the 10.6 s of the 24-layer training program's code generation.
// Written to memory that the caller provides, each part is one store and
// one load.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/ObjectCode.h"

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Local.h"

#include <functional>

using namespace llvm;

namespace {
/// Scalars in a value of `type`.
unsigned scalarCount(Type *type) {
  if (auto *s = dyn_cast<StructType>(type)) {
    unsigned n = 0;
    for (Type *e : s->elements())
      n += scalarCount(e);
    return n;
  }
  if (auto *a = dyn_cast<ArrayType>(type))
    return a->getNumElements() * scalarCount(a->getElementType());
  return 1;
}

/// Attributes of `old` (a function's or a call's) with a parameter without
/// attributes in front and none on the result.
AttributeList withOutParameter(LLVMContext &ctx, AttributeList old,
                               unsigned params) {
  SmallVector<AttributeSet> paramAttrs = {AttributeSet()};
  for (unsigned i = 0; i < params; ++i)
    paramAttrs.push_back(old.getParamAttrs(i));
  return AttributeList::get(ctx, old.getFnAttrs(), AttributeSet(), paramAttrs);
}

/// `fn` returning void, its result's fields stored through a new first
/// parameter; `fn` is erased once its calls are rewritten.
Function *withResultsInMemory(Function *fn) {
  LLVMContext &ctx = fn->getContext();
  auto *result = cast<StructType>(fn->getReturnType());
  SmallVector<Type *> params = {PointerType::getUnqual(ctx)};
  llvm::append_range(params, fn->getFunctionType()->params());
  auto *type = FunctionType::get(Type::getVoidTy(ctx), params, false);
  Function *rewritten = Function::Create(
      type, fn->getLinkage(), fn->getAddressSpace(), "", fn->getParent());
  rewritten->takeName(fn);
  rewritten->copyAttributesFrom(fn);
  rewritten->setAttributes(
      withOutParameter(ctx, fn->getAttributes(), fn->arg_size()));
  // Debug info (a function's subprogram is its alone) moves with the body.
  rewritten->copyMetadata(fn, 0);
  fn->clearMetadata();
  rewritten->splice(rewritten->begin(), fn);
  for (auto [old, now] :
       llvm::zip(fn->args(), llvm::drop_begin(rewritten->args()))) {
    now.takeName(&old);
    old.replaceAllUsesWith(&now);
  }
  Argument *out = rewritten->getArg(0);
  SmallVector<ReturnInst *> returns;
  for (BasicBlock &block : *rewritten)
    if (auto *ret = dyn_cast<ReturnInst>(block.getTerminator()))
      returns.push_back(ret);
  for (ReturnInst *ret : returns) {
    IRBuilder<> b(ret);
    Value *value = ret->getReturnValue();
    // Each scalar as it was inserted (not extracted from the whole struct,
    // which code generation would build), so the chains of inserts die.
    SmallVector<unsigned> path;
    std::function<void(Type *)> store = [&](Type *type) {
      if (type->isAggregateType()) {
        unsigned n = isa<StructType>(type) ? type->getStructNumElements()
                                           : type->getArrayNumElements();
        for (unsigned i = 0; i < n; ++i) {
          path.push_back(i);
          store(isa<StructType>(type) ? type->getStructElementType(i)
                                      : type->getArrayElementType());
          path.pop_back();
        }
        return;
      }
      Value *scalar = FindInsertedValue(value, path);
      if (!scalar)
        scalar = b.CreateExtractValue(value, path);
      SmallVector<Value *> at = {b.getInt32(0)};
      for (unsigned i : path)
        at.push_back(b.getInt32(i));
      b.CreateStore(scalar, b.CreateInBoundsGEP(result, out, at));
    };
    store(result);
    b.CreateRetVoid();
    ret->eraseFromParent();
    RecursivelyDeleteTriviallyDeadInstructions(value);
  }
  return rewritten;
}

/// Replaces `call` of the original function by a call of `rewritten` that
/// writes into a stack slot of the caller's, and its uses by loads.
void rewriteCall(CallInst *call, Function *rewritten, StructType *result) {
  LLVMContext &ctx = call->getContext();
  Function *caller = call->getFunction();
  const DataLayout &layout = caller->getParent()->getDataLayout();
  IRBuilder<> entry(&caller->getEntryBlock(),
                    caller->getEntryBlock().getFirstInsertionPt());
  AllocaInst *slot = entry.CreateAlloca(result);
  IRBuilder<> b(call);
  SmallVector<Value *> args = {slot};
  llvm::append_range(args, call->args());
  CallInst *replacement = b.CreateCall(rewritten, args);
  replacement->setAttributes(
      withOutParameter(ctx, call->getAttributes(), call->arg_size()));
  replacement->setCallingConv(call->getCallingConv());
  replacement->setDebugLoc(call->getDebugLoc());
  // Loads right after the call read what this execution of it wrote.
  b.SetInsertPoint(call->getNextNode());
  Value *whole = nullptr;
  for (User *user : llvm::make_early_inc_range(call->users())) {
    if (auto *extract = dyn_cast<ExtractValueInst>(user)) {
      SmallVector<Value *> path = {b.getInt32(0)};
      for (unsigned i : extract->indices())
        path.push_back(b.getInt32(i));
      Value *field = b.CreateLoad(extract->getType(),
                                  b.CreateInBoundsGEP(result, slot, path));
      field->takeName(extract);
      extract->replaceAllUsesWith(field);
      extract->eraseFromParent();
      continue;
    }
    auto *store = dyn_cast<StoreInst>(user);
    if (store && store->getValueOperand() == call && !store->isVolatile()) {
      // A C interface wrapper storing the struct for its caller: one copy.
      IRBuilder<> at(store);
      at.CreateMemCpy(store->getPointerOperand(), store->getAlign(), slot,
                      slot->getAlign(), layout.getTypeStoreSize(result));
      store->eraseFromParent();
      continue;
    }
    if (!whole)
      whole = b.CreateLoad(result, slot);
    user->replaceUsesOfWith(call, whole);
  }
  call->eraseFromParent();
}
} // namespace

void mlir::gnn::returnLargeResultsThroughMemory(
    Module &module, ArrayRef<std::string> exported) {
  SmallVector<Function *> candidates;
  for (Function &fn : module) {
    auto *result = dyn_cast<StructType>(fn.getReturnType());
    if (!result || fn.isDeclaration() || fn.isVarArg() ||
        scalarCount(result) < kLargeResultScalars ||
        llvm::is_contained(exported, fn.getName()))
      continue;
    // Only direct calls can be rewritten.
    if (llvm::all_of(fn.uses(), [&](Use &u) {
          auto *call = dyn_cast<CallInst>(u.getUser());
          return call && call->isCallee(&u) &&
                 call->getFunctionType() == fn.getFunctionType();
        }))
      candidates.push_back(&fn);
  }
  for (Function *fn : candidates) {
    auto *result = cast<StructType>(fn->getReturnType());
    Function *rewritten = withResultsInMemory(fn);
    for (User *user : llvm::make_early_inc_range(fn->users()))
      rewriteCall(cast<CallInst>(user), rewritten, result);
    fn->eraseFromParent();
  }
}
