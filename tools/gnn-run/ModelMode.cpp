//===- ModelMode.cpp - gnn-run on Transformer models ----------------------===//
//
// Part of gnnc. Reads sequences (ids or vocabulary tokens), runs them through
// a compiled model in batches and writes log-probs or decoded sequences.
//
//===----------------------------------------------------------------------===//

#include "ModelMode.h"
#include "TimedRuns.h"

#include "GNN/Models/TransformerModel.h"
#include "GNN/Support/Messages.h"
#include "GNN/Support/OutputFile.h"
#include "GNN/Support/Tokenizer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>

using namespace mlir;
using namespace mlir::gnn;
using llvm::Expected;

namespace gnnrun {
namespace {
int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "gnn-run") << message << "\n";
  return 1;
}

} // namespace

/// The sequence indices of --attention-seqs ("0,3,7"), each below `count`,
/// in increasing order without repeats.
static Expected<std::vector<int64_t>> parseSequenceList(llvm::StringRef list,
                                                        size_t count) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--attention-seqs: " + message);
  };
  std::vector<int64_t> indices;
  llvm::SmallVector<llvm::StringRef> items;
  list.split(items, ',');
  for (llvm::StringRef item : items) {
    item = item.trim();
    uint64_t index;
    if (item.empty() || item.getAsInteger(10, index))
      return error("'" + clipForMessage(item) +
                   "' is not a sequence index (a line number from 0)");
    if (index >= count)
      return error("sequence " + llvm::Twine(index) +
                   " is out of range: the input has " + llvm::Twine(count) +
                   " sequences, 0 to " + llvm::Twine(int64_t(count) - 1));
    indices.push_back(int64_t(index));
  }
  llvm::sort(indices);
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  return indices;
}

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// --emit-ir: the model as gnn IR, to stdout or --out.
static int emitModelIR(MLIRContext &context, const ModelRunOptions &o,
                       const ModelConfig &config) {
  auto text = TransformerModel::emitIR(context, config, o.weights);
  if (!text)
    return fail(llvm::toString(text.takeError()));
  if (o.out.empty()) {
    llvm::outs() << *text;
    return 0;
  }
  if (llvm::Error e = writeFileAtomically(o.out, *text))
    return fail(llvm::toString(std::move(e)));
  return 0;
}

/// The flags' bounds and combinations.
static llvm::Error checkOptions(const ModelRunOptions &o) {
  if (o.src.empty())
    return error("--src is required (or --emit-ir)");
  // Bounds that keep memory and threads sane on absurd values.
  constexpr int64_t kMaxBeam = 1024, kMaxPositions = 5000;
  if (o.beamSize < 1 || o.beamSize > kMaxBeam)
    return error("--beam-size must be between 1 and " + llvm::Twine(kMaxBeam));
  if (o.batchSize < 1)
    return error("--batch-size must be at least 1");
  if (o.threads < 0 || o.threads > kMaxThreads)
    return error("--threads must be between 1 and " + llvm::Twine(kMaxThreads) +
                 " (0: all cores)");
  if (!std::isfinite(o.alpha))
    return error("--alpha must be a finite number");
  if (o.maxLen < 0 || o.maxLen > kMaxPositions)
    return error("--max-len must be between 1 and " +
                 llvm::Twine(kMaxPositions));
  if (o.mode == Mode::Forward && o.tgt.empty())
    return error("--mode forward needs --tgt (the decoder inputs)");
  if (o.mode != Mode::Forward && !o.tgt.empty())
    return error("--tgt is only read by --mode forward");
  if (o.incremental && o.mode != Mode::Forward)
    return error("--incremental applies to --mode forward");
  bool attention = !o.attentionOut.empty();
  if (attention && o.mode != Mode::Forward)
    return error("--attention-out applies to --mode forward");
  if (attention && o.incremental)
    return error("--attention-out and --incremental cannot be combined");
  return llvm::Error::success();
}

namespace {
/// What the model runs on: sources, decoder inputs (forward), and the
/// sequences whose attention maps are written.
struct ModelInputs {
  std::vector<Sequence> sources, targets;
  std::vector<int64_t> attentionSeqs;
};

/// What a run over every batch gave.
struct ModelOutputs {
  int64_t tokens = 0;
  TensorMap forwardResults;
  std::vector<Sequence> decoded;
  AttentionMaps maps;
  /// Each timed run's seconds, sorted.
  std::vector<double> runSeconds;
};
} // namespace

static llvm::Error readInputs(const ModelRunOptions &o,
                              const ModelConfig &config,
                              const Tokenizer &tokenizer, int64_t maxLen,
                              ModelInputs &in) {
  auto sources = readSequences(o.src, "src", tokenizer, config.srcVocab,
                               config.maxLen, o.truncate);
  if (!sources)
    return sources.takeError();
  in.sources = std::move(*sources);
  if (o.mode != Mode::Forward)
    if (llvm::Error e = checkDecodingMemory(
            config, std::min<int64_t>(in.sources.size(), o.batchSize),
            o.mode == Mode::Beam ? o.beamSize : 1, maxLen,
            "use a smaller --batch-size, --beam-size or --max-len"))
      return e;
  if (!o.tgt.empty()) {
    auto read = readSequences(o.tgt, "tgt", tokenizer, config.tgtVocab,
                              config.maxLen, o.truncate);
    if (!read)
      return read.takeError();
    in.targets = std::move(*read);
    if (in.targets.size() != in.sources.size())
      return error("src has " + llvm::Twine(in.sources.size()) +
                   " sequences but tgt has " + llvm::Twine(in.targets.size()));
    for (auto [i, t] : llvm::enumerate(in.targets))
      if (t.front() != kSos)
        return error("tgt line " + llvm::Twine(i + 1) +
                     " must begin with <sos> (id 0): it is the decoder input");
  }
  if (!o.attentionOut.empty()) {
    auto list = parseSequenceList(o.attentionSeqs, in.sources.size());
    if (!list)
      return list.takeError();
    in.attentionSeqs = std::move(*list);
  }
  return llvm::Error::success();
}

/// The compiled model for the flags.
static Expected<std::unique_ptr<TransformerModel>>
loadModel(MLIRContext &context, const ModelRunOptions &o,
          const ModelConfig &config, int64_t maxLen) {
  ModelOptions options;
  options.compile = o.compile;
  options.compile.parallel = o.threads != 1;
  options.weightsPath = o.weights;
  options.irPath = o.ir;
  options.positions = maxLen;
  options.threads = int(o.threads);
  options.attentionWeights = !o.attentionOut.empty();
  options.allowNonFinite = o.allowNonFinite;
  return TransformerModel::load(context, config, options);
}

/// One batch of sequences [begin, end) through the model, added to `out`.
static llvm::Error
runBatch(TransformerModel &model, const ModelRunOptions &o,
         const ModelInputs &in, size_t begin, size_t end, int64_t maxLen,
         std::map<std::string, std::vector<HostTensor>> &batchResults,
         ModelOutputs &out) {
  llvm::ArrayRef<Sequence> src =
      llvm::ArrayRef<Sequence>(in.sources).slice(begin, end - begin);
  if (o.mode != Mode::Forward) {
    auto decoded = o.mode == Mode::Greedy
                       ? model.greedy(src, maxLen)
                       : model.beam(src, o.beamSize, o.alpha, maxLen);
    if (!decoded)
      return decoded.takeError();
    for (Sequence &s : *decoded) {
      out.tokens += int64_t(s.size());
      out.decoded.push_back(std::move(s));
    }
    return llvm::Error::success();
  }
  llvm::ArrayRef<Sequence> tgt =
      llvm::ArrayRef<Sequence>(in.targets).slice(begin, end - begin);
  // The attention maps of the chosen sequences in this batch.
  AttentionMaps &maps = out.maps;
  maps.sequences.clear();
  maps.names.clear();
  for (int64_t s : in.attentionSeqs)
    if (size_t(s) >= begin && size_t(s) < end) {
      maps.sequences.push_back(s - int64_t(begin));
      maps.names.push_back(s);
    }
  auto results =
      o.incremental
          ? model.forwardIncremental(src, tgt)
          : model.forward(src, tgt, maps.sequences.empty() ? nullptr : &maps);
  if (!results)
    return results.takeError();
  out.tokens += (*results)["log_probs"].shape[0];
  for (auto &[name, part] : *results)
    batchResults[name].push_back(std::move(part));
  return llvm::Error::success();
}

/// Every batch, --repeat times after an untimed warm-up run (caches, thread
/// pools) when repeating; the last run's outputs.
static llvm::Error runAll(TransformerModel &model, const ModelRunOptions &o,
                          const ModelInputs &in, int64_t maxLen,
                          ModelOutputs &out) {
  size_t total = in.sources.size(), batch = size_t(o.batchSize);
  bool progress = total > batch && o.repeat == 1 && !o.quiet;
  auto seconds = timeRuns(o.repeat, [&]() -> llvm::Error {
    out.tokens = 0;
    out.forwardResults.clear();
    out.decoded.clear();
    out.maps.tensors.clear();
    std::map<std::string, std::vector<HostTensor>> batchResults;
    for (size_t begin = 0; begin < total; begin += batch) {
      size_t end = std::min(total, begin + batch);
      if (llvm::Error e =
              runBatch(model, o, in, begin, end, maxLen, batchResults, out))
        return e;
      if (progress)
        llvm::errs() << "gnn-run: " << end << "/" << total << " sequences\n";
    }
    // Batches' rows follow each other.
    for (auto &[name, parts] : batchResults)
      out.forwardResults[name] = HostTensor::concatRows(parts);
    return llvm::Error::success();
  });
  if (!seconds)
    return seconds.takeError();
  out.runSeconds = std::move(*seconds);
  return llvm::Error::success();
}

/// The attention maps, then log-probs (or, without --out, the
/// teacher-forced predictions) or the decoded lines.
static llvm::Error writeOutputs(const ModelRunOptions &o,
                                const ModelConfig &config,
                                const Tokenizer &tokenizer,
                                const ModelInputs &in, ModelOutputs &out) {
  if (!o.attentionOut.empty())
    if (auto e = writeSafeTensors(o.attentionOut, out.maps.tensors))
      return e;
  if (o.mode == Mode::Forward) {
    if (!o.out.empty())
      return writeSafeTensors(o.out, out.forwardResults);
    // The teacher-forced predictions, one line per sequence.
    int64_t row = 0, vocabSize = config.tgtVocab;
    const float *lp = out.forwardResults["log_probs"].as<float>();
    for (const Sequence &t : in.targets) {
      Sequence best;
      for (size_t i = 0; i < t.size(); ++i, ++row) {
        const float *r = lp + row * vocabSize;
        best.push_back(std::max_element(r, r + vocabSize) - r);
      }
      llvm::outs() << tokenizer.print(best) << "\n";
    }
    return llvm::Error::success();
  }
  std::string text;
  for (const Sequence &s : out.decoded)
    text += tokenizer.print(s) + "\n";
  if (!o.out.empty())
    return writeFileAtomically(o.out, text);
  llvm::outs() << text;
  return llvm::Error::success();
}

/// --stats-json: the run's summary.
static llvm::Error writeStats(const ModelRunOptions &o, size_t sequences,
                              const ModelOutputs &out, double compileSeconds,
                              const CompileInfo &compile) {
  const std::vector<double> &sorted = out.runSeconds;
  double seconds = sorted[sorted.size() / 2];
  const char *modes[] = {"forward", "greedy", "beam"};
  llvm::json::Object stats{
      {"mode", modes[int(o.mode)]},
      {"fused", o.compile.fuse},
      {"sequences", int64_t(sequences)},
      {"tokens", out.tokens},
      {"seconds", seconds},
      {"tokens_per_second", seconds > 0 ? out.tokens / seconds : 0.0},
      {"runs", o.repeat},
      {"min_seconds", sorted.front()},
      {"max_seconds", sorted.back()},
      {"compile_seconds", compileSeconds},
      {"compile_cache_hit", compile.cacheHit},
      {"threads", o.threads}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(stats))) << "\n";
  return writeFileAtomically(o.statsJson, os.str());
}

/// The summary line on stderr.
static void printSummary(const ModelRunOptions &o, size_t sequences,
                         const ModelOutputs &out, double compileSeconds,
                         const CompileInfo &compile) {
  const std::vector<double> &sorted = out.runSeconds;
  double seconds = sorted[sorted.size() / 2];
  llvm::errs() << "gnn-run: " << sequences << " sequences, " << out.tokens
               << (o.mode == Mode::Forward ? " target" : " output")
               << " tokens in " << llvm::format("%.4f", seconds) << " s ("
               << llvm::format("%.0f", seconds > 0 ? out.tokens / seconds : 0.0)
               << " tokens/s; compiled in "
               << llvm::format("%.2f", compileSeconds) << " s ("
               << (compile.cacheHit ? "compile cache hit" : "compiled")
               << ", code " << llvm::format("%.2f", compile.seconds) << " s), "
               << (o.compile.fuse ? "fused" : "unfused");
  if (o.repeat > 1)
    llvm::errs() << "; median of " << o.repeat << " runs, min "
                 << llvm::format("%.4f", sorted.front()) << " s, max "
                 << llvm::format("%.4f", sorted.back()) << " s";
  llvm::errs() << ")\n";
}

int runModel(MLIRContext &context, const ModelRunOptions &o) {
  Expected<ModelConfig> config = readModelConfig(o.config);
  if (!config)
    return fail(llvm::toString(config.takeError()));
  if (o.emitIR)
    return emitModelIR(context, o, *config);
  if (llvm::Error e = checkOptions(o))
    return fail(llvm::toString(std::move(e)));
  int64_t maxLen = o.maxLen > 0 ? o.maxLen : config->maxLen;
  auto tokenizer = readTokenizer(*config, o.ids);
  if (!tokenizer)
    return fail(llvm::toString(tokenizer.takeError()));
  ModelInputs in;
  if (llvm::Error e = readInputs(o, *config, *tokenizer, maxLen, in))
    return fail(llvm::toString(std::move(e)));
  auto start = std::chrono::steady_clock::now();
  auto model = loadModel(context, o, *config, maxLen);
  if (!model)
    return fail(llvm::toString(model.takeError()));
  double compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ModelOutputs out;
  if (llvm::Error e = runAll(**model, o, in, maxLen, out))
    return fail(llvm::toString(std::move(e)));
  if (llvm::Error e = writeOutputs(o, *config, *tokenizer, in, out))
    return fail(llvm::toString(std::move(e)));
  const CompileInfo &compile = (*model)->getCompileInfo();
  if (!o.statsJson.empty())
    if (llvm::Error e =
            writeStats(o, in.sources.size(), out, compileSeconds, compile))
      return fail(llvm::toString(std::move(e)));
  if (!o.quiet)
    printSummary(o, in.sources.size(), out, compileSeconds, compile);
  return 0;
}

} // namespace gnnrun
