//===- ModelLoading.cpp - weights, tables, the module, compiling ---------===//
//
// Part of gnnc. TransformerModel::load: reads and checks the weights, makes the
// position tables, builds (or reads) the module, compiles it and binds the
// weights to the entry points' arguments.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/InputFile.h"
#include "GNN/Support/ParserHazards.h"
#include "GNN/Support/ParserQuarantine.h"
#include "InferenceDetail.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::detail;

HostTensor mlir::gnn::detail::sinusoidTable(int64_t rows, int64_t d) {
  HostTensor t = zeros({rows, d});
  float *pe = t.as<float>();
  float step = float(-std::log(10000.0) / double(d));
  for (int64_t i = 0; 2 * i < d; ++i) {
    float div = std::exp(float(2 * i) * step);
    for (int64_t pos = 0; pos < rows; ++pos) {
      float angle = float(pos) * div;
      pe[pos * d + 2 * i] = std::sin(angle);
      if (2 * i + 1 < d)
        pe[pos * d + 2 * i + 1] = std::cos(angle);
    }
  }
  return t;
}

HostTensor mlir::gnn::detail::positionTable(const TensorMap &weights,
                                            llvm::StringRef name, int64_t rows,
                                            int64_t d) {
  auto table = weights.find(name.str());
  if (table == weights.end())
    return sinusoidTable(rows, d);
  HostTensor t = table->second;
  t.shape = {t.shape[1], t.shape[2]};
  return t;
}

std::string mlir::gnn::detail::printModule(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  os << "\n";
  return text;
}

namespace {
/// Names that are run-time inputs rather than weights.
bool isRuntimeInput(llvm::StringRef name, int64_t layers) {
  static const char *fixed[] = {
      model::kEE,           model::kED,           model::kDD,
      model::kSrcTokens,    model::kSrcPositions, model::kTgtTokens,
      model::kTgtPositions, model::kCacheSlots,   model::kPE,
      model::kMemory,       model::kTimePE};
  for (const char *f : fixed)
    if (name == f)
      return true;
  for (int64_t i = 0; i < layers; ++i)
    if (name == model::crossK(i) || name == model::crossV(i) ||
        name == model::selfK(i) || name == model::selfV(i))
      return true;
  return false;
}

/// The module `make` returns, or an error of `what` with the diagnostics
/// emitted while it ran.
Expected<OwningOpRef<ModuleOp>>
moduleOrError(MLIRContext &ctx, const llvm::Twine &what,
              llvm::function_ref<OwningOpRef<ModuleOp>()> make) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = make();
  if (!module)
    return fail(what + ":\n" + diagnostics);
  return std::move(module);
}

Expected<OwningOpRef<ModuleOp>>
parseModule(MLIRContext &ctx, llvm::StringRef text, llvm::StringRef name) {
  if (auto hazard = findParserHazard(text))
    return fail("cannot parse " + name + " (at byte " +
                llvm::Twine(hazard->offset) + "): " + hazard->message);
  return moduleOrError(ctx, "cannot parse " + name, [&] {
    // A failed parse can write into memory the parser freed (see
    // ParserQuarantine.h); a user's program is any text.
    ParserQuarantine quarantine;
    return parseSourceString<ModuleOp>(text, ParserConfig(&ctx), name);
  });
}
} // namespace

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

/// Checks that gnn-run can run `config` and reads its weights from `path`
/// (default: the config's), checked against the model's contract.
static Expected<TensorMap> loadWeights(const ModelConfig &config,
                                       const std::string &path,
                                       bool allowNonFinite = false) {
  const std::string &file = path.empty() ? config.weightsPath : path;
  if (file.empty())
    return fail("config: no weights file (set \"weights\" or pass --weights)");
  Expected<TensorMap> weights = readSafeTensors(file);
  if (!weights)
    return fail("weights: " + llvm::toString(weights.takeError()));
  if (Error e = checkWeights(config, *weights))
    return std::move(e);
  // NaN or infinity in a weight decodes garbage (every token <sos>).
  if (!allowNonFinite)
    if (std::optional<std::string> bad = firstNonFiniteTensor(*weights))
      return fail("weights: '" + *bad +
                  "' holds NaN or infinity (--allow-nonfinite runs it)");
  return weights;
}

/// The model's module, built and verified.
static Expected<OwningOpRef<ModuleOp>>
buildModel(MLIRContext &ctx, const ModelConfig &config,
           const TensorMap &weights, const BuildOptions &options = {}) {
  return moduleOrError(ctx, "the built model is not valid IR", [&] {
    return buildModelModule(
        ctx, config,
        [&](llvm::StringRef name) { return weights.count(name.str()) != 0; },
        options);
  });
}

Expected<std::string> TransformerModel::emitIR(MLIRContext &ctx,
                                               const ModelConfig &config,
                                               const std::string &weightsPath) {
  Expected<TensorMap> weights = loadWeights(config, weightsPath);
  if (!weights)
    return weights.takeError();
  Expected<OwningOpRef<ModuleOp>> module = buildModel(ctx, config, *weights);
  if (!module)
    return module.takeError();
  return printModule(**module);
}

Expected<std::unique_ptr<TransformerModel>>
TransformerModel::load(MLIRContext &ctx, const ModelConfig &config,
                       const ModelOptions &options) {
  std::unique_ptr<TransformerModel> m(new TransformerModel());
  m->config = config;
  m->threads = options.threads;
  m->attentionWeights = options.attentionWeights;
  m->onDevice = options.compile.device == Device::CUDA;
  Expected<TensorMap> weights =
      loadWeights(config, options.weightsPath, options.allowNonFinite);
  if (!weights)
    return weights.takeError();
  m->weights = std::move(*weights);

  // Positions: the file's table (viewed as [N, d]) or the sinusoids.
  int64_t rows = std::max(config.maxLen, options.positions);
  m->pe = positionTable(m->weights, "pos_enc.pe", rows, config.dModel);
  // Only the file's table can be short: the sinusoids have `rows`.
  if (m->pe.shape[0] < rows)
    return fail("weights: 'pos_enc.pe' has " + llvm::Twine(m->pe.shape[0]) +
                " positions, fewer than the " + llvm::Twine(rows) + " needed");
  // ACT steps: the file's time table or the sinusoids.
  if (config.architecture == Architecture::UniversalTransformer)
    m->timePE = positionTable(m->weights, "time_enc.pe", config.maxDepth,
                              config.dModel);

  Expected<OwningOpRef<ModuleOp>> module = OwningOpRef<ModuleOp>();
  if (!options.irPath.empty()) {
    auto buffer = readInputFile(options.irPath, /*isText=*/true);
    if (!buffer)
      return fail("cannot read '" + options.irPath +
                  "': " + llvm::toString(buffer.takeError()));
    module = parseModule(ctx, (*buffer)->getBuffer(), options.irPath);
  } else {
    BuildOptions build;
    build.attentionWeights = options.attentionWeights;
    module = buildModel(ctx, config, m->weights, build);
  }
  if (!module)
    return module.takeError();
  Expected<std::unique_ptr<JitProgram>> program = JitProgram::compile(
      std::move(*module), {model::kEncode, model::kCrossKV, model::kDecode},
      options.compile);
  if (!program)
    return program.takeError();
  m->program = std::move(*program);
  if (Error e = m->bindWeights())
    return std::move(e);
  return m;
}

Error TransformerModel::bindWeights() {
  for (const char *entry : {model::kEncode, model::kCrossKV, model::kDecode}) {
    const EntryPoint *e = program->lookup(entry);
    std::vector<const HostTensor *> &args = bound[entry];
    for (const Parameter &p : e->parameters) {
      // The position tables live as long as the model, like its weights:
      // bound once, so a GPU program keeps its copy of them.
      if (p.name == model::kPE || p.name == model::kTimePE) {
        args.push_back(p.name == model::kPE ? &pe : &timePE);
        continue;
      }
      if (isRuntimeInput(p.name, config.layers)) {
        args.push_back(nullptr);
        continue;
      }
      auto it = weights.find(p.name);
      if (it == weights.end())
        return fail("weights: missing tensor '" + p.name + "', which @" +
                    entry + " reads");
      const HostTensor &t = it->second;
      bool fits = t.dtype == p.dtype && t.shape.size() == p.shape.size();
      for (size_t i = 0; fits && i < t.shape.size(); ++i)
        fits = ShapedType::isDynamic(p.shape[i]) || p.shape[i] == t.shape[i];
      if (!fits)
        return fail("weights: tensor '" + p.name + "' is " + t.describe() +
                    ", which does not fit @" + entry + "'s argument");
      args.push_back(&t);
    }
  }
  return Error::success();
}
