//===- BufferAliases.h - which buffers may share memory -------*- C++ -*-===//
//
// Part of gnnc. What the passes that move writes between buffers after
// bufferization (gnn-return-updated-arguments, gnn-kernel-destinations)
// ask about aliasing: which calls return new buffers, and every use of a
// buffer or of a value that may share its memory.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TRANSFORMS_BUFFERALIASES_H
#define GNN_TRANSFORMS_BUFFERALIASES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::gnn {
/// The buffer `v` casts (through any number of memref.cast), or `v`.
inline Value withoutCasts(Value v) {
  while (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  return v;
}

/// Whether functions return only buffers they allocated (or that functions
/// they call allocated): the results of a call of one never alias its
/// operands. Memoized; a function on a call cycle is taken to return
/// anything.
class FreshResults {
public:
  explicit FreshResults(ModuleOp module) : symbols(module) {}

  /// Whether `v` is a new buffer: allocated, or returned by such a
  /// function, possibly cast.
  bool isFresh(Value v) {
    Operation *def = withoutCasts(v).getDefiningOp();
    if (isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(def))
      return true;
    auto call = dyn_cast_or_null<func::CallOp>(def);
    return call && returnsFresh(call);
  }

  bool returnsFresh(func::CallOp call) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (!callee || callee.isExternal())
      return false;
    auto [it, inserted] = known.try_emplace(callee, false);
    if (!inserted)
      return it->second;
    bool fresh = true;
    callee.walk([&](func::ReturnOp ret) {
      for (Value v : ret.getOperands())
        if (isa<BaseMemRefType>(v.getType()))
          fresh = fresh && isFresh(v);
    });
    return known[callee] = fresh;
  }

  /// Forgets what is known: a function's results changed.
  void forget() { known.clear(); }

private:
  SymbolTable symbols;
  DenseMap<Operation *, bool> known;
};

/// Visits every use of `roots` and of the values that may alias them (the
/// memref results of the ops that use them, but those of calls returning
/// new buffers), with the op of `block` that the use is in. Returns false,
/// stopping there, at a use outside `block` or where `visit` does.
inline bool visitAliasUses(Block *block, ArrayRef<Value> roots,
                           FreshResults &fresh,
                           function_ref<bool(OpOperand &, Operation *)> visit) {
  SmallVector<Value> work(roots);
  DenseSet<Value> seen(roots.begin(), roots.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *op = block->findAncestorOpInBlock(*use.getOwner());
      if (!op || !visit(use, op))
        return false;
      auto call = dyn_cast<func::CallOp>(op);
      if (call && fresh.returnsFresh(call))
        continue;
      for (Value r : op->getResults())
        if (isa<BaseMemRefType>(r.getType()) && seen.insert(r).second)
          work.push_back(r);
    }
  }
  return true;
}

} // namespace mlir::gnn

#endif // GNN_TRANSFORMS_BUFFERALIASES_H
