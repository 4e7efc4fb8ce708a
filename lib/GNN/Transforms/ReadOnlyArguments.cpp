//===- ReadOnlyArguments.cpp - programs leave their inputs alone ----------===//
//
// Part of gnnc. Marks the tensor arguments of public functions
// `bufferization.writable = false`, so that one-shot bufferization copies an
// argument before updating it in place instead of writing into the caller's
// buffer.
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_READONLYARGUMENTSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
struct ReadOnlyArgumentsPass
    : gnn::impl::ReadOnlyArgumentsPassBase<ReadOnlyArgumentsPass> {
  void runOnOperation() override {
    auto readOnly = BoolAttr::get(&getContext(), false);
    StringRef name = bufferization::BufferizationDialect::kWritableAttrName;
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isExternal() || !function.isPublic())
        continue;
      for (auto [i, argument] : llvm::enumerate(function.getArguments()))
        if (isa<TensorType>(argument.getType()) &&
            !function.getArgAttr(i, name))
          function.setArgAttr(i, name, readOnly);
    }
  }
};
} // namespace
