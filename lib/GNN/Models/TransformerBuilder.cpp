//===- TransformerBuilder.cpp - the Transformer as gnn IR -----------------===//
//
// Part of gnnc. The module is written as text and parsed by the caller: the
// text is what `gnn-run --emit-ir` shows, and writing it reads like the
// model's math.
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/TransformerBuilder.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// A float literal the MLIR parser reads back exactly.
std::string floatLiteral(double v) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", v);
  std::string s(text);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

/// Writes one function: the body first, then the signature, since weight
/// arguments are added as the body uses them.
class FunctionWriter {
public:
  FunctionWriter(const ModelConfig &config,
                 llvm::function_ref<bool(llvm::StringRef)> hasWeight)
      : c(config), hasWeight(hasWeight), os(body) {
    d = c.dModel;
    h = c.heads;
    dk = c.dk();
  }

  // Types.
  std::string rows(int64_t width) const {
    return "tensor<?x" + std::to_string(width) + "xf32>";
  }
  std::string x() const { return rows(d); }
  std::string heads() const {
    return "tensor<?x" + std::to_string(h) + "x" + std::to_string(dk) + "xf32>";
  }
  std::string heads1() const {
    return "tensor<?x" + std::to_string(h) + "x1xf32>";
  }
  static constexpr const char *kIds = "tensor<?xindex>";
  static constexpr const char *kGraph = "!gnn.graph<general>";

  /// A run-time argument.
  std::string input(const std::string &name, const std::string &type) {
    std::string ssa = "%" + sanitize(name);
    args.push_back({ssa, type, name});
    return ssa;
  }

  /// A weight argument, added on first use.
  std::string weight(const std::string &name, std::vector<int64_t> shape) {
    auto it = weights.find(name);
    if (it != weights.end())
      return it->second;
    std::string type = "tensor<";
    for (int64_t s : shape)
      type += std::to_string(s) + "x";
    type += "f32>";
    std::string ssa = "%w" + std::to_string(weights.size());
    weights[name] = ssa;
    args.push_back({ssa, type, name});
    return ssa;
  }

  std::string fresh() { return "%" + std::to_string(next++); }

  std::string linear(const std::string &in, const std::string &prefix,
                     int64_t inWidth, int64_t outWidth) {
    std::string w = weight(prefix + ".weight", {outWidth, inWidth});
    std::string r = fresh();
    if (hasWeight(prefix + ".bias")) {
      std::string b = weight(prefix + ".bias", {outWidth});
      os << "  " << r << " = gnn.linear " << in << ", " << w << ", " << b
         << " : (" << rows(inWidth) << ", tensor<" << outWidth << "x" << inWidth
         << "xf32>, tensor<" << outWidth << "xf32>) -> " << rows(outWidth)
         << "\n";
    } else {
      os << "  " << r << " = gnn.linear " << in << ", " << w << " : ("
         << rows(inWidth) << ", tensor<" << outWidth << "x" << inWidth
         << "xf32>) -> " << rows(outWidth) << "\n";
    }
    return r;
  }

  std::string layerNorm(const std::string &in, const std::string &prefix) {
    std::string w = weight(prefix + ".weight", {d});
    std::string b = weight(prefix + ".bias", {d});
    std::string r = fresh();
    os << "  " << r << " = gnn.layer_norm " << in << ", " << w << ", " << b
       << " eps(1.0e-05) : (" << x() << ", tensor<" << d << "xf32>, tensor<"
       << d << "xf32>) -> " << x() << "\n";
    return r;
  }

  /// An elementwise node function of two [?, width] features.
  std::string
  nodes2(const std::string &a, const std::string &b, const std::string &type,
         const std::string &type2, const std::string &resultType,
         const std::function<std::string(std::string, std::string)> &fn) {
    std::string r = fresh(), p = fresh(), q = fresh();
    os << "  " << r << " = gnn.apply_nodes(" << a << ", " << b << ") {\n"
       << "  ^bb0(" << p << ": f32, " << q << ": f32):\n";
    std::string y = fn(p, q);
    os << "    gnn.yield " << y << " : f32\n"
       << "  } : (" << type << ", " << type2 << ") -> " << resultType << "\n";
    return r;
  }

  std::string scalarOp(const std::string &op, const std::string &a,
                       const std::string &b) {
    std::string r = fresh();
    os << "    " << r << " = " << op << " " << a << ", " << b << " : f32\n";
    return r;
  }

  std::string constant(double v) {
    std::string r = fresh();
    os << "    " << r << " = arith.constant " << floatLiteral(v) << " : f32\n";
    return r;
  }

  std::string residual(const std::string &a, const std::string &b) {
    return nodes2(a, b, x(), x(), x(), [&](std::string p, std::string q) {
      return scalarOp("arith.addf", p, q);
    });
  }

  std::string feedForward(const std::string &in, const std::string &prefix) {
    std::string hidden = linear(in, prefix + ".w_1", d, c.dFF);
    std::string r = fresh(), p = fresh();
    os << "  " << r << " = gnn.apply_nodes(" << hidden << ") {\n"
       << "  ^bb0(" << p << ": f32):\n";
    std::string zero = constant(0.0);
    std::string y = scalarOp("arith.maximumf", p, zero);
    os << "    gnn.yield " << y << " : f32\n"
       << "  } : (" << rows(c.dFF) << ") -> " << rows(c.dFF) << "\n";
    return linear(r, prefix + ".w_2", c.dFF, d);
  }

  /// lut[token] * sqrt(d) + pe[position].
  std::string embed(const std::string &lutName, int64_t vocab,
                    const std::string &tokens, const std::string &positions,
                    const std::string &pe) {
    std::string lut = weight(lutName, {vocab, d});
    std::string e = fresh(), p = fresh();
    os << "  " << e << " = gnn.gather_rows " << lut << "[" << tokens
       << "] : (tensor<" << vocab << "x" << d << "xf32>, " << kIds << ") -> "
       << x() << "\n";
    os << "  " << p << " = gnn.gather_rows " << pe << "[" << positions
       << "] : (" << x() << ", " << kIds << ") -> " << x() << "\n";
    return nodes2(e, p, x(), x(), x(), [&](std::string a, std::string b) {
      std::string s = constant(std::sqrt(double(d)));
      return scalarOp("arith.addf", scalarOp("arith.mulf", a, s), b);
    });
  }

  /// [?, d] viewed as [?, h, dk] (head-major).
  std::string splitHeads(const std::string &in) {
    std::string n = fresh(), r = fresh();
    os << "  " << n << " = tensor.dim " << in << ", %c0 : " << x() << "\n";
    os << "  " << r << " = tensor.expand_shape " << in
       << " [[0], [1, 2]] output_shape [" << n << ", " << h << ", " << dk
       << "] : " << x() << " into " << heads() << "\n";
    return r;
  }

  std::string mergeHeads(const std::string &in) {
    std::string r = fresh();
    os << "  " << r << " = tensor.collapse_shape " << in
       << " [[0], [1, 2]] : " << heads() << " into " << x() << "\n";
    return r;
  }

  /// Attention of queries q (destinations) over keys/values k, v (sources)
  /// along `graph`, written as DGL's propagate_attention.
  std::string attention(const std::string &graph, const std::string &q,
                        const std::string &k, const std::string &v) {
    double scale = 1.0 / std::sqrt(double(dk));
    std::string e = fresh();
    std::string scoreTypes = "(" + std::string(kGraph) + ", " + heads() + ", " +
                             heads() + ") -> " + heads1();
    if (c.scoreClamp) {
      os << "  " << e << " = gnn.apply_edges " << graph << ", u_dot_v(" << k
         << ", " << q << ") then [scale(" << floatLiteral(scale) << "), clamp("
         << floatLiteral(-*c.scoreClamp) << ", " << floatLiteral(*c.scoreClamp)
         << "), exp] : " << scoreTypes << "\n";
    } else {
      // Exact softmax: subtract the destination's maximum score.
      std::string s = fresh(), m = fresh(), p = fresh(), r = fresh();
      os << "  " << s << " = gnn.apply_edges " << graph << ", u_dot_v(" << k
         << ", " << q << ") then [scale(" << floatLiteral(scale)
         << ")] : " << scoreTypes << "\n";
      os << "  " << m << " = gnn.reduce " << graph << ", max(" << s << ") : ("
         << kGraph << ", " << heads1() << ") -> " << heads1() << "\n";
      os << "  " << e << " = gnn.apply_edges " << graph << ", (e " << s
         << ", v " << m << ") {\n"
         << "  ^bb0(" << p << ": f32, " << r << ": f32):\n";
      std::string diff = scalarOp("arith.subf", p, r);
      std::string ex = fresh();
      os << "    " << ex << " = math.exp " << diff << " : f32\n"
         << "    gnn.yield " << ex << " : f32\n"
         << "  } : (" << kGraph << ", " << heads1() << ", " << heads1()
         << ") -> " << heads1() << "\n";
    }
    std::string wv = fresh(), z = fresh();
    os << "  " << wv << ", " << z << " = gnn.send_and_recv " << graph
       << ", [u_mul_e(" << v << ", " << e << ") -> sum, copy_e(" << e
       << ") -> sum] : (" << kGraph << ", " << heads() << ", " << heads1()
       << ", " << heads1() << ") -> (" << heads() << ", " << heads1() << ")\n";
    return nodes2(wv, z, heads(), heads1(), heads(),
                  [&](std::string a, std::string b) {
                    return scalarOp("arith.divf", a, b);
                  });
  }

  /// Writes `func.func @name(args) -> results { body }` to `out`.
  void finish(llvm::raw_ostream &out, llvm::StringRef name,
              llvm::ArrayRef<std::pair<std::string, std::string>> results) {
    out << "func.func @" << name << "(";
    for (auto [i, a] : llvm::enumerate(args))
      out << (i ? ",\n    " : "") << a.ssa << ": " << a.type
          << " {gnn.name = \"" << a.name << "\"}";
    out << ")\n    -> (";
    for (auto [i, r] : llvm::enumerate(results))
      out << (i ? ", " : "") << typeOf(r.first) << " {gnn.name = \"" << r.second
          << "\"}";
    out << ") {\n  %c0 = arith.constant 0 : index\n" << body << "  return ";
    for (auto [i, r] : llvm::enumerate(results))
      out << (i ? ", " : "") << r.first;
    out << " : ";
    for (auto [i, r] : llvm::enumerate(results))
      out << (i ? ", " : "") << typeOf(r.first);
    out << "\n}\n\n";
  }

  /// Appends lines to the body as they are.
  void raw(const std::string &text) { os << text; }

  /// Records the type of a value the body returns.
  void setType(const std::string &ssa, const std::string &type) {
    types[ssa] = type;
  }

  const ModelConfig &c;
  int64_t d, h, dk;

private:
  static std::string sanitize(const std::string &name) {
    std::string s;
    for (char ch : name)
      s += llvm::isAlnum(ch) ? ch : '_';
    return s;
  }
  std::string typeOf(const std::string &ssa) const {
    auto it = types.find(ssa);
    return it == types.end() ? std::string("?") : it->second;
  }

  struct Arg {
    std::string ssa, type, name;
  };
  llvm::function_ref<bool(llvm::StringRef)> hasWeight;
  std::string body;
  llvm::raw_string_ostream os;
  std::vector<Arg> args;
  std::map<std::string, std::string> weights, types;
  int next = 0;
};

std::string layerName(const char *stack, int64_t i) {
  return std::string(stack) + ".layers." + std::to_string(i);
}

/// Where cross-attention of decoder layer `L` takes q/k/v and output.
std::pair<std::string, std::string> crossModules(const ModelConfig &c,
                                                 const std::string &L) {
  switch (c.crossAttention) {
  case CrossAttention::DGL:
    return {L + ".src_attn", L + ".self_attn"};
  case CrossAttention::Shared:
    return {L + ".self_attn", L + ".self_attn"};
  case CrossAttention::Standard:
    return {L + ".src_attn", L + ".src_attn"};
  }
  return {};
}

void writeEncoder(llvm::raw_ostream &out, const ModelConfig &c,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionWriter f(c, hasWeight);
  std::string ee = f.input(model::kEE, FunctionWriter::kGraph);
  std::string tokens = f.input(model::kSrcTokens, FunctionWriter::kIds);
  std::string positions = f.input(model::kSrcPositions, FunctionWriter::kIds);
  std::string pe = f.input(model::kPE, f.x());
  std::string x =
      f.embed("src_embed.lut.weight", c.srcVocab, tokens, positions, pe);
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string L = layerName("encoder", i);
    std::string n = f.layerNorm(x, L + ".sublayer.0.norm");
    std::string A = L + ".self_attn.linears.";
    std::string q = f.splitHeads(f.linear(n, A + "0", f.d, f.d));
    std::string k = f.splitHeads(f.linear(n, A + "1", f.d, f.d));
    std::string v = f.splitHeads(f.linear(n, A + "2", f.d, f.d));
    std::string a = f.mergeHeads(f.attention(ee, q, k, v));
    x = f.residual(x, f.linear(a, A + "3", f.d, f.d));
    x = f.residual(x, f.feedForward(f.layerNorm(x, L + ".sublayer.1.norm"),
                                    L + ".feed_forward"));
  }
  x = f.layerNorm(x, "encoder.norm");
  f.setType(x, f.x());
  f.finish(out, model::kEncode, {{x, model::kMemory}});
}

void writeCrossKV(llvm::raw_ostream &out, const ModelConfig &c,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionWriter f(c, hasWeight);
  std::string mem = f.input(model::kMemory, f.x());
  std::vector<std::pair<std::string, std::string>> results;
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string A = crossModules(c, layerName("decoder", i)).first;
    std::string k = f.splitHeads(f.linear(mem, A + ".linears.1", f.d, f.d));
    std::string v = f.splitHeads(f.linear(mem, A + ".linears.2", f.d, f.d));
    f.setType(k, f.heads());
    f.setType(v, f.heads());
    results.push_back({k, model::crossK(i)});
    results.push_back({v, model::crossV(i)});
  }
  f.finish(out, model::kCrossKV, results);
}

void writeDecoder(llvm::raw_ostream &out, const ModelConfig &c,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionWriter f(c, hasWeight);
  std::string dd = f.input(model::kDD, FunctionWriter::kGraph);
  std::string ed = f.input(model::kED, FunctionWriter::kGraph);
  std::string tokens = f.input(model::kTgtTokens, FunctionWriter::kIds);
  std::string positions = f.input(model::kTgtPositions, FunctionWriter::kIds);
  std::string slots = f.input(model::kCacheSlots, FunctionWriter::kIds);
  std::string pe = f.input(model::kPE, f.x());
  std::vector<std::string> crossK, crossV, selfK, selfV;
  for (int64_t i = 0; i < c.layers; ++i) {
    crossK.push_back(f.input(model::crossK(i), f.heads()));
    crossV.push_back(f.input(model::crossV(i), f.heads()));
  }
  for (int64_t i = 0; i < c.layers; ++i) {
    selfK.push_back(f.input(model::selfK(i), f.heads()));
    selfV.push_back(f.input(model::selfV(i), f.heads()));
  }
  std::string y =
      f.embed("tgt_embed.lut.weight", c.tgtVocab, tokens, positions, pe);
  std::vector<std::pair<std::string, std::string>> results;
  auto scatter = [&](const std::string &rowsOf, const std::string &cache) {
    std::string r = f.fresh();
    return std::make_pair(
        r, "  " + r + " = gnn.scatter_rows " + rowsOf + " into " + cache + "[" +
               slots + "] : (" + f.heads() + ", " + f.heads() + ", " +
               FunctionWriter::kIds + ") -> " + f.heads() + "\n");
  };
  for (int64_t i = 0; i < c.layers; ++i) {
    bool last = i == c.layers - 1;
    std::string L = layerName("decoder", i);
    std::string S = L + ".self_attn.linears.";
    std::string n = f.layerNorm(y, L + ".sublayer.0.norm");
    std::string q = f.splitHeads(f.linear(n, S + "0", f.d, f.d));
    std::string k = f.splitHeads(f.linear(n, S + "1", f.d, f.d));
    std::string v = f.splitHeads(f.linear(n, S + "2", f.d, f.d));
    auto [kAll, kText] = scatter(k, selfK[i]);
    auto [vAll, vText] = scatter(v, selfV[i]);
    f.raw(kText + vText);
    f.setType(kAll, f.heads());
    f.setType(vAll, f.heads());
    results.push_back({kAll, model::selfK(i)});
    results.push_back({vAll, model::selfV(i)});
    std::string a = f.mergeHeads(f.attention(dd, q, kAll, vAll));
    y = f.residual(y, f.linear(a, S + "3", f.d, f.d));
    if (last)
      y = f.layerNorm(y, "decoder.norm");
    auto [A, O] = crossModules(c, L);
    std::string cq = f.splitHeads(f.linear(
        f.layerNorm(y, L + ".sublayer.1.norm"), A + ".linears.0", f.d, f.d));
    std::string ca = f.mergeHeads(f.attention(ed, cq, crossK[i], crossV[i]));
    y = f.residual(y, f.linear(ca, O + ".linears.3", f.d, f.d));
    y = f.residual(y, f.feedForward(f.layerNorm(y, L + ".sublayer.2.norm"),
                                    L + ".feed_forward"));
    if (last)
      y = f.layerNorm(y, "decoder.norm");
  }
  std::string logits = f.linear(y, "generator.proj", f.d, c.tgtVocab);
  std::string lp = f.fresh();
  f.raw("  " + lp + " = gnn.log_softmax " + logits + " : (" +
        f.rows(c.tgtVocab) + ") -> " + f.rows(c.tgtVocab) + "\n");
  f.setType(lp, f.rows(c.tgtVocab));
  results.insert(results.begin(), {lp, model::kLogProbs});
  f.finish(out, model::kDecode, results);
}
} // namespace

std::string mlir::gnn::buildTransformerIR(
    const ModelConfig &config,
    llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  std::string text;
  llvm::raw_string_ostream out(text);
  out << "// A Transformer (" << config.layers << " layers, d_model "
      << config.dModel << ", " << config.heads << " heads) in gnn IR.\n";
  writeEncoder(out, config, hasWeight);
  writeCrossKV(out, config, hasWeight);
  writeDecoder(out, config, hasWeight);
  return text;
}
