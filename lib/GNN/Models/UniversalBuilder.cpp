//===- UniversalBuilder.cpp - the Universal Transformer as gnn IR ---------===//
//
// Part of gnnc. The ACT loop of semantics.md ("Universal Transformer with
// ACT") as an scf.while over steps. Each step works on the active nodes
// only: their rows are gathered (compacted), the attention graphs are the
// in-edges of the active nodes (gnn.in_subgraph), and results are scattered
// back; halted nodes keep their state and the k/v of their last active step.
// The loop stops when no node is active or after max_depth steps.
//
//===----------------------------------------------------------------------===//

#include "FunctionWriter.h"
#include "GNN/Models/TransformerBuilder.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::models;

namespace {
/// One value the ACT loop carries.
struct Carried {
  std::string init, type;
};

/// The values the ACT loop carries, in order.
enum Slot { kStep, kActive, kX, kS, kR, kSumP, kSteps, kK, kV, kNumSlots };

/// The shared layer applied to the active nodes at one step: from their
/// compacted state `x` (encodings added), the ids of the active nodes and
/// the full k/v, returns the new compacted state; sets k/v to the full k/v
/// with the active rows replaced.
using LayerStep = std::function<std::string(
    FunctionWriter &f, const std::string &x, const std::string &active,
    std::string &k, std::string &v)>;

std::string typeList(const std::vector<Carried> &c) {
  std::string s;
  for (auto [i, v] : llvm::enumerate(c))
    s += (i ? ", " : "") + v.type;
  return s;
}

/// Writes the ACT loop over the nodes of `x0` (embedded tokens) and returns
/// the names of the accumulated state s [N, d] and the step counts
/// (tensor<?xindex>). `positions` are the rows of `pe` to add per node,
/// `timePE` the time table, `halt` the halting unit's weights prefix.
std::pair<std::string, std::string>
actLoop(FunctionWriter &f, const std::string &x0, const std::string &tokens,
        const std::string &positions, const std::string &pe,
        const std::string &timePE, const std::string &halt,
        const LayerStep &layer) {
  const ModelConfig &c = f.c;
  std::string x = f.x(), one = f.rows(1), ids = FunctionWriter::kIds;
  // A constant per node: [N] from the tokens, [N, 1] as its column.
  auto perNode = [&](const std::string &value, const std::string &element) {
    std::string type = "tensor<?x" + element + ">";
    return f.apply(
        {{tokens, ids, "index"}}, type,
        [&](llvm::ArrayRef<std::string>) { return f.constantOf(value, element); },
        element);
  };
  auto column = [&](const std::string &value) {
    std::string flat = perNode(value, "f32"), n = f.fresh(), r = f.fresh();
    f.raw("  " + n + " = tensor.dim " + flat + ", %c0 : tensor<?xf32>\n");
    f.raw("  " + r + " = tensor.expand_shape " + flat +
          " [[0, 1]] output_shape [" + n + ", 1] : tensor<?xf32> into " + one +
          "\n");
    return r;
  };
  // Every node starts active, with s = 0, r = 1, sum_p = 0, step = 0 and no
  // k/v yet (only active nodes' k/v are ever read).
  std::string all = f.fresh(), node = f.fresh();
  f.raw("  " + all + " = gnn.filter_nodes(" + tokens + ") {\n  ^bb0(" + node +
        ": index):\n");
  std::string yes = f.constantOf("1", "i1");
  f.raw("    gnn.yield " + yes + " : i1\n  } : (" + ids + ") -> " + ids + "\n");
  std::string nodePE = f.gather(pe, x, positions);
  std::vector<Carried> init(kNumSlots);
  std::string zero = f.fresh();
  f.raw("  " + zero + " = arith.constant 0 : index\n");
  init[kStep] = {zero, "index"};
  init[kActive] = {all, ids};
  init[kX] = {x0, x};
  std::string zeros = f.apply({{x0, x}}, x, [&](llvm::ArrayRef<std::string>) {
    return f.constant(0.0);
  });
  init[kS] = {zeros, x};
  init[kR] = {column("1.0"), one};
  init[kSumP] = {column("0.0"), one};
  init[kSteps] = {perNode("0", "index"), ids};
  init[kK] = {f.splitHeads(zeros), f.heads()};
  init[kV] = {f.splitHeads(zeros), f.heads()};

  std::string depth = f.fresh(), lastStep = f.fresh();
  f.raw("  " + depth + " = arith.constant " + std::to_string(c.maxDepth) +
        " : index\n");
  f.raw("  " + lastStep + " = arith.constant " +
        std::to_string(c.maxDepth - 1) + " : index\n");

  // Before: continue while a node is active and steps remain.
  std::string loop = f.fresh();
  std::vector<std::string> before, after;
  for (int i = 0; i < kNumSlots; ++i) {
    before.push_back(f.fresh());
    after.push_back(f.fresh());
  }
  std::string header = "  " + loop + ":" + std::to_string(kNumSlots) +
                       " = scf.while (";
  for (auto [i, v] : llvm::enumerate(init))
    header += (i ? ", " : "") + before[i] + " = " + v.init;
  header += ") : (" + typeList(init) + ") -> (" + typeList(init) + ") {\n";
  f.raw(header);
  std::string count = f.fresh(), any = f.fresh(), more = f.fresh(),
              go = f.fresh();
  f.raw("  " + count + " = tensor.dim " + before[kActive] + ", %c0 : " + ids +
        "\n");
  f.raw("  " + any + " = arith.cmpi ugt, " + count + ", " + zero +
        " : index\n");
  f.raw("  " + more + " = arith.cmpi ult, " + before[kStep] + ", " + depth +
        " : index\n");
  f.raw("  " + go + " = arith.andi " + any + ", " + more + " : i1\n");
  std::string condition = "  scf.condition(" + go + ") ";
  for (int i = 0; i < kNumSlots; ++i)
    condition += (i ? ", " : "") + before[i];
  f.raw(condition + " : " + typeList(init) + "\n  } do {\n  ^bb0(");
  std::string blockArgs;
  for (auto [i, v] : llvm::enumerate(init))
    blockArgs += (i ? ", " : "") + after[i] + ": " + v.type;
  f.raw(blockArgs + "):\n");

  // After: one step on the active nodes A.
  const std::string &A = after[kActive];
  std::string notLast = f.fresh();
  f.raw("  " + notLast + " = arith.cmpi ne, " + after[kStep] + ", " +
        lastStep + " : index\n");
  // x = x + pe[pos] + time_pe[step]; step += 1.
  std::string stepsA = f.gather(after[kSteps], ids, A);
  std::string xa = f.apply(
      {{f.gather(after[kX], x, A), x},
       {f.gather(nodePE, x, A), x},
       {f.gather(timePE, x, stepsA), x}},
      x, [&](llvm::ArrayRef<std::string> e) {
        return f.scalarOp("arith.addf", f.scalarOp("arith.addf", e[0], e[1]),
                          e[2]);
      });
  std::string steps = f.scatter(
      f.apply({{stepsA, ids, "index"}}, ids,
              [&](llvm::ArrayRef<std::string> e) {
                return f.scalarOp("arith.addi", e[0],
                                  f.constantOf("1", "index"), "index");
              },
              "index"),
      after[kSteps], A, ids);
  std::string k = after[kK], v = after[kV];
  xa = layer(f, xa, A, k, v);

  // Halting: p = sigmoid(linear(LN(x))); sum_p += p; a node continues while
  // sum_p < threshold and steps remain; s accumulates p * x, or r * x when
  // the node halts.
  std::string logit = f.linear(f.layerNorm(xa, halt + ".norm"),
                               halt + ".linear", f.d, 1);
  std::string p = f.apply({{logit, one}}, one,
                          [&](llvm::ArrayRef<std::string> e) {
                            std::string minus = f.fresh();
                            f.raw("    " + minus + " = arith.negf " + e[0] +
                                  " : f32\n");
                            std::string ex = f.fresh();
                            f.raw("    " + ex + " = math.exp " + minus +
                                  " : f32\n");
                            std::string unit = f.constant(1.0);
                            return f.scalarOp(
                                "arith.divf", unit,
                                f.scalarOp("arith.addf", unit, ex));
                          });
  std::string sumP = f.apply({{f.gather(after[kSumP], one, A), one}, {p, one}},
                             one, [&](llvm::ArrayRef<std::string> e) {
                               return f.scalarOp("arith.addf", e[0], e[1]);
                             });
  auto continues = [&](const std::string &sum) {
    std::string below = f.scalarOp("arith.cmpf olt,", sum,
                                   f.constant(float(c.actThreshold)));
    return f.scalarOp("arith.andi", below, notLast, "i1");
  };
  std::string ra = f.gather(after[kR], one, A);
  std::string weight = f.apply({{sumP, one}, {p, one}, {ra, one}}, one,
                               [&](llvm::ArrayRef<std::string> e) {
                                 std::string r = f.fresh();
                                 f.raw("    " + r + " = arith.select " +
                                       continues(e[0]) + ", " + e[1] + ", " +
                                       e[2] + " : f32\n");
                                 return r;
                               });
  std::string sa = f.apply(
      {{f.gather(after[kS], x, A), x}, {weight, one}, {xa, x}}, x,
      [&](llvm::ArrayRef<std::string> e) {
        return f.scalarOp("arith.addf", e[0],
                          f.scalarOp("arith.mulf", e[1], e[2]));
      });
  std::string rNew = f.apply({{sumP, one}, {ra, one}}, one,
                             [&](llvm::ArrayRef<std::string> e) {
                               std::string rest = f.scalarOp(
                                   "arith.subf", f.constant(1.0), e[0]);
                               std::string r = f.fresh();
                               f.raw("    " + r + " = arith.select " +
                                     continues(e[0]) + ", " + rest + ", " +
                                     e[1] + " : f32\n");
                               return r;
                             });
  std::vector<std::string> next(kNumSlots);
  next[kSumP] = f.scatter(sumP, after[kSumP], A, one);
  // The nodes that continue, among the active ones.
  std::string kept = f.fresh(), sum = f.fresh();
  f.raw("  " + kept + " = gnn.filter_nodes(" + next[kSumP] + ") from " + A +
        " {\n  ^bb0(" + sum + ": f32):\n");
  std::string keep = continues(sum);
  f.raw("    gnn.yield " + keep + " : i1\n  } : (" + one + ", " + ids +
        ") -> " + ids + "\n");
  next[kStep] = f.scalarOp("arith.addi", after[kStep],
                           f.constantOf("1", "index"), "index");
  next[kActive] = kept;
  next[kX] = f.scatter(xa, after[kX], A, x);
  next[kS] = f.scatter(sa, after[kS], A, x);
  next[kR] = f.scatter(rNew, after[kR], A, one);
  next[kSteps] = steps;
  next[kK] = k;
  next[kV] = v;
  std::string yield = "  scf.yield ";
  for (int i = 0; i < kNumSlots; ++i)
    yield += (i ? ", " : "") + next[i];
  f.raw(yield + " : " + typeList(init) + "\n  }\n");
  return {loop + "#" + std::to_string(kS), loop + "#" + std::to_string(kSteps)};
}

/// Step counts as int32, one per node.
std::string stepCounts(FunctionWriter &f, const std::string &steps) {
  std::string r = f.apply(
      {{steps, FunctionWriter::kIds, "index"}}, "tensor<?xi32>",
      [&](llvm::ArrayRef<std::string> e) {
        std::string n = f.fresh();
        f.raw("    " + n + " = arith.index_cast " + e[0] + " : index to i32\n");
        return n;
      },
      "i32");
  f.setType(r, "tensor<?xi32>");
  return r;
}

/// q, k, v of `prefix`'s attention from the normalized state; k and v are
/// written into the full k/v at the active rows.
std::string selfQKV(FunctionWriter &f, const std::string &n,
                    const std::string &prefix, const std::string &active,
                    std::string &k, std::string &v) {
  std::string q = f.splitHeads(f.linear(n, prefix + "0", f.d, f.d));
  k = f.scatter(f.splitHeads(f.linear(n, prefix + "1", f.d, f.d)), k, active,
                f.heads());
  v = f.scatter(f.splitHeads(f.linear(n, prefix + "2", f.d, f.d)), v, active,
                f.heads());
  return q;
}

/// The in-edges of the active nodes of `graph`.
std::string activeGraph(FunctionWriter &f, const std::string &graph,
                        const std::string &active) {
  std::string sub = f.fresh(), eids = f.fresh();
  f.raw("  " + sub + ", " + eids + " = gnn.in_subgraph " + graph + ", " +
        active + " : (" + FunctionWriter::kGraph + ", " +
        FunctionWriter::kIds + ") -> (" + FunctionWriter::kGraph + ", " +
        FunctionWriter::kIds + ")\n");
  return sub;
}

void writeEncoder(llvm::raw_ostream &out, const ModelConfig &c,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionWriter f(c, hasWeight);
  std::string ee = f.input(model::kEE, FunctionWriter::kGraph);
  std::string tokens = f.input(model::kSrcTokens, FunctionWriter::kIds);
  std::string positions = f.input(model::kSrcPositions, FunctionWriter::kIds);
  std::string pe = f.input(model::kPE, f.x());
  std::string timePE = f.input(model::kTimePE, f.x());
  std::string x0 = f.embedTokens("src_embed.lut.weight", c.srcVocab, tokens);
  const std::string L = "encoder.layer";
  auto [s, steps] = actLoop(
      f, x0, tokens, positions, pe, timePE, "halt_enc",
      [&](FunctionWriter &f, const std::string &x, const std::string &active,
          std::string &k, std::string &v) {
        std::string A = L + ".self_attn.linears.";
        std::string n = f.layerNorm(x, L + ".sublayer.0.norm");
        std::string q = selfQKV(f, n, A, active, k, v);
        std::string a =
            f.mergeHeads(f.attention(activeGraph(f, ee, active), q, k, v));
        std::string y = f.residual(x, f.linear(a, A + "3", f.d, f.d));
        return f.residual(y,
                          f.feedForward(f.layerNorm(y, L + ".sublayer.1.norm"),
                                        L + ".feed_forward"));
      });
  std::string memory = f.layerNorm(s, "encoder.norm");
  f.setType(memory, f.x());
  f.finish(out, model::kEncode,
           {{memory, model::kMemory}, {stepCounts(f, steps), model::kEncSteps}});
}

void writeCrossKV(llvm::raw_ostream &out, const ModelConfig &c,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionWriter f(c, hasWeight);
  std::string mem = f.input(model::kMemory, f.x());
  std::string A = "decoder.layer.self_attn.linears.";
  std::string k = f.splitHeads(f.linear(mem, A + "1", f.d, f.d));
  std::string v = f.splitHeads(f.linear(mem, A + "2", f.d, f.d));
  f.setType(k, f.heads());
  f.setType(v, f.heads());
  f.finish(out, model::kCrossKV,
           {{k, model::crossK(0)}, {v, model::crossV(0)}});
}

void writeDecoder(llvm::raw_ostream &out, const ModelConfig &c,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionWriter f(c, hasWeight);
  std::string dd = f.input(model::kDD, FunctionWriter::kGraph);
  std::string ed = f.input(model::kED, FunctionWriter::kGraph);
  std::string tokens = f.input(model::kTgtTokens, FunctionWriter::kIds);
  std::string positions = f.input(model::kTgtPositions, FunctionWriter::kIds);
  std::string pe = f.input(model::kPE, f.x());
  std::string timePE = f.input(model::kTimePE, f.x());
  std::string crossK = f.input(model::crossK(0), f.heads());
  std::string crossV = f.input(model::crossV(0), f.heads());
  std::string y0 = f.embedTokens("tgt_embed.lut.weight", c.tgtVocab, tokens);
  const std::string L = "decoder.layer";
  auto [s, steps] = actLoop(
      f, y0, tokens, positions, pe, timePE, "halt_dec",
      [&](FunctionWriter &f, const std::string &y, const std::string &active,
          std::string &k, std::string &v) {
        std::string A = L + ".self_attn.linears.";
        std::string n = f.layerNorm(y, L + ".sublayer.0.norm");
        std::string q = selfQKV(f, n, A, active, k, v);
        std::string a =
            f.mergeHeads(f.attention(activeGraph(f, dd, active), q, k, v));
        std::string z = f.residual(y, f.linear(a, A + "3", f.d, f.d));
        std::string cq = f.splitHeads(
            f.linear(f.layerNorm(z, L + ".sublayer.1.norm"), A + "0", f.d, f.d));
        std::string ca = f.mergeHeads(
            f.attention(activeGraph(f, ed, active), cq, crossK, crossV));
        z = f.residual(z, f.linear(ca, A + "3", f.d, f.d));
        return f.residual(z,
                          f.feedForward(f.layerNorm(z, L + ".sublayer.2.norm"),
                                        L + ".feed_forward"));
      });
  std::string logits = f.linear(f.layerNorm(s, "decoder.norm"),
                                "generator.proj", f.d, c.tgtVocab);
  std::string lp = f.fresh();
  f.raw("  " + lp + " = gnn.log_softmax " + logits + " : (" +
        f.rows(c.tgtVocab) + ") -> " + f.rows(c.tgtVocab) + "\n");
  f.setType(lp, f.rows(c.tgtVocab));
  f.finish(out, model::kDecode,
           {{lp, model::kLogProbs}, {stepCounts(f, steps), model::kDecSteps}});
}
} // namespace

std::string mlir::gnn::buildUniversalTransformerIR(
    const ModelConfig &config,
    llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  std::string text;
  llvm::raw_string_ostream out(text);
  out << "// A Universal Transformer (d_model " << config.dModel << ", "
      << config.heads << " heads, ACT over at most " << config.maxDepth
      << " steps) in gnn IR.\n";
  writeEncoder(out, config, hasWeight);
  writeCrossKV(out, config, hasWeight);
  writeDecoder(out, config, hasWeight);
  return text;
}
