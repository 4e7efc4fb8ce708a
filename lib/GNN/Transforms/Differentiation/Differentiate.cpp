//===- Differentiate.cpp - the gnn-differentiate pass ---------------------===//
//
// Part of gnnc. Reverse mode over a function: a copy of it computes the
// forward, then the adjoint of every active value, last op first, and
// returns the gradients. Activity (what depends on a differentiable
// argument and what the loss depends on) decides which adjoints exist, so
// dead gradients are never built.
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Differentiate.h"
#include "Adjoints.h"
#include "GNN/IR/GNNDialect.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_DIFFERENTIATEPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::autodiff;

static bool isFloatValue(Value v) {
  return isa<FloatType>(getElementTypeOrSelf(v.getType()));
}

/// Values of `body` that depend on one of `seeds` (constants excluded) and
/// that `root` depends on.
static llvm::DenseSet<Value>
activeValues(Block &body, ArrayRef<Value> seeds, Value root,
             const llvm::DenseSet<Value> &constants) {
  llvm::DenseSet<Value> varied(seeds.begin(), seeds.end());
  for (Operation &op : body) {
    if (llvm::none_of(op.getOperands(),
                      [&](Value v) { return varied.contains(v); }))
      continue;
    for (Value r : op.getResults())
      if (isFloatValue(r) && !constants.contains(r))
        varied.insert(r);
  }
  llvm::DenseSet<Value> useful = {root};
  for (Operation &op : llvm::reverse(body)) {
    if (llvm::none_of(op.getResults(),
                      [&](Value v) { return useful.contains(v); }))
      continue;
    for (Value v : op.getOperands())
      useful.insert(v);
  }
  llvm::DenseSet<Value> active;
  for (Value v : varied)
    if (useful.contains(v))
      active.insert(v);
  return active;
}

/// Erases the unused side-effect-free ops the sweep left behind.
static void eraseDeadOps(Block &body) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (op.use_empty() && isMemoryEffectFree(&op) &&
          !op.hasTrait<OpTrait::IsTerminator>()) {
        op.erase();
        changed = true;
      }
  }
}

static std::string argumentName(func::FuncOp fn, unsigned i) {
  if (auto name = fn.getArgAttrOfType<StringAttr>(i, GNNDialect::kNameAttrName))
    return name.str();
  return "arg" + std::to_string(i);
}

FailureOr<func::FuncOp> mlir::gnn::differentiateFunction(func::FuncOp fn,
                                                         ArrayRef<unsigned> wrt,
                                                         StringRef gradName) {
  if (fn.isExternal() || !llvm::hasSingleElement(fn.getBody()))
    return fn.emitOpError() << "cannot be differentiated: it needs a body of "
                               "one block";
  auto lossType = fn.getNumResults()
                      ? dyn_cast<RankedTensorType>(fn.getResultTypes()[0])
                      : RankedTensorType();
  if (!lossType || !isa<FloatType>(lossType.getElementType()) ||
      !lossType.hasStaticShape() || lossType.getNumElements() != 1)
    return fn.emitOpError() << "cannot be differentiated: its first result "
                               "must be the loss, a float tensor of one "
                               "element";
  for (unsigned i : wrt) {
    auto type = i < fn.getNumArguments()
                    ? dyn_cast<RankedTensorType>(fn.getArgumentTypes()[i])
                    : RankedTensorType();
    if (!type || !isa<FloatType>(type.getElementType()))
      return fn.emitOpError() << "cannot be differentiated with respect to "
                                 "argument #"
                              << i << ": it is not a float tensor";
  }
  auto module = fn->getParentOfType<ModuleOp>();
  if (module && SymbolTable::lookupSymbolIn(module, gradName))
    return fn.emitOpError() << "cannot be differentiated into '" << gradName
                            << "': the module already has that symbol";

  OpBuilder b(fn);
  b.setInsertionPointAfter(fn);
  auto grad = cast<func::FuncOp>(b.clone(*fn));
  grad.setSymName(gradName);
  Block &body = grad.getBody().front();

  // Attention with feature sizes the fused backward cannot take is
  // differentiated in its unfused form.
  llvm::DenseSet<Value> constants;
  for (auto op : llvm::make_early_inc_range(body.getOps<FusedAttentionOp>()))
    if (!hasFusedBackward(op))
      unfuseAttention(op, constants);

  SmallVector<Value> seeds = llvm::map_to_vector(
      wrt, [&](unsigned i) -> Value { return body.getArgument(i); });
  Operation *ret = body.getTerminator();
  Value loss = ret->getOperand(0);
  SmallVector<Operation *> forward = llvm::map_to_vector(
      body.without_terminator(), [](Operation &op) { return &op; });

  b.setInsertionPoint(ret);
  AdjointBuilder ad(b, ret->getLoc(),
                    activeValues(body, seeds, loss, constants));
  if (ad.isActive(loss))
    ad.accumulate(loss, ad.constantLike(loss, 1.0));
  for (Operation *op : llvm::reverse(forward)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return ad.adjoint(r); }) ||
        llvm::none_of(op->getOperands(),
                      [&](Value v) { return ad.isActive(v); }))
      continue;
    ad.b.setLoc(op->getLoc());
    bool handled = false;
    LogicalResult result = differentiateGraphOp(op, ad, handled);
    if (!handled)
      result = differentiateNodeOp(op, ad, handled);
    if (!handled)
      result = ad.noAdjoint(op);
    if (failed(result)) {
      grad.erase();
      return failure();
    }
  }

  // The results, then one gradient per argument.
  ad.b.setLoc(ret->getLoc());
  SmallVector<Value> results(ret->getOperands());
  SmallVector<Attribute> resultAttrs;
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    resultAttrs.push_back(fn.getResultAttrDict(i)
                              ? Attribute(fn.getResultAttrDict(i))
                              : b.getDictionaryAttr({}));
  for (auto [i, seed] : llvm::zip(wrt, seeds)) {
    Value d = ad.adjoint(seed);
    results.push_back(d ? d : ad.zerosLike(seed));
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(GNNDialect::kNameAttrName,
                       b.getStringAttr("grad." + argumentName(fn, i)))));
  }
  ret->setOperands(results);
  grad.setFunctionType(b.getFunctionType(grad.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  grad.setAllResultAttrs(resultAttrs);
  eraseDeadOps(body);
  return grad;
}

namespace {
struct DifferentiatePass
    : public gnn::impl::DifferentiatePassBase<DifferentiatePass> {
  using DifferentiatePassBase::DifferentiatePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> candidates(module.getOps<func::FuncOp>());
    for (const std::string &name : functions)
      if (!module.lookupSymbol<func::FuncOp>(name)) {
        module.emitError() << "gnn-differentiate: no function '" << name << "'";
        return signalPassFailure();
      }
    for (func::FuncOp fn : candidates) {
      bool listed = llvm::is_contained(functions, fn.getSymName().str());
      if (!functions.empty() && !listed)
        continue;
      if (fn.isExternal() || fn->hasAttr(GNNDialect::kKernelAttrName))
        continue;
      SmallVector<unsigned> wrt;
      for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
        auto type = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[i]);
        bool isFloat = type && isa<FloatType>(type.getElementType());
        if (fn.getArgAttr(i, GNNDialect::kDifferentiableAttrName) ||
            (allFloatArguments && isFloat))
          wrt.push_back(i);
      }
      if (wrt.empty()) {
        if (!listed)
          continue;
        fn.emitOpError() << "has no differentiable argument (mark one "
                            "gnn.differentiable or use all-float-arguments)";
        return signalPassFailure();
      }
      if (failed(
              differentiateFunction(fn, wrt, (fn.getSymName() + suffix).str())))
        return signalPassFailure();
    }
  }
};
} // namespace
