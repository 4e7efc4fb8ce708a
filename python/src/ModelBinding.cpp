//===- ModelBinding.cpp - gnnc.Transformer --------------------------------===//
//
// Part of gnnc's Python package. A compiled Transformer or Universal
// Transformer (mlir::gnn::TransformerModel) on lines of tokens, in batches
// as gnn-run runs them, with the same results.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "GNN/Models/TransformerModel.h"
#include "GNN/Support/Tokenizer.h"

#include <pybind11/stl.h>

#include <mutex>

using namespace gnnc::python;
using mlir::gnn::ModelConfig;
using mlir::gnn::Sequence;
using mlir::gnn::TransformerModel;

namespace {
class LoadedModel {
public:
  LoadedModel(const std::string &configPath, const std::string &weightsPath,
              const std::string &device, int threads,
              std::optional<std::string> cacheDir, bool fuse,
              std::optional<bool> ids, int64_t maxLen, bool allowNonFinite)
      : session(threads, device, std::move(cacheDir)), fuse(fuse),
        allowNonFinite(allowNonFinite), weightsPath(weightsPath) {
    config = take(mlir::gnn::readModelConfig(configPath));
    if (maxLen < 0 || maxLen > kMaxPositions)
      raise("max_len must be between 1 and " + std::to_string(kMaxPositions));
    positions = maxLen > 0 ? maxLen : config.maxLen;
    tokenizer =
        std::make_unique<mlir::gnn::Tokenizer>(take(mlir::gnn::readTokenizer(
            config, ids.value_or(config.vocabPath.empty()))));
    model = load(/*attentionWeights=*/false);
  }

  std::vector<std::string> decode(const std::vector<std::string> &lines,
                                  const std::string &mode, int64_t beam,
                                  double alpha, int64_t maxLen,
                                  int64_t batchSize, bool truncate) {
    if (mode != "greedy" && mode != "beam")
      raise("mode must be 'greedy' or 'beam', not '" + mode + "'");
    if (beam < 1 || beam > 1024)
      raise("beam must be between 1 and 1024");
    if (!std::isfinite(alpha))
      raise("alpha must be a finite number");
    checkBatch(batchSize);
    int64_t len = decodeLength(maxLen);
    std::vector<Sequence> sources =
        parse(lines, "source", config.srcVocab, truncate);
    if (llvm::Error e = checkDecodingMemory(
            config, std::min<int64_t>(sources.size(), batchSize),
            mode == "beam" ? beam : 1, len,
            "use a smaller batch_size, beam or max_len"))
      raise(std::move(e));
    std::vector<std::string> out;
    for (size_t begin = 0; begin < sources.size(); begin += size_t(batchSize)) {
      size_t end = std::min(sources.size(), begin + size_t(batchSize));
      llvm::ArrayRef<Sequence> batch =
          llvm::ArrayRef<Sequence>(sources).slice(begin, end - begin);
      llvm::Expected<std::vector<Sequence>> decoded = std::vector<Sequence>();
      {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(mutex);
        decoded = mode == "greedy" ? model->greedy(batch, len)
                                   : model->beam(batch, beam, alpha, len);
      }
      for (const Sequence &s : take(std::move(decoded)))
        out.push_back(tokenizer->print(s));
      if (PyErr_CheckSignals() != 0)
        throw py::error_already_set();
    }
    return out;
  }

  py::dict forward(const std::vector<std::string> &srcLines,
                   const std::vector<std::string> &tgtLines, int64_t batchSize,
                   bool truncate) {
    checkBatch(batchSize);
    std::vector<Sequence> sources =
        parse(srcLines, "source", config.srcVocab, truncate);
    std::vector<Sequence> targets =
        parse(tgtLines, "target", config.tgtVocab, truncate);
    checkTargets(sources, targets);
    std::map<std::string, std::vector<HostTensor>> parts;
    for (size_t begin = 0; begin < sources.size(); begin += size_t(batchSize)) {
      size_t count = std::min(sources.size() - begin, size_t(batchSize));
      llvm::Expected<TensorMap> results = TensorMap();
      {
        py::gil_scoped_release released;
        std::lock_guard<std::mutex> lock(mutex);
        results = model->forward(
            llvm::ArrayRef<Sequence>(sources).slice(begin, count),
            llvm::ArrayRef<Sequence>(targets).slice(begin, count));
      }
      for (auto &[name, part] : take(std::move(results)))
        parts[name].push_back(std::move(part));
      if (PyErr_CheckSignals() != 0)
        throw py::error_already_set();
    }
    TensorMap joined;
    for (auto &[name, list] : parts)
      joined[name] = HostTensor::concatRows(list);
    return toDict(std::move(joined));
  }

  py::dict attention(const std::string &srcLine,
                     std::optional<std::string> tgtLine, bool truncate) {
    std::vector<Sequence> source =
        parse({srcLine}, "source", config.srcVocab, truncate);
    std::vector<Sequence> target;
    if (tgtLine) {
      target = parse({*tgtLine}, "target", config.tgtVocab, truncate);
      checkTargets(source, target);
    }
    mlir::gnn::AttentionMaps maps;
    maps.sequences = {0};
    maps.names = {0};
    llvm::Error error = llvm::Error::success();
    {
      py::gil_scoped_release released;
      std::lock_guard<std::mutex> lock(mutex);
      error = attentionMaps(source, target, maps);
    }
    if (error)
      raise(std::move(error));
    return toDict(std::move(maps.tensors));
  }

  py::dict describe() const {
    py::dict d;
    d["architecture"] =
        config.architecture == mlir::gnn::Architecture::UniversalTransformer
            ? "universal_transformer"
            : "transformer";
    d["src_vocab"] = config.srcVocab;
    d["tgt_vocab"] = config.tgtVocab;
    d["max_len"] = config.maxLen;
    d["d_model"] = config.dModel;
    return d;
  }

private:
  std::unique_ptr<TransformerModel> load(bool attentionWeights) {
    mlir::gnn::ModelOptions options;
    options.compile = session.compileOptions(fuse);
    options.weightsPath = weightsPath;
    options.positions = positions;
    options.threads = session.threads();
    options.attentionWeights = attentionWeights;
    options.allowNonFinite = allowNonFinite;
    py::gil_scoped_release released;
    auto loaded = TransformerModel::load(session.context(), config, options);
    py::gil_scoped_acquire held;
    return take(std::move(loaded));
  }

  /// The maps of one pair; without a target, of the greedy decoding's.
  llvm::Error attentionMaps(llvm::ArrayRef<Sequence> source,
                            std::vector<Sequence> &target,
                            mlir::gnn::AttentionMaps &maps) {
    if (target.empty()) {
      auto decoded = model->greedy(source, positions);
      if (!decoded)
        return decoded.takeError();
      Sequence input = {mlir::gnn::kSos};
      llvm::append_range(input, decoded->front());
      target.push_back(std::move(input));
    }
    if (!withWeights) {
      py::gil_scoped_acquire held;
      withWeights = load(/*attentionWeights=*/true);
    }
    auto results = withWeights->forward(source, target, &maps);
    return results ? llvm::Error::success() : results.takeError();
  }

  std::vector<Sequence> parse(const std::vector<std::string> &lines,
                              const char *what, int64_t vocab, bool truncate) {
    return take(mlir::gnn::parseSequences(lines, what, *tokenizer, vocab,
                                          config.maxLen, truncate));
  }

  static void checkBatch(int64_t batchSize) {
    if (batchSize < 1)
      raise("batch_size must be at least 1");
  }

  /// Decoding's bound on the output: at most the positions the model was
  /// loaded for (its max_len).
  int64_t decodeLength(int64_t maxLen) const {
    if (maxLen < 0 || maxLen > positions)
      raise("max_len must be between 1 and " + std::to_string(positions) +
            " (the model was loaded for " + std::to_string(positions) +
            " positions; Transformer.load(..., max_len=N) prepares more)");
    return maxLen > 0 ? maxLen : positions;
  }

  static void checkTargets(const std::vector<Sequence> &sources,
                           const std::vector<Sequence> &targets) {
    if (targets.size() != sources.size())
      raise(std::to_string(sources.size()) + " source lines but " +
            std::to_string(targets.size()) + " target lines");
    for (size_t i = 0; i < targets.size(); ++i)
      if (targets[i].front() != mlir::gnn::kSos)
        raise("target line " + std::to_string(i + 1) +
              " must begin with <sos> (id 0): it is the decoder input");
  }

  static constexpr int64_t kMaxPositions = 5000;
  CompileSession session;
  bool fuse;
  bool allowNonFinite;
  int64_t positions = 0;
  std::string weightsPath;
  ModelConfig config;
  std::unique_ptr<mlir::gnn::Tokenizer> tokenizer;
  std::mutex mutex;
  std::unique_ptr<TransformerModel> model, withWeights;
};
} // namespace

void gnnc::python::bindModels(py::module_ &m) {
  py::class_<LoadedModel>(m, "LoadedModel")
      .def(py::init<const std::string &, const std::string &,
                    const std::string &, int, std::optional<std::string>, bool,
                    std::optional<bool>, int64_t, bool>(),
           py::arg("config"), py::arg("weights"), py::arg("device"),
           py::arg("threads"), py::arg("cache_dir"), py::arg("fuse"),
           py::arg("ids"), py::arg("max_len"), py::arg("allow_nonfinite"))
      .def("decode", &LoadedModel::decode, py::arg("lines"), py::arg("mode"),
           py::arg("beam"), py::arg("alpha"), py::arg("max_len"),
           py::arg("batch_size"), py::arg("truncate"))
      .def("forward", &LoadedModel::forward, py::arg("src_lines"),
           py::arg("tgt_lines"), py::arg("batch_size"), py::arg("truncate"))
      .def("attention", &LoadedModel::attention, py::arg("src_line"),
           py::arg("tgt_line"), py::arg("truncate"))
      .def("describe", &LoadedModel::describe);
}
