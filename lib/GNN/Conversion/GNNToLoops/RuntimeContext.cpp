//===- RuntimeContext.cpp - pass the runtime context to calls -------------===//
//
// Part of gnnc. Lowered code reports bad input into the gnn_rt_context its
// caller passes (gnnc/errors.h), not into process-wide state: every function
// with a body takes the context as its first argument and hands it to the
// functions it calls and to the runtime's error reports. OpenMP's threads
// run a parallel region bound to that context too, so that what they
// allocate comes from the caller's runtime instance.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/Passes.h"
#include "GNN/Conversion/RuntimeABI.h"
#include "GNN/IR/GNNDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GNNBINDPARALLELTHREADSPASS
#define GEN_PASS_DEF_GNNPASSRUNTIMECONTEXTPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

static bool takesContext(StringRef callee) {
  return llvm::any_of(abi::kRuntimeFunctions,
                      [&](const abi::RuntimeFunction &f) {
                        return f.takesContext && f.name == callee;
                      });
}

static bool hasContext(func::FuncOp fn) {
  return fn.getNumArguments() > 0 &&
         fn.getArgAttr(0, GNNDialect::kRuntimeContextAttrName) != nullptr;
}

namespace {
struct GNNPassRuntimeContextPass
    : public gnn::impl::GNNPassRuntimeContextPassBase<
          GNNPassRuntimeContextPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    auto pointer = LLVM::LLVMPointerType::get(ctx);
    SymbolTable symbols(module);

    // Callees that take a context: functions with a body, and the error
    // reports (whose declarations gain the argument).
    llvm::DenseSet<Operation *> receivers;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal() && !takesContext(fn.getSymName()))
        continue;
      receivers.insert(fn);
      if (hasContext(fn) || (fn.isExternal() && fn.getNumArguments() > 0 &&
                             fn.getArgumentTypes().front() == pointer))
        continue;
      if (fn.isExternal()) {
        SmallVector<Type> inputs = {pointer};
        llvm::append_range(inputs, fn.getArgumentTypes());
        fn.setFunctionType(FunctionType::get(ctx, inputs, fn.getResultTypes()));
        continue;
      }
      fn.insertArgument(
          0, pointer,
          DictionaryAttr::get(
              ctx,
              {NamedAttribute(
                  StringAttr::get(ctx, GNNDialect::kRuntimeContextAttrName),
                  UnitAttr::get(ctx))}),
          fn.getLoc());
    }

    WalkResult result = module.walk([&](func::CallOp call) {
      Operation *callee = symbols.lookup(call.getCallee());
      if (!callee || !receivers.contains(callee))
        return WalkResult::advance();
      auto caller = call->getParentOfType<func::FuncOp>();
      if (!caller || !hasContext(caller))
        return call.emitOpError("calls '")
                   << call.getCallee()
                   << "', which needs the runtime context, from outside a "
                      "function that has one",
               WalkResult::interrupt();
      auto calleeType = cast<func::FuncOp>(callee).getFunctionType();
      if (call.getNumOperands() + 1 != calleeType.getNumInputs())
        return WalkResult::advance(); // passed already
      SmallVector<Value> operands = {caller.getArgument(0)};
      llvm::append_range(operands, call.getOperands());
      call->setOperands(operands);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

struct GNNBindParallelThreadsPass
    : public gnn::impl::GNNBindParallelThreadsPassBase<
          GNNBindParallelThreadsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    auto pointer = LLVM::LLVMPointerType::get(ctx);
    auto bindType = FunctionType::get(ctx, {pointer}, {pointer});
    bool declared = false;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal() || !hasContext(fn))
        continue;
      Value context = fn.getArgument(0);
      fn.walk([&](omp::ParallelOp parallel) {
        Block &entry = parallel.getRegion().front();
        // Bound already (a second run).
        if (auto first = dyn_cast<func::CallOp>(entry.front()))
          if (first.getCallee() == abi::kContextBind)
            return;
        if (!declared) {
          declareBind(module, bindType);
          declared = true;
        }
        OpBuilder b = OpBuilder::atBlockBegin(&entry);
        Value before =
            b.create<func::CallOp>(parallel.getLoc(), abi::kContextBind,
                                   pointer, ValueRange{context})
                .getResult(0);
        for (Block &block : parallel.getRegion()) {
          auto end = dyn_cast<omp::TerminatorOp>(block.getTerminator());
          if (!end)
            continue;
          b.setInsertionPoint(end);
          b.create<func::CallOp>(end.getLoc(), abi::kContextBind, pointer,
                                 ValueRange{before});
        }
      });
    }
  }

  static void declareBind(ModuleOp module, FunctionType type) {
    if (module.lookupSymbol(abi::kContextBind))
      return;
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    b.create<func::FuncOp>(module.getLoc(), abi::kContextBind, type)
        .setPrivate();
  }
};
} // namespace
