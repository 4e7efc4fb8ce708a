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
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
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
    while (auto cast = v.getDefiningOp<memref::CastOp>())
      v = cast.getSource();
    Operation *def = v.getDefiningOp();
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

private:
  SymbolTable symbols;
  DenseMap<Operation *, bool> known;
};

/// The op of `block` that `op` is or is nested in.
Operation *inBlock(Block *block, Operation *op) {
  return block->findAncestorOpInBlock(*op);
}

/// Where the copy of the update that `ret` returns as `result` into
/// `argument` goes: right after the last op of the function's block that
/// reads the argument's old value or touches the update (through views and
/// results that may alias them), so that the update's buffer is freed there
/// rather than held to the end (a training step's updates of every
/// parameter would otherwise all be live at once). Before `ret` where that
/// cannot be told: more than one block, an update that is not a new
/// buffer, or an alias that reaches the return.
Operation *copyPoint(func::ReturnOp ret, unsigned result,
                     BlockArgument argument, FreshResults &fresh) {
  Value update = ret.getOperand(result);
  Block *block = ret->getBlock();
  if (block != argument.getOwner() || !fresh.isFresh(update))
    return ret;
  Operation *latest = update.getDefiningOp();
  SmallVector<Value> work = {argument, update};
  DenseSet<Value> seen(work.begin(), work.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      // The return of the update itself is what the copy replaces.
      if (use.getOwner() == ret && use.getOperandNumber() == result)
        continue;
      Operation *op = inBlock(block, use.getOwner());
      if (!op || op == ret)
        return ret;
      if (latest->isBeforeInBlock(op))
        latest = op;
      // Results that may be views of v: all memref results, but those of a
      // call returning new buffers.
      auto call = dyn_cast<func::CallOp>(op);
      if (call && fresh.returnsFresh(call))
        continue;
      for (Value r : op->getResults())
        if (isa<BaseMemRefType>(r.getType()) && seen.insert(r).second)
          work.push_back(r);
    }
  }
  return latest->getNextNode();
}

struct ReturnUpdatedArgumentsPass
    : gnn::impl::ReturnUpdatedArgumentsPassBase<ReturnUpdatedArgumentsPass> {
  void runOnOperation() override {
    FreshResults fresh(getOperation());
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
            OpBuilder(copyPoint(ret, i, argument, fresh))
                .create<memref::CopyOp>(ret.getLoc(), ret.getOperand(i),
                                        argument);
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
