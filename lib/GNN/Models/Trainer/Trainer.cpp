//===- Trainer.cpp - compiled training steps, Adam/Noam, state -----------===//
//
// Part of gnnc. Builds the training module, fuses its attention, writes
// the backward with differentiateFunction, adds @train_step (the
// gradients summed and Adam, in the same program) and compiles it with
// @train_grad and @eval_loss once. Parameters, Adam moments and accumulated
// gradients live here between steps; the compiled step updates them in
// place.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNDialect.h"
#include "GNN/IR/GNNOps.h"
#include "GNN/Models/TrainingBuilder.h"
#include "GNN/Runner/UnifiedMemory.h"
#include "GNN/Transforms/Differentiate.h"
#include "GNN/Transforms/Passes.h"
#include "TrainerDetail.h"

#include "GNN/Support/SafeTensors.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::detail;

static constexpr const char *kTrainGrad = "train_grad";
/// Rows of DGL's position tables (PositionalEncoding's max_len).
static constexpr int64_t kPositionRows = 5000;
/// The tied group's names; the first two follow the canonical one.
static constexpr const char *kTiedCanonical = "tgt_embed.lut.weight";
static const char *const kTiedOthers[] = {"src_embed.lut.weight",
                                          "generator.proj.weight"};

/// Run-time inputs of the training functions (the rest are parameters).
static bool isTrainingInput(llvm::StringRef name) {
  for (const char *input :
       {model::kEE, model::kDD, model::kED, model::kSrcTokens,
        model::kSrcPositions, model::kTgtTokens, model::kTgtPositions,
        model::kPE, model::kTimePE, model::kLabelIds, model::kPadIds,
        model::kLabelWeights, model::kActWeightsEnc, model::kActWeightsDec,
        model::kRng})
    if (name == input)
      return true;
  return false;
}

/// The trained parameter a weight name is (a tied name its canonical one).
static std::string canonicalName(const TrainerOptions &options,
                                 llvm::StringRef name) {
  if (options.tieWeights && llvm::is_contained(kTiedOthers, name))
    return kTiedCanonical;
  return name.str();
}

std::string Trainer::canonical(llvm::StringRef name) const {
  return canonicalName(options, name);
}

/// The training module with @train_grad written beside @train_loss, and
/// @train_step calling it.
static Expected<OwningOpRef<ModuleOp>>
buildTrainingProgram(MLIRContext &ctx, const ModelConfig &config,
                     const TrainerOptions &options,
                     llvm::function_ref<bool(llvm::StringRef)> hasWeight,
                     llvm::function_ref<std::string(llvm::StringRef)> canonical,
                     const TensorMap &params) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  TrainingBuildOptions build;
  build.dropout = options.dropout;
  build.labelSmoothing = options.labelSmoothing;
  OwningOpRef<ModuleOp> module =
      buildTrainingModule(ctx, config, hasWeight, build);
  if (!module)
    return fail("the built training module is not valid IR:\n" + diagnostics);
  // Attention in DGL's form is fused first, so that its backward is the
  // fused one.
  PassManager pm(&ctx);
  pm.addNestedPass<func::FuncOp>(createFuseAttentionPass());
  if (failed(pm.run(*module)))
    return fail("fusing the training module's attention failed:\n" +
                diagnostics);
  auto loss = module->lookupSymbol<func::FuncOp>(model::kTrainLoss);
  SmallVector<unsigned> wrt;
  std::map<std::string, TrainedParameter> trained;
  for (unsigned i = 0; i < loss.getNumArguments(); ++i) {
    auto name = loss.getArgAttrOfType<StringAttr>(i, GNNDialect::kNameAttrName);
    if (!name || isTrainingInput(name.getValue()))
      continue;
    wrt.push_back(i);
    std::string param = canonical(name.getValue());
    auto it = params.find(param);
    if (it == params.end())
      return fail("the training loss takes '" + name.getValue() +
                  "', which is not a trained parameter");
    TrainedParameter &p = trained[param];
    p.name = param;
    p.shape = it->second.shape;
    p.arguments.push_back(name.getValue().str());
  }
  FailureOr<func::FuncOp> grad = differentiateFunction(loss, wrt, kTrainGrad);
  if (failed(grad))
    return fail("cannot differentiate the training loss:\n" + diagnostics);
  std::vector<TrainedParameter> steps;
  for (auto &entry : trained)
    steps.push_back(std::move(entry.second));
  if (failed(buildTrainStep(*grad, config, steps,
                            /*accumulate=*/options.accumulates())))
    return fail("cannot build the training step:\n" + diagnostics);
  if (options.announceGradients) {
    PassManager announce(&ctx);
    // The options refer to their list (an ArrayRef): it must outlive them.
    const std::string functions[] = {kTrainGrad};
    AnnounceResultsPassOptions which;
    which.functions = functions;
    announce.addPass(createAnnounceResultsPass(which));
    if (failed(announce.run(*module)))
      return fail("announcing the gradients failed:\n" + diagnostics);
  }
  return std::move(module);
}

/// Tied weights train one table: initial weights whose tied tables differ
/// would silently lose two of them.
static Error checkTiedTables(const TensorMap &weights) {
  auto canonical = weights.find(kTiedCanonical);
  if (canonical == weights.end())
    return Error::success();
  for (const char *other : kTiedOthers) {
    auto it = weights.find(other);
    if (it == weights.end())
      continue;
    const HostTensor &a = canonical->second, &b = it->second;
    if (a.dtype != b.dtype || a.shape != b.shape ||
        std::memcmp(a.data(), b.data(), a.numBytes()) != 0)
      return fail(llvm::Twine("--tie-weights trains one table for ") +
                  kTiedCanonical + ", " + kTiedOthers[0] + " and " +
                  kTiedOthers[1] + ", but the initial weights' '" + other +
                  "' differs from '" + kTiedCanonical +
                  "' (train without --tie-weights, or tie them first)");
  }
  return Error::success();
}

/// Whether `name` is trained (a tied name counts as its canonical one).
static bool hasTrainedWeight(const TensorMap &weights,
                             const TrainerOptions &options,
                             llvm::StringRef name) {
  return weights.count(canonicalName(options, name)) != 0;
}

/// Moves the trained parameters out of `weights`: every tensor of the model
/// but the position tables, a tied group under its canonical name (the
/// other names are dropped).
static TensorMap takeParameters(const ModelConfig &config,
                                const TrainerOptions &options,
                                TensorMap &weights) {
  TensorMap params;
  for (const WeightSpec &spec : expectedWeights(config)) {
    auto it = weights.find(spec.name);
    if (it == weights.end() || llvm::is_contained(spec.shape, -1))
      continue;
    if (options.tieWeights && llvm::is_contained(kTiedOthers, spec.name))
      continue;
    params[spec.name] = std::move(it->second);
    weights.erase(it);
  }
  if (options.tieWeights)
    for (const char *other : kTiedOthers)
      weights.erase(other);
  return params;
}

Expected<std::string> Trainer::emitIR(MLIRContext &ctx,
                                      const ModelConfig &config,
                                      const TensorMap &weights,
                                      const TrainerOptions &options) {
  TensorMap rest = weights;
  Expected<OwningOpRef<ModuleOp>> module = buildTrainingProgram(
      ctx, config, options,
      [&](llvm::StringRef name) {
        return hasTrainedWeight(weights, options, name);
      },
      [&](llvm::StringRef name) { return canonicalName(options, name); },
      takeParameters(config, options, rest));
  if (!module)
    return module.takeError();
  return printModule(**module);
}

Expected<std::unique_ptr<Trainer>>
Trainer::create(MLIRContext &ctx, const ModelConfig &config, TensorMap weights,
                const TrainerOptions &options) {
  if (options.tieWeights && config.srcVocab != config.tgtVocab)
    return fail("--tie-weights needs src_vocab == tgt_vocab (" +
                llvm::Twine(config.srcVocab) + " and " +
                llvm::Twine(config.tgtVocab) + ")");
  if (options.labelSmoothing > 0 && config.tgtVocab < 3)
    return fail("label smoothing needs tgt_vocab >= 3 (<sos>, <eos>, <pad> "
                "and a token)");
  if (Error e = checkWeights(config, weights))
    return std::move(e);
  if (options.tieWeights)
    if (Error e = checkTiedTables(weights))
      return std::move(e);
  std::unique_ptr<Trainer> t(new Trainer());
  t->config = config;
  t->options = options;

  t->params = takeParameters(config, options, weights);
  for (const auto &entry : t->params)
    t->names.push_back(entry.first);
  t->untrained = std::move(weights);
  for (const std::string &name : t->names) {
    const HostTensor &p = t->params[name];
    t->moment1[name] = zeros(p.shape);
    t->moment2[name] = zeros(p.shape);
    // Without accumulation each update uses one batch's gradients: there is
    // no sum to keep between steps (nor to write into every state file).
    if (t->options.accumulates())
      t->accumulated[name] = zeros(p.shape);
  }
  t->pe =
      positionTable(t->untrained, "pos_enc.pe", config.maxLen, config.dModel);
  if (t->universal())
    t->timePE = positionTable(t->untrained, "time_enc.pe", config.maxDepth,
                              config.dModel);

  auto hasWeight = [&](llvm::StringRef name) {
    return t->params.count(t->canonical(name)) != 0;
  };
  Expected<OwningOpRef<ModuleOp>> module = buildTrainingProgram(
      ctx, config, options, hasWeight,
      [&](llvm::StringRef name) { return t->canonical(name); }, t->params);
  if (!module)
    return module.takeError();
  SmallVector<int64_t> announced;
  (*module)->lookupSymbol<func::FuncOp>(kTrainGrad).walk([&](ResultReadyOp op) {
    announced.push_back(op.getSlot());
  });
  std::vector<std::string> entries = {model::kTrainStep, kTrainGrad,
                                      model::kEvalLoss};
  if (options.accumulates())
    entries.push_back(model::kTrainApply);
  Expected<std::unique_ptr<JitProgram>> program =
      JitProgram::compile(std::move(*module), entries, options.compile);
  if (!program)
    return program.takeError();
  t->program = std::move(*program);
  t->orderGradients(announced);
  if (Error e = t->keepStateOnDevice())
    return std::move(e);

  t->fingerprint = stateFingerprint(config, options, t->names, t->params);
  return t;
}

void Trainer::orderGradients(llvm::ArrayRef<int64_t> announced) {
  const std::vector<Parameter> &results = program->lookup(kTrainGrad)->results;
  // Where each parameter's last argument gradient is announced; never
  // (not announced) sorts last.
  std::map<std::string, size_t> complete;
  for (const std::string &name : names)
    complete[name] = 0;
  for (auto [position, slot] : llvm::enumerate(announced)) {
    if (slot < 0 || size_t(slot) >= results.size())
      continue;
    llvm::StringRef argument(results[slot].name);
    if (!argument.consume_front("grad."))
      continue;
    size_t &at = complete[canonical(argument)];
    at = std::max(at, position + 1);
  }
  llvm::DenseSet<int64_t> isAnnounced(announced.begin(), announced.end());
  for (auto [slot, r] : llvm::enumerate(results)) {
    llvm::StringRef argument(r.name);
    if (!argument.consume_front("grad."))
      continue;
    std::string parameter = canonical(argument);
    gradientPieces[parameter].push_back(r.name);
    if (!isAnnounced.contains(int64_t(slot)))
      complete[parameter] = announced.size() + 1;
  }
  // In the order of the arguments' names, as @train_step adds them.
  for (auto &entry : gradientPieces)
    llvm::sort(entry.second);
  gradientOrder = names;
  llvm::stable_sort(gradientOrder,
                    [&](const std::string &a, const std::string &b) {
                      return complete[a] < complete[b];
                    });
}

const std::vector<std::string> &
Trainer::gradientNames(llvm::StringRef parameter) const {
  static const std::vector<std::string> none;
  auto it = gradientPieces.find(parameter.str());
  return it == gradientPieces.end() ? none : it->second;
}

Expected<Outputs> Trainer::run(const char *entry, const Batch &batch,
                               const HostTensor *rng, const HostTensor *adam,
                               JitProgram::ResultListener onResult) {
  std::map<llvm::StringRef, Argument> inputs;
  for (auto &[name, input] : batchInputs(batch))
    inputs[name] = input;
  if (rng)
    inputs[model::kRng].tensor = rng;
  return program->runNamed(
      entry,
      [&](const Parameter &p, size_t) -> Expected<Argument> {
        llvm::StringRef name(p.name);
        if (auto it = inputs.find(name);
            it != inputs.end() && bool(it->second.graph) == p.isGraph)
          return it->second;
        Argument a;
        if (p.isGraph) {
          return fail(llvm::Twine("@") + entry + " has a graph '" + p.name +
                      "' that the trainer does not provide");
        } else if (adam && name == model::kAdamHyper) {
          a.tensor = adam;
        } else if (TensorMap *state = stateOf(name)) {
          auto it = state->find(name.str());
          if (it == state->end())
            return fail(llvm::Twine("@") + entry + " updates '" + p.name +
                        "', which the trainer does not hold");
          a.updated = &it->second;
        } else if (auto param = params.find(canonical(p.name));
                   param != params.end()) {
          a.tensor = &param->second;
        } else {
          return fail(llvm::Twine("@") + entry + " has an argument '" + p.name +
                      "' that the trainer does not provide");
        }
        return a;
      },
      options.threads, onResult);
}

/// Takes the objective (loss + act loss) out of a training entry's
/// results; an error if it is not finite.
static Error takeFiniteObjective(Outputs &out) {
  Expected<HostTensor> objective = take(out, model::kObjective, "train");
  if (!objective)
    return objective.takeError();
  if (!std::isfinite(objective->as<float>()[0]))
    return fail("the loss is not finite");
  return Error::success();
}

/// The Philox key of the `n`-th training batch's dropout.
static HostTensor dropoutStream(uint64_t seed, int64_t n) {
  SplitMix64 mix(seed ^ (uint64_t(n) * 0xd1b54a32d192ed03ull));
  return HostTensor::ids({int64_t(mix.next() >> 1), 0});
}

Expected<LossTotals> Trainer::runTraining(const char *entry, const Batch &batch,
                                          int64_t streamIndex,
                                          const HostTensor *adam, Outputs &out,
                                          JitProgram::ResultListener onResult) {
  HostTensor rng = dropoutStream(options.seed, streamIndex);
  Expected<Outputs> results = run(entry, batch, &rng, adam, onResult);
  if (!results)
    return results.takeError();
  out = std::move(*results);
  // A non-finite loss fails here.
  Expected<LossTotals> t = totals(batch, out);
  if (!t)
    return t.takeError();
  if (auto act = out.find(model::kActLoss); act != out.end())
    t->actLoss = double(act->second.as<float>()[0]);
  return t;
}

TensorMap *Trainer::stateOf(llvm::StringRef &name) {
  for (auto [prefix, tensors] : stateKinds(*this))
    if (name.consume_front(prefix))
      return tensors;
  return nullptr;
}

Error Trainer::keepStateOnDevice() {
  if (options.compile.device != Device::CUDA)
    return Error::success();
  for (TensorMap *state : {&params, &moment1, &moment2, &accumulated})
    for (auto &[name, tensor] : *state) {
      Expected<HostTensor> unified = unifiedCopy(tensor);
      if (!unified)
        return unified.takeError();
      tensor = std::move(*unified);
    }
  return Error::success();
}

HostTensor Trainer::adamHyperparameters(bool update) const {
  // torch.optim.Adam (betas 0.9, 0.98; eps 1e-9) at the Noam rate of the
  // new step.
  constexpr double beta1 = 0.9, beta2 = 0.98, eps = 1e-9;
  HostTensor hyper = zeros({model::kAdamHyperSize});
  if (!update)
    return hyper;
  int64_t t = position.step + 1;
  double lr = learningRate(t);
  double correction1 = 1 - std::pow(beta1, double(t));
  double correction2 = std::sqrt(1 - std::pow(beta2, double(t)));
  float *h = hyper.as<float>();
  h[model::kAdamOneMinusBeta1] = float(1 - beta1);
  h[model::kAdamBeta2] = float(beta2);
  h[model::kAdamOneMinusBeta2] = float(1 - beta2);
  h[model::kAdamStep] = float(-(lr / correction1));
  h[model::kAdamCorrection2] = float(correction2);
  h[model::kAdamEpsilon] = float(eps);
  h[model::kAdamUpdate] = 1;
  return hyper;
}

Expected<LossTotals>
Trainer::trainBatch(llvm::ArrayRef<const TrainingExample *> examples) {
  Expected<PreparedBatch> batch = prepareBatch(examples);
  if (!batch)
    return batch.takeError();
  return trainBatch(std::move(*batch));
}

Expected<LossTotals> Trainer::trainBatch(PreparedBatch prepared) {
  // One call of @train_step: the gradients are added to the accumulated
  // ones and, every grad_accum batches, Adam updates the parameters, all in
  // place; a non-finite objective changes nothing.
  bool update = position.pending + 1 == options.gradAccum;
  HostTensor hyper = adamHyperparameters(update);
  Outputs out;
  Expected<LossTotals> t = runTraining(model::kTrainStep, *prepared.batch,
                                       position.batchesSeen, &hyper, out);
  if (!t)
    return t.takeError();
  if (Error e = takeFiniteObjective(out))
    return std::move(e);
  ++position.batchesSeen;
  if (update) {
    ++position.step;
    position.pending = 0;
  } else {
    ++position.pending;
  }
  return t;
}

Expected<LossTotals>
Trainer::evaluateBatch(llvm::ArrayRef<const TrainingExample *> examples) {
  Expected<std::unique_ptr<Batch>> batch = makeBatch(examples);
  if (!batch)
    return batch.takeError();
  Expected<Outputs> out = run(model::kEvalLoss, **batch, nullptr);
  if (!out)
    return out.takeError();
  return totals(**batch, *out);
}

Expected<TensorMap>
Trainer::gradients(llvm::ArrayRef<const TrainingExample *> examples) {
  Expected<std::unique_ptr<Batch>> batch = makeBatch(examples);
  if (!batch)
    return batch.takeError();
  Outputs out;
  Expected<LossTotals> t =
      runTraining(kTrainGrad, **batch, position.batchesSeen, nullptr, out);
  if (!t)
    return t.takeError();
  // Each parameter's gradient: a tied one's three summed in name order.
  TensorMap sums;
  for (const std::string &name : names)
    sums[name] = zeros(params[name].shape);
  for (auto &[name, grad] : out) {
    llvm::StringRef param(name);
    if (!param.consume_front("grad."))
      continue;
    HostTensor &sum = sums.at(canonical(param));
    float *s = sum.as<float>();
    const float *g = grad.as<float>();
    for (int64_t i = 0, n = sum.numElements(); i < n; ++i)
      s[i] += g[i];
  }
  TensorMap result;
  HostTensor loss = zeros({});
  loss.as<float>()[0] = float(t->averageLoss());
  result["loss"] = std::move(loss);
  if (universal()) {
    HostTensor act = zeros({});
    act.as<float>()[0] = float(t->actLoss);
    result["act_loss"] = std::move(act);
  }
  for (auto &[name, sum] : sums) {
    if (options.tieWeights && name == kTiedCanonical)
      for (const char *other : kTiedOthers)
        result[std::string("grad.") + other] = sum;
    result["grad." + name] = std::move(sum);
  }
  return result;
}

Expected<LossTotals>
Trainer::batchGradients(llvm::ArrayRef<const TrainingExample *> examples,
                        int64_t streamIndex, TensorMap &gradients,
                        GradientListener onGradient) {
  Outputs out;
  const std::vector<Parameter> &results = program->lookup(kTrainGrad)->results;
  auto announced = [&](size_t result, const void *data, size_t bytes) {
    llvm::StringRef name(results[result].name);
    if (name.starts_with("grad."))
      onGradient(name, data, bytes);
  };
  Expected<std::unique_ptr<Batch>> batch = makeBatch(examples);
  if (!batch)
    return batch.takeError();
  Expected<LossTotals> t =
      runTraining(kTrainGrad, **batch, streamIndex, nullptr, out,
                  onGradient ? JitProgram::ResultListener(announced)
                             : JitProgram::ResultListener());
  if (!t)
    return t.takeError();
  if (Error e = takeFiniteObjective(out))
    return std::move(e);
  gradients.clear();
  for (auto &[name, tensor] : out)
    if (llvm::StringRef(name).starts_with("grad."))
      gradients[name] = std::move(tensor);
  return t;
}

void Trainer::accumulate(const TensorMap &gradients,
                         llvm::StringRef parameter) {
  float *sum = accumulated.at(parameter.str()).as<float>();
  // A tied parameter's three arguments in the order @train_step adds them
  // (a lookup per piece: scanning every gradient for each parameter made a
  // step's exchange quadratic in the parameters).
  for (const std::string &name : gradientNames(parameter)) {
    auto found = gradients.find(name);
    if (found == gradients.end())
      continue;
    const HostTensor &grad = found->second;
    const float *g = grad.as<float>();
    for (int64_t i = 0, n = grad.numElements(); i < n; ++i)
      sum[i] = sum[i] + g[i];
  }
}

Error Trainer::applyAccumulated() {
  if (!options.accumulates())
    return fail("@train_apply needs accumulated gradients (grad_accum > 1)");
  HostTensor hyper = adamHyperparameters(/*update=*/true);
  Expected<Outputs> out = program->runNamed(
      model::kTrainApply,
      [&](const Parameter &p, size_t) -> Expected<Argument> {
        Argument a;
        llvm::StringRef name(p.name);
        if (name == model::kAdamHyper) {
          a.tensor = &hyper;
          return a;
        }
        TensorMap *state = stateOf(name);
        auto it = state ? state->find(name.str()) : TensorMap::iterator();
        if (!state || it == state->end())
          return fail("@train_apply takes '" + p.name +
                      "', which the trainer does not hold");
        a.updated = &it->second;
        return a;
      },
      options.threads);
  if (!out)
    return out.takeError();
  ++position.step;
  position.pending = 0;
  return Error::success();
}

std::vector<HostTensor *> Trainer::stateTensors() {
  std::vector<HostTensor *> all;
  for (auto [prefix, tensors] : stateKinds(*this))
    for (auto &entry : *tensors)
      all.push_back(&entry.second);
  return all;
}

double Trainer::learningRate(int64_t t) const {
  double step = double(t);
  return options.lrFactor * std::pow(double(config.dModel), -0.5) *
         std::min(std::pow(step, -0.5),
                  step * std::pow(double(options.warmup), -1.5));
}

TensorMap Trainer::weights() const { return collectWeights(/*views=*/false); }
TensorMap Trainer::weightViews() const {
  return collectWeights(/*views=*/true);
}

TensorMap Trainer::collectWeights(bool views) const {
  auto take = [&](const HostTensor &t) { return views ? t.view() : t; };
  TensorMap out;
  for (const auto &[name, t] : untrained)
    out[name] = take(t);
  for (const std::string &name : names)
    out[name] = take(params.at(name));
  if (options.tieWeights)
    for (const char *other : kTiedOthers)
      out[other] = take(params.at(kTiedCanonical));
  // DGL's modules hold their position tables as buffers ([1, 5000, d]):
  // with them, PyTorch's strict load_state_dict takes the checkpoint.
  std::vector<const char *> tables = {"pos_enc.pe"};
  if (config.architecture == Architecture::UniversalTransformer)
    tables.push_back("time_enc.pe");
  for (const char *table : tables)
    if (!out.count(table)) {
      HostTensor pe = sinusoidTable(kPositionRows, config.dModel);
      pe.shape.insert(pe.shape.begin(), 1);
      out[table] = std::move(pe);
    }
  return out;
}

std::vector<int64_t> Trainer::epochOrder(int64_t epoch,
                                         int64_t examples) const {
  std::vector<int64_t> order(examples);
  std::iota(order.begin(), order.end(), 0);
  if (!options.shuffle)
    return order;
  SplitMix64 rng(options.seed * 0x9e3779b97f4a7c15ull + uint64_t(epoch));
  for (int64_t i = examples - 1; i > 0; --i)
    std::swap(order[i], order[rng.below(uint64_t(i) + 1)]);
  return order;
}

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

static constexpr const char *kPosition = "state.position",
                            *kFingerprint = "state.fingerprint";

TensorMap Trainer::state(const TrainingPosition &p) const {
  return collectState(p, /*views=*/false);
}
TensorMap Trainer::stateViews(const TrainingPosition &p) const {
  return collectState(p, /*views=*/true);
}

TensorMap Trainer::collectState(const TrainingPosition &p, bool views) const {
  auto take = [&](const HostTensor &t) { return views ? t.view() : t; };
  TensorMap s;
  for (auto [prefix, tensors] : stateKinds(*this))
    for (const std::string &name : names)
      s[prefix + name] = take(tensors->at(name));
  s[kPosition] =
      HostTensor::ids({p.step, p.epoch, p.batch, p.batchesSeen, p.pending});
  s[kFingerprint] = HostTensor::ids({int64_t(fingerprint)});
  return s;
}

Expected<TrainingPosition> Trainer::restore(const TensorMap &s) {
  auto fp = s.find(kFingerprint);
  auto pos = s.find(kPosition);
  if (fp == s.end() || pos == s.end() || fp->second.dtype != DType::I64 ||
      fp->second.numElements() != 1 || pos->second.dtype != DType::I64 ||
      pos->second.numElements() != 5)
    return fail("not a gnn-train state file");
  if (uint64_t(fp->second.as<int64_t>()[0]) != fingerprint)
    return fail("the state is from another model, config or set of "
                "training options (seed, batch size, smoothing, dropout, "
                "schedule, accumulation, tying or shuffling differ)");
  // Check everything before changing anything.
  const int64_t *v = pos->second.as<int64_t>();
  TrainingPosition p{v[0], v[1], v[2], v[3], v[4]};
  if (Error e = checkPosition(p))
    return std::move(e);
  for (const std::string &name : names)
    for (auto [prefix, tensors] : stateKinds(*this)) {
      auto it = s.find(prefix + name);
      if (it == s.end() || it->second.dtype != DType::F32 ||
          it->second.shape != params[name].shape)
        return fail("the state lacks '" + llvm::Twine(prefix) + name +
                    "' or has it in another shape");
    }
  if (std::optional<std::string> bad = firstNonFiniteTensor(s))
    return fail("the state's '" + *bad + "' holds a value that is not finite");
  for (auto [prefix, tensors] : stateKinds(*this))
    for (const std::string &name : names)
      (*tensors)[name] = s.at(prefix + name);
  if (Error e = keepStateOnDevice())
    return std::move(e);
  position = p;
  return p;
}

Error Trainer::checkPosition(const TrainingPosition &p) const {
  // Every batch trained is counted once, in an update or pending: seen =
  // step x grad_accum + pending (checked by division, which cannot
  // overflow). The bounds keep every count after it far from overflow.
  if (p.step < 0 || p.epoch < 0 || p.batch < 0 || p.batchesSeen < 0 ||
      p.pending < 0 || p.pending >= options.gradAccum ||
      p.batchesSeen > kMaxBatchesSeen || p.epoch > kMaxEpochs ||
      p.batch > p.batchesSeen || p.pending > p.batchesSeen ||
      (p.batchesSeen - p.pending) % options.gradAccum != 0 ||
      (p.batchesSeen - p.pending) / options.gradAccum != p.step)
    return fail("the state's position (update step " + llvm::Twine(p.step) +
                ", epoch " + llvm::Twine(p.epoch) + ", batch " +
                llvm::Twine(p.batch) + ", " + llvm::Twine(p.batchesSeen) +
                " batches seen, " + llvm::Twine(p.pending) +
                " pending) is not one a run can reach");
  return Error::success();
}
