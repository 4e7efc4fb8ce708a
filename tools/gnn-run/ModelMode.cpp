//===- ModelMode.cpp - gnn-run on Transformer models ----------------------===//
//
// Part of gnnc. Reads sequences (ids or vocabulary tokens), runs them through
// a compiled model in batches and writes log-probs or decoded sequences.
//
//===----------------------------------------------------------------------===//

#include "ModelMode.h"

#include "GNN/Models/TransformerRunner.h"
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
#include <unistd.h>

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

/// Decoding keeps, per sequence of a batch and beam, every layer's self-
/// attention keys and values for every position (times the ACT depth for a
/// Universal Transformer), plus a row of log-probs. Refuses, naming the
/// numbers, a run whose caches would not fit in half of this machine's
/// memory, instead of growing until the system gives out.
static llvm::Error checkDecodingMemory(const ModelRunOptions &o,
                                       const ModelConfig &c, size_t sequences,
                                       int64_t maxLen) {
  if (o.mode == Mode::Forward || sequences == 0)
    return llvm::Error::success();
  double rows = double(std::min<size_t>(sequences, size_t(o.batchSize))) *
                double(o.mode == Mode::Beam ? o.beamSize : 1);
  double depth = c.architecture == Architecture::UniversalTransformer
                     ? double(c.maxDepth)
                     : double(c.layers);
  double bytes =
      rows *
      (double(maxLen) * depth * 2 * double(c.dModel) + 2 * double(c.tgtVocab)) *
      sizeof(float);
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  double budget = pages > 0 && pageSize > 0 ? double(pages) * pageSize / 2
                                            : double(4ull << 30);
  if (bytes <= budget)
    return llvm::Error::success();
  auto gib = [](double b) { return llvm::formatv("{0:F1}", b / (1 << 30)); };
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("decoding {0} sequences per batch x beam {1} x {2} "
                    "positions needs about {3} GiB for its caches, more than "
                    "half of this machine's memory ({4} GiB); use a smaller "
                    "--batch-size, --beam-size or --max-len",
                    std::min<size_t>(sequences, size_t(o.batchSize)),
                    o.mode == Mode::Beam ? o.beamSize : 1, maxLen, gib(bytes),
                    gib(budget))
          .str());
}

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

int runModel(MLIRContext &context, const ModelRunOptions &o) {
  Expected<ModelConfig> config = readModelConfig(o.config);
  if (!config)
    return fail(llvm::toString(config.takeError()));

  if (o.emitIR) {
    auto text = TransformerModel::emitIR(context, *config, o.weights);
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

  if (o.src.empty())
    return fail("--src is required (or --emit-ir)");
  // Bounds that keep memory and threads sane on absurd values.
  constexpr int64_t kMaxBeam = 1024, kMaxPositions = 5000;
  if (o.beamSize < 1 || o.beamSize > kMaxBeam)
    return fail("--beam-size must be between 1 and " + llvm::Twine(kMaxBeam));
  if (o.batchSize < 1)
    return fail("--batch-size must be at least 1");
  if (o.threads < 0 || o.threads > kMaxThreads)
    return fail("--threads must be between 1 and " + llvm::Twine(kMaxThreads) +
                " (0: all cores)");
  if (!std::isfinite(o.alpha))
    return fail("--alpha must be a finite number");
  if (o.maxLen < 0 || o.maxLen > kMaxPositions)
    return fail("--max-len must be between 1 and " +
                llvm::Twine(kMaxPositions));
  int64_t maxLen = o.maxLen > 0 ? o.maxLen : config->maxLen;
  if (o.mode == Mode::Forward && o.tgt.empty())
    return fail("--mode forward needs --tgt (the decoder inputs)");
  if (o.mode != Mode::Forward && !o.tgt.empty())
    return fail("--tgt is only read by --mode forward");
  if (o.incremental && o.mode != Mode::Forward)
    return fail("--incremental applies to --mode forward");
  bool attention = !o.attentionOut.empty();
  if (attention && o.mode != Mode::Forward)
    return fail("--attention-out applies to --mode forward");
  if (attention && o.incremental)
    return fail("--attention-out and --incremental cannot be combined");

  auto readTokens = readTokenizer(*config, o.ids);
  if (!readTokens)
    return fail(llvm::toString(readTokens.takeError()));
  const Tokenizer &tokenizer = *readTokens;
  auto sources = readSequences(o.src, "src", tokenizer, config->srcVocab,
                               config->maxLen, o.truncate);
  if (!sources)
    return fail(llvm::toString(sources.takeError()));
  if (llvm::Error e = checkDecodingMemory(o, *config, sources->size(), maxLen))
    return fail(llvm::toString(std::move(e)));
  std::vector<Sequence> targets;
  if (!o.tgt.empty()) {
    auto read = readSequences(o.tgt, "tgt", tokenizer, config->tgtVocab,
                              config->maxLen, o.truncate);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    targets = std::move(*read);
    if (targets.size() != sources->size())
      return fail("src has " + llvm::Twine(sources->size()) +
                  " sequences but tgt has " + llvm::Twine(targets.size()));
    for (auto [i, t] : llvm::enumerate(targets))
      if (t.front() != kSos)
        return fail("tgt line " + llvm::Twine(i + 1) +
                    " must begin with <sos> (id 0): it is the decoder input");
  }
  std::vector<int64_t> attentionSeqs;
  if (attention) {
    auto list = parseSequenceList(o.attentionSeqs, sources->size());
    if (!list)
      return fail(llvm::toString(list.takeError()));
    attentionSeqs = std::move(*list);
  }

  // Dense layers run on these threads too (JitProgram splits them).
  if (o.threads > 0)
    setenv("OMP_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  ModelOptions options;
  options.compile.fuse = o.fuse;
  options.compile.parallel = o.threads != 1;
  options.compile.device = o.device;
  options.compile.cache = o.cache;
  options.compile.checked = o.checked;
  options.compile.compileThreads = o.compileThreads;
  options.weightsPath = o.weights;
  options.irPath = o.ir;
  options.positions = maxLen;
  options.threads = int(o.threads);
  options.attentionWeights = attention;
  auto start = std::chrono::steady_clock::now();
  auto model = TransformerModel::load(context, *config, options);
  if (!model)
    return fail(llvm::toString(model.takeError()));
  auto compiled = std::chrono::steady_clock::now();

  size_t total = sources->size();
  AttentionMaps maps;
  size_t batch = size_t(o.batchSize);
  bool progress = total > batch && o.repeat == 1 && !o.quiet;
  int64_t tokens = 0;
  TensorMap forwardResults;
  std::vector<Sequence> outputs;
  std::vector<double> runSeconds;
  // With --repeat, one untimed warm-up run first (caches, thread pools).
  int64_t warmUp = o.repeat > 1 ? 1 : 0;
  for (int64_t run = 0; run < o.repeat + warmUp; ++run) {
    auto runStart = std::chrono::steady_clock::now();
    tokens = 0;
    forwardResults.clear();
    outputs.clear();
    std::map<std::string, std::vector<HostTensor>> batchResults;
    maps.tensors.clear();
    for (size_t begin = 0; begin < total; begin += batch) {
      size_t end = std::min(total, begin + batch);
      llvm::ArrayRef<Sequence> src =
          llvm::ArrayRef<Sequence>(*sources).slice(begin, end - begin);
      if (o.mode == Mode::Forward) {
        llvm::ArrayRef<Sequence> tgt =
            llvm::ArrayRef<Sequence>(targets).slice(begin, end - begin);
        // The attention maps of the chosen sequences in this batch.
        maps.sequences.clear();
        maps.names.clear();
        for (int64_t s : attentionSeqs)
          if (size_t(s) >= begin && size_t(s) < end) {
            maps.sequences.push_back(s - int64_t(begin));
            maps.names.push_back(s);
          }
        auto results =
            o.incremental
                ? (*model)->forwardIncremental(src, tgt)
                : (*model)->forward(src, tgt,
                                    maps.sequences.empty() ? nullptr : &maps);
        if (!results)
          return fail(llvm::toString(results.takeError()));
        tokens += (*results)["log_probs"].shape[0];
        for (auto &[name, part] : *results)
          batchResults[name].push_back(std::move(part));
      } else {
        auto decoded = o.mode == Mode::Greedy
                           ? (*model)->greedy(src, maxLen)
                           : (*model)->beam(src, o.beamSize, o.alpha, maxLen);
        if (!decoded)
          return fail(llvm::toString(decoded.takeError()));
        for (Sequence &s : *decoded) {
          tokens += int64_t(s.size());
          outputs.push_back(std::move(s));
        }
      }
      if (progress)
        llvm::errs() << "gnn-run: " << end << "/" << total << " sequences\n";
    }
    // Batches' rows follow each other.
    for (auto &[name, parts] : batchResults)
      forwardResults[name] = HostTensor::concatRows(parts);
    if (run >= warmUp)
      runSeconds.push_back(std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - runStart)
                               .count());
  }

  if (attention)
    if (auto e = writeSafeTensors(o.attentionOut, maps.tensors))
      return fail(llvm::toString(std::move(e)));
  if (o.mode == Mode::Forward) {
    if (!o.out.empty()) {
      if (auto e = writeSafeTensors(o.out, forwardResults))
        return fail(llvm::toString(std::move(e)));
    } else {
      // The teacher-forced predictions, one line per sequence.
      int64_t row = 0, vocabSize = config->tgtVocab;
      const float *lp = forwardResults["log_probs"].as<float>();
      for (const Sequence &t : targets) {
        Sequence best;
        for (size_t i = 0; i < t.size(); ++i, ++row) {
          const float *r = lp + row * vocabSize;
          best.push_back(std::max_element(r, r + vocabSize) - r);
        }
        llvm::outs() << tokenizer.print(best) << "\n";
      }
    }
  } else {
    std::string text;
    for (const Sequence &s : outputs)
      text += tokenizer.print(s) + "\n";
    if (o.out.empty()) {
      llvm::outs() << text;
    } else {
      if (llvm::Error e = writeFileAtomically(o.out, text))
        return fail(llvm::toString(std::move(e)));
    }
  }
  double compileSeconds =
      std::chrono::duration<double>(compiled - start).count();
  const CompileInfo &compile = (*model)->getCompileInfo();
  std::vector<double> sorted = runSeconds;
  std::sort(sorted.begin(), sorted.end());
  double seconds = sorted[sorted.size() / 2];
  if (!o.statsJson.empty()) {
    const char *modes[] = {"forward", "greedy", "beam"};
    llvm::json::Object stats{
        {"mode", modes[int(o.mode)]},
        {"fused", o.fuse},
        {"sequences", int64_t(total)},
        {"tokens", tokens},
        {"seconds", seconds},
        {"tokens_per_second", seconds > 0 ? tokens / seconds : 0.0},
        {"runs", o.repeat},
        {"min_seconds", sorted.front()},
        {"max_seconds", sorted.back()},
        {"compile_seconds", compileSeconds},
        {"compile_cache_hit", compile.cacheHit},
        {"threads", o.threads}};
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(stats))) << "\n";
    if (llvm::Error e = writeFileAtomically(o.statsJson, os.str()))
      return fail(llvm::toString(std::move(e)));
  }
  if (o.quiet)
    return 0;
  llvm::errs() << "gnn-run: " << total << " sequences, " << tokens
               << (o.mode == Mode::Forward ? " target" : " output")
               << " tokens in " << llvm::format("%.4f", seconds) << " s ("
               << llvm::format("%.0f", seconds > 0 ? tokens / seconds : 0.0)
               << " tokens/s; compiled in "
               << llvm::format("%.2f", compileSeconds) << " s ("
               << (compile.cacheHit ? "compile cache hit" : "compiled")
               << ", code " << llvm::format("%.2f", compile.seconds) << " s), "
               << (o.fuse ? "fused" : "unfused");
  if (o.repeat > 1)
    llvm::errs() << "; median of " << o.repeat << " runs, min "
                 << llvm::format("%.4f", sorted.front()) << " s, max "
                 << llvm::format("%.4f", sorted.back()) << " s";
  llvm::errs() << ")\n";
  return 0;
}

} // namespace gnnrun
