//===- TrainStepBuilder.cpp - the whole training step as gnn IR -----------===//
//
// Part of gnnc. @train_step: the differentiated loss, the sum of each
// parameter's gradients into its accumulator, and Adam, in one function, so
// that parameters, moments and sums stay in the caller's buffers and a
// step is one call of the compiled program.
//
//===----------------------------------------------------------------------===//

#include "FunctionBuilder.h"
#include "GNN/Models/TrainingBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::models;

static llvm::StringRef nameOf(func::FuncOp fn, unsigned i, bool result) {
  auto name =
      result ? fn.getResultAttrOfType<StringAttr>(i, GNNDialect::kNameAttrName)
             : fn.getArgAttrOfType<StringAttr>(i, GNNDialect::kNameAttrName);
  return name ? name.getValue() : llvm::StringRef();
}

namespace {
/// Parameters whose updates one function holds.
constexpr size_t kUpdateGroup = 8;

/// A parameter's state: the parameter, its moments and (with accumulation)
/// its gradient sum.
struct State {
  Value param, m, v, accum;

  /// The state's names for `key` (a parameter's name, or its place in an
  /// update function), in the order of values().
  static SmallVector<std::string> names(const std::string &key,
                                        bool accumulate) {
    SmallVector<std::string> n = {model::kParamPrefix + key,
                                  model::kMoment1Prefix + key,
                                  model::kMoment2Prefix + key};
    if (accumulate)
      n.push_back(model::kAccumPrefix + key);
    return n;
  }
  SmallVector<Value> values() const {
    SmallVector<Value> all = {param, m, v};
    if (accum)
      all.push_back(accum);
    return all;
  }
  /// The state at the front of `values` (dropped from it).
  static State take(ValueRange &values, bool accumulate) {
    State s{values[0], values[1], values[2], accumulate ? values[3] : Value()};
    values = values.drop_front(accumulate ? 4 : 3);
    return s;
  }
};

/// Adam's step sizes and what gates the update: the step's update flag and
/// the objective (null where the update needs no finite objective).
struct AdamScalars {
  Value w1, b2, w2, step, c2, eps, flag;
  /// A tensor of one element.
  Value objective;

  static constexpr size_t kScalars = 7;
  /// From the values in the order of the fields, the objective last if
  /// there is one more.
  static AdamScalars of(ValueRange v) {
    return {v[0], v[1], v[2], v[3],
            v[4], v[5], v[6], v.size() > kScalars ? v[kScalars] : Value()};
  }

  /// Whether the objective is finite (NaN compares false) and whether the
  /// update applies (it is, and this is an update step), built where `b`
  /// stands: inside each element body, so that on a GPU the update's
  /// kernels read the objective themselves and the host never waits for
  /// it.
  std::pair<Value, Value> gates(ImplicitLocOpBuilder &b) const {
    Value finite;
    if (!objective) {
      finite = b.create<arith::ConstantIntOp>(1, 1);
    } else {
      auto type = cast<RankedTensorType>(objective.getType());
      SmallVector<Value> zeros;
      if (type.getRank() > 0)
        zeros.assign(type.getRank(), b.create<arith::ConstantIndexOp>(0));
      Value obj = b.create<tensor::ExtractOp>(objective, zeros);
      finite = b.create<arith::CmpFOp>(
          arith::CmpFPredicate::OLT, b.create<math::AbsFOp>(obj),
          b.create<arith::ConstantOp>(FloatAttr::get(
              obj.getType(), std::numeric_limits<double>::infinity())));
    }
    Value update = b.create<arith::CmpFOp>(
        arith::CmpFPredicate::OGT, flag,
        b.create<arith::ConstantOp>(FloatAttr::get(flag.getType(), 0.0)));
    return {finite, b.create<arith::AndIOp>(finite, update)};
  }
};

/// One parameter's Adam update from its gradients `grads` (and its sum
/// `s.accum`, if kept): the next parameter, moments and sum.
State adamUpdate(FunctionBuilder &f, const State &s, ValueRange grads,
                 const AdamScalars &h) {
  ImplicitLocOpBuilder &b = f.b;
  Type type = s.param.getType();
  // What is added up: the accumulated sum (if kept) and the parameter's
  // gradients, in the order a host loop over the gradients by name would
  // add them, so that the sum does not depend on how it is run.
  SmallVector<Value> terms;
  if (s.accum)
    terms.push_back(s.accum);
  llvm::append_range(terms, grads);
  auto total = [&](ValueRange e) {
    Value sum = e.front();
    for (Value g : e.drop_front())
      sum = b.create<arith::AddFOp>(sum, g);
    return sum;
  };
  // Each pass reads the terms itself rather than a summed tensor: one
  // pass and one buffer fewer per parameter.
  auto withTerms = [&](Value first) {
    SmallVector<Value> in = {first};
    llvm::append_range(in, terms);
    return in;
  };
  State next;
  next.m = f.apply(withTerms(s.m), type, [&](ValueRange e) -> Value {
    Value apply = h.gates(b).second;
    Value delta = b.create<arith::SubFOp>(total(e.drop_front()), e[0]);
    Value moved =
        b.create<arith::AddFOp>(e[0], b.create<arith::MulFOp>(h.w1, delta));
    return b.create<arith::SelectOp>(apply, moved, e[0]);
  });
  next.v = f.apply(withTerms(s.v), type, [&](ValueRange e) -> Value {
    Value apply = h.gates(b).second;
    Value g = total(e.drop_front());
    Value square = b.create<arith::MulFOp>(g, g);
    Value moved =
        b.create<arith::AddFOp>(b.create<arith::MulFOp>(e[0], h.b2),
                                b.create<arith::MulFOp>(h.w2, square));
    return b.create<arith::SelectOp>(apply, moved, e[0]);
  });
  next.param =
      f.apply({s.param, next.m, next.v}, type, [&](ValueRange e) -> Value {
        Value apply = h.gates(b).second;
        Value root = b.create<math::SqrtOp>(e[2]);
        Value denom =
            b.create<arith::AddFOp>(b.create<arith::DivFOp>(root, h.c2), h.eps);
        Value ratio = b.create<arith::DivFOp>(e[1], denom);
        Value moved = b.create<arith::AddFOp>(
            e[0], b.create<arith::MulFOp>(h.step, ratio));
        return b.create<arith::SelectOp>(apply, moved, e[0]);
      });
  if (!s.accum)
    return next;
  // Kept for the next batch: cleared by an update, unchanged by a
  // non-finite objective.
  next.accum = f.apply(terms, type, [&](ValueRange e) -> Value {
    auto [finite, apply] = h.gates(b);
    Value kept = b.create<arith::SelectOp>(finite, total(e), e[0]);
    return b.create<arith::SelectOp>(apply, f.constant(0), kept);
  });
  return next;
}
} // namespace

/// The values of AdamScalars, in its order, from the step's `adam` input
/// and, where the update needs a finite objective, `objective`.
static FunctionBuilder::Named adamScalars(FunctionBuilder &f, Value hyper,
                                          Value objective) {
  ImplicitLocOpBuilder &b = f.b;
  FunctionBuilder::Named scalars;
  auto field = [&](model::AdamField i) -> Value {
    return b.create<tensor::ExtractOp>(hyper, ValueRange{f.index(i)});
  };
  for (model::AdamField i :
       {model::kAdamOneMinusBeta1, model::kAdamBeta2, model::kAdamOneMinusBeta2,
        model::kAdamStep, model::kAdamCorrection2, model::kAdamEpsilon,
        model::kAdamUpdate})
    scalars.push_back({field(i), "adam." + std::to_string(i)});
  if (objective)
    scalars.push_back({objective, model::kObjective});
  assert(scalars.size() == AdamScalars::kScalars + (objective ? 1 : 0) &&
         "one value per field");
  return scalars;
}

/// Gradients by parameter, each by argument name.
using GradientsByParameter =
    std::map<std::string, std::map<std::string, Value>>;

/// Each parameter's update (adamUpdate) in `f`, from its `state` and
/// `gradients`; the next state goes to `results` under the state's names.
static void emitUpdates(FunctionBuilder &f,
                        llvm::ArrayRef<TrainedParameter> parameters,
                        GradientsByParameter &gradients,
                        std::map<std::string, State> &state,
                        const FunctionBuilder::Named &scalars, bool accumulate,
                        FunctionBuilder::Named &results) {

  // The updates, kUpdateGroup parameters to a function: one function with
  // every parameter's update holds every parameter's buffers live across
  // all of them, and LLVM's register allocation grows as the square of
  // that (12 of the 12-layer d_model 512 program's compile seconds). The
  // groups take parameters of one shape and gradient count, so that groups
  // of equal shapes share one function and the distinct ones do not grow
  // with the layers (in name order, the 6-layer d_model 512 program had 14
  // different groups, 70% of its IR).
  auto groupKey = [&](const TrainedParameter &p) {
    return std::make_pair(p.shape, gradients[p.name].size());
  };
  SmallVector<TrainedParameter> byShape(parameters.begin(), parameters.end());
  llvm::stable_sort(byShape,
                    [&](const TrainedParameter &a, const TrainedParameter &b) {
                      return groupKey(a) < groupKey(b);
                    });
  for (size_t first = 0; first < byShape.size();) {
    size_t end = first + 1;
    while (end < byShape.size() && end - first < kUpdateGroup &&
           groupKey(byShape[end]) == groupKey(byShape[first]))
      ++end;
    ArrayRef<TrainedParameter> group =
        ArrayRef<TrainedParameter>(byShape).slice(first, end - first);
    first = end;
    FunctionBuilder::Named in;
    std::vector<std::string> updated;
    SmallVector<unsigned> gradientCounts;
    for (auto [i, p] : llvm::enumerate(group)) {
      std::string key = std::to_string(i);
      SmallVector<std::string> names = State::names(key, accumulate);
      for (auto [value, name] : llvm::zip(state[p.name].values(), names))
        in.push_back({value, name});
      llvm::append_range(updated, names);
      gradientCounts.push_back(gradients[p.name].size());
      for (auto [j, g] : llvm::enumerate(gradients[p.name]))
        in.push_back({g.second, "grad." + key + "." + std::to_string(j)});
    }
    llvm::append_range(in, scalars);
    auto body = [&](FunctionBuilder &u, ValueRange args) {
      AdamScalars h = AdamScalars::of(args.take_back(scalars.size()));
      FunctionBuilder::Named out;
      for (auto [i, count] : llvm::enumerate(gradientCounts)) {
        State s = State::take(args, accumulate);
        State next = adamUpdate(u, s, args.take_front(count), h);
        args = args.drop_front(count);
        for (auto [value, name] : llvm::zip(
                 next.values(), State::names(std::to_string(i), accumulate)))
          out.push_back({value, name});
      }
      return out;
    };
    SmallVector<Value> updates =
        f.callLayer(model::kTrainUpdate, "", in, body, updated);
    ValueRange next = updates;
    for (const TrainedParameter &p : group) {
      State s = State::take(next, accumulate);
      for (auto [value, name] :
           llvm::zip(s.values(), State::names(p.name, accumulate)))
        results.push_back({value, name});
    }
  }
}

/// Each parameter's state as writable inputs of `f` (param.<p>, ...).
static std::map<std::string, State>
stateInputs(FunctionBuilder &f, llvm::ArrayRef<TrainedParameter> parameters,
            bool accumulate) {
  std::map<std::string, State> state;
  for (const TrainedParameter &p : parameters) {
    auto type = RankedTensorType::get(p.shape, f.b.getF32Type());
    SmallVector<Value> values;
    for (const std::string &name : State::names(p.name, accumulate))
      values.push_back(f.updatedInput(name, type));
    ValueRange range = values;
    state[p.name] = State::take(range, accumulate);
  }
  return state;
}

static Value adamInput(FunctionBuilder &f) {
  return f.input(
      model::kAdamHyper,
      RankedTensorType::get({model::kAdamHyperSize}, f.b.getF32Type()));
}

/// @train_apply: Adam from the sums in accum.<p> alone, with no batch. A
/// data-parallel run sums the ranks' gradients into accum.<p> in the order
/// @train_step would have, then calls it: the same update, bit for bit.
static void buildTrainApply(ModuleOp module, const ModelConfig &config,
                            llvm::ArrayRef<TrainedParameter> parameters) {
  FunctionBuilder f(module, model::kTrainApply, config,
                    [](llvm::StringRef) { return false; });
  Value hyper = adamInput(f);
  std::map<std::string, State> state =
      stateInputs(f, parameters, /*accumulate=*/true);
  GradientsByParameter none;
  for (const TrainedParameter &p : parameters)
    none[p.name];
  FunctionBuilder::Named results;
  emitUpdates(f, parameters, none, state, adamScalars(f, hyper, Value()),
              /*accumulate=*/true, results);
  f.finish(results);
}

LogicalResult
mlir::gnn::buildTrainStep(func::FuncOp grad, const ModelConfig &config,
                          llvm::ArrayRef<TrainedParameter> parameters,
                          bool accumulate) {
  auto module = grad->getParentOfType<ModuleOp>();
  // The parameter each argument of @train_grad is.
  std::map<std::string, const TrainedParameter *> owner;
  for (const TrainedParameter &p : parameters)
    for (const std::string &arg : p.arguments)
      owner[arg] = &p;

  // Everything is checked before the function is begun, so that a failure
  // leaves the module as it was.
  std::map<std::string, Type> gradientTypes;
  bool hasObjective = false;
  for (unsigned i = 0; i < grad.getNumResults(); ++i) {
    llvm::StringRef name = nameOf(grad, i, /*result=*/true);
    hasObjective |= name == model::kObjective;
    if (name.consume_front("grad."))
      gradientTypes[name.str()] = grad.getResultTypes()[i];
  }
  if (!hasObjective)
    return grad.emitOpError() << "has no '" << model::kObjective << "' result";
  auto typeOf = [&](const TrainedParameter &p) {
    return RankedTensorType::get(p.shape, Float32Type::get(grad.getContext()));
  };
  for (unsigned i = 0; i < grad.getNumArguments(); ++i) {
    llvm::StringRef name = nameOf(grad, i, /*result=*/false);
    if (name.empty())
      return grad.emitOpError() << "argument #" << i << " has no gnn.name";
    auto it = owner.find(name.str());
    if (it != owner.end() && grad.getArgumentTypes()[i] != typeOf(*it->second))
      return grad.emitOpError()
             << "argument '" << name << "' is not of its parameter's type";
  }
  for (const TrainedParameter &p : parameters) {
    RankedTensorType type = typeOf(p);
    for (const std::string &arg : p.arguments) {
      auto it = gradientTypes.find(arg);
      if (it == gradientTypes.end())
        return grad.emitOpError() << "has no gradient of '" << arg << "'";
      if (it->second != type)
        return grad.emitOpError() << "has a gradient of '" << arg
                                  << "' of another type than " << type;
    }
  }
  FunctionBuilder f(module, model::kTrainStep, config,
                    [](llvm::StringRef) { return false; });
  ImplicitLocOpBuilder &b = f.b;
  // Run-time inputs as @train_grad names them; parameters are the step's
  // own writable arguments.
  std::map<std::string, Value> inputs;
  for (unsigned i = 0; i < grad.getNumArguments(); ++i) {
    llvm::StringRef name = nameOf(grad, i, /*result=*/false);
    if (!owner.count(name.str()))
      inputs[name.str()] = f.input(name, grad.getArgumentTypes()[i]);
  }
  Value hyper = adamInput(f);
  std::map<std::string, State> state = stateInputs(f, parameters, accumulate);

  SmallVector<Value> operands;
  for (unsigned i = 0; i < grad.getNumArguments(); ++i) {
    std::string name = nameOf(grad, i, /*result=*/false).str();
    auto it = owner.find(name);
    operands.push_back(it == owner.end() ? inputs[name]
                                         : state[it->second->name].param);
  }
  auto call = b.create<func::CallOp>(grad, operands);

  // The step's results: @train_grad's but the gradients; the gradients by
  // parameter, in the order of their names.
  FunctionBuilder::Named results;
  GradientsByParameter gradients;
  Value objective;
  for (unsigned i = 0; i < grad.getNumResults(); ++i) {
    llvm::StringRef name = nameOf(grad, i, /*result=*/true);
    llvm::StringRef arg = name;
    if (arg.consume_front("grad.")) {
      if (auto it = owner.find(arg.str()); it != owner.end())
        gradients[it->second->name][arg.str()] = call.getResult(i);
      continue;
    }
    if (name == model::kObjective)
      objective = call.getResult(i);
    results.push_back({call.getResult(i), name.str()});
  }

  emitUpdates(f, parameters, gradients, state, adamScalars(f, hyper, objective),
              accumulate, results);
  f.finish(results);
  if (accumulate)
    buildTrainApply(module, config, parameters);
  return success();
}
