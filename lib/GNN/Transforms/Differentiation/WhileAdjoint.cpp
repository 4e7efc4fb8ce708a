//===- WhileAdjoint.cpp - the adjoint of scf.while ------------------------===//
//
// Part of gnnc. An scf.while's two regions become functions of their block
// arguments and the values they use from outside: `before` (state ->
// condition, forwarded values) and `after` (forwarded values -> next
// state). The body goes through its tape where it has one (`after_fwd`
// returns its residuals, `after_vjp_tape` reads them).
//
// Without a bound, the backward counts the iterations by running the loop
// again, then reverses them last to first, recomputing the state entering
// iteration j by running j iterations from the initial values: nothing is
// stored, and the work is O(trips^2) body runs.
//
// With a `gnn.max_trips = K` bound (the ACT loop's maximum depth), the
// forward keeps a tape: the loop's first K iterations run unrolled, each an
// scf.if on whether the loop is still running that keeps the state
// entering it, its forwarded values (those the condition passes on
// unchanged are that state, not copies) and its body's residuals; the loop
// itself then continues from the last state (one condition check when the
// bound holds). The backward reverses the loop from that state as above
// (no iterations when the bound holds), then the K unrolled iterations
// with what they kept: O(trips) body runs, no forward recomputed. The
// extra memory is the iterations' residuals, as for the calls of
// straight-line code.
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

/// One unrolled iteration of a taped loop: whether it ran, the state
/// entering it, the values the condition forwarded to the body and the
/// body's residuals.
struct TapedIteration {
  Value ran;
  SmallVector<Value> state, forwarded, residuals;
};

class WhileAdjoint {
public:
  WhileAdjoint(WhileFunctions &f, AdjointBuilder &ad) : f(f), ad(ad) {}

  /// The taped forward of the first `trips` iterations, built before the
  /// loop, which then continues from their last state. Fails (building
  /// nothing) where a forwarded value or residual has no placeholder.
  FailureOr<SmallVector<TapedIteration>> unroll(int64_t trips);
  /// The backward of the loop (from its current initial values) by
  /// counting and recomputation.
  LoopGradients reverseByReplay(ArrayRef<Value> dResults);
  /// The backward of the unrolled iterations, given the gradients of the
  /// state they left.
  LoopGradients reverseTape(ArrayRef<TapedIteration> iterations,
                            LoopGradients after);

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
  /// A private function beside the loop's, named after it and `suffix`,
  /// of `inputs` and then the captured values, returning what `body`
  /// builds from its arguments (the captured values apart).
  func::FuncOp makeFunction(
      StringRef suffix, TypeRange inputs, TypeRange results,
      function_ref<SmallVector<Value>(OpBuilder &, ValueRange, ValueRange)>
          body);
  /// The function of one taped iteration: (running, state, captured) ->
  /// (ran, next state, forwarded values the condition computes,
  /// residuals). Those it passes on are the state: not returned, which
  /// would copy them.
  func::FuncOp stepFunction(TypeRange residualTypes);
  /// `f.before` without the results it passes on from the state.
  func::FuncOp computedCondition();
  /// The types of the forwarded values the condition computes.
  SmallVector<Type> computedForwardedTypes();
  /// All forwarded values, from the state and those the condition computes.
  SmallVector<Value> forwardedValues(ValueRange state, ValueRange computed);
  /// Its backward: (ran, state, forwarded values, residuals, gradients of
  /// the next state and of the captured values, captured) -> the
  /// gradients of the state and of the captured values.
  func::FuncOp stepBackFunction(const TapedIteration &it,
                                const LoopGradients &g);
  /// One iteration's backward at `b`: the gradients of the state entering
  /// it and of the captured values, from those of the state it left.
  LoopGradients reverseIteration(ImplicitLocOpBuilder &b, ValueRange captured,
                                 ArrayRef<Value> state,
                                 ArrayRef<Value> forwarded,
                                 ArrayRef<Value> residuals,
                                 ArrayRef<Value> dNext);
  /// A value of `type` for a branch that computed none (never read);
  /// hasPlaceholder(type) must hold.
  static Value placeholder(OpBuilder &b, Location loc, Type type);

  WhileFunctions &f;
  AdjointBuilder &ad;
};
} // namespace

/// Whether placeholder() has a value of `type`.
static bool hasPlaceholder(Type type) {
  auto scalar = [](Type t) {
    return isa<IndexType, IntegerType, FloatType>(t);
  };
  if (scalar(type))
    return true;
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && !tensor.getEncoding() && scalar(tensor.getElementType());
}

Value WhileAdjoint::placeholder(OpBuilder &b, Location loc, Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return b.create<arith::ConstantOp>(loc,
                                       cast<TypedAttr>(b.getZeroAttr(type)));
  // A constant with no rows along the dynamic dims.
  Type elem = tensor.getElementType();
  SmallVector<int64_t> shape(tensor.getShape());
  for (int64_t &size : shape)
    if (ShapedType::isDynamic(size))
      size = 0;
  auto staticType = RankedTensorType::get(shape, elem);
  Value zeros = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(staticType, b.getZeroAttr(elem)));
  if (staticType == tensor)
    return zeros;
  return b.create<tensor::CastOp>(loc, tensor, zeros);
}

func::FuncOp WhileAdjoint::makeFunction(
    StringRef suffix, TypeRange inputs, TypeRange results,
    function_ref<SmallVector<Value>(OpBuilder &, ValueRange, ValueRange)>
        body) {
  Location loc = f.loop.getLoc();
  auto parent = f.loop->getParentOfType<func::FuncOp>();
  auto module = parent->getParentOfType<ModuleOp>();
  SmallVector<Type> types(inputs);
  for (Value v : f.captured)
    types.push_back(v.getType());
  std::string name = freshSymbolName(module, parent.getSymName(), suffix);
  OpBuilder b(parent);
  b.setInsertionPointAfter(parent);
  auto fn =
      b.create<func::FuncOp>(loc, name, b.getFunctionType(types, results));
  fn.setPrivate();
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ValueRange args = entry->getArguments();
  SmallVector<Value> returned =
      body(b, args.take_front(inputs.size()), args.drop_front(inputs.size()));
  b.create<func::ReturnOp>(loc, returned);
  return fn;
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

func::FuncOp WhileAdjoint::stepFunction(TypeRange residualTypes) {
  Location loc = f.loop.getLoc();
  TypeRange stateTypes = f.loop.getInits().getTypes();
  SmallVector<Type> forwardedTypes = computedForwardedTypes();
  SmallVector<Type> inputs = {OpBuilder(f.loop).getI1Type()};
  llvm::append_range(inputs, stateTypes);
  SmallVector<Type> results(inputs);
  llvm::append_range(results, forwardedTypes);
  llvm::append_range(results, residualTypes);
  func::FuncOp condition = computedCondition();
  return makeFunction(
      "_loop_step", inputs, results,
      [&](OpBuilder &b, ValueRange args, ValueRange captured) {
        Value running = args[0];
        ValueRange state = args.drop_front();
        auto placeholders = [&](OpBuilder &nb, TypeRange ts) {
          return llvm::map_to_vector(
              ts, [&](Type t) { return placeholder(nb, loc, t); });
        };
        auto stopped = [&](OpBuilder &nb, ValueRange computed) {
          SmallVector<Value> values = {
              nb.create<arith::ConstantIntOp>(loc, 0, nb.getI1Type())};
          llvm::append_range(values, state);
          llvm::append_range(values, computed);
          llvm::append_range(values, placeholders(nb, residualTypes));
          nb.create<scf::YieldOp>(loc, values);
        };
        auto step = b.create<scf::IfOp>(
            loc, running,
            [&](OpBuilder &nb, Location) {
              auto cond = call(nb, condition, state, {}, captured);
              ValueRange computed = cond.getResults().drop_front();
              SmallVector<Value> forwarded = forwardedValues(state, computed);
              auto body = nb.create<scf::IfOp>(
                  loc, cond.getResult(0),
                  [&](OpBuilder &tb, Location) {
                    auto next = call(tb, f.tape.fwd, forwarded, {}, captured);
                    ValueRange r = next.getResults();
                    SmallVector<Value> values = {
                        tb.create<arith::ConstantIntOp>(loc, 1,
                                                        tb.getI1Type())};
                    llvm::append_range(values, r.take_front(stateTypes.size()));
                    llvm::append_range(values, computed);
                    llvm::append_range(values, r.drop_front(stateTypes.size()));
                    tb.create<scf::YieldOp>(loc, values);
                  },
                  [&](OpBuilder &eb, Location) { stopped(eb, computed); });
              nb.create<scf::YieldOp>(loc, body.getResults());
            },
            [&](OpBuilder &nb, Location) {
              stopped(nb, placeholders(nb, forwardedTypes));
            });
        return SmallVector<Value>(step.getResults());
      });
}

SmallVector<Value> WhileAdjoint::forwardedValues(ValueRange state,
                                                 ValueRange computed) {
  SmallVector<Value> forwarded;
  auto next = computed.begin();
  for (std::optional<unsigned> passed : f.passedState)
    forwarded.push_back(passed ? state[*passed] : *next++);
  return forwarded;
}

FailureOr<SmallVector<TapedIteration>> WhileAdjoint::unroll(int64_t trips) {
  scf::WhileOp loop = f.loop;
  TypeRange stateTypes = loop.getInits().getTypes();
  SmallVector<Type> forwardedTypes = computedForwardedTypes();
  TypeRange residualTypes =
      f.tape.fwd.getResultTypes().drop_front(stateTypes.size());
  if (!llvm::all_of(forwardedTypes, hasPlaceholder) ||
      !llvm::all_of(residualTypes, hasPlaceholder))
    return failure();
  // Each iteration is a call of one function: the dealloc analysis of a
  // function holding every iteration's values inline grows too fast.
  func::FuncOp step = stepFunction(residualTypes);

  OpBuilder b(loop);
  SmallVector<TapedIteration> iterations;
  SmallVector<Value> state(loop.getInits());
  Value running =
      b.create<arith::ConstantIntOp>(loop.getLoc(), 1, b.getI1Type());
  size_t n = stateTypes.size(), m = forwardedTypes.size();
  for (int64_t i = 0; i < trips; ++i) {
    SmallVector<Value> head = {running};
    llvm::append_range(head, state);
    ValueRange r = call(b, step, head).getResults();
    TapedIteration it;
    it.ran = r[0];
    it.state = state;
    it.forwarded = forwardedValues(state, r.slice(1 + n, m));
    it.residuals.assign(r.begin() + 1 + n + m, r.end());
    state.assign(r.begin() + 1, r.begin() + 1 + n);
    running = it.ran;
    iterations.push_back(std::move(it));
  }
  // The loop goes on from the last state (with the bound kept, it checks
  // its condition once and stops).
  loop->setOperands(state);
  return iterations;
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

/// The operands of an iteration's step backward before the captured values.
static SmallVector<Value> stepBackOperands(const TapedIteration &it,
                                           const LoopGradients &g) {
  SmallVector<Value> head = {it.ran};
  llvm::append_range(head, it.state);
  llvm::append_range(head, it.forwarded);
  llvm::append_range(head, it.residuals);
  llvm::append_range(head, g.dState);
  llvm::append_range(head, g.dCaptured);
  return head;
}

func::FuncOp WhileAdjoint::stepBackFunction(const TapedIteration &it,
                                            const LoopGradients &g) {
  SmallVector<Value> head = stepBackOperands(it, g);
  SmallVector<Value> grads(g.dState);
  llvm::append_range(grads, g.dCaptured);
  TypeRange gradTypes = ValueRange(grads).getTypes();
  size_t n = it.state.size(), m = it.forwarded.size(), k = it.residuals.size(),
         numState = g.dState.size();
  return makeFunction(
      "_loop_step_vjp", ValueRange(head).getTypes(), gradTypes,
      [&](OpBuilder &builder, ValueRange args, ValueRange captured) {
        ImplicitLocOpBuilder &b = ad.b;
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(builder.getInsertionBlock(),
                            builder.getInsertionPoint());
        ValueRange state = args.slice(1, n), forwarded = args.slice(1 + n, m),
                   residuals = args.slice(1 + n + m, k),
                   carried = args.drop_front(1 + n + m + k);
        auto step = b.create<scf::IfOp>(gradTypes, args[0],
                                        /*withElseRegion=*/true);
        b.setInsertionPointToStart(&step.getThenRegion().front());
        LoopGradients back = reverseIteration(
            b, captured, SmallVector<Value>(state),
            SmallVector<Value>(forwarded), SmallVector<Value>(residuals),
            SmallVector<Value>(carried.take_front(numState)));
        SmallVector<Value> next(back.dState);
        for (auto [x, y] :
             llvm::zip(carried.drop_front(numState), back.dCaptured))
          next.push_back(ad.add(x, y));
        b.create<scf::YieldOp>(next);
        // An iteration that did not run leaves the gradients as they are.
        b.setInsertionPointToStart(&step.getElseRegion().front());
        b.create<scf::YieldOp>(carried);
        return SmallVector<Value>(step.getResults());
      });
}

LoopGradients WhileAdjoint::reverseTape(ArrayRef<TapedIteration> iterations,
                                        LoopGradients after) {
  LoopGradients g = std::move(after);
  // One backward function serves every iteration (their values have the
  // same types).
  func::FuncOp back;
  for (const TapedIteration &it : llvm::reverse(iterations)) {
    if (!back)
      back = stepBackFunction(it, g);
    ValueRange r = call(ad.b, back, stepBackOperands(it, g)).getResults();
    size_t numState = g.dState.size();
    g.dState.assign(r.begin(), r.begin() + numState);
    g.dCaptured.assign(r.begin() + numState, r.end());
  }
  return g;
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
  WhileAdjoint adjoint(f, ad);
  SmallVector<TapedIteration> iterations;
  if (auto bound =
          loop->getAttrOfType<IntegerAttr>(GNNDialect::kMaxTripsAttrName);
      bound && f.tape.vjp) {
    FailureOr<SmallVector<TapedIteration>> unrolled =
        adjoint.unroll(bound.getInt());
    if (succeeded(unrolled))
      iterations = std::move(*unrolled);
  }

  SmallVector<Value> dResults;
  for (unsigned i : f.forwardedFloat) {
    Value d = ad.adjoint(loop.getResult(i));
    dResults.push_back(d ? d : ad.zerosLike(loop.getResult(i)));
  }
  LoopGradients g = adjoint.reverseByReplay(dResults);
  if (!iterations.empty())
    g = adjoint.reverseTape(iterations, std::move(g));

  for (auto [k, i] : llvm::enumerate(f.stateFloat))
    if (ad.isActive(inits[i]))
      ad.accumulate(inits[i], g.dState[k]);
  for (auto [k, i] : llvm::enumerate(f.capturedFloat))
    if (ad.isActive(f.captured[i]))
      ad.accumulate(f.captured[i], g.dCaptured[k]);
  return success();
}
