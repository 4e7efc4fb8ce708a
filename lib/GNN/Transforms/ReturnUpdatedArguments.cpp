//===- ReturnUpdatedArguments.cpp - updates stay in the caller's buffers --===//
//
// Part of gnnc. Removes the results of public functions that are marked as
// the updates of writable arguments (`gnn.updates`), copying an update into
// its argument where bufferization computed it elsewhere. Without this, the
// deallocation pipeline copies every such result into a fresh buffer.
//
//===----------------------------------------------------------------------===//

#include "BufferAliases.h"
#include "GNN/IR/GNNDialect.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/Sequence.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_RETURNUPDATEDARGUMENTSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using gnn::FreshResults;
using gnn::visitAliasUses;

namespace {
constexpr llvm::StringLiteral kUpdates = gnn::GNNDialect::kUpdatesAttrName,
                              kName = gnn::GNNDialect::kNameAttrName;

/// The buffer argument of `function` named `name` that result `result`
/// updates, or null after an error. Bufferization drops the arguments'
/// `bufferization.writable` marks (gnn-read-only-arguments checks them
/// before), so only one still there and false is refused here.
BlockArgument updatedArgument(func::FuncOp function, unsigned result,
                              StringAttr name, bool report = true) {
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
  if (report)
    function.emitOpError() << "result #" << result << " updates argument "
                           << name
                           << ", which is not a writable buffer of its shape";
  return nullptr;
}

/// Where the copy of the update that `ret` returns as `result` into
/// `argument` goes: right after the last op of the function's block that
/// reads the argument's old value or touches the update (or an alias of
/// either), so that the update's value need not stay live across the rest
/// of the function (a training step's updates of every parameter would
/// otherwise all be). Before `ret` where that cannot be told: more than one
/// block, an update that is not a new buffer, or an alias that reaches the
/// return.
Operation *copyPoint(func::ReturnOp ret, unsigned result,
                     BlockArgument argument, FreshResults &fresh) {
  Value update = ret.getOperand(result);
  Block *block = ret->getBlock();
  if (block != argument.getOwner() || !fresh.isFresh(update))
    return ret;
  Operation *latest = update.getDefiningOp();
  bool early = visitAliasUses(
      block, {argument, update}, fresh, [&](OpOperand &use, Operation *op) {
        // The return of the update itself is what the copy replaces.
        if (use.getOwner() == ret && use.getOperandNumber() == result)
          return true;
        if (op == ret)
          return false;
        if (latest->isBeforeInBlock(op))
          latest = op;
        return true;
      });
  return early ? latest->getNextNode() : ret.getOperation();
}

/// Whether `call` may leave its update of operand `j` in that operand's
/// buffer: the caller may write it (a new buffer of its own, or an argument
/// that it, a public function, updates itself: its caller hands that buffer
/// over), nothing reads it or an alias of it after the call, and no other
/// operand of the call is (an alias of) it. A private caller's argument is
/// not enough: whether its own callers allow the write is not known here.
bool mayUpdateInPlace(func::CallOp call, unsigned j, FreshResults &fresh) {
  Value operand = call.getOperand(j);
  Block *block = call->getBlock();
  auto caller = call->getParentOfType<func::FuncOp>();
  if (auto argument = dyn_cast<BlockArgument>(operand)) {
    if (argument.getOwner() != block || !block->isEntryBlock() ||
        block->getParentOp() != caller || !caller.isPublic())
      return false;
    auto name =
        caller.getArgAttrOfType<StringAttr>(argument.getArgNumber(), kName);
    auto updatesIt = [&](unsigned r) {
      return name && caller.getResultAttr(r, kUpdates) == name;
    };
    if (llvm::none_of(llvm::seq(caller.getNumResults()), updatesIt))
      return false;
  } else if (!fresh.isFresh(operand) ||
             operand.getDefiningOp()->getBlock() != block) {
    return false;
  }
  return visitAliasUses(
      block, operand, fresh, [&](OpOperand &use, Operation *op) {
        if (op == call)
          return use.getOwner() == call && use.getOperandNumber() == j;
        return op->isBeforeInBlock(call);
      });
}

/// Copies each of `updates` (results of `function`, each updating the
/// argument `arguments[i]`) into its argument where it was computed
/// elsewhere, and removes them from the function's results.
void leaveInArguments(func::FuncOp function, const llvm::BitVector &updates,
                      ArrayRef<BlockArgument> arguments, FreshResults &fresh) {
  function.walk([&](func::ReturnOp ret) {
    for (unsigned i : updates.set_bits()) {
      Value update = ret.getOperand(i);
      while (auto cast = update.getDefiningOp<memref::CastOp>())
        update = cast.getSource();
      if (update != arguments[i])
        OpBuilder(copyPoint(ret, i, arguments[i], fresh))
            .create<memref::CopyOp>(ret.getLoc(), ret.getOperand(i),
                                    arguments[i]);
    }
  });
  function.walk([&](func::ReturnOp ret) { ret->eraseOperands(updates); });
  function.eraseResults(updates);
  fresh.forget();
}

struct ReturnUpdatedArgumentsPass
    : gnn::impl::ReturnUpdatedArgumentsPassBase<ReturnUpdatedArgumentsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FreshResults fresh(module);
    // Private functions first: where every call may leave an update in the
    // buffer it passes, the function writes it there and its callers read
    // it from that buffer, so a caller that updates its own argument (a
    // training step's parameters) does not copy it again.
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal() && function.isPrivate())
        updatePrivateInPlace(function, module, fresh);
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal() || !function.isPublic())
        continue;
      llvm::BitVector updates(function.getNumResults());
      SmallVector<BlockArgument> arguments(function.getNumResults());
      for (unsigned i = 0; i < function.getNumResults(); ++i) {
        auto name = function.getResultAttrOfType<StringAttr>(i, kUpdates);
        if (!name)
          continue;
        arguments[i] = updatedArgument(function, i, name);
        if (!arguments[i])
          return signalPassFailure();
        updates.set(i);
      }
      if (updates.any())
        leaveInArguments(function, updates, arguments, fresh);
    }
  }

  void updatePrivateInPlace(func::FuncOp function, ModuleOp module,
                            FreshResults &fresh) {
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(function, module);
    if (!uses)
      return;
    SmallVector<func::CallOp> calls;
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (!call)
        return;
      calls.push_back(call);
    }
    if (calls.empty())
      return;
    llvm::BitVector updates(function.getNumResults());
    SmallVector<BlockArgument> arguments(function.getNumResults());
    for (unsigned i = 0; i < function.getNumResults(); ++i) {
      auto name = function.getResultAttrOfType<StringAttr>(i, kUpdates);
      BlockArgument argument =
          name ? updatedArgument(function, i, name, /*report=*/false) : nullptr;
      if (!argument || argument.getType() != function.getResultTypes()[i])
        continue;
      if (llvm::all_of(calls, [&](func::CallOp call) {
            return mayUpdateInPlace(call, argument.getArgNumber(), fresh);
          })) {
        updates.set(i);
        arguments[i] = argument;
      }
    }
    if (updates.none())
      return;
    leaveInArguments(function, updates, arguments, fresh);
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      auto kept =
          b.create<func::CallOp>(call.getLoc(), function, call.getOperands());
      unsigned k = 0;
      for (unsigned i = 0; i < call.getNumResults(); ++i)
        call.getResult(i).replaceAllUsesWith(
            updates[i] ? call.getOperand(arguments[i].getArgNumber())
                       : kept.getResult(k++));
      call.erase();
    }
  }
};
} // namespace
