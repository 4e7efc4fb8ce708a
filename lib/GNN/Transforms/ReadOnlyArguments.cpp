//===- ReadOnlyArguments.cpp - programs leave their inputs alone ----------===//
//
// Part of gnnc. Marks the tensor arguments of public functions
// `bufferization.writable = false`, so that one-shot bufferization copies an
// argument before updating it in place instead of writing into the caller's
// buffer.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNDialect.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_READONLYARGUMENTSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// A result marked as the update of an argument (`gnn.updates = "name"`,
/// see gnn-return-updated-arguments) must name a writable tensor argument
/// of its type: the program writes the caller's buffer only there.
LogicalResult checkUpdates(func::FuncOp function) {
  StringRef writableName =
      bufferization::BufferizationDialect::kWritableAttrName;
  for (unsigned r = 0; r < function.getNumResults(); ++r) {
    auto name = function.getResultAttrOfType<StringAttr>(
        r, gnn::GNNDialect::kUpdatesAttrName);
    if (!name)
      continue;
    bool found = llvm::any_of(function.getArguments(), [&](BlockArgument a) {
      unsigned i = a.getArgNumber();
      auto writable = function.getArgAttrOfType<BoolAttr>(i, writableName);
      return function.getArgAttr(i, gnn::GNNDialect::kNameAttrName) == name &&
             writable && writable.getValue() &&
             a.getType() == function.getResultTypes()[r];
    });
    if (!found)
      return function.emitOpError()
             << "result #" << r << " updates argument " << name
             << ", which is not a writable tensor of its type";
  }
  return success();
}

struct ReadOnlyArgumentsPass
    : gnn::impl::ReadOnlyArgumentsPassBase<ReadOnlyArgumentsPass> {
  void runOnOperation() override {
    auto readOnly = BoolAttr::get(&getContext(), false);
    StringRef name = bufferization::BufferizationDialect::kWritableAttrName;
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isExternal() || !function.isPublic())
        continue;
      for (auto [i, argument] : llvm::enumerate(function.getArguments())) {
        if (!isa<TensorType>(argument.getType()))
          continue;
        if (!function.getArgAttr(i, name))
          function.setArgAttr(i, name, readOnly);
        // Kept past bufferization (which drops its own marking) for the
        // GPU's asynchronous launches.
        auto writable = function.getArgAttrOfType<BoolAttr>(i, name);
        if (writable && !writable.getValue())
          function.setArgAttr(i, gnn::GNNDialect::kReadOnlyAttrName,
                              UnitAttr::get(&getContext()));
      }
      if (failed(checkUpdates(function)))
        return signalPassFailure();
    }
  }
};
} // namespace
