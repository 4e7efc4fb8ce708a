//===- ModelConfig.cpp - Transformer model configs and weights ------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/ModelConfig.h"
#include "GNN/Support/InputFile.h"
#include "GNN/Support/StrictJson.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>

using namespace mlir::gnn;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace {
Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The positional tables of DGL's example hold 5000 positions.
constexpr int64_t kMaxPositions = 5000;

std::string resolve(StringRef directory, StringRef path) {
  if (path.empty() || llvm::sys::path::is_absolute(path))
    return path.str();
  llvm::SmallString<256> full(directory);
  llvm::sys::path::append(full, path);
  return std::string(full);
}
} // namespace

Expected<ModelConfig> mlir::gnn::parseModelConfig(StringRef json,
                                                  StringRef directory) {
  Expected<llvm::json::Value> parsed = parseStrictJson(json);
  if (!parsed)
    return fail("config is not valid JSON: " +
                llvm::toString(parsed.takeError()));
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return fail("config is not a JSON object");

  static const char *known[] = {"architecture",    "layers",    "d_model",
                                "heads",           "d_ff",      "src_vocab",
                                "tgt_vocab",       "max_len",   "score_clamp",
                                "cross_attention", "max_depth", "act_threshold",
                                "weights",         "vocab"};
  for (const auto &entry : *object)
    if (llvm::none_of(known, [&](const char *k) { return entry.first == k; }))
      return fail("config has an unknown key '" + entry.first.str() + "'");

  ModelConfig config;
  std::optional<StringRef> architecture = object->getString("architecture");
  if (!architecture)
    return fail("config needs \"architecture\": \"transformer\" or "
                "\"universal_transformer\"");
  if (*architecture == "transformer")
    config.architecture = Architecture::Transformer;
  else if (*architecture == "universal_transformer")
    config.architecture = Architecture::UniversalTransformer;
  else
    return fail("unknown architecture '" + *architecture +
                "'; expected transformer or universal_transformer");
  bool universal = config.architecture == Architecture::UniversalTransformer;

  auto integer = [&](StringRef key, int64_t &out, bool required, int64_t lo,
                     int64_t hi) -> Error {
    const llvm::json::Value *value = object->get(key);
    if (!value || value->kind() == llvm::json::Value::Null) {
      if (required)
        return fail("config needs \"" + key + "\"");
      return Error::success();
    }
    std::optional<int64_t> n = value->getAsInteger();
    if (!n)
      return fail("config \"" + key + "\" must be an integer");
    if (*n < lo || *n > hi)
      return fail("config \"" + key + "\" is " + llvm::Twine(*n) +
                  ", outside [" + llvm::Twine(lo) + ", " + llvm::Twine(hi) +
                  "]");
    out = *n;
    return Error::success();
  };
  const int64_t big = int64_t(1) << 24;
  if (Error e = integer("layers", config.layers, !universal, 1, 1024))
    return std::move(e);
  if (universal && !object->get("layers"))
    config.layers = 1;
  for (auto [key, field] : {std::make_pair("d_model", &config.dModel),
                            std::make_pair("heads", &config.heads),
                            std::make_pair("d_ff", &config.dFF),
                            std::make_pair("src_vocab", &config.srcVocab),
                            std::make_pair("tgt_vocab", &config.tgtVocab)})
    if (Error e = integer(key, *field, true, 1, big))
      return std::move(e);
  if (Error e = integer("max_len", config.maxLen, false, 1, kMaxPositions))
    return std::move(e);
  if (Error e = integer("max_depth", config.maxDepth, false, 1, 1024))
    return std::move(e);
  if (config.dModel % config.heads != 0)
    return fail("config \"d_model\" (" + llvm::Twine(config.dModel) +
                ") must be a multiple of \"heads\" (" +
                llvm::Twine(config.heads) + ")");
  if (config.dModel % 2 != 0)
    return fail("config \"d_model\" must be even (sine/cosine positional "
                "encoding)");
  // <sos>, <eos> and <pad> are ids 0..2.
  if (config.tgtVocab < 3)
    return fail("config \"tgt_vocab\" must be at least 3 (<sos>, <eos>, "
                "<pad>)");

  if (const llvm::json::Value *clamp = object->get("score_clamp")) {
    if (clamp->kind() == llvm::json::Value::Null) {
      config.scoreClamp.reset();
    } else {
      std::optional<double> c = clamp->getAsNumber();
      if (!c || !std::isfinite(*c) || *c <= 0)
        return fail("config \"score_clamp\" must be a positive number or "
                    "null");
      config.scoreClamp = *c;
    }
  }
  if (const llvm::json::Value *threshold = object->get("act_threshold")) {
    std::optional<double> t = threshold->getAsNumber();
    if (!t || !(*t > 0) || !(*t <= 1))
      return fail("config \"act_threshold\" must be a number in (0, 1]");
    config.actThreshold = *t;
  }

  config.crossAttention =
      universal ? CrossAttention::Shared : CrossAttention::DGL;
  if (const llvm::json::Value *mode = object->get("cross_attention")) {
    std::optional<StringRef> name = mode->getAsString();
    if (name && *name == "dgl")
      config.crossAttention = CrossAttention::DGL;
    else if (name && *name == "shared")
      config.crossAttention = CrossAttention::Shared;
    else if (name && *name == "standard")
      config.crossAttention = CrossAttention::Standard;
    else
      return fail("config \"cross_attention\" must be \"dgl\", \"shared\" or "
                  "\"standard\"");
    if (universal && config.crossAttention != CrossAttention::Shared)
      return fail("a universal_transformer's cross-attention is \"shared\"");
  }

  for (auto [key, field] : {std::make_pair("weights", &config.weightsPath),
                            std::make_pair("vocab", &config.vocabPath)}) {
    const llvm::json::Value *value = object->get(key);
    if (!value)
      continue;
    std::optional<StringRef> path = value->getAsString();
    if (!path || path->empty())
      return fail("config \"" + llvm::Twine(key) +
                  "\" must be a non-empty path");
    *field = resolve(directory, *path);
  }
  return config;
}

Expected<ModelConfig> mlir::gnn::readModelConfig(StringRef path) {
  auto buffer = readInputFile(path, /*isText=*/true);
  if (!buffer)
    return fail(path + ": cannot read: " + llvm::toString(buffer.takeError()));
  auto config = parseModelConfig((*buffer)->getBuffer(),
                                 llvm::sys::path::parent_path(path));
  if (!config)
    return fail(path + ": " + llvm::toString(config.takeError()));
  return config;
}

Expected<std::vector<std::string>> mlir::gnn::readVocab(StringRef path) {
  auto buffer = readInputFile(path, /*isText=*/true);
  if (!buffer)
    return fail(path + ": cannot read: " + llvm::toString(buffer.takeError()));
  std::vector<std::string> tokens = {"<sos>", "<eos>", "<pad>"};
  llvm::StringSet<> seen;
  for (const std::string &t : tokens)
    seen.insert(t);
  llvm::SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  if (!lines.empty() && lines.back().empty())
    lines.pop_back(); // the final newline
  for (auto [i, rawLine] : llvm::enumerate(lines)) {
    StringRef line = rawLine.rtrim('\r');
    auto bad = [&](const llvm::Twine &why) {
      return fail(path + ":" + llvm::Twine(i + 1) + ": " + why);
    };
    if (line.empty())
      return bad("empty token");
    if (line.find_first_of(" \t\v\f") != StringRef::npos)
      return bad("token '" + line + "' contains whitespace");
    if (!seen.insert(line).second)
      return bad("token '" + line + "' appears twice");
    tokens.push_back(line.str());
  }
  return tokens;
}

std::vector<WeightSpec> mlir::gnn::expectedWeights(const ModelConfig &c) {
  std::vector<WeightSpec> specs;
  int64_t d = c.dModel, ff = c.dFF;
  auto add = [&](std::string name, std::vector<int64_t> shape,
                 bool required = true) {
    specs.push_back({std::move(name), std::move(shape), required, 0, ""});
  };
  auto norm = [&](const std::string &prefix) {
    add(prefix + ".weight", {d});
    add(prefix + ".bias", {d});
  };
  auto attention = [&](const std::string &prefix, bool required) {
    for (int i = 0; i < 4; ++i) {
      std::string l = prefix + ".linears." + std::to_string(i);
      add(l + ".weight", {d, d}, required);
      add(l + ".bias", {d}, /*required=*/false);
    }
  };
  auto layer = [&](const std::string &prefix, bool decoder) {
    attention(prefix + ".self_attn", true);
    if (decoder)
      attention(prefix + ".src_attn",
                c.crossAttention != CrossAttention::Shared);
    add(prefix + ".feed_forward.w_1.weight", {ff, d});
    add(prefix + ".feed_forward.w_1.bias", {ff});
    add(prefix + ".feed_forward.w_2.weight", {d, ff});
    add(prefix + ".feed_forward.w_2.bias", {d});
    for (int s = 0; s < (decoder ? 3 : 2); ++s)
      norm(prefix + ".sublayer." + std::to_string(s) + ".norm");
  };
  if (c.architecture == Architecture::Transformer) {
    for (int64_t i = 0; i < c.layers; ++i) {
      layer("encoder.layers." + std::to_string(i), false);
      layer("decoder.layers." + std::to_string(i), true);
    }
  } else {
    layer("encoder.layer", false);
    layer("decoder.layer", true);
    for (const char *halt : {"halt_enc", "halt_dec"}) {
      add(std::string(halt) + ".linear.weight", {1, d});
      add(std::string(halt) + ".linear.bias", {1});
      norm(std::string(halt) + ".norm");
    }
    specs.push_back(
        {"time_enc.pe", {1, -1, d}, false, c.maxDepth, "max_depth"});
  }
  norm("encoder.norm");
  norm("decoder.norm");
  add("src_embed.lut.weight", {c.srcVocab, d});
  add("tgt_embed.lut.weight", {c.tgtVocab, d});
  add("generator.proj.weight", {c.tgtVocab, d});
  add("generator.proj.bias", {c.tgtVocab});
  specs.push_back({"pos_enc.pe", {1, -1, d}, false, c.maxLen, "max_len"});
  return specs;
}

Error mlir::gnn::checkWeights(const ModelConfig &config,
                              const TensorMap &weights) {
  auto shapeText = [](const std::vector<int64_t> &shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i)
      text += (i ? ", " : "") +
              (shape[i] < 0 ? std::string("N") : std::to_string(shape[i]));
    return text + "]";
  };
  for (const WeightSpec &spec : expectedWeights(config)) {
    auto it = weights.find(spec.name);
    if (it == weights.end()) {
      if (spec.required)
        return fail("weights: missing tensor '" + spec.name + "' " +
                    shapeText(spec.shape));
      continue;
    }
    const HostTensor &t = it->second;
    if (t.dtype != DType::F32)
      return fail("weights: tensor '" + spec.name + "' has dtype " +
                  dtypeName(t.dtype) + ", expected F32");
    bool fits = t.shape.size() == spec.shape.size();
    for (size_t i = 0; fits && i < t.shape.size(); ++i)
      fits = spec.shape[i] < 0 ? t.shape[i] >= spec.minRows
                               : t.shape[i] == spec.shape[i];
    if (!fits)
      return fail("weights: tensor '" + spec.name + "' has shape " +
                  shapeText(t.shape) + ", expected " + shapeText(spec.shape) +
                  (llvm::is_contained(spec.shape, -1)
                       ? " with N >= " + spec.minRowsOf + " (" +
                             std::to_string(spec.minRows) + ")"
                       : std::string()));
  }
  // Attention biases come as a set: all four projections or none.
  for (const WeightSpec &spec : expectedWeights(config)) {
    StringRef name(spec.name);
    if (!name.ends_with(".linears.0.bias"))
      continue;
    StringRef prefix = name.drop_back(strlen("0.bias"));
    unsigned present = 0;
    for (int i = 0; i < 4; ++i)
      present += weights.count((prefix + std::to_string(i) + ".bias").str());
    if (present != 0 && present != 4)
      return fail("weights: '" + prefix +
                  "{0,1,2,3}.bias' must be all "
                  "present or all absent");
  }
  return Error::success();
}

Expected<Tokenizer> mlir::gnn::readTokenizer(const ModelConfig &config,
                                             bool ids) {
  std::vector<std::string> vocab;
  if (!ids) {
    if (config.vocabPath.empty())
      return fail("the config names no vocab; pass --ids to read ids");
    auto read = readVocab(config.vocabPath);
    if (!read)
      return read.takeError();
    vocab = std::move(*read);
  }
  return Tokenizer(ids, std::move(vocab));
}
