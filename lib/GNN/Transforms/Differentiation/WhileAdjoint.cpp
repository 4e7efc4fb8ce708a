//===- WhileAdjoint.cpp - the adjoint of scf.while ------------------------===//
//
// Part of gnnc. An scf.while's two regions become functions of their block
// arguments and the values they use from outside: `before` (state ->
// condition, forwarded values) and `after` (forwarded values -> next
// state). The body goes through its tape where it has one (`after_fwd`
// returns its residuals, `after_vjp_tape` reads them).
//
// Where a gnn.tape can keep every value an iteration needs, the forward
// pushes, in each iteration, the state entering it, the forwarded values
// the condition computes (those it passes on unchanged are that state) and
// the body's residuals, and counts the iterations. The backward pops them
// in reverse in a loop of that many iterations: O(trips) body runs, and the
// program is the same for any trip count, so its compile time does not
// grow with a bound on the trips (the ACT loop's depth). The memory kept is
// the iterations' residuals, as for calls in straight-line code.
//
// Otherwise (a graph in the state), the backward counts the iterations by
// running the loop again, then reverses them last to first, recomputing
// the state entering iteration j by running j iterations from the initial
// values: nothing is stored, and the work is O(trips^2) body runs.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::autodiff;

static SmallVector<unsigned> floatIndices(TypeRange types) {
  SmallVector<unsigned> indices;
  for (auto [i, t] : llvm::enumerate(types))
    if (isFloatTensor(t))
      indices.push_back(i);
  return indices;
}

namespace {
/// An scf.while's regions as functions, with their backward functions.
struct WhileFunctions {
  scf::WhileOp loop;
  SmallVector<Value> captured;
  func::FuncOp before, after, beforeVjp;
  /// The body's backward: through its tape (`tape.vjp` set), else `afterVjp`.
  CalleeTape tape;
  func::FuncOp afterVjp;
  /// Float entries of the state, of the forwarded values, of `captured`.
  SmallVector<unsigned> stateFloat, forwardedFloat, capturedFloat;
  /// For each forwarded value, the entry of the state the condition region
  /// passes on unchanged, if it does.
  SmallVector<std::optional<unsigned>> passedState;
};

/// The gradients of the float state entering a stretch of iterations and
/// of the float captured values.
struct LoopGradients {
  SmallVector<Value> dState, dCaptured;
};

class WhileAdjoint {
public:
  WhileAdjoint(WhileFunctions &f, AdjointBuilder &ad) : f(f), ad(ad) {}

  /// Replaces the loop by one that keeps its iterations on a tape, and
  /// builds the backward that reads them. Fails (building nothing) where a
  /// tape cannot keep a value an iteration needs.
  FailureOr<LoopGradients> reverseWithTape(ArrayRef<Value> dResults);
  /// The backward of the loop by counting and recomputation.
  LoopGradients reverseByReplay(ArrayRef<Value> dResults);

private:
  /// A call of `fn` with `head`, the captured values (`captured`, else the
  /// loop's) and `tail`.
  func::CallOp call(OpBuilder &b, func::FuncOp fn, ValueRange head,
                    ValueRange tail = {},
                    std::optional<ValueRange> captured = std::nullopt) {
    SmallVector<Value> args(head);
    llvm::append_range(args, captured ? *captured : ValueRange(f.captured));
    llvm::append_range(args, tail);
    return b.create<func::CallOp>(f.loop.getLoc(), fn, args);
  }
  /// The types of the forwarded values the condition computes.
  SmallVector<Type> computedForwardedTypes();
  /// `f.before` without the results it passes on from the state (which,
  /// returned from a function, would be copies).
  func::FuncOp computedCondition();
  /// All forwarded values, from the state and those the condition computes.
  SmallVector<Value> forwardedValues(ValueRange state, ValueRange computed);
  /// One iteration's backward at `b`: the gradients of the state entering
  /// it and of the captured values, from those of the state it left.
  LoopGradients reverseIteration(ImplicitLocOpBuilder &b, ValueRange captured,
                                 ArrayRef<Value> state,
                                 ArrayRef<Value> forwarded,
                                 ArrayRef<Value> residuals,
                                 ArrayRef<Value> dNext);
  WhileFunctions &f;
  AdjointBuilder &ad;
};
} // namespace

/// Whether a tape keeps values of `type` (scalars as 0-d tensors).
static bool tapeKeeps(Type type) {
  if (isa<IndexType, IntegerType, FloatType>(type))
    return TapeType::canHold(RankedTensorType::get({}, type));
  return TapeType::canHold(type);
}

static void push(OpBuilder &b, Location loc, Value tape, Value value) {
  if (!isa<RankedTensorType>(value.getType()))
    value = b.create<tensor::FromElementsOp>(
        loc, RankedTensorType::get({}, value.getType()), value);
  b.create<TapePushOp>(loc, tape, value);
}

static Value pop(OpBuilder &b, Location loc, Value tape, Type type) {
  if (isa<RankedTensorType>(type))
    return b.create<TapePopOp>(loc, type, tape);
  Value kept = b.create<TapePopOp>(loc, RankedTensorType::get({}, type), tape);
  return b.create<tensor::ExtractOp>(loc, kept, ValueRange{});
}

SmallVector<Type> WhileAdjoint::computedForwardedTypes() {
  SmallVector<Type> types;
  for (auto [type, passed] : llvm::zip(f.loop.getResultTypes(), f.passedState))
    if (!passed)
      types.push_back(type);
  return types;
}

func::FuncOp WhileAdjoint::computedCondition() {
  // Results 1.. of `f.before` are the forwarded values.
  llvm::BitVector passed(f.before.getNumResults());
  for (auto [i, state] : llvm::enumerate(f.passedState))
    if (state)
      passed.set(1 + i);
  if (passed.none())
    return f.before;
  OpBuilder b(f.before);
  b.setInsertionPointAfter(f.before);
  auto fn = cast<func::FuncOp>(b.clone(*f.before));
  auto module = f.before->getParentOfType<ModuleOp>();
  fn.setSymName(freshSymbolName(module, f.before.getSymName(), "_computed"));
  fn.getBody().front().getTerminator()->eraseOperands(passed);
  fn.eraseResults(passed);
  return fn;
}

SmallVector<Value> WhileAdjoint::forwardedValues(ValueRange state,
                                                 ValueRange computed) {
  SmallVector<Value> forwarded;
  auto next = computed.begin();
  for (std::optional<unsigned> passed : f.passedState)
    forwarded.push_back(passed ? state[*passed] : *next++);
  return forwarded;
}

FailureOr<LoopGradients>
WhileAdjoint::reverseWithTape(ArrayRef<Value> dResults) {
  scf::WhileOp loop = f.loop;
  // Copies: the loop is replaced below.
  SmallVector<Type> stateTypes(loop.getInits().getTypes());
  SmallVector<Type> computedTypes = computedForwardedTypes();
  func::FuncOp body = f.tape.vjp ? f.tape.fwd : f.after;
  size_t n = stateTypes.size();
  SmallVector<Type> residualTypes(body.getResultTypes().drop_front(n));
  if (!llvm::all_of(stateTypes, tapeKeeps) ||
      !llvm::all_of(computedTypes, tapeKeeps) ||
      !llvm::all_of(residualTypes, tapeKeeps))
    return failure();

  // The forward: the loop again, with the iteration count carried after
  // the state. Its condition passes on the values the original one
  // computes and then the whole state, once: the forwarded values it
  // passed on unchanged are taken from the state, not passed twice (which
  // bufferization would copy).
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value tape = b.create<TapeCreateOp>(loc, TapeType::get(b.getContext()));
  SmallVector<Value> inits(loop.getInits());
  inits.push_back(b.create<arith::ConstantIndexOp>(loc, 0));
  SmallVector<Type> carried(stateTypes);
  carried.push_back(b.getIndexType());
  size_t k = computedTypes.size();
  SmallVector<Type> passedOn(computedTypes);
  llvm::append_range(passedOn, carried);
  auto taped = b.create<scf::WhileOp>(loc, passedOn, inits);
  taped->setAttrs(loop->getDiscardableAttrDictionary());
  {
    OpBuilder::InsertionGuard guard(b);
    Block *cond = b.createBlock(&taped.getBefore(), {}, carried,
                                SmallVector<Location>(n + 1, loc));
    auto c = call(b, computedCondition(), cond->getArguments().drop_back());
    SmallVector<Value> values(c.getResults().drop_front());
    llvm::append_range(values, cond->getArguments());
    // A tape past its budget has failed the run: the loop stops rather
    // than run out its trip count (from the inputs, perhaps 10^9) for
    // nothing.
    Value refused = b.create<TapeRefusedOp>(loc, b.getI1Type(), tape);
    Value go = b.create<arith::AndIOp>(
        loc, c.getResult(0),
        b.create<arith::XOrIOp>(loc, refused,
                                b.create<arith::ConstantIntOp>(loc, 1, 1)));
    b.create<scf::ConditionOp>(loc, go, values);

    Block *step = b.createBlock(&taped.getAfter(), {}, passedOn,
                                SmallVector<Location>(k + n + 1, loc));
    ValueRange args = step->getArguments();
    ValueRange computed = args.take_front(k), state = args.slice(k, n);
    for (Value v : state)
      push(b, loc, tape, v);
    for (Value v : computed)
      push(b, loc, tape, v);
    ValueRange next =
        call(b, body, forwardedValues(state, computed)).getResults();
    for (Value r : next.drop_front(n))
      push(b, loc, tape, r);
    SmallVector<Value> yielded(next.take_front(n));
    yielded.push_back(b.create<arith::AddIOp>(
        loc, args.back(), b.create<arith::ConstantIndexOp>(loc, 1)));
    b.create<scf::YieldOp>(loc, yielded);
  }
  ValueRange finalState = taped.getResults().slice(k, n);
  loop.replaceAllUsesWith(
      forwardedValues(finalState, taped.getResults().take_front(k)));
  loop.erase();
  f.loop = taped;
  Value trips = taped.getResults().back();

  // The backward: the results came from the condition region at the last
  // state; then the iterations, last first, from what they kept.
  ImplicitLocOpBuilder &ib = ad.b;
  auto backLast = call(ib, f.beforeVjp, finalState, dResults);
  size_t numState = f.stateFloat.size();
  Value zero = ib.create<arith::ConstantIndexOp>(0);
  Value one = ib.create<arith::ConstantIndexOp>(1);
  auto reverse = ib.create<scf::ForOp>(
      zero, trips, one, SmallVector<Value>(backLast.getResults()));
  {
    OpBuilder::InsertionGuard guard(ib);
    ib.setInsertionPointToStart(reverse.getBody());
    auto popAll = [&](ArrayRef<Type> types) {
      SmallVector<Value> values(types.size());
      for (size_t i = types.size(); i-- > 0;)
        values[i] = pop(ib, loc, tape, types[i]);
      return values;
    };
    SmallVector<Value> residuals = popAll(residualTypes);
    SmallVector<Value> computed = popAll(computedTypes);
    SmallVector<Value> state = popAll(stateTypes);
    ValueRange grads = reverse.getRegionIterArgs();
    LoopGradients g = reverseIteration(
        ib, f.captured, state, forwardedValues(state, computed), residuals,
        SmallVector<Value>(grads.take_front(numState)));
    SmallVector<Value> next(g.dState);
    for (auto [x, y] : llvm::zip(grads.drop_front(numState), g.dCaptured))
      next.push_back(ad.add(x, y));
    ib.create<scf::YieldOp>(next);
  }
  ib.create<TapeFreeOp>(tape);
  LoopGradients result;
  ValueRange r = reverse.getResults();
  result.dState.assign(r.begin(), r.begin() + numState);
  result.dCaptured.assign(r.begin() + numState, r.end());
  return result;
}

LoopGradients WhileAdjoint::reverseIteration(ImplicitLocOpBuilder &b,
                                             ValueRange captured,
                                             ArrayRef<Value> state,
                                             ArrayRef<Value> forwarded,
                                             ArrayRef<Value> residuals,
                                             ArrayRef<Value> dNext) {
  size_t numFloatCaptured = f.capturedFloat.size();
  // Through the body: forwarded values -> next state.
  func::CallOp backAfter;
  if (f.tape.vjp) {
    SmallVector<Value> tail(dNext);
    llvm::append_range(tail, residuals);
    backAfter = call(b, f.tape.vjp, forwarded, tail, captured);
  } else {
    backAfter = call(b, f.afterVjp, forwarded, dNext, captured);
  }
  ValueRange a = backAfter.getResults();
  SmallVector<Value> dForwarded(a.drop_back(numFloatCaptured));
  // Through the condition region: state -> forwarded values.
  auto backBefore = call(b, f.beforeVjp, state, dForwarded, captured);
  ValueRange c = backBefore.getResults();
  LoopGradients g;
  llvm::append_range(g.dState, c.drop_back(numFloatCaptured));
  for (auto [x, y] :
       llvm::zip(a.take_back(numFloatCaptured), c.take_back(numFloatCaptured)))
    g.dCaptured.push_back(ad.add(x, y));
  return g;
}

LoopGradients WhileAdjoint::reverseByReplay(ArrayRef<Value> dResults) {
  scf::WhileOp loop = f.loop;
  ImplicitLocOpBuilder &b = ad.b;
  Value zero = b.create<arith::ConstantIndexOp>(0);
  Value one = b.create<arith::ConstantIndexOp>(1);
  // The number of iterations: the loop again, counting.
  SmallVector<Value> countInit(loop.getInits());
  countInit.push_back(zero);
  SmallVector<Type> countTypes(loop.getInits().getTypes());
  countTypes.push_back(b.getIndexType());
  SmallVector<Type> forwardedTypes(loop.getResultTypes());
  forwardedTypes.push_back(b.getIndexType());
  auto counting = b.create<scf::WhileOp>(forwardedTypes, countInit);
  {
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Location> locs(countTypes.size(), loop.getLoc());
    Block *cond = b.createBlock(&counting.getBefore(), {}, countTypes, locs);
    auto c = call(b, f.before, cond->getArguments().drop_back());
    SmallVector<Value> forwarded(c.getResults().drop_front());
    forwarded.push_back(cond->getArguments().back());
    b.create<scf::ConditionOp>(c.getResult(0), forwarded);
    SmallVector<Location> afterLocs(forwardedTypes.size(), loop.getLoc());
    Block *body =
        b.createBlock(&counting.getAfter(), {}, forwardedTypes, afterLocs);
    auto next = call(b, f.after, body->getArguments().drop_back());
    SmallVector<Value> yielded(next.getResults());
    yielded.push_back(
        b.create<arith::AddIOp>(body->getArguments().back(), one));
    b.create<scf::YieldOp>(yielded);
  }
  Value trips = counting.getResults().back();
  // The state entering iteration j, from the initial values.
  auto replay = [&](Value j) -> SmallVector<Value> {
    auto loopOp = b.create<scf::ForOp>(zero, j, one, loop.getInits());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loopOp.getBody());
    auto c = call(b, f.before, loopOp.getRegionIterArgs());
    auto next = call(b, f.after, c.getResults().drop_front());
    b.create<scf::YieldOp>(next.getResults());
    return SmallVector<Value>(loopOp.getResults());
  };

  // The results came from the condition region at the last state.
  auto backLast = call(b, f.beforeVjp, replay(trips), dResults);
  size_t numState = f.stateFloat.size();
  SmallVector<Value> init(backLast.getResults());

  auto reverse = b.create<scf::ForOp>(zero, trips, one, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(reverse.getBody());
    ValueRange carried = reverse.getRegionIterArgs();
    Value j = b.create<arith::SubIOp>(b.create<arith::SubIOp>(trips, one),
                                      reverse.getInductionVar());
    SmallVector<Value> state = replay(j);
    auto c = call(b, f.before, state);
    SmallVector<Value> forwarded(c.getResults().drop_front());
    // The body's residuals, from its forward once more.
    SmallVector<Value> residuals;
    if (f.tape.vjp && f.tape.numResiduals) {
      auto fwd = call(b, f.tape.fwd, forwarded);
      llvm::append_range(residuals,
                         fwd.getResults().take_back(f.tape.numResiduals));
    }
    LoopGradients g =
        reverseIteration(b, f.captured, state, forwarded, residuals,
                         SmallVector<Value>(carried.take_front(numState)));
    SmallVector<Value> next(g.dState);
    for (auto [x, y] : llvm::zip(carried.drop_front(numState), g.dCaptured))
      next.push_back(ad.add(x, y));
    b.create<scf::YieldOp>(next);
  }
  LoopGradients result;
  ValueRange r = reverse.getResults();
  result.dState.assign(r.begin(), r.begin() + numState);
  result.dCaptured.assign(r.begin() + numState, r.end());
  return result;
}

LogicalResult autodiff::differentiateWhile(scf::WhileOp loop,
                                           AdjointBuilder &ad,
                                           CalleeDifferentiator &callees) {
  WhileFunctions f;
  f.loop = loop;
  llvm::SetVector<Value> capturedSet;
  getUsedValuesDefinedAbove(loop->getRegions(), capturedSet);
  f.captured = capturedSet.takeVector();
  Block *beforeBody = loop.getBeforeBody();
  for (Value v : loop.getConditionOp().getArgs()) {
    auto arg = dyn_cast<BlockArgument>(v);
    f.passedState.push_back(arg && arg.getOwner() == beforeBody
                                ? std::optional(arg.getArgNumber())
                                : std::nullopt);
  }
  // before(state..., captured...) -> (condition, forwarded...);
  // after(forwarded..., captured...) -> (state...).
  f.before = outlineRegion(loop, loop.getBefore(), f.captured, "_loop_cond");
  f.after = outlineRegion(loop, loop.getAfter(), f.captured, "_loop_body");
  FailureOr<func::FuncOp> beforeVjp = callees.vjpOf(f.before, loop);
  if (failed(beforeVjp))
    return failure();
  f.beforeVjp = *beforeVjp;
  FailureOr<CalleeTape> tape = callees.tapeOf(f.after, loop);
  if (failed(tape))
    return failure();
  f.tape = *tape;
  if (!f.tape.vjp) {
    FailureOr<func::FuncOp> afterVjp = callees.vjpOf(f.after, loop);
    if (failed(afterVjp))
      return failure();
    f.afterVjp = *afterVjp;
  }
  f.stateFloat = floatIndices(loop.getInits().getTypes());
  f.forwardedFloat = floatIndices(loop.getResultTypes());
  for (auto [i, v] : llvm::enumerate(f.captured))
    if (isFloatTensor(v.getType()))
      f.capturedFloat.push_back(i);

  SmallVector<Value> inits(loop.getInits());
  SmallVector<Value> dResults;
  for (unsigned i : f.forwardedFloat) {
    Value d = ad.adjoint(loop.getResult(i));
    dResults.push_back(d ? d : ad.zerosLike(loop.getResult(i)));
  }
  WhileAdjoint adjoint(f, ad);
  FailureOr<LoopGradients> taped = adjoint.reverseWithTape(dResults);
  LoopGradients g =
      succeeded(taped) ? std::move(*taped) : adjoint.reverseByReplay(dResults);

  for (auto [k, i] : llvm::enumerate(f.stateFloat))
    if (ad.isActive(inits[i]))
      ad.accumulate(inits[i], g.dState[k]);
  for (auto [k, i] : llvm::enumerate(f.capturedFloat))
    if (ad.isActive(f.captured[i]))
      ad.accumulate(f.captured[i], g.dCaptured[k]);
  return success();
}
