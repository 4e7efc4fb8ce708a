//===- TransformerRunner.cpp - run compiled Transformer models ------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/TransformerRunner.h"
#include "GNN/Models/TransformerBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

using namespace mlir;
using namespace mlir::gnn;
using llvm::Error;
using llvm::Expected;

namespace {
Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

struct GraphDeleter {
  void operator()(gnn_graph *g) const { gnn_graph_free(g); }
};
using GraphPtr = std::unique_ptr<gnn_graph, GraphDeleter>;

/// Wraps a runtime graph builder's result.
Expected<GraphPtr> built(int status, gnn_graph *graph, const char *err) {
  if (status != 0)
    return fail(llvm::Twine("cannot build a graph: ") + err);
  return GraphPtr(graph);
}

Expected<GraphPtr> fromCoo(int64_t numSrc, int64_t numDst,
                           const std::vector<int64_t> &src,
                           const std::vector<int64_t> &dst) {
  gnn_graph *g = nullptr;
  char err[256] = {0};
  int status = gnn_graph_from_coo(numSrc, numDst, int64_t(src.size()),
                                  src.data(), dst.data(), &g, err, sizeof(err));
  return built(status, g, err);
}

HostTensor ids(const std::vector<int64_t> &values) {
  HostTensor t;
  t.dtype = DType::I64;
  t.shape = {int64_t(values.size())};
  t.allocate();
  if (!values.empty())
    std::memcpy(t.data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

HostTensor zeros(std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = DType::F32;
  t.shape = std::move(shape);
  t.allocate();
  return t;
}

/// The sinusoidal table of semantics.md, computed in float32 as PyTorch
/// computes it.
HostTensor sinusoidTable(int64_t rows, int64_t d) {
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

/// A decoder k/v cache: one row per decoded node (the outermost dimension),
/// in storage with room for more, so that a step appends its nodes' rows
/// without moving the earlier ones (the storage doubles when full).
class RowCache {
public:
  explicit RowCache(std::vector<int64_t> rowShape)
      : rowShape(std::move(rowShape)) {}
  // A copy's view would still borrow the original's storage.
  RowCache(const RowCache &) = delete;
  RowCache &operator=(const RowCache &) = delete;
  RowCache(RowCache &&) = default;
  RowCache &operator=(RowCache &&) = default;

  /// Appends `fresh` zeroed rows, which the next @decode fills; returns all
  /// rows, a view that the next append invalidates.
  HostTensor &append(int64_t fresh) {
    int64_t rows = view.shape.empty() ? 0 : view.shape[0];
    int64_t capacity = storage.shape.empty() ? 0 : storage.shape[0];
    size_t rowBytes = rowElements() * sizeof(float);
    if (rows + fresh > capacity) {
      HostTensor larger;
      larger.shape = shapeOf(std::max(rows + fresh, 2 * capacity));
      larger.allocateUninitialized();
      if (rows)
        std::memcpy(larger.data(), storage.data(), rows * rowBytes);
      storage = std::move(larger);
    }
    std::memset(static_cast<char *>(storage.data()) + rows * rowBytes, 0,
                fresh * rowBytes);
    view = HostTensor();
    view.shape = shapeOf(rows + fresh);
    view.borrow(storage.data());
    return view;
  }

  /// Takes @decode's result for this cache: the view itself when the result
  /// is marked as the update of the cache argument (`gnn.updates`, as the
  /// built modules mark it), else (a module given as IR without the mark)
  /// its rows are copied in.
  Error store(const HostTensor &result, llvm::StringRef name) {
    if (result.data() == view.data())
      return Error::success();
    if (result.shape != view.shape)
      return fail("@decode returns '" + name + "' of shape " +
                  result.describe() + ", expected " + view.describe());
    std::memcpy(view.data(), result.data(), view.numBytes());
    return Error::success();
  }

private:
  int64_t rowElements() const {
    return std::accumulate(rowShape.begin(), rowShape.end(), int64_t(1),
                           std::multiplies<int64_t>());
  }
  std::vector<int64_t> shapeOf(int64_t rows) const {
    std::vector<int64_t> shape = {rows};
    shape.insert(shape.end(), rowShape.begin(), rowShape.end());
    return shape;
  }

  std::vector<int64_t> rowShape;
  HostTensor storage; // [capacity, rowShape...]
  HostTensor view;    // its first rows
};

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

Expected<OwningOpRef<ModuleOp>>
parseModule(MLIRContext &ctx, llvm::StringRef text, llvm::StringRef name) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&ctx), name);
  if (!module)
    return fail("cannot parse " + name + ":\n" + diagnostics);
  return std::move(module);
}
} // namespace

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

/// Checks that gnn-run can run `config` and reads its weights from `path`
/// (default: the config's), checked against the model's contract.
static Expected<TensorMap> loadWeights(const ModelConfig &config,
                                       const std::string &path) {
  const std::string &file = path.empty() ? config.weightsPath : path;
  if (file.empty())
    return fail("config: no weights file (set \"weights\" or pass --weights)");
  Expected<TensorMap> weights = readSafeTensors(file);
  if (!weights)
    return fail("weights: " + llvm::toString(weights.takeError()));
  if (Error e = checkWeights(config, *weights))
    return std::move(e);
  return weights;
}

/// The model's module, built and verified.
static Expected<OwningOpRef<ModuleOp>> buildModel(MLIRContext &ctx,
                                                  const ModelConfig &config,
                                                  const TensorMap &weights) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module =
      buildModelModule(ctx, config, [&](llvm::StringRef name) {
        return weights.count(name.str()) != 0;
      });
  if (!module)
    return fail("the built model is not valid IR:\n" + diagnostics);
  return std::move(module);
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
  std::string text;
  llvm::raw_string_ostream os(text);
  (*module)->print(os);
  os << "\n";
  return text;
}

Expected<std::unique_ptr<TransformerModel>>
TransformerModel::load(MLIRContext &ctx, const ModelConfig &config,
                       const ModelOptions &options) {
  std::unique_ptr<TransformerModel> m(new TransformerModel());
  m->config = config;
  m->threads = options.threads;
  Expected<TensorMap> weights = loadWeights(config, options.weightsPath);
  if (!weights)
    return weights.takeError();
  m->weights = std::move(*weights);

  // Positions: the file's table (viewed as [N, d]) or the sinusoids.
  int64_t rows = std::max(config.maxLen, options.positions);
  auto table = m->weights.find("pos_enc.pe");
  if (table != m->weights.end()) {
    m->pe = table->second;
    m->pe.shape = {m->pe.shape[1], m->pe.shape[2]};
    if (m->pe.shape[0] < rows)
      return fail("weights: 'pos_enc.pe' has " + llvm::Twine(m->pe.shape[0]) +
                  " positions, fewer than the " + llvm::Twine(rows) +
                  " needed");
  } else {
    m->pe = sinusoidTable(rows, config.dModel);
  }
  // ACT steps: the file's time table or the sinusoids.
  if (config.architecture == Architecture::UniversalTransformer) {
    auto time = m->weights.find("time_enc.pe");
    if (time != m->weights.end()) {
      m->timePE = time->second;
      m->timePE.shape = {m->timePE.shape[1], m->timePE.shape[2]};
    } else {
      m->timePE = sinusoidTable(config.maxDepth, config.dModel);
    }
  }

  Expected<OwningOpRef<ModuleOp>> module = OwningOpRef<ModuleOp>();
  if (!options.irPath.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(options.irPath);
    if (!buffer)
      return fail("cannot read '" + options.irPath +
                  "': " + buffer.getError().message());
    module = parseModule(ctx, (*buffer)->getBuffer(), options.irPath);
  } else {
    module = buildModel(ctx, config, m->weights);
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

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// Run-time arguments of one call, by name.
struct TransformerModel::Inputs {
  std::map<std::string, const gnn_graph *> graphs;
  std::map<std::string, const HostTensor *> tensors;
  /// Tensors the program updates in place (the decoder's k/v caches).
  std::map<std::string, HostTensor *> updated;
};

namespace {
/// Results of one call, by name.
using Outputs = std::map<std::string, HostTensor>;
} // namespace

Expected<Outputs> TransformerModel::run(const char *entry, const Inputs &inputs,
                                        int64_t rows) {
  JitProgram &program = *this->program;
  const std::vector<const HostTensor *> &weights = bound[entry];
  const EntryPoint *e = program.lookup(entry);
  std::vector<Argument> args;
  for (auto [i, p] : llvm::enumerate(e->parameters)) {
    Argument a;
    if (weights[i]) {
      a.tensor = weights[i];
      a.constant = true;
    } else if (p.isGraph) {
      auto it = inputs.graphs.find(p.name);
      if (it == inputs.graphs.end())
        return fail(llvm::Twine("@") + entry + " has an argument '" + p.name +
                    "' that the runner does not provide");
      a.graph = it->second;
    } else if (auto updated = inputs.updated.find(p.name);
               updated != inputs.updated.end()) {
      a.updated = updated->second;
    } else {
      auto it = inputs.tensors.find(p.name);
      if (it == inputs.tensors.end())
        return fail(llvm::Twine("@") + entry + " has an argument '" + p.name +
                    "' that the runner does not provide");
      a.tensor = it->second;
    }
    args.push_back(a);
  }
  JitProgram::setThreads(rows >= kParallelRows ? threads : 1);
  Expected<std::vector<HostTensor>> results = program.run(entry, args);
  if (!results)
    return results.takeError();
  Outputs out;
  for (auto [p, t] : llvm::zip_equal(e->results, *results))
    out[p.name] = std::move(t);
  return out;
}

namespace {
Expected<HostTensor> take(Outputs &outputs, const std::string &name,
                          llvm::StringRef entry) {
  auto it = outputs.find(name);
  if (it == outputs.end())
    return fail("@" + entry + " returns no '" + name + "'");
  return std::move(it->second);
}
/// Moves the per-layer results kName(i) / vName(i) of `entry` into ks / vs.
Error takeLayers(Outputs &outputs, int64_t layers,
                 std::string (*kName)(int64_t), std::string (*vName)(int64_t),
                 llvm::StringRef entry, std::vector<HostTensor> &ks,
                 std::vector<HostTensor> &vs) {
  ks.clear();
  vs.clear();
  for (int64_t i = 0; i < layers; ++i) {
    Expected<HostTensor> k = take(outputs, kName(i), entry);
    if (!k)
      return k.takeError();
    Expected<HostTensor> v = take(outputs, vName(i), entry);
    if (!v)
      return v.takeError();
    ks.push_back(std::move(*k));
    vs.push_back(std::move(*v));
  }
  return Error::success();
}
} // namespace

/// An encoded batch and the decoder's k/v cache.
struct TransformerModel::Encoded {
  std::vector<int64_t> offsets, lengths;
  int64_t numSrc = 0;
  std::vector<HostTensor> crossK, crossV;
  std::vector<RowCache> selfK, selfV;
  int64_t cacheRows = 0;
  /// ACT step counts of the source tokens (universal_transformer).
  std::optional<HostTensor> encSteps;
};

/// A decoder sequence: its tokens (from <sos>) and the cache rows of the
/// nodes computed so far.
struct TransformerModel::Hypothesis {
  int64_t example = 0;
  Sequence tokens = {kSos};
  std::vector<int64_t> rows;
  double logProb = 0.0;
  double score = 0.0;
  bool finished = false;
};

Expected<TransformerModel::Encoded>
TransformerModel::encode(llvm::ArrayRef<Sequence> sources) {
  Encoded enc;
  std::vector<int64_t> tokens, positions;
  for (const Sequence &s : sources) {
    enc.offsets.push_back(int64_t(tokens.size()));
    enc.lengths.push_back(int64_t(s.size()));
    for (auto [pos, t] : llvm::enumerate(s)) {
      tokens.push_back(t);
      positions.push_back(int64_t(pos));
    }
  }
  enc.numSrc = int64_t(tokens.size());
  gnn_graph *g = nullptr;
  char err[256] = {0};
  int status = gnn_graph_complete_blocks(
      enc.lengths.data(), int64_t(enc.lengths.size()), &g, err, sizeof(err));
  Expected<GraphPtr> ee = built(status, g, err);
  if (!ee)
    return ee.takeError();
  HostTensor tokenIds = ids(tokens), positionIds = ids(positions);
  Inputs in;
  in.graphs[model::kEE] = ee->get();
  in.tensors[model::kSrcTokens] = &tokenIds;
  in.tensors[model::kSrcPositions] = &positionIds;
  in.tensors[model::kPE] = &pe;
  in.tensors[model::kTimePE] = &timePE;
  Expected<Outputs> encoded = run(model::kEncode, in, enc.numSrc);
  if (!encoded)
    return encoded.takeError();
  Expected<HostTensor> memory = take(*encoded, model::kMemory, model::kEncode);
  if (!memory)
    return memory.takeError();
  if (universal()) {
    Expected<HostTensor> steps =
        take(*encoded, model::kEncSteps, model::kEncode);
    if (!steps)
      return steps.takeError();
    enc.encSteps = std::move(*steps);
  }
  Inputs kvIn;
  kvIn.tensors[model::kMemory] = &*memory;
  Expected<Outputs> kv = run(model::kCrossKV, kvIn, enc.numSrc);
  if (!kv)
    return kv.takeError();
  // A universal_transformer's one shared layer has one cross k/v.
  int64_t layers = universal() ? 1 : config.layers;
  if (Error e = takeLayers(*kv, layers, model::crossK, model::crossV,
                           model::kCrossKV, enc.crossK, enc.crossV))
    return std::move(e);
  for (int64_t i = 0; i < layers; ++i) {
    enc.selfK.emplace_back(cacheRowShape());
    enc.selfV.emplace_back(cacheRowShape());
  }
  return enc;
}

/// Runs @decode on every live hypothesis's next node: it attends to the
/// hypothesis's cached nodes and itself, and to its example's encoder nodes.
Expected<TensorMap>
TransformerModel::decodeStep(Encoded &enc, std::vector<Hypothesis *> &live) {
  int64_t fresh = int64_t(live.size()), cached = enc.cacheRows;
  std::vector<int64_t> tokens, positions, slots, ddSrc, ddDst, edSrc, edDst;
  for (auto [j, h] : llvm::enumerate(live)) {
    int64_t pos = int64_t(h->rows.size());
    tokens.push_back(h->tokens[pos]);
    positions.push_back(pos);
    slots.push_back(cached + int64_t(j));
    for (int64_t r : h->rows) {
      ddSrc.push_back(r);
      ddDst.push_back(int64_t(j));
    }
    ddSrc.push_back(cached + int64_t(j));
    ddDst.push_back(int64_t(j));
    int64_t begin = enc.offsets[h->example];
    for (int64_t s = begin; s < begin + enc.lengths[h->example]; ++s) {
      edSrc.push_back(s);
      edDst.push_back(int64_t(j));
    }
  }
  Expected<GraphPtr> dd = fromCoo(cached + fresh, fresh, ddSrc, ddDst);
  if (!dd)
    return dd.takeError();
  Expected<GraphPtr> ed = fromCoo(enc.numSrc, fresh, edSrc, edDst);
  if (!ed)
    return ed.takeError();
  HostTensor tokenIds = ids(tokens), positionIds = ids(positions),
             slotIds = ids(slots);
  std::vector<HostTensor *> selfK, selfV;
  for (size_t i = 0; i < enc.selfK.size(); ++i) {
    selfK.push_back(&enc.selfK[i].append(fresh));
    selfV.push_back(&enc.selfV[i].append(fresh));
  }
  Expected<Outputs> out = run(model::kDecode,
                              decoderInputs(enc, dd->get(), ed->get(), tokenIds,
                                            positionIds, slotIds, selfK, selfV),
                              fresh);
  if (!out)
    return out.takeError();
  for (size_t i = 0; i < enc.selfK.size(); ++i)
    for (auto [name, cache] : {std::pair(model::selfK(i), &enc.selfK[i]),
                               std::pair(model::selfV(i), &enc.selfV[i])}) {
      Expected<HostTensor> result = take(*out, name, model::kDecode);
      if (!result)
        return result.takeError();
      if (Error e = cache->store(*result, name))
        return std::move(e);
    }
  enc.cacheRows = cached + fresh;
  for (auto [j, h] : llvm::enumerate(live))
    h->rows.push_back(cached + int64_t(j));
  return decoderResults(*out);
}

std::vector<int64_t> TransformerModel::cacheRowShape() const {
  if (universal())
    return {config.maxDepth, config.heads, config.dk()};
  return {config.heads, config.dk()};
}

Expected<TensorMap> TransformerModel::decoderResults(Outputs &out) const {
  TensorMap result;
  std::vector<const char *> names = {model::kLogProbs};
  if (universal())
    names.push_back(model::kDecSteps);
  for (const char *name : names) {
    Expected<HostTensor> t = take(out, name, model::kDecode);
    if (!t)
      return t.takeError();
    result[name] = std::move(*t);
  }
  return result;
}

TransformerModel::Inputs TransformerModel::decoderInputs(
    const Encoded &enc, const gnn_graph *dd, const gnn_graph *ed,
    const HostTensor &tokens, const HostTensor &positions,
    const HostTensor &slots, llvm::ArrayRef<HostTensor *> selfK,
    llvm::ArrayRef<HostTensor *> selfV) const {
  Inputs in;
  in.graphs[model::kDD] = dd;
  in.graphs[model::kED] = ed;
  in.tensors[model::kTgtTokens] = &tokens;
  in.tensors[model::kTgtPositions] = &positions;
  in.tensors[model::kCacheSlots] = &slots;
  in.tensors[model::kPE] = &pe;
  in.tensors[model::kTimePE] = &timePE;
  for (size_t i = 0; i < enc.crossK.size(); ++i) {
    in.tensors[model::crossK(i)] = &enc.crossK[i];
    in.tensors[model::crossV(i)] = &enc.crossV[i];
  }
  for (size_t i = 0; i < selfK.size(); ++i) {
    in.updated[model::selfK(i)] = selfK[i];
    in.updated[model::selfV(i)] = selfV[i];
  }
  return in;
}

Expected<TensorMap>
TransformerModel::forward(llvm::ArrayRef<Sequence> sources,
                          llvm::ArrayRef<Sequence> targets) {
  Expected<Encoded> enc = encode(sources);
  if (!enc)
    return enc.takeError();
  std::vector<int64_t> lengths, tokens, positions;
  for (const Sequence &t : targets) {
    lengths.push_back(int64_t(t.size()));
    for (auto [pos, id] : llvm::enumerate(t)) {
      tokens.push_back(id);
      positions.push_back(int64_t(pos));
    }
  }
  int64_t rows = int64_t(tokens.size());
  gnn_graph *g = nullptr;
  char err[256] = {0};
  int status = gnn_graph_causal_blocks(lengths.data(), int64_t(lengths.size()),
                                       &g, err, sizeof(err));
  Expected<GraphPtr> dd = built(status, g, err);
  if (!dd)
    return dd.takeError();
  status =
      gnn_graph_bipartite_blocks(enc->lengths.data(), lengths.data(),
                                 int64_t(lengths.size()), &g, err, sizeof(err));
  Expected<GraphPtr> ed = built(status, g, err);
  if (!ed)
    return ed.takeError();
  std::vector<int64_t> slotValues(rows);
  std::iota(slotValues.begin(), slotValues.end(), 0);
  HostTensor tokenIds = ids(tokens), positionIds = ids(positions),
             slots = ids(slotValues);
  // The whole targets at once: caches of their rows, filled in place.
  std::vector<RowCache> kCaches, vCaches;
  std::vector<HostTensor *> selfK, selfV;
  for (size_t i = 0; i < enc->selfK.size(); ++i) {
    kCaches.emplace_back(cacheRowShape());
    vCaches.emplace_back(cacheRowShape());
  }
  for (size_t i = 0; i < kCaches.size(); ++i) {
    selfK.push_back(&kCaches[i].append(rows));
    selfV.push_back(&vCaches[i].append(rows));
  }
  Expected<Outputs> out =
      run(model::kDecode,
          decoderInputs(*enc, dd->get(), ed->get(), tokenIds, positionIds,
                        slots, selfK, selfV),
          rows);
  if (!out)
    return out.takeError();
  Expected<TensorMap> result = decoderResults(*out);
  if (!result)
    return result.takeError();
  if (enc->encSteps)
    (*result)[model::kEncSteps] = std::move(*enc->encSteps);
  return result;
}

Expected<TensorMap>
TransformerModel::forwardIncremental(llvm::ArrayRef<Sequence> sources,
                                     llvm::ArrayRef<Sequence> targets) {
  Expected<Encoded> enc = encode(sources);
  if (!enc)
    return enc.takeError();
  int64_t vocab = config.tgtVocab;
  std::vector<Hypothesis> hyps(targets.size());
  std::vector<int64_t> firstRow;
  int64_t total = 0;
  for (auto [b, t] : llvm::enumerate(targets)) {
    hyps[b].example = int64_t(b);
    hyps[b].tokens = t;
    firstRow.push_back(total);
    total += int64_t(t.size());
  }
  TensorMap result;
  result[model::kLogProbs] = zeros({total, vocab});
  if (universal()) {
    HostTensor steps;
    steps.dtype = DType::I32;
    steps.shape = {total};
    steps.allocate();
    result[model::kDecSteps] = std::move(steps);
    result[model::kEncSteps] = std::move(*enc->encSteps);
  }
  for (;;) {
    std::vector<Hypothesis *> live;
    for (Hypothesis &h : hyps)
      if (h.rows.size() < h.tokens.size())
        live.push_back(&h);
    if (live.empty())
      break;
    Expected<TensorMap> step = decodeStep(*enc, live);
    if (!step)
      return step.takeError();
    // Each live hypothesis's new row goes to its place in the output.
    for (auto &[name, t] : *step) {
      HostTensor &into = result[name];
      size_t rowBytes = t.shape[0] ? t.numBytes() / size_t(t.shape[0]) : 0;
      for (auto [j, h] : llvm::enumerate(live)) {
        int64_t row = firstRow[h->example] + int64_t(h->rows.size()) - 1;
        std::memcpy(static_cast<char *>(into.data()) + row * rowBytes,
                    static_cast<const char *>(t.data()) + j * rowBytes,
                    rowBytes);
      }
    }
  }
  return result;
}

Expected<std::vector<Sequence>>
TransformerModel::greedy(llvm::ArrayRef<Sequence> sources, int64_t maxLen) {
  return beam(sources, 1, 0.0, maxLen);
}

Expected<std::vector<Sequence>>
TransformerModel::beam(llvm::ArrayRef<Sequence> sources, int64_t beamSize,
                       double alpha, int64_t maxLen) {
  Expected<Encoded> enc = encode(sources);
  if (!enc)
    return enc.takeError();
  int64_t vocab = config.tgtVocab;
  size_t k = size_t(std::max<int64_t>(beamSize, 1));
  auto penalty = [&](size_t len) {
    return std::pow((5.0 + double(len)) / 6.0, alpha);
  };
  // Beams own their hypotheses; each keeps up to k, best first.
  std::vector<std::vector<std::unique_ptr<Hypothesis>>> beams(sources.size());
  for (size_t b = 0; b < sources.size(); ++b) {
    auto h = std::make_unique<Hypothesis>();
    h->example = int64_t(b);
    h->finished = maxLen <= 1;
    beams[b].push_back(std::move(h));
  }
  for (;;) {
    std::vector<Hypothesis *> live;
    for (auto &beam : beams)
      for (auto &h : beam)
        if (!h->finished)
          live.push_back(h.get());
    if (live.empty())
      break;
    Expected<TensorMap> step = decodeStep(*enc, live);
    if (!step)
      return step.takeError();
    const HostTensor &lp = (*step)[model::kLogProbs];
    std::map<const Hypothesis *, const float *> rowOf;
    for (auto [j, h] : llvm::enumerate(live))
      rowOf[h] = lp.as<float>() + j * vocab;

    for (auto &beam : beams) {
      struct Candidate {
        Hypothesis *parent;
        int64_t token; // -1: a finished hypothesis kept as it is
        double logProb, score;
      };
      std::vector<Candidate> candidates;
      for (auto &h : beam) {
        if (h->finished) {
          candidates.push_back({h.get(), -1, h->logProb, h->score});
          continue;
        }
        const float *row = rowOf[h.get()];
        std::vector<int64_t> order(vocab);
        std::iota(order.begin(), order.end(), 0);
        size_t top = std::min<size_t>(k, size_t(vocab));
        std::partial_sort(order.begin(), order.begin() + top, order.end(),
                          [&](int64_t a, int64_t b) {
                            return row[a] > row[b] ||
                                   (row[a] == row[b] && a < b);
                          });
        size_t length = h->tokens.size(); // outputs after this token
        for (size_t i = 0; i < top; ++i) {
          double logProb = h->logProb + double(row[order[i]]);
          candidates.push_back(
              {h.get(), order[i], logProb, logProb / penalty(length)});
        }
      }
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const Candidate &a, const Candidate &b) {
                         return a.score > b.score;
                       });
      candidates.resize(std::min(candidates.size(), k));
      std::vector<std::unique_ptr<Hypothesis>> next;
      for (const Candidate &c : candidates) {
        if (c.token < 0) {
          for (auto &h : beam)
            if (h.get() == c.parent)
              next.push_back(std::move(h));
          continue;
        }
        auto h = std::make_unique<Hypothesis>(*c.parent);
        h->tokens.push_back(c.token);
        h->logProb = c.logProb;
        h->score = c.score;
        // Outputs exclude <sos>; <eos> ends a hypothesis, and so does the
        // length limit of maxLen - 1 outputs.
        h->finished =
            c.token == kEos || int64_t(h->tokens.size()) - 1 >= maxLen - 1;
        next.push_back(std::move(h));
      }
      beam = std::move(next);
    }
  }
  std::vector<Sequence> outputs;
  for (auto &beam : beams) {
    const Sequence &tokens = beam.front()->tokens;
    Sequence out(tokens.begin() + 1, tokens.end());
    if (!out.empty() && out.back() == kEos)
      out.pop_back();
    outputs.push_back(std::move(out));
  }
  return outputs;
}
