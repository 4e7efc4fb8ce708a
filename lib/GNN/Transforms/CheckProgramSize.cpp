//===- CheckProgramSize.cpp - programs too long to compile ----------------===//
//
// Part of gnnc. Compile time grows with a program's length; a program given
// to the runner may have at most a bounded number of operations, so that a
// generated chain of a million ops is an error at once rather than minutes
// of compiling.
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_CHECKPROGRAMSIZEPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
struct CheckProgramSizePass
    : gnn::impl::CheckProgramSizePassBase<CheckProgramSizePass> {
  using CheckProgramSizePassBase::CheckProgramSizePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t seen = 0;
    // Pre-order, so that the op named is the first one past the bound in
    // the text; the walk stops there.
    WalkResult walk = module->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == module)
        return WalkResult::advance();
      if (++seen <= maxOperations)
        return WalkResult::advance();
      op->emitOpError() << "is operation " << seen
                        << " of the program; gnnc compiles programs of at "
                           "most "
                        << int64_t(maxOperations)
                        << " operations (compile time grows with their "
                           "length)";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
