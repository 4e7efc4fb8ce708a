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

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

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

/// What `op` reads: its operands and, for ops with regions (loops), the
/// values from outside that its regions use.
static SmallVector<Value> inputsOf(Operation *op) {
  SmallVector<Value> inputs(op->getOperands());
  if (op->getNumRegions() &&
      !isa<ApplyEdgesOp, ApplyNodesOp, FilterNodesOp, FilterEdgesOp>(op)) {
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(op->getRegions(), above);
    llvm::append_range(inputs, above);
  }
  return inputs;
}

/// Values of `body` that depend on one of `seeds` (constants excluded) and
/// that one of `roots` depends on.
static llvm::DenseSet<Value>
activeValues(Block &body, ArrayRef<Value> seeds, ArrayRef<Value> roots,
             const llvm::DenseSet<Value> &constants) {
  llvm::DenseSet<Value> varied(seeds.begin(), seeds.end());
  for (Operation &op : body) {
    if (llvm::none_of(inputsOf(&op),
                      [&](Value v) { return varied.contains(v); }))
      continue;
    for (Value r : op.getResults())
      if (isFloatValue(r) && !constants.contains(r))
        varied.insert(r);
  }
  llvm::DenseSet<Value> useful(roots.begin(), roots.end());
  for (Operation &op : llvm::reverse(body)) {
    if (llvm::none_of(op.getResults(),
                      [&](Value v) { return useful.contains(v); }))
      continue;
    for (Value v : inputsOf(&op))
      useful.insert(v);
  }
  llvm::DenseSet<Value> active;
  for (Value v : varied)
    if (useful.contains(v))
      active.insert(v);
  return active;
}

/// Gradients flow through gnn ops, which take rows of at most
/// kMaxStaticRowElements: an active value with wider rows (an argument, or
/// the result of an op outside gnn) is an error rather than a gradient that
/// does not verify. (Wider arguments that the loss does not depend on get
/// zero gradients.)
static LogicalResult
checkGradientRowWidths(func::FuncOp fn, Block &body,
                       const llvm::DenseSet<Value> &active) {
  // In the body's order, so that the error names the same value each run.
  SmallVector<Value> values(body.getArguments());
  for (Operation &op : body)
    llvm::append_range(values, op.getResults());
  for (Value v : values) {
    if (!active.contains(v) || hasBoundedRowWidth(v.getType()))
      continue;
    InFlightDiagnostic diag =
        isa<BlockArgument>(v)
            ? fn.emitOpError()
                  << "cannot be differentiated with respect to argument #"
                  << cast<BlockArgument>(v).getArgNumber()
            : v.getDefiningOp()->emitOpError()
                  << "cannot be differentiated: result #"
                  << cast<OpResult>(v).getResultNumber()
                  << " would need a gradient";
    diag << " (" << v.getType() << "): its rows have more than "
         << kMaxStaticRowElements
         << " elements, more than the gnn ops that compute gradients take";
    return failure();
  }
  return success();
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

/// Adjoints of node-wise ops read every input of the op they differentiate
/// and the seed's broadcast ones; the canonical forms of the node-wise ops
/// drop what a body does not read, take constants into it and forward a
/// body that passes an element through.
static void simplifyAdjoints(MutableArrayRef<func::FuncOp> fns) {
  MLIRContext *context = fns.front().getContext();
  RewritePatternSet patterns(context);
  ApplyNodesOp::getCanonicalizationPatterns(patterns, context);
  FrozenRewritePatternSet frozen(std::move(patterns));
  for (func::FuncOp fn : fns)
    (void)applyPatternsAndFoldGreedily(fn, frozen);
}

static std::string argumentName(func::FuncOp fn, unsigned i) {
  if (auto name = fn.getArgAttrOfType<StringAttr>(i, GNNDialect::kNameAttrName))
    return name.str();
  return "arg" + std::to_string(i);
}

namespace {
/// Reverse sweeps over functions; calls are differentiated through one
/// vector-Jacobian-product function per callee, so a layer function called
/// N times gets one backward function, compiled once. A call in straight-
/// line code becomes a call of `@g_fwd` (g's results and its residuals:
/// the tensors g computes that its backward reads), and its backward a call
/// of `@g_vjp_tape` (g's arguments, the gradients of its float results and
/// the residuals in; the gradients of its float arguments out), so the
/// forward runs once. Loop bodies use `@g_vjp`, which recomputes g's
/// forward from its arguments (loops store nothing per iteration).
class Differentiator : public CalleeDifferentiator {
public:
  explicit Differentiator(ModuleOp module) : module(module) {}

  /// Copies `fn` as `name`, seeds the adjoints of the copy's return operands
  /// with `seed(ad, value, index)` (null: no seed) and runs the reverse
  /// sweep; returns the copy, its AdjointBuilder and its return, or failure
  /// (the copy erased).
  struct Sweep {
    func::FuncOp fn;
    std::unique_ptr<AdjointBuilder> ad;
    Operation *ret;
    /// The copy's forward ops (before the adjoints the sweep added).
    llvm::SmallPtrSet<Operation *, 32> forward;
  };
  FailureOr<Sweep>
  sweep(func::FuncOp fn, StringRef name, ArrayRef<unsigned> wrt,
        llvm::function_ref<void(func::FuncOp)> prepare,
        llvm::function_ref<Value(AdjointBuilder &, Value, unsigned)> seed);

  /// The VJP function of `callee`.
  FailureOr<func::FuncOp> vjpOf(func::FuncOp callee, Operation *user) override;

  /// The tape of `callee`; null functions where its residuals are not all
  /// tensors (the caller then uses vjpOf).
  FailureOr<CalleeTape> tapeOf(func::FuncOp callee, Operation *user) override;

  /// The VJP and tape functions built so far.
  SmallVector<func::FuncOp> written() {
    SmallVector<func::FuncOp> fns;
    for (auto &entry : vjps)
      fns.push_back(entry.second);
    for (auto &entry : tapes) {
      if (entry.second.fwd && entry.second.fwd.getOperation() != entry.first)
        fns.push_back(entry.second.fwd);
      if (entry.second.vjp)
        fns.push_back(entry.second.vjp);
    }
    return fns;
  }

  /// Erases the VJP functions built so far (after a failure).
  void discard() {
    for (auto &entry : vjps)
      entry.second.erase();
    vjps.clear();
    for (auto &entry : tapes) {
      if (entry.second.fwd && entry.second.fwd.getOperation() != entry.first)
        entry.second.fwd.erase();
      if (entry.second.vjp)
        entry.second.vjp.erase();
    }
    tapes.clear();
  }

private:
  LogicalResult differentiateCall(func::CallOp call, AdjointBuilder &ad);

  /// The VJP function's sweep of `callee`, named `suffix` after it, with
  /// the result gradients as arguments after the callee's; the sweep's
  /// return still returns the forward results.
  FailureOr<Sweep> vjpSweep(func::FuncOp callee, Operation *user,
                            StringRef suffix);
  /// Makes `s`'s copy return the gradients of the callee's float arguments.
  void returnGradients(func::FuncOp callee, Sweep &s);

  ModuleOp module;
  llvm::DenseMap<Operation *, func::FuncOp> vjps;
  llvm::DenseMap<Operation *, CalleeTape> tapes;
  llvm::DenseSet<Operation *> inProgress;
};
} // namespace

FailureOr<Differentiator::Sweep> Differentiator::sweep(
    func::FuncOp fn, StringRef name, ArrayRef<unsigned> wrt,
    llvm::function_ref<void(func::FuncOp)> prepare,
    llvm::function_ref<Value(AdjointBuilder &, Value, unsigned)> seed) {
  OpBuilder b(fn);
  b.setInsertionPointAfter(fn);
  auto copy = cast<func::FuncOp>(b.clone(*fn));
  copy.setSymName(name);
  prepare(copy);
  Block &body = copy.getBody().front();

  // Attention with feature sizes the fused backward cannot take is
  // differentiated in its unfused form; the rest return their log-sum-exp,
  // which the backward takes instead of a second softmax sweep.
  llvm::DenseSet<Value> constants;
  for (auto op : llvm::make_early_inc_range(body.getOps<FusedAttentionOp>())) {
    if (!hasFusedBackward(op))
      unfuseAttention(op, constants);
    else
      saveAttentionStatistics(op);
  }

  SmallVector<Value> seeds = llvm::map_to_vector(
      wrt, [&](unsigned i) -> Value { return body.getArgument(i); });
  Operation *ret = body.getTerminator();
  SmallVector<Operation *> forward = llvm::map_to_vector(
      body.without_terminator(), [](Operation &op) { return &op; });
  SmallVector<Value> roots(ret->getOperands());

  // Adjoints go after this marker; what comes before it is the forward
  // (calls replaced by their tape's forward included).
  b.setInsertionPoint(ret);
  Operation *marker = b.create<arith::ConstantIndexOp>(ret->getLoc(), 0);
  llvm::DenseSet<Value> active = activeValues(body, seeds, roots, constants);
  if (failed(checkGradientRowWidths(fn, body, active))) {
    copy.erase();
    return failure();
  }
  auto ad =
      std::make_unique<AdjointBuilder>(b, ret->getLoc(), std::move(active));
  for (auto [i, root] : llvm::enumerate(roots))
    if (ad->isActive(root))
      if (Value d = seed(*ad, root, i))
        ad->accumulate(root, d);
  for (Operation *op : llvm::reverse(forward)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return ad->adjoint(r); }) ||
        llvm::none_of(inputsOf(op), [&](Value v) { return ad->isActive(v); }))
      continue;
    ad->b.setLoc(op->getLoc());
    bool handled = false;
    LogicalResult result = success();
    if (auto call = dyn_cast<func::CallOp>(op)) {
      result = differentiateCall(call, *ad);
      handled = true;
    } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
      result = differentiateFor(loop, *ad, *this);
      handled = true;
    } else if (auto loop = dyn_cast<scf::WhileOp>(op)) {
      result = differentiateWhile(loop, *ad, *this);
      handled = true;
    } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
      result = differentiateIf(branch, *ad, *this);
      handled = true;
    }
    if (!handled)
      result = differentiateGraphOp(op, *ad, handled);
    if (!handled)
      result = differentiateNodeOp(op, *ad, handled);
    if (!handled)
      result = ad->noAdjoint(op);
    if (failed(result)) {
      copy.erase();
      return failure();
    }
  }
  ad->b.setLoc(ret->getLoc());
  llvm::SmallPtrSet<Operation *, 32> forwardOps;
  for (Operation &op : body) {
    if (&op == marker)
      break;
    forwardOps.insert(&op);
  }
  marker->erase();
  return Sweep{copy, std::move(ad), ret, std::move(forwardOps)};
}

FailureOr<Differentiator::Sweep> Differentiator::vjpSweep(func::FuncOp callee,
                                                          Operation *user,
                                                          StringRef suffix) {
  if (callee.isExternal() || !llvm::hasSingleElement(callee.getBody()))
    return user->emitOpError()
           << "calls '" << callee.getSymName()
           << "', which has no body of one block to differentiate";
  if (!inProgress.insert(callee).second)
    return user->emitOpError()
           << "is a recursive call of '" << callee.getSymName()
           << "', which gnn-differentiate cannot take";
  std::string name = freshSymbolName(module, callee.getSymName(), suffix);
  SmallVector<unsigned> wrt, seeded;
  for (auto [i, type] : llvm::enumerate(callee.getArgumentTypes()))
    if (isFloatTensor(type))
      wrt.push_back(i);
  for (auto [i, type] : llvm::enumerate(callee.getResultTypes()))
    if (isFloatTensor(type))
      seeded.push_back(i);
  // The results' gradients come in as arguments after the callee's own.
  unsigned firstSeed = callee.getNumArguments();
  auto prepare = [&](func::FuncOp copy) {
    for (auto [j, i] : llvm::enumerate(seeded))
      copy.insertArgument(firstSeed + j, callee.getResultTypes()[i],
                          DictionaryAttr(), callee.getLoc());
  };
  auto seed = [&](AdjointBuilder &, Value root, unsigned i) -> Value {
    auto it = llvm::find(seeded, i);
    if (it == seeded.end())
      return {};
    auto copy = cast<func::FuncOp>(root.getParentBlock()->getParentOp());
    return copy.getArgument(firstSeed + (it - seeded.begin()));
  };
  FailureOr<Sweep> s = sweep(callee, name, wrt, prepare, seed);
  inProgress.erase(callee);
  return s;
}

void Differentiator::returnGradients(func::FuncOp callee, Sweep &s) {
  Block &body = s.fn.getBody().front();
  SmallVector<Value> grads;
  for (auto [i, type] : llvm::enumerate(callee.getArgumentTypes())) {
    if (!isFloatTensor(type))
      continue;
    Value arg = body.getArgument(i);
    Value d = s.ad->adjoint(arg);
    grads.push_back(d ? d : s.ad->zerosLike(arg));
  }
  s.ret->setOperands(grads);
  OpBuilder b(s.fn);
  s.fn.setFunctionType(
      b.getFunctionType(s.fn.getArgumentTypes(), ValueRange(grads).getTypes()));
  s.fn.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
}

FailureOr<func::FuncOp> Differentiator::vjpOf(func::FuncOp callee,
                                              Operation *user) {
  if (func::FuncOp known = vjps.lookup(callee))
    return known;
  FailureOr<Sweep> s = vjpSweep(callee, user, "_vjp");
  if (failed(s))
    return failure();
  returnGradients(callee, *s);
  eraseDeadOps(s->fn.getBody().front());
  vjps[callee] = s->fn;
  return s->fn;
}

FailureOr<CalleeTape> Differentiator::tapeOf(func::FuncOp callee,
                                             Operation *user) {
  if (auto it = tapes.find(callee); it != tapes.end())
    return it->second;
  FailureOr<Sweep> s = vjpSweep(callee, user, "_vjp_tape");
  if (failed(s))
    return failure();
  Block &body = s->fn.getBody().front();
  SmallVector<Value> results(s->ret->getOperands());
  returnGradients(callee, *s);

  // What the backward (the ops the sweep added, and the return) reads of
  // the forward: non-tensor values (sizes, constants, graphs) and reshapes
  // (views once bufferized, and often of another residual: heads split
  // from rows) are recomputed in the backward by the forward ops that make
  // them; the other tensors they and the backward read are the residuals.
  llvm::SmallPtrSet<Operation *, 16> recomputed;
  llvm::SetVector<Value> residuals;
  SmallVector<Operation *> readers;
  for (Operation &op : body)
    if (!s->forward.contains(&op))
      readers.push_back(&op);
  while (!readers.empty()) {
    Operation *reader = readers.pop_back_val();
    for (Value v : inputsOf(reader)) {
      Operation *def = v.getDefiningOp();
      if (!def || !s->forward.contains(def))
        continue;
      if (isa<RankedTensorType>(v.getType()) &&
          !isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
              def))
        residuals.insert(v);
      else if (recomputed.insert(def).second)
        readers.push_back(def);
    }
  }
  CalleeTape tape;
  if (llvm::any_of(recomputed,
                   [](Operation *op) { return !isMemoryEffectFree(op); })) {
    // No tape: the backward recomputes the forward, as vjpOf's does.
    eraseDeadOps(body);
    vjps.try_emplace(callee, s->fn);
    tapes[callee] = tape;
    return tape;
  }

  OpBuilder b(s->fn);
  if (residuals.empty()) {
    // The backward reads only the arguments: the callee is its forward.
    eraseDeadOps(body);
    tape.fwd = callee;
    tape.vjp = s->fn;
    tapes[callee] = tape;
    return tape;
  }
  // The forward: the callee's body, returning its results and residuals.
  b.setInsertionPointAfter(s->fn);
  IRMapping map;
  auto fwd = cast<func::FuncOp>(b.clone(*s->fn, map));
  fwd.setSymName(freshSymbolName(module, callee.getSymName(), "_fwd"));
  Block &fwdBody = fwd.getBody().front();
  SmallVector<Value> fwdResults;
  for (Value v : results)
    fwdResults.push_back(map.lookupOrDefault(v));
  for (Value v : residuals)
    fwdResults.push_back(map.lookup(v));
  fwdBody.getTerminator()->setOperands(fwdResults);
  llvm::SmallPtrSet<Operation *, 32> fwdOps;
  for (Operation *op : s->forward)
    fwdOps.insert(map.lookup(op));
  SmallVector<Operation *> backwardOps;
  for (Operation &op : fwdBody.without_terminator())
    if (!fwdOps.contains(&op))
      backwardOps.push_back(&op);
  for (Operation *op : llvm::reverse(backwardOps))
    op->erase();
  // The result gradients are the backward's arguments.
  llvm::BitVector seeds(fwd.getNumArguments());
  for (unsigned i = callee.getNumArguments(); i < fwd.getNumArguments(); ++i)
    seeds.set(i);
  fwd.eraseArguments(seeds);
  fwd.setFunctionType(b.getFunctionType(fwd.getArgumentTypes(),
                                        ValueRange(fwdResults).getTypes()));
  fwd.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  eraseDeadOps(fwdBody);

  // The backward reads the residuals from arguments after the gradients.
  for (Value v : residuals) {
    unsigned index = s->fn.getNumArguments();
    s->fn.insertArgument(index, v.getType(), DictionaryAttr(), v.getLoc());
    v.replaceUsesWithIf(body.getArgument(index), [&](OpOperand &use) {
      return !s->forward.contains(use.getOwner()) ||
             recomputed.contains(use.getOwner());
    });
  }
  eraseDeadOps(body);
  tape.fwd = fwd;
  tape.vjp = s->fn;
  tape.numResiduals = residuals.size();
  tapes[callee] = tape;
  return tape;
}

LogicalResult Differentiator::differentiateCall(func::CallOp call,
                                                AdjointBuilder &ad) {
  auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
  if (!callee)
    return ad.noAdjoint(call, "its callee is not a function of the module");
  FailureOr<CalleeTape> tape = tapeOf(callee, call);
  if (failed(tape))
    return failure();
  func::FuncOp backward = tape->vjp;
  if (!backward) {
    FailureOr<func::FuncOp> vjp = vjpOf(callee, call);
    if (failed(vjp))
      return failure();
    backward = *vjp;
  }
  SmallVector<Value> operands(call.getOperands());
  for (Value r : call.getResults())
    if (isFloatTensor(r.getType())) {
      Value d = ad.adjoint(r);
      operands.push_back(d ? d : ad.zerosLike(r));
    }
  if (tape->fwd && tape->fwd != callee) {
    // The forward call also returns the residuals; it replaces the call.
    OpBuilder b(call);
    auto fwd =
        b.create<func::CallOp>(call.getLoc(), tape->fwd, call.getOperands());
    unsigned n = call.getNumResults();
    call.replaceAllUsesWith(fwd.getResults().take_front(n));
    llvm::append_range(operands, fwd.getResults().drop_front(n));
    call.erase();
  }
  auto back = ad.b.create<func::CallOp>(backward, operands);
  unsigned next = 0;
  for (Value operand :
       ValueRange(operands).take_front(callee.getNumArguments())) {
    if (!isFloatTensor(operand.getType()))
      continue;
    Value d = back.getResult(next++);
    if (ad.isActive(operand))
      ad.accumulate(operand, d);
  }
  return success();
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
  for (unsigned i : wrt)
    if (i >= fn.getNumArguments() || !isFloatTensor(fn.getArgumentTypes()[i]))
      return fn.emitOpError() << "cannot be differentiated with respect to "
                                 "argument #"
                              << i << ": it is not a float tensor";
  auto module = fn->getParentOfType<ModuleOp>();
  if (!module)
    return fn.emitOpError() << "cannot be differentiated outside a module";
  if (SymbolTable::lookupSymbolIn(module, gradName))
    return fn.emitOpError() << "cannot be differentiated into '" << gradName
                            << "': the module already has that symbol";

  Differentiator differentiator(module);
  FailureOr<Differentiator::Sweep> s = differentiator.sweep(
      fn, gradName, wrt, [](func::FuncOp) {},
      [](AdjointBuilder &ad, Value root, unsigned i) -> Value {
        return i == 0 ? ad.constantLike(root, 1.0) : Value();
      });
  if (failed(s)) {
    differentiator.discard();
    return failure();
  }
  func::FuncOp grad = s->fn;
  Block &body = grad.getBody().front();
  AdjointBuilder &ad = *s->ad;

  // The results, then one gradient per argument.
  OpBuilder b(grad);
  SmallVector<Value> results(s->ret->getOperands());
  SmallVector<Attribute> resultAttrs;
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    resultAttrs.push_back(fn.getResultAttrDict(i)
                              ? Attribute(fn.getResultAttrDict(i))
                              : b.getDictionaryAttr({}));
  for (unsigned i : wrt) {
    Value arg = body.getArgument(i);
    Value d = ad.adjoint(arg);
    results.push_back(d ? d : ad.zerosLike(arg));
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(GNNDialect::kNameAttrName,
                       b.getStringAttr("grad." + argumentName(fn, i)))));
  }
  s->ret->setOperands(results);
  grad.setFunctionType(b.getFunctionType(grad.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  grad.setAllResultAttrs(resultAttrs);
  eraseDeadOps(body);
  SmallVector<func::FuncOp> written = differentiator.written();
  written.push_back(grad);
  simplifyAdjoints(written);
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
