//===- HostCalls.h - who calls the host program's functions ----*- C++ -*-===//
//
// Part of gnnc. What the passes that follow buffers through the host
// program's calls (gnn-gpu-async-launches, gnn-gpu-place-buffers) ask of
// its call graph: every call of a function, if all of them are known.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_PARALLELLOOPSTOGPU_HOSTCALLS_H
#define GNN_CONVERSION_PARALLELLOOPSTOGPU_HOSTCALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::gnn {
/// The module's calls by callee, and the functions named otherwise (whose
/// callers are not all known).
struct CallGraph {
  llvm::DenseMap<Operation *, SmallVector<func::CallOp>> calls;
  llvm::DenseSet<Operation *> addressed;

  explicit CallGraph(ModuleOp module) {
    module.walk([&](Operation *op) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        calls[SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr())]
            .push_back(call);
        return;
      }
      op->getAttrDictionary().walk([&](FlatSymbolRefAttr name) {
        addressed.insert(module.lookupSymbol(name));
      });
    });
  }

  /// The module's calls of `fn` (with a body, called, named by nothing
  /// but calls): all its calls for a private function; for a public one,
  /// those besides the host's.
  const SmallVector<func::CallOp> *knownCalls(func::FuncOp fn) const {
    if (fn.isExternal() || addressed.contains(fn))
      return nullptr;
    auto found = calls.find(fn);
    return found == calls.end() ? nullptr : &found->second;
  }
};
} // namespace mlir::gnn

#endif // GNN_CONVERSION_PARALLELLOOPSTOGPU_HOSTCALLS_H
