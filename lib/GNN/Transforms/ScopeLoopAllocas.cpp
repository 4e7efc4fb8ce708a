//===- ScopeLoopAllocas.cpp - loop iterations free their stack buffers ----===//
//
// Part of gnnc. scf loops are automatic allocation scopes, but their
// lowering to control flow lets the stack buffers of every iteration pile
// up until the function returns; each allocating body saves the stack
// pointer when it starts and restores it when it ends (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_SCOPELOOPALLOCASPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// Whether `op` itself allocates in its enclosing allocation scope.
bool allocatesOnStack(Operation *op) {
  // Lowered later onto the stack: an unranked descriptor (what a tape push
  // passes), and the descriptors a call of a C-interface function (the
  // runtime's) passes by pointer.
  if (auto cast = dyn_cast<memref::CastOp>(op))
    return isa<UnrankedMemRefType>(cast.getType());
  if (isa<func::CallOp>(op)) {
    auto isMemRef = [](Type t) { return isa<BaseMemRefType>(t); };
    return llvm::any_of(op->getOperandTypes(), isMemRef) ||
           llvm::any_of(op->getResultTypes(), isMemRef);
  }
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Allocate>(e.getEffect()) &&
           e.getResource() ==
               SideEffects::AutomaticAllocationScopeResource::get();
  });
}

/// Whether some op in `body` allocates in the scope `body` belongs to (not
/// only inside nested allocation scopes, which free their own buffers).
bool allocatesInScope(Block &body) {
  for (Operation &op : body) {
    WalkResult found = op.walk<WalkOrder::PreOrder>([](Operation *nested) {
      if (allocatesOnStack(nested))
        return WalkResult::interrupt();
      if (nested->hasTrait<OpTrait::AutomaticAllocationScope>())
        return WalkResult::skip();
      return WalkResult::advance();
    });
    if (found.wasInterrupted())
      return true;
  }
  return false;
}

/// Frees the stack buffers of `body`, a loop's body, when it ends.
void scopeLoopBody(Block &body, Location loc) {
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  Value stack = b.create<LLVM::StackSaveOp>(
      loc, LLVM::LLVMPointerType::get(b.getContext()));
  b.setInsertionPoint(body.getTerminator());
  b.create<LLVM::StackRestoreOp>(loc, stack);
}

/// Replaces `scope` by its body between a stack save and restore.
void inlineScope(memref::AllocaScopeOp scope) {
  Location loc = scope.getLoc();
  OpBuilder b(scope);
  Value stack = b.create<LLVM::StackSaveOp>(
      loc, LLVM::LLVMPointerType::get(b.getContext()));
  Block &inner = scope.getBodyRegion().front();
  Operation *ret = inner.getTerminator();
  SmallVector<Value> results(ret->getOperands());
  ret->erase();
  scope->getBlock()->getOperations().splice(Block::iterator(scope),
                                            inner.getOperations());
  b.setInsertionPoint(scope);
  b.create<LLVM::StackRestoreOp>(loc, stack);
  scope->replaceAllUsesWith(results);
  scope->erase();
}

struct ScopeLoopAllocasPass
    : public gnn::impl::ScopeLoopAllocasPassBase<ScopeLoopAllocasPass> {
  void runOnOperation() override {
    SmallVector<std::pair<Block *, Location>> bodies;
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation()->walk([&](Operation *op) {
      if (isa<scf::ForOp, scf::ParallelOp, scf::ForallOp, scf::WhileOp>(op)) {
        for (Region &region : op->getRegions())
          for (Block &body : region)
            if (allocatesInScope(body))
              bodies.push_back({&body, op->getLoc()});
      } else if (auto scope = dyn_cast<memref::AllocaScopeOp>(op)) {
        if (isa_and_nonnull<scf::SCFDialect>(op->getParentOp()->getDialect()))
          scopes.push_back(scope);
      }
    });
    for (auto [body, loc] : bodies)
      scopeLoopBody(*body, loc);
    for (memref::AllocaScopeOp scope : scopes)
      inlineScope(scope);
  }
};
} // namespace
