//===- SimplifyDeallocations.cpp - dealloc simplification within budget ---===//
//
// Part of gnnc. Runs the upstream buffer-deallocation-simplification pass
// on each function whose bufferization.dealloc ops name at most
// `max-operands` memrefs; see Passes.td.
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "gnn-simplify-deallocations"

namespace mlir::gnn {
#define GEN_PASS_DEF_SIMPLIFYDEALLOCATIONSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
struct SimplifyDeallocationsPass
    : public gnn::impl::SimplifyDeallocationsPassBase<
          SimplifyDeallocationsPass> {
  using SimplifyDeallocationsPassBase::SimplifyDeallocationsPassBase;

  void runOnOperation() override {
    OpPassManager simplify(func::FuncOp::getOperationName());
    simplify.addPass(
        bufferization::createBufferDeallocationSimplificationPass());
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      int64_t named = 0;
      fn.walk([&](bufferization::DeallocOp op) {
        named += op.getMemrefs().size() + op.getRetained().size();
      });
      LLVM_DEBUG(llvm::dbgs() << fn.getSymName() << ": dealloc ops name "
                              << named << " memrefs\n");
      if (named > maxOperands)
        continue;
      if (failed(runPipeline(simplify, fn)))
        return signalPassFailure();
    }
  }
};
} // namespace
