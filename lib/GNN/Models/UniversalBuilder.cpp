//===- UniversalBuilder.cpp - the Universal Transformer as gnn IR ---------===//
//
// Part of gnnc. The ACT loop of semantics.md ("Universal Transformer with
// ACT") as an scf.while over steps. Each step works on the active nodes
// only: their rows are gathered (compacted), the attention graphs are the
// in-edges of the active nodes (gnn.in_subgraph), and results are scattered
// back; halted nodes keep their state and the k/v of their last active step.
// The loop stops when no node is active or after max_depth steps.
//
// @decode computes the new decoder nodes (dd's destinations) with a cache of
// every earlier node's k/v per ACT step: a node's trajectory depends only on
// the nodes before it, so decoding one node at a time gives what a forward
// over the whole prefix gives.
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

/// The ACT state the loop carries, in order; the layer's own values (its
/// k/v) follow.
enum Slot { kStep, kActive, kX, kS, kR, kSumP, kSteps, kNumSlots };

/// The shared layer applied to the active nodes at step `step`: from their
/// compacted state `x` (encodings added) and the ids of the active nodes,
/// returns the new compacted state and updates the values it carries.
using LayerStep = std::function<std::string(
    FunctionWriter &f, const std::string &x, const std::string &active,
    const std::string &step, std::vector<std::string> &carried)>;

/// What the ACT loop leaves: the accumulated state s [N, d], the step
/// counts (tensor<?xindex>), the number of steps run and the layer's
/// carried values.
struct ActResult {
  std::string s, steps, stepsRun;
  std::vector<std::string> carried;
};

std::string typeList(const std::vector<Carried> &c) {
  std::string s;
  for (auto [i, v] : llvm::enumerate(c))
    s += (i ? ", " : "") + v.type;
  return s;
}

/// Writes the ACT loop over the nodes of `x0` (embedded tokens).
/// `positions` are the rows of `pe` to add per node, `timePE` the time
/// table, `halt` the halting unit's weights prefix; `layer` carries
/// `carried` (initial values) through the loop.
ActResult actLoop(FunctionWriter &f, const std::string &x0,
                  const std::string &tokens, const std::string &positions,
                  const std::string &pe, const std::string &timePE,
                  const std::string &halt, const std::vector<Carried> &carried,
                  const LayerStep &layer) {
  const ModelConfig &c = f.c;
  std::string x = f.x(), one = f.rows(1), ids = FunctionWriter::kIds;
  // A constant per node: [N] from the tokens, [N, 1] as its column.
  auto perNode = [&](const std::string &value, const std::string &element) {
    std::string type = "tensor<?x" + element + ">";
    return f.apply(
        {{tokens, ids, "index"}}, type,
        [&](llvm::ArrayRef<std::string>) {
          return f.constantOf(value, element);
        },
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
  // Every node starts active, with s = 0, r = 1, sum_p = 0 and step = 0.
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
  llvm::append_range(init, carried);
  int slots = int(init.size());

  std::string depth = f.fresh(), lastStep = f.fresh();
  f.raw("  " + depth + " = arith.constant " + std::to_string(c.maxDepth) +
        " : index\n");
  f.raw("  " + lastStep + " = arith.constant " +
        std::to_string(c.maxDepth - 1) + " : index\n");

  // Before: continue while a node is active and steps remain.
  std::string loop = f.fresh();
  std::vector<std::string> before, after;
  for (int i = 0; i < slots; ++i) {
    before.push_back(f.fresh());
    after.push_back(f.fresh());
  }
  std::string header =
      "  " + loop + ":" + std::to_string(slots) + " = scf.while (";
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
  for (int i = 0; i < slots; ++i)
    condition += (i ? ", " : "") + before[i];
  f.raw(condition + " : " + typeList(init) + "\n  } do {\n  ^bb0(");
  std::string blockArgs;
  for (auto [i, v] : llvm::enumerate(init))
    blockArgs += (i ? ", " : "") + after[i] + ": " + v.type;
  f.raw(blockArgs + "):\n");

  // After: one step on the active nodes A.
  const std::string &A = after[kActive];
  std::string notLast = f.fresh();
  f.raw("  " + notLast + " = arith.cmpi ne, " + after[kStep] + ", " + lastStep +
        " : index\n");
  // x = x + pe[pos] + time_pe[step]; step += 1.
  std::string stepsA = f.gather(after[kSteps], ids, A);
  std::string xa =
      f.apply({{f.gather(after[kX], x, A), x},
               {f.gather(nodePE, x, A), x},
               {f.gather(timePE, x, stepsA), x}},
              x, [&](llvm::ArrayRef<std::string> e) {
                return f.scalarOp("arith.addf",
                                  f.scalarOp("arith.addf", e[0], e[1]), e[2]);
              });
  std::string steps =
      f.scatter(f.apply(
                    {{stepsA, ids, "index"}}, ids,
                    [&](llvm::ArrayRef<std::string> e) {
                      return f.scalarOp("arith.addi", e[0],
                                        f.constantOf("1", "index"), "index");
                    },
                    "index"),
                after[kSteps], A, ids);
  std::vector<std::string> layerValues(after.begin() + kNumSlots, after.end());
  xa = layer(f, xa, A, after[kStep], layerValues);

  // Halting: p = sigmoid(linear(LN(x))); sum_p += p; a node continues while
  // sum_p < threshold and steps remain; s accumulates p * x, or r * x when
  // the node halts.
  std::string logit =
      f.linear(f.layerNorm(xa, halt + ".norm"), halt + ".linear", f.d, 1);
  std::string p =
      f.apply({{logit, one}}, one, [&](llvm::ArrayRef<std::string> e) {
        std::string minus = f.fresh();
        f.raw("    " + minus + " = arith.negf " + e[0] + " : f32\n");
        std::string ex = f.fresh();
        f.raw("    " + ex + " = math.exp " + minus + " : f32\n");
        std::string unit = f.constant(1.0);
        return f.scalarOp("arith.divf", unit,
                          f.scalarOp("arith.addf", unit, ex));
      });
  std::string sumP = f.apply({{f.gather(after[kSumP], one, A), one}, {p, one}},
                             one, [&](llvm::ArrayRef<std::string> e) {
                               return f.scalarOp("arith.addf", e[0], e[1]);
                             });
  auto continues = [&](const std::string &sum) {
    std::string below =
        f.scalarOp("arith.cmpf olt,", sum, f.constant(float(c.actThreshold)));
    return f.scalarOp("arith.andi", below, notLast, "i1");
  };
  std::string ra = f.gather(after[kR], one, A);
  std::string weight =
      f.apply({{sumP, one}, {p, one}, {ra, one}}, one,
              [&](llvm::ArrayRef<std::string> e) {
                std::string r = f.fresh();
                f.raw("    " + r + " = arith.select " + continues(e[0]) + ", " +
                      e[1] + ", " + e[2] + " : f32\n");
                return r;
              });
  std::string sa =
      f.apply({{f.gather(after[kS], x, A), x}, {weight, one}, {xa, x}}, x,
              [&](llvm::ArrayRef<std::string> e) {
                return f.scalarOp("arith.addf", e[0],
                                  f.scalarOp("arith.mulf", e[1], e[2]));
              });
  std::string rNew = f.apply(
      {{sumP, one}, {ra, one}}, one, [&](llvm::ArrayRef<std::string> e) {
        std::string rest = f.scalarOp("arith.subf", f.constant(1.0), e[0]);
        std::string r = f.fresh();
        f.raw("    " + r + " = arith.select " + continues(e[0]) + ", " + rest +
              ", " + e[1] + " : f32\n");
        return r;
      });
  std::vector<std::string> next(kNumSlots);
  llvm::append_range(next, layerValues);
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
  std::string yield = "  scf.yield ";
  for (int i = 0; i < slots; ++i)
    yield += (i ? ", " : "") + next[i];
  f.raw(yield + " : " + typeList(init) + "\n  }\n");
  auto result = [&](int i) { return loop + "#" + std::to_string(i); };
  ActResult r{result(kS), result(kSteps), result(kStep), {}};
  for (int i = kNumSlots; i < slots; ++i)
    r.carried.push_back(result(i));
  return r;
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
/// written into the k/v of all nodes at the active rows (the others keep
/// the k/v of their last active step).
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

/// Zeros shaped [rows of x, heads, dk].
std::string zeroHeads(FunctionWriter &f, const std::string &x) {
  return f.splitHeads(
      f.apply({{x, f.x()}}, f.x(),
              [&](llvm::ArrayRef<std::string>) { return f.constant(0.0); }));
}

/// The in-edges of the active nodes of `graph`.
std::string activeGraph(FunctionWriter &f, const std::string &graph,
                        const std::string &active) {
  std::string sub = f.fresh(), eids = f.fresh();
  f.raw("  " + sub + ", " + eids + " = gnn.in_subgraph " + graph + ", " +
        active + " : (" + FunctionWriter::kGraph + ", " + FunctionWriter::kIds +
        ") -> (" + FunctionWriter::kGraph + ", " + FunctionWriter::kIds +
        ")\n");
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
  // Every node's k/v, starting from zeros (only active nodes' are read).
  std::string zeros = zeroHeads(f, x0);
  ActResult act = actLoop(
      f, x0, tokens, positions, pe, timePE, "halt_enc",
      {{zeros, f.heads()}, {zeros, f.heads()}},
      [&](FunctionWriter &f, const std::string &x, const std::string &active,
          const std::string &, std::vector<std::string> &kv) {
        std::string &k = kv[0], &v = kv[1];
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
  std::string memory = f.layerNorm(act.s, "encoder.norm");
  f.setType(memory, f.x());
  f.finish(
      out, model::kEncode,
      {{memory, model::kMemory}, {stepCounts(f, act.steps), model::kEncSteps}});
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

/// The k/v of every decoder node as of ACT step `step`: the cache's rows of
/// that step with the new nodes' latest k/v (`latest`, one row per new
/// node) written into their slots; the result is stored back into the cache
/// (`cache` is updated) for the nodes decoded later.
std::string stepRows(FunctionWriter &f, std::string &cache,
                     const std::string &step, const std::string &latest,
                     const std::string &slots, const std::string &cacheType) {
  std::string rows = f.fresh(), slice = f.fresh();
  f.raw("  " + rows + " = tensor.dim " + cache + ", %c0 : " + cacheType + "\n");
  std::string box = "[0, " + step + ", 0, 0] [" + rows + ", 1, " +
                    std::to_string(f.h) + ", " + std::to_string(f.dk) +
                    "] [1, 1, 1, 1]";
  f.raw("  " + slice + " = tensor.extract_slice " + cache + box + " : " +
        cacheType + " to " + f.heads() + "\n");
  std::string all = f.scatter(latest, slice, slots, f.heads());
  std::string stored = f.fresh();
  f.raw("  " + stored + " = tensor.insert_slice " + all + " into " + cache +
        box + " : " + f.heads() + " into " + cacheType + "\n");
  cache = stored;
  return all;
}

void writeDecoder(llvm::raw_ostream &out, const ModelConfig &c,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionWriter f(c, hasWeight);
  // A node's rows of every step are one row of the cache, so that the
  // runner appends the new nodes' rows without moving the others.
  std::string cacheType = "tensor<?x" + std::to_string(c.maxDepth) + "x" +
                          std::to_string(f.h) + "x" + std::to_string(f.dk) +
                          "xf32>";
  std::string dd = f.input(model::kDD, FunctionWriter::kGraph);
  std::string ed = f.input(model::kED, FunctionWriter::kGraph);
  std::string tokens = f.input(model::kTgtTokens, FunctionWriter::kIds);
  std::string positions = f.input(model::kTgtPositions, FunctionWriter::kIds);
  std::string slots = f.input(model::kCacheSlots, FunctionWriter::kIds);
  std::string pe = f.input(model::kPE, f.x());
  std::string timePE = f.input(model::kTimePE, f.x());
  std::string crossK = f.input(model::crossK(0), f.heads());
  std::string crossV = f.input(model::crossV(0), f.heads());
  std::string selfK = f.updatedInput(model::selfK(0), cacheType);
  std::string selfV = f.updatedInput(model::selfV(0), cacheType);
  std::string y0 = f.embedTokens("tgt_embed.lut.weight", c.tgtVocab, tokens);
  const std::string L = "decoder.layer";
  // The new nodes' latest k/v, and the cache of every node's k/v per step.
  std::string zeros = zeroHeads(f, y0);
  ActResult act = actLoop(
      f, y0, tokens, positions, pe, timePE, "halt_dec",
      {{zeros, f.heads()},
       {zeros, f.heads()},
       {selfK, cacheType},
       {selfV, cacheType}},
      [&](FunctionWriter &f, const std::string &y, const std::string &active,
          const std::string &step, std::vector<std::string> &kv) {
        std::string A = L + ".self_attn.linears.";
        std::string n = f.layerNorm(y, L + ".sublayer.0.norm");
        std::string q = selfQKV(f, n, A, active, kv[0], kv[1]);
        std::string k = stepRows(f, kv[2], step, kv[0], slots, cacheType);
        std::string v = stepRows(f, kv[3], step, kv[1], slots, cacheType);
        std::string a =
            f.mergeHeads(f.attention(activeGraph(f, dd, active), q, k, v));
        std::string z = f.residual(y, f.linear(a, A + "3", f.d, f.d));
        std::string cq = f.splitHeads(f.linear(
            f.layerNorm(z, L + ".sublayer.1.norm"), A + "0", f.d, f.d));
        std::string ca = f.mergeHeads(
            f.attention(activeGraph(f, ed, active), cq, crossK, crossV));
        z = f.residual(z, f.linear(ca, A + "3", f.d, f.d));
        return f.residual(z,
                          f.feedForward(f.layerNorm(z, L + ".sublayer.2.norm"),
                                        L + ".feed_forward"));
      });
  // At the steps after all new nodes halted, they keep their last k/v.
  std::string rest = f.fresh(), t = f.fresh(), kc = f.fresh(), vc = f.fresh();
  f.raw("  " + rest + ":2 = scf.for " + t + " = " + act.stepsRun + " to " +
        f.constantOf(std::to_string(c.maxDepth), "index") + " step " +
        f.constantOf("1", "index") + " iter_args(" + kc + " = " +
        act.carried[2] + ", " + vc + " = " + act.carried[3] + ") -> (" +
        cacheType + ", " + cacheType + ") {\n");
  std::string kNext = kc, vNext = vc;
  stepRows(f, kNext, t, act.carried[0], slots, cacheType);
  stepRows(f, vNext, t, act.carried[1], slots, cacheType);
  f.raw("  scf.yield " + kNext + ", " + vNext + " : " + cacheType + ", " +
        cacheType + "\n  }\n");
  std::string kCache = rest + "#0", vCache = rest + "#1";
  f.setType(kCache, cacheType);
  f.setType(vCache, cacheType);

  std::string logits = f.linear(f.layerNorm(act.s, "decoder.norm"),
                                "generator.proj", f.d, c.tgtVocab);
  std::string lp = f.fresh();
  f.raw("  " + lp + " = gnn.log_softmax " + logits + " : (" +
        f.rows(c.tgtVocab) + ") -> " + f.rows(c.tgtVocab) + "\n");
  f.setType(lp, f.rows(c.tgtVocab));
  f.finish(out, model::kDecode,
           {{lp, model::kLogProbs},
            {stepCounts(f, act.steps), model::kDecSteps},
            {kCache, model::selfK(0)},
            {vCache, model::selfV(0)}});
}
} // namespace

std::string mlir::gnn::buildUniversalTransformerIR(
    const ModelConfig &config,
    llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  return moduleText(
      "A Universal Transformer (d_model " + std::to_string(config.dModel) +
          ", " + std::to_string(config.heads) + " heads, ACT over at most " +
          std::to_string(config.maxDepth) + " steps)",
      config, hasWeight, {writeEncoder, writeCrossKV, writeDecoder});
}
