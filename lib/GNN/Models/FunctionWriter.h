//===- FunctionWriter.h - writes model functions as gnn IR text -*- C++ -*-===//
//
// Part of gnnc. The model builders write their modules as text, which the
// caller parses: the text is what `gnn-run --emit-ir` shows, and writing it
// reads like the model's math. Private to lib/GNN/Models.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_FUNCTIONWRITER_H
#define GNN_MODELS_FUNCTIONWRITER_H

#include "GNN/IR/GNNDialect.h"
#include "GNN/Models/ModelConfig.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlir::gnn::models {

/// A float literal the MLIR parser reads back exactly.
inline std::string floatLiteral(double v) {
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

  /// An input the function updates in place and returns (a decoder cache
  /// whose storage the runner hands over): marked
  /// `bufferization.writable = true`, so it is not copied first.
  std::string updatedInput(const std::string &name, const std::string &type) {
    std::string ssa = input(name, type);
    args.back().writable = true;
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

  /// An operand of an elementwise node function: its value, tensor type
  /// and element type.
  struct Operand {
    std::string value, type, element = "f32";
  };

  /// An elementwise node function (gnn.apply_nodes): `fn` writes the body
  /// from the names of the elements and returns the yielded value.
  std::string
  apply(llvm::ArrayRef<Operand> in, const std::string &resultType,
        const std::function<std::string(llvm::ArrayRef<std::string>)> &fn,
        const std::string &resultElement = "f32") {
    std::string r = fresh();
    std::vector<std::string> names;
    for (size_t i = 0; i < in.size(); ++i)
      names.push_back(fresh());
    os << "  " << r << " = gnn.apply_nodes(";
    for (auto [i, o] : llvm::enumerate(in))
      os << (i ? ", " : "") << o.value;
    os << ") {\n  ^bb0(";
    for (auto [i, o] : llvm::enumerate(in))
      os << (i ? ", " : "") << names[i] << ": " << o.element;
    os << "):\n";
    std::string y = fn(names);
    os << "    gnn.yield " << y << " : " << resultElement << "\n  } : (";
    for (auto [i, o] : llvm::enumerate(in))
      os << (i ? ", " : "") << o.type;
    os << ") -> " << resultType << "\n";
    return r;
  }

  /// An elementwise node function of two f32 features.
  std::string
  nodes2(const std::string &a, const std::string &b, const std::string &type,
         const std::string &type2, const std::string &resultType,
         const std::function<std::string(std::string, std::string)> &fn) {
    return apply({{a, type}, {b, type2}}, resultType,
                 [&](llvm::ArrayRef<std::string> e) { return fn(e[0], e[1]); });
  }

  std::string scalarOp(const std::string &op, const std::string &a,
                       const std::string &b, const std::string &type = "f32") {
    std::string r = fresh();
    os << "    " << r << " = " << op << " " << a << ", " << b << " : " << type
       << "\n";
    return r;
  }

  std::string constant(double v) { return constantOf(floatLiteral(v), "f32"); }

  /// A constant written as `text : type`.
  std::string constantOf(const std::string &text, const std::string &type) {
    std::string r = fresh();
    os << "    " << r << " = arith.constant " << text << " : " << type << "\n";
    return r;
  }

  /// gnn.gather_rows source[ids].
  std::string gather(const std::string &source, const std::string &type,
                     const std::string &ids,
                     const std::string &resultType = "") {
    std::string r = fresh();
    os << "  " << r << " = gnn.gather_rows " << source << "[" << ids << "] : ("
       << type << ", " << kIds << ") -> "
       << (resultType.empty() ? type : resultType) << "\n";
    return r;
  }

  /// gnn.scatter_rows source into dest[ids].
  std::string scatter(const std::string &source, const std::string &dest,
                      const std::string &ids, const std::string &type) {
    std::string r = fresh();
    os << "  " << r << " = gnn.scatter_rows " << source << " into " << dest
       << "[" << ids << "] : (" << type << ", " << type << ", " << kIds
       << ") -> " << type << "\n";
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

  /// lut[token] * sqrt(d).
  std::string embedTokens(const std::string &lutName, int64_t vocab,
                          const std::string &tokens) {
    std::string lut = weight(lutName, {vocab, d});
    std::string e = gather(lut,
                           "tensor<" + std::to_string(vocab) + "x" +
                               std::to_string(d) + "xf32>",
                           tokens, x());
    return apply({{e, x()}}, x(), [&](llvm::ArrayRef<std::string> a) {
      return scalarOp("arith.mulf", a[0], constant(std::sqrt(double(d))));
    });
  }

  /// lut[token] * sqrt(d) + pe[position].
  std::string embed(const std::string &lutName, int64_t vocab,
                    const std::string &tokens, const std::string &positions,
                    const std::string &pe) {
    std::string lut = weight(lutName, {vocab, d});
    std::string e = gather(lut,
                           "tensor<" + std::to_string(vocab) + "x" +
                               std::to_string(d) + "xf32>",
                           tokens, x());
    std::string p = gather(pe, x(), positions);
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
      out << (i ? ",\n    " : "") << a.ssa << ": " << a.type << " {"
          << (a.writable ? "bufferization.writable = true, " : "")
          << mlir::gnn::GNNDialect::kNameAttrName << " = \"" << a.name << "\"}";
    out << ")\n    -> (";
    // A result named like a writable input is its update, left in the
    // caller's buffer (gnn-return-updated-arguments).
    for (auto [i, r] : llvm::enumerate(results)) {
      bool update = llvm::any_of(
          args, [&](const Arg &a) { return a.writable && a.name == r.second; });
      out << (i ? ", " : "") << typeOf(r.first) << " {"
          << (update ? (mlir::gnn::GNNDialect::kUpdatesAttrName + " = \"" +
                        r.second + "\", ")
                           .str()
                     : "")
          << mlir::gnn::GNNDialect::kNameAttrName << " = \"" << r.second
          << "\"}";
    }
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
    bool writable = false;
  };
  llvm::function_ref<bool(llvm::StringRef)> hasWeight;
  std::string body;
  llvm::raw_string_ostream os;
  std::vector<Arg> args;
  std::map<std::string, std::string> weights, types;
  int next = 0;
};

/// Writes one function of a model module.
using FunctionText = void (*)(llvm::raw_ostream &, const ModelConfig &,
                              llvm::function_ref<bool(llvm::StringRef)>);

/// A model module: a comment line, then the functions.
inline std::string
moduleText(const std::string &comment, const ModelConfig &config,
           llvm::function_ref<bool(llvm::StringRef)> hasWeight,
           std::initializer_list<FunctionText> functions) {
  std::string text;
  llvm::raw_string_ostream out(text);
  out << "// " << comment << " in gnn IR.\n";
  for (FunctionText function : functions)
    function(out, config, hasWeight);
  return text;
}

} // namespace mlir::gnn::models

#endif // GNN_MODELS_FUNCTIONWRITER_H
