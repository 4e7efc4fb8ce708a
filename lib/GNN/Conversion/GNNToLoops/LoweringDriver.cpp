//===- LoweringDriver.cpp - apply the gnn op lowerings, producers first ---===//
//
// Part of gnnc. The driver that convert-gnn-to-loops and convert-gnn-to-gpu
// share: graphs are decomposed into their parts, then MLIR's dialect
// conversion lowers every gnn op outside an element body with the best of
// its patterns, in program order, so that a graph's producer becomes its
// parts before any user reads them.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/GraphParts.h"
#include "GNN/Conversion/Passes.h"
#include "GNN/Conversion/RuntimeABI.h"
#include "GNN/IR/GNNOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_CONVERTGNNTOLOOPSPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

/// Whether `op` is lowered by its own pattern (ops inside element bodies are
/// lowered with the op that holds them).
static bool isLoweredAlone(Operation *op) {
  return isa_and_nonnull<GNNDialect>(op->getDialect()) && !isa<YieldOp>(op) &&
         !op->getParentOfType<ApplyEdgesOp>() &&
         !op->getParentOfType<ApplyNodesOp>() &&
         !op->getParentOfType<FilterNodesOp>() &&
         !op->getParentOfType<FilterEdgesOp>();
}

LogicalResult mlir::gnn::lowerGNNOps(ModuleOp module,
                                     const FrozenRewritePatternSet &patterns,
                                     StringRef targetName) {
  if (failed(decomposeGraphs(module)))
    return failure();
  // Entry points are called through their C wrappers.
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn.isPublic())
      fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                  UnitAttr::get(fn.getContext()));

  // The runtime functions that lowered code reports bad input to (their
  // context argument comes with gnn-pass-runtime-context).
  OpBuilder b(module.getBodyRegion());
  for (const abi::RuntimeFunction &f : abi::kRuntimeFunctions) {
    if (!abi::isErrorReport(f) || module.lookupSymbol(f.name))
      continue;
    auto decl = b.create<func::FuncOp>(
        module.getLoc(), f.name,
        b.getFunctionType(SmallVector<Type>(f.i64Arguments, b.getI64Type()),
                          {}));
    decl.setPrivate();
  }

  // An op that no pattern lowers is named before anything changes.
  const auto &lowered = patterns.getOpSpecificNativePatterns();
  WalkResult missing = module.walk([&](Operation *op) {
    if (!isLoweredAlone(op) || lowered.count(op->getName()))
      return WalkResult::advance();
    op->emitOpError("has no ") << targetName << " lowering yet";
    return WalkResult::interrupt();
  });
  if (missing.wasInterrupted())
    return failure();

  // MLIR's dialect conversion visits ops in program order, so a graph's
  // producer is lowered before its users read its parts.
  MLIRContext *context = module.getContext();
  ConversionTarget target(*context);
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  // The ops to lower are of unknown legality, not illegal: a lowering that
  // fails has said why, and the conversion adds no second error.
  target.addDynamicallyLegalDialect<GNNDialect>(
      [](Operation *op) -> std::optional<bool> {
        if (isLoweredAlone(op))
          return std::nullopt;
        return true;
      });
  // Nor may a lesser pattern that the conversion then tries stand in for a
  // lowering that failed.
  bool reported = false;
  {
    ScopedDiagnosticHandler watch(context, [&](Diagnostic &diag) {
      reported |= diag.getSeverity() == DiagnosticSeverity::Error;
      return failure(); // passed on to the caller's handler
    });
    if (failed(applyPartialConversion(module, target, patterns)) || reported)
      return failure();
  }
  WalkResult left = module.walk([&](Operation *op) {
    if (!isLoweredAlone(op))
      return WalkResult::advance();
    op->emitOpError("could not be lowered for the ") << targetName;
    return WalkResult::interrupt();
  });
  if (left.wasInterrupted())
    return failure();
  // Graphs built by gnn ops and passed on are their parts now.
  foldGraphCasts(module);
  // Tape ops read the runtime's pointer, not the casts creation left.
  module.walk([](UnrealizedConversionCastOp cast) {
    if (cast->use_empty() && cast->getNumResults() == 1 &&
        isa<TapeType>(cast->getResult(0).getType()))
      cast.erase();
  });
  return success();
}

namespace {
struct ConvertGNNToLoopsPass
    : public gnn::impl::ConvertGNNToLoopsPassBase<ConvertGNNToLoopsPass> {
  using ConvertGNNToLoopsPassBase::ConvertGNNToLoopsPassBase;

  void runOnOperation() override {
    LoopTarget target;
    target.threads = LoopTarget::Threads::CpuCores;
    target.attentionBlocks = attentionBlocks;
    target.parallelDense = parallelDense;
    RewritePatternSet patterns(&getContext());
    populateGNNToLoopsPatterns(patterns, target);
    if (failed(lowerGNNOps(getOperation(), std::move(patterns), "CPU")))
      signalPassFailure();
  }
};
} // namespace
