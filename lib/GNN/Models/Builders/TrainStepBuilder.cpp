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

/// The first element of a one-element tensor.
static Value firstElement(ImplicitLocOpBuilder &b, Value t) {
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<Value> zeros(type.getRank(), b.create<arith::ConstantIndexOp>(0));
  return b.create<tensor::ExtractOp>(t, zeros);
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
  Value hyper =
      f.input(model::kAdamHyper,
              RankedTensorType::get({model::kAdamHyperSize}, b.getF32Type()));
  struct State {
    Value param, m, v, accum;
  };
  std::map<std::string, State> state;
  for (const TrainedParameter &p : parameters) {
    RankedTensorType type = typeOf(p);
    State &s = state[p.name];
    s.param = f.updatedInput("param." + p.name, type);
    s.m = f.updatedInput("adam.m." + p.name, type);
    s.v = f.updatedInput("adam.v." + p.name, type);
    if (accumulate)
      s.accum = f.updatedInput("accum." + p.name, type);
  }

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
  std::map<std::string, std::map<std::string, Value>> gradients;
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

  // finite: the objective is finite (NaN compares false); apply: it is, and
  // this is an update step.
  Value obj = firstElement(b, objective);
  Value finite = b.create<arith::CmpFOp>(
      arith::CmpFPredicate::OLT, b.create<math::AbsFOp>(obj),
      f.constant(std::numeric_limits<double>::infinity()));
  SmallVector<Value> h;
  for (int64_t i = 0; i < model::kAdamHyperSize; ++i)
    h.push_back(b.create<tensor::ExtractOp>(hyper, ValueRange{f.index(i)}));
  Value w1 = h[0], b2 = h[1], w2 = h[2], step = h[3], c2 = h[4], eps = h[5];
  Value apply = b.create<arith::AndIOp>(
      finite,
      b.create<arith::CmpFOp>(arith::CmpFPredicate::OGT, h[6], f.constant(0)));

  for (const TrainedParameter &p : parameters) {
    RankedTensorType type = typeOf(p);
    State &s = state[p.name];
    // What is added up: the accumulated sum (if kept) and the parameter's
    // gradients, in the order a host loop over the gradients by name would
    // add them, so that the sum does not depend on how it is run.
    SmallVector<Value> terms;
    if (accumulate)
      terms.push_back(s.accum);
    for (auto &[arg, g] : gradients[p.name])
      terms.push_back(g);
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
    Value m = f.apply(withTerms(s.m), type, [&](ValueRange e) -> Value {
      Value delta = b.create<arith::SubFOp>(total(e.drop_front()), e[0]);
      Value next =
          b.create<arith::AddFOp>(e[0], b.create<arith::MulFOp>(w1, delta));
      return b.create<arith::SelectOp>(apply, next, e[0]);
    });
    Value v = f.apply(withTerms(s.v), type, [&](ValueRange e) -> Value {
      Value g = total(e.drop_front());
      Value square = b.create<arith::MulFOp>(g, g);
      Value next = b.create<arith::AddFOp>(b.create<arith::MulFOp>(e[0], b2),
                                           b.create<arith::MulFOp>(w2, square));
      return b.create<arith::SelectOp>(apply, next, e[0]);
    });
    Value param = f.apply({s.param, m, v}, type, [&](ValueRange e) -> Value {
      Value root = b.create<math::SqrtOp>(e[2]);
      Value denom =
          b.create<arith::AddFOp>(b.create<arith::DivFOp>(root, c2), eps);
      Value ratio = b.create<arith::DivFOp>(e[1], denom);
      Value next =
          b.create<arith::AddFOp>(e[0], b.create<arith::MulFOp>(step, ratio));
      return b.create<arith::SelectOp>(apply, next, e[0]);
    });
    results.push_back({param, "param." + p.name});
    results.push_back({m, "adam.m." + p.name});
    results.push_back({v, "adam.v." + p.name});
    if (!accumulate)
      continue;
    // Kept for the next batch: cleared by an update, unchanged by a
    // non-finite objective.
    Value sum = f.apply(terms, type, [&](ValueRange e) -> Value {
      Value kept = b.create<arith::SelectOp>(finite, total(e), e[0]);
      return b.create<arith::SelectOp>(apply, f.constant(0), kept);
    });
    results.push_back({sum, "accum." + p.name});
  }
  f.finish(results);
  return success();
}
