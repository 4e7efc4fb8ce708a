//===- ReturnUpdatedArguments.cpp - updates stay in the caller's buffers --===//
//
// Part of gnnc. Removes the results of public functions that are marked as
// the updates of writable arguments (`gnn.updates`), copying an update into
// its argument where bufferization computed it elsewhere. Without this, the
// deallocation pipeline copies every such result into a fresh buffer.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNDialect.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_RETURNUPDATEDARGUMENTSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
constexpr llvm::StringLiteral kUpdates = gnn::GNNDialect::kUpdatesAttrName,
                              kName = gnn::GNNDialect::kNameAttrName;

/// The buffer argument of `function` named `name` that result `result`
/// updates, or null after an error. Bufferization drops the arguments'
/// `bufferization.writable` marks (gnn-read-only-arguments checks them
/// before), so only one still there and false is refused here.
BlockArgument updatedArgument(func::FuncOp function, unsigned result,
                              StringAttr name) {
  StringRef writableName =
      bufferization::BufferizationDialect::kWritableAttrName;
  auto resultType = dyn_cast<MemRefType>(function.getResultTypes()[result]);
  for (BlockArgument argument : function.getArguments()) {
    unsigned i = argument.getArgNumber();
    if (function.getArgAttr(i, kName) != name)
      continue;
    auto writable = function.getArgAttrOfType<BoolAttr>(i, writableName);
    auto type = dyn_cast<MemRefType>(argument.getType());
    if ((writable && !writable.getValue()) || !type || !resultType ||
        type.getShape() != resultType.getShape() ||
        type.getElementType() != resultType.getElementType())
      continue;
    return argument;
  }
  function.emitOpError() << "result #" << result << " updates argument " << name
                         << ", which is not a writable buffer of its shape";
  return nullptr;
}

struct ReturnUpdatedArgumentsPass
    : gnn::impl::ReturnUpdatedArgumentsPassBase<ReturnUpdatedArgumentsPass> {
  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isExternal() || !function.isPublic())
        continue;
      llvm::BitVector updates(function.getNumResults());
      for (unsigned i = 0; i < function.getNumResults(); ++i) {
        auto name = function.getResultAttrOfType<StringAttr>(i, kUpdates);
        if (!name)
          continue;
        BlockArgument argument = updatedArgument(function, i, name);
        if (!argument)
          return signalPassFailure();
        function.walk([&](func::ReturnOp ret) {
          Value update = ret.getOperand(i);
          while (auto cast = update.getDefiningOp<memref::CastOp>())
            update = cast.getSource();
          if (update != argument)
            OpBuilder(ret).create<memref::CopyOp>(ret.getLoc(),
                                                  ret.getOperand(i), argument);
        });
        updates.set(i);
      }
      if (updates.none())
        continue;
      function.walk([&](func::ReturnOp ret) { ret->eraseOperands(updates); });
      function.eraseResults(updates);
    }
  }
};
} // namespace
