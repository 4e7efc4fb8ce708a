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

#include "ModelInputs.h"
#include "TrainingLoss.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::models;

namespace {
/// The ACT state the loop carries, in order; the layer's own values (its
/// k/v) follow.
enum Slot { kStep, kActive, kX, kS, kR, kSumP, kSteps, kNumSlots };

/// The shared layer applied to the active nodes at step `step`: from their
/// compacted state `x` (encodings added) and the ids of the active nodes,
/// returns the new compacted state and updates the values it carries.
using LayerStep =
    std::function<Value(FunctionBuilder &f, Value x, Value active, Value step,
                        SmallVectorImpl<Value> &carried)>;

/// What the ACT loop leaves: the accumulated state s [N, d], the step
/// counts (tensor<?xindex>), the number of steps run and the layer's
/// carried values.
struct ActResult {
  Value s, steps, stepsRun, r;
  SmallVector<Value> carried;
};

/// Builds the ACT loop over the nodes of `x0` (embedded tokens).
/// `positions` are the rows of `pe` to add per node, `timePE` the time
/// table, `halt` the halting unit's weights prefix; `layer` carries
/// `carried` (initial values) through the loop.
ActResult actLoop(FunctionBuilder &f, Value x0, Value tokens, Value positions,
                  Value pe, Value timePE, const std::string &halt,
                  ValueRange carried, const LayerStep &layer) {
  const ModelConfig &c = f.c;
  ImplicitLocOpBuilder &b = f.b;
  Type x = f.x(), one = f.rows(1), ids = f.ids();
  Type f32 = b.getF32Type(), index = b.getIndexType();
  // A constant per node: [N] from the tokens, [N, 1] as its column.
  auto perNode = [&](TypedAttr value) {
    auto type = RankedTensorType::get({ShapedType::kDynamic}, value.getType());
    return f.apply({tokens}, type, [&](ValueRange) -> Value {
      return b.create<arith::ConstantOp>(value);
    });
  };
  auto column = [&](double value) -> Value {
    Value flat = perNode(b.getF32FloatAttr(value));
    Value n = f.numRows(flat);
    return b.create<tensor::ExpandShapeOp>(
        one, flat, SmallVector<ReassociationIndices>{{0, 1}},
        SmallVector<OpFoldResult>{n, b.getIndexAttr(1)});
  };
  // Every node starts active, with s = 0, r = 1, sum_p = 0 and step = 0.
  Value all = f.filterNodes({tokens}, Value(), [&](ValueRange) -> Value {
    return b.create<arith::ConstantIntOp>(1, 1);
  });
  Value nodePE = f.gather(pe, positions);
  SmallVector<Value> init(kNumSlots);
  Value zero = f.index(0);
  init[kStep] = zero;
  init[kActive] = all;
  init[kX] = x0;
  init[kS] = f.apply({x0}, x, [&](ValueRange) { return f.constant(0.0); });
  init[kR] = column(1.0);
  init[kSumP] = column(0.0);
  init[kSteps] = perNode(b.getIndexAttr(0));
  llvm::append_range(init, carried);
  TypeRange types = ValueRange(init).getTypes();
  SmallVector<Type> loopTypes(types.begin(), types.end());
  SmallVector<Location> locs(init.size(), b.getLoc());

  Value depth = f.index(c.maxDepth);
  Value lastStep = f.index(c.maxDepth - 1);
  auto loop = b.create<scf::WhileOp>(loopTypes, init);
  {
    // Before: continue while a node is active and steps remain.
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&loop.getBefore(), {}, loopTypes, locs);
    ValueRange in = before->getArguments();
    Value count = f.numRows(in[kActive]);
    Value any = b.create<arith::CmpIOp>(arith::CmpIPredicate::ugt, count, zero);
    Value more =
        b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, in[kStep], depth);
    Value go = b.create<arith::AndIOp>(any, more);
    b.create<scf::ConditionOp>(go, in);
  }
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&loop.getAfter(), {}, loopTypes, locs);
  ValueRange after = body->getArguments();

  // After: one step on the active nodes A.
  Value A = after[kActive];
  Value notLast =
      b.create<arith::CmpIOp>(arith::CmpIPredicate::ne, after[kStep], lastStep);
  // x = x + pe[pos] + time_pe[step]; step += 1.
  Value stepsA = f.gather(after[kSteps], A);
  Value xa = f.apply(
      {f.gather(after[kX], A), f.gather(nodePE, A), f.gather(timePE, stepsA)},
      x, [&](ValueRange e) -> Value {
        return b.create<arith::AddFOp>(b.create<arith::AddFOp>(e[0], e[1]),
                                       e[2]);
      });
  // Training: the positional encoder's dropout, with offsets of this step.
  f.setDropoutStep(after[kStep]);
  xa = f.dropout(xa);
  Value steps =
      f.scatter(f.apply({stepsA}, ids,
                        [&](ValueRange e) -> Value {
                          return b.create<arith::AddIOp>(e[0], f.index(1));
                        }),
                after[kSteps], A);
  SmallVector<Value> layerValues(after.begin() + kNumSlots, after.end());
  xa = layer(f, xa, A, after[kStep], layerValues);
  f.setDropoutStep(Value());

  // Halting: p = sigmoid(linear(LN(x))); sum_p += p; a node continues while
  // sum_p < threshold and steps remain; s accumulates p * x, or r * x when
  // the node halts.
  Value logit =
      f.linear(f.layerNorm(xa, halt + ".norm"), halt + ".linear", f.d, 1);
  Value p = f.apply({logit}, one, [&](ValueRange e) -> Value {
    Value ex = b.create<math::ExpOp>(b.create<arith::NegFOp>(e[0]));
    Value unit = f.constant(1.0);
    return b.create<arith::DivFOp>(unit, b.create<arith::AddFOp>(unit, ex));
  });
  Value sumP =
      f.apply({f.gather(after[kSumP], A), p}, one, [&](ValueRange e) -> Value {
        return b.create<arith::AddFOp>(e[0], e[1]);
      });
  auto continues = [&](Value sum) -> Value {
    Value threshold = f.constant(float(c.actThreshold));
    Value below =
        b.create<arith::CmpFOp>(arith::CmpFPredicate::OLT, sum, threshold);
    return b.create<arith::AndIOp>(below, notLast);
  };
  Value ra = f.gather(after[kR], A);
  Value weight = f.apply({sumP, p, ra}, one, [&](ValueRange e) -> Value {
    return b.create<arith::SelectOp>(continues(e[0]), e[1], e[2]);
  });
  Value sa = f.apply({f.gather(after[kS], A), weight, xa}, x,
                     [&](ValueRange e) -> Value {
                       return b.create<arith::AddFOp>(
                           e[0], b.create<arith::MulFOp>(e[1], e[2]));
                     });
  Value rNew = f.apply({sumP, ra}, one, [&](ValueRange e) -> Value {
    Value rest = b.create<arith::SubFOp>(f.constant(1.0), e[0]);
    return b.create<arith::SelectOp>(continues(e[0]), rest, e[1]);
  });
  SmallVector<Value> next(kNumSlots);
  llvm::append_range(next, layerValues);
  next[kSumP] = f.scatter(sumP, after[kSumP], A);
  // The nodes that continue, among the active ones.
  Value kept = f.filterNodes(
      {next[kSumP]}, A, [&](ValueRange e) -> Value { return continues(e[0]); });
  next[kStep] = b.create<arith::AddIOp>(after[kStep], f.index(1));
  next[kActive] = kept;
  next[kX] = f.scatter(xa, after[kX], A);
  next[kS] = f.scatter(sa, after[kS], A);
  next[kR] = f.scatter(rNew, after[kR], A);
  next[kSteps] = steps;
  b.create<scf::YieldOp>(next);
  (void)f32;
  (void)index;
  ActResult r{loop.getResult(kS),
              loop.getResult(kSteps),
              loop.getResult(kStep),
              loop.getResult(kR),
              {}};
  for (unsigned i = kNumSlots; i < loop.getNumResults(); ++i)
    r.carried.push_back(loop.getResult(i));
  return r;
}

/// Step counts as int32, one per node.
Value stepCounts(FunctionBuilder &f, Value steps) {
  auto type = RankedTensorType::get({ShapedType::kDynamic}, f.b.getI32Type());
  return f.apply({steps}, type, [&](ValueRange e) -> Value {
    return f.b.create<arith::IndexCastOp>(f.b.getI32Type(), e[0]);
  });
}

/// q, k, v of `prefix`'s attention from the normalized state; k and v are
/// written into the k/v of all nodes at the active rows (the others keep
/// the k/v of their last active step).
Value selfQKV(FunctionBuilder &f, Value n, const std::string &prefix,
              Value active, Value &k, Value &v) {
  Value q = f.splitHeads(f.linear(n, prefix + "0", f.d, f.d));
  k = f.scatter(f.splitHeads(f.linear(n, prefix + "1", f.d, f.d)), k, active);
  v = f.scatter(f.splitHeads(f.linear(n, prefix + "2", f.d, f.d)), v, active);
  return q;
}

/// The rows of `cache` ([rows, max_depth, a, b]) as of ACT step `step`,
/// with `latest` ([?, a, b]) written into rows `slots`; the result is
/// stored back into the cache (`cache` is updated). For the decoder's k/v
/// the rows are every decoder node and the slots the new nodes (whose k/v
/// later nodes read); for attention weights the rows are edges.
Value stepRows(FunctionBuilder &f, Value &cache, Value step, Value latest,
               Value slots) {
  ImplicitLocOpBuilder &b = f.b;
  Value rows = f.numRows(cache);
  auto cacheType = cast<RankedTensorType>(cache.getType());
  int64_t a = cacheType.getDimSize(2), c = cacheType.getDimSize(3);
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), step,
                                       b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {rows, b.getIndexAttr(1), b.getIndexAttr(a),
                                     b.getIndexAttr(c)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  auto sliceType = RankedTensorType::get({ShapedType::kDynamic, a, c},
                                         cacheType.getElementType());
  Value slice = b.create<tensor::ExtractSliceOp>(sliceType, cache, offsets,
                                                 sizes, strides);
  Value all = f.scatter(latest, slice, slots);
  cache = b.create<tensor::InsertSliceOp>(all, cache, offsets, sizes, strides);
  return all;
}

/// Zeros shaped [edges of graph, max_depth, heads, 1]: the attention
/// weights of every ACT step, before the first.
Value zeroStepWeights(FunctionBuilder &f, Value graph) {
  ImplicitLocOpBuilder &b = f.b;
  // Row 0 of a one-row table of zeros, once per edge.
  auto row = RankedTensorType::get({1, f.c.maxDepth, f.h, 1}, b.getF32Type());
  Value table = b.create<arith::ConstantOp>(
      DenseElementsAttr::get(row, b.getF32FloatAttr(0.0f)));
  auto ends = b.create<EdgeEndpointsOp>(f.ids(), f.ids(), graph);
  Value firstRow =
      f.apply({ends.getSrc()}, f.ids(), [&](ValueRange) { return f.index(0); });
  auto type = RankedTensorType::get(
      {ShapedType::kDynamic, f.c.maxDepth, f.h, 1}, b.getF32Type());
  return f.gather(table, firstRow, type);
}

/// Zeros shaped [rows of x, heads, dk].
Value zeroHeads(FunctionBuilder &f, Value x) {
  return f.splitHeads(
      f.apply({x}, f.x(), [&](ValueRange) { return f.constant(0.0); }));
}

/// The encoder's ACT loop over the source graph: the memory, the loop's
/// result (step counts, remainders) and, with `weights`, the attention
/// weights of every step.
struct Encoded {
  Value memory, weights;
  ActResult act;
};

Encoded encodeACT(FunctionBuilder &f, const EncoderInputs &in, Value timePE,
                  bool weights) {
  const ModelConfig &c = f.c;
  Value x0 = f.embedTokens("src_embed.lut.weight", c.srcVocab, in.tokens);
  const std::string L = "encoder.layer";
  // Every node's k/v, starting from zeros (only active nodes' are read),
  // and with `weights` the attention weights of every step.
  Value zeros = zeroHeads(f, x0);
  SmallVector<Value> carried = {zeros, zeros};
  if (weights)
    carried.push_back(zeroStepWeights(f, in.graph));
  ActResult act = actLoop(
      f, x0, in.tokens, in.positions, in.pe, timePE, "halt_enc", carried,
      [&](FunctionBuilder &f, Value x, Value active, Value step,
          SmallVectorImpl<Value> &kv) {
        std::string A = L + ".self_attn.linears.";
        Value n = f.layerNorm(x, L + ".sublayer.0.norm");
        Value q = selfQKV(f, n, A, active, kv[0], kv[1]);
        Value eids, w;
        Value a =
            f.mergeHeads(f.attention(f.inSubgraph(in.graph, active, &eids), q,
                                     kv[0], kv[1], weights ? &w : nullptr));
        if (weights)
          stepRows(f, kv[2], step, w, eids);
        Value y = f.residual(x, f.dropout(f.linear(a, A + "3", f.d, f.d)));
        return f.residual(
            y, f.dropout(f.feedForward(f.layerNorm(y, L + ".sublayer.1.norm"),
                                       L + ".feed_forward")));
      });
  Encoded e;
  e.memory = f.layerNorm(act.s, "encoder.norm");
  if (weights)
    e.weights = act.carried[2];
  e.act = act;
  return e;
}

void buildEncoder(ModuleOp module, const ModelConfig &c,
                  const BuildOptions &options,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionBuilder f(module, model::kEncode, c, hasWeight);
  EncoderInputs in = encoderInputs(f);
  Value timePE = f.input(model::kTimePE, f.x());
  Encoded e = encodeACT(f, in, timePE, options.attentionWeights);
  FunctionBuilder::Named results = {
      {e.memory, model::kMemory},
      {stepCounts(f, e.act.steps), model::kEncSteps}};
  if (e.weights)
    results.push_back({e.weights, model::attentionSteps(model::kEncAttention)});
  f.finish(results);
}

/// Cross-attention's k and v of the memory.
std::pair<Value, Value> crossKeysValues(FunctionBuilder &f, Value memory) {
  std::string A = "decoder.layer.self_attn.linears.";
  return {f.splitHeads(f.linear(memory, A + "1", f.d, f.d)),
          f.splitHeads(f.linear(memory, A + "2", f.d, f.d))};
}

void buildCrossKV(ModuleOp module, const ModelConfig &c, const BuildOptions &,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionBuilder f(module, model::kCrossKV, c, hasWeight);
  auto [k, v] = crossKeysValues(f, f.input(model::kMemory, f.x()));
  f.finish({{k, model::crossK(0)}, {v, model::crossV(0)}});
}

/// The decoder's ACT loop over the new nodes (dd's destinations): their
/// log-probs and the loop's result. `selfK` / `selfV` ([rows, max_depth,
/// h, dk]) hold every node's k/v per step (the new ones at `slots`); with
/// `weights` the self- and cross-attention weights of every step are
/// carried too (act.carried[4], [5]). Without caches (null: every decoder
/// node is new, as in training), a step's k/v are the nodes' latest.
struct Decoded {
  Value logProbs;
  ActResult act;
};

Decoded decodeACT(FunctionBuilder &f, const DecoderInputs &in, Value timePE,
                  Value crossK, Value crossV, Value selfK, Value selfV,
                  bool weights) {
  const ModelConfig &c = f.c;
  Value y0 = f.embedTokens("tgt_embed.lut.weight", c.tgtVocab, in.tokens);
  const std::string L = "decoder.layer";
  // The new nodes' latest k/v, the cache of every node's k/v per step and
  // with `weights` the self- and cross-attention weights of every step.
  Value zeros = zeroHeads(f, y0);
  SmallVector<Value> carried = {zeros, zeros};
  if (selfK)
    llvm::append_range(carried, ValueRange{selfK, selfV});
  if (weights) {
    carried.push_back(zeroStepWeights(f, in.dd));
    carried.push_back(zeroStepWeights(f, in.ed));
  }
  ActResult act = actLoop(
      f, y0, in.tokens, in.positions, in.pe, timePE, "halt_dec", carried,
      [&](FunctionBuilder &f, Value y, Value active, Value step,
          SmallVectorImpl<Value> &kv) {
        std::string A = L + ".self_attn.linears.";
        Value n = f.layerNorm(y, L + ".sublayer.0.norm");
        Value q = selfQKV(f, n, A, active, kv[0], kv[1]);
        Value k = kv[0], v = kv[1];
        if (selfK) {
          k = stepRows(f, kv[2], step, kv[0], in.slots);
          v = stepRows(f, kv[3], step, kv[1], in.slots);
        }
        Value selfEids, crossEids, selfW, crossW;
        Value a =
            f.mergeHeads(f.attention(f.inSubgraph(in.dd, active, &selfEids), q,
                                     k, v, weights ? &selfW : nullptr));
        Value z = f.residual(y, f.dropout(f.linear(a, A + "3", f.d, f.d)));
        Value cq = f.splitHeads(f.linear(f.layerNorm(z, L + ".sublayer.1.norm"),
                                         A + "0", f.d, f.d));
        Value ca = f.mergeHeads(
            f.attention(f.inSubgraph(in.ed, active, &crossEids), cq, crossK,
                        crossV, weights ? &crossW : nullptr));
        if (weights) {
          stepRows(f, kv[4], step, selfW, selfEids);
          stepRows(f, kv[5], step, crossW, crossEids);
        }
        z = f.residual(z, f.dropout(f.linear(ca, A + "3", f.d, f.d)));
        return f.residual(
            z, f.dropout(f.feedForward(f.layerNorm(z, L + ".sublayer.2.norm"),
                                       L + ".feed_forward")));
      });
  Value logits = f.linear(f.layerNorm(act.s, "decoder.norm"), "generator.proj",
                          f.d, c.tgtVocab);
  return {f.logSoftmax(logits), act};
}

void buildDecoder(ModuleOp module, const ModelConfig &c,
                  const BuildOptions &options,
                  llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionBuilder f(module, model::kDecode, c, hasWeight);
  ImplicitLocOpBuilder &b = f.b;
  // A node's rows of every step are one row of the cache, so that the
  // runner appends the new nodes' rows without moving the others.
  auto cacheType = RankedTensorType::get(
      {ShapedType::kDynamic, c.maxDepth, f.h, f.dk}, b.getF32Type());
  DecoderInputs in = decoderInputs(f);
  Value timePE = f.input(model::kTimePE, f.x());
  Value crossK = f.input(model::crossK(0), f.heads());
  Value crossV = f.input(model::crossV(0), f.heads());
  Value selfK = f.updatedInput(model::selfK(0), cacheType);
  Value selfV = f.updatedInput(model::selfV(0), cacheType);
  bool weights = options.attentionWeights;
  Decoded d = decodeACT(f, in, timePE, crossK, crossV, selfK, selfV, weights);
  ActResult &act = d.act;
  // At the steps after all new nodes halted, they keep their last k/v.
  Value unit = f.index(1);
  Value depth = f.index(c.maxDepth);
  auto rest = b.create<scf::ForOp>(act.stepsRun, depth, unit,
                                   ValueRange{act.carried[2], act.carried[3]});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rest.getBody());
    Value t = rest.getInductionVar();
    Value kNext = rest.getRegionIterArgs()[0];
    Value vNext = rest.getRegionIterArgs()[1];
    stepRows(f, kNext, t, act.carried[0], in.slots);
    stepRows(f, vNext, t, act.carried[1], in.slots);
    b.create<scf::YieldOp>(ValueRange{kNext, vNext});
  }
  FunctionBuilder::Named results = {
      {d.logProbs, model::kLogProbs},
      {stepCounts(f, act.steps), model::kDecSteps},
      {rest.getResult(0), model::selfK(0)},
      {rest.getResult(1), model::selfV(0)}};
  if (weights) {
    results.push_back(
        {act.carried[4], model::attentionSteps(model::kDecAttention)});
    results.push_back(
        {act.carried[5], model::attentionSteps(model::kCrossAttention)});
  }
  f.finish(results);
}
} // namespace

OwningOpRef<ModuleOp> mlir::gnn::buildUniversalTransformerModule(
    MLIRContext &context, const ModelConfig &config,
    llvm::function_ref<bool(llvm::StringRef)> hasWeight,
    const BuildOptions &options) {
  return buildModule(context, config, options, hasWeight,
                     {buildEncoder, buildCrossKV, buildDecoder});
}

void mlir::gnn::models::buildUniversalLoss(
    ModuleOp module, const ModelConfig &c, llvm::StringRef name, double dropout,
    double eps, llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionBuilder f(module, name, c, hasWeight);
  TrainingInputs in = trainingInputs(f, /*universal=*/true, dropout);
  Value timePE = in.timePE;
  Encoded e =
      encodeACT(f, EncoderInputs{in.ee, in.srcTokens, in.srcPositions, in.pe},
                timePE, false);
  auto [crossK, crossV] = crossKeysValues(f, e.memory);
  // Every decoder node is computed: no cache.
  Decoded d = decodeACT(f,
                        DecoderInputs{in.dd, in.ed, in.tgtTokens,
                                      in.tgtPositions, Value(), in.pe},
                        timePE, crossK, crossV, Value(), Value(), false);
  Value kl = smoothedLoss(f, d.logProbs, in.loss, eps);
  // act_loss = weight * mean(r) over encoder and decoder nodes: each
  // node's r times its act weight (weight / all nodes), summed.
  auto one = RankedTensorType::get({1, 1}, f.b.getF32Type());
  auto weighted = [&](Value r, Value w) -> Value {
    Value rw = f.apply({r, w}, f.rows(1), [&](ValueRange e) -> Value {
      return f.b.create<arith::MulFOp>(e[0], e[1]);
    });
    return f.b.create<SumToOp>(one, rw);
  };
  Value act = f.apply({weighted(e.act.r, in.actWeightsEnc),
                       weighted(d.act.r, in.actWeightsDec)},
                      one, [&](ValueRange e) -> Value {
                        return f.b.create<arith::AddFOp>(e[0], e[1]);
                      });
  Value objective = f.apply({kl, act}, one, [&](ValueRange e) -> Value {
    return f.b.create<arith::AddFOp>(e[0], e[1]);
  });
  auto scalar = RankedTensorType::get({}, f.b.getF32Type());
  f.finish({{f.b.create<SumToOp>(scalar, objective), model::kObjective},
            {f.b.create<SumToOp>(scalar, kl), model::kLoss},
            {f.b.create<SumToOp>(scalar, act), model::kActLoss},
            {d.logProbs, model::kLogProbs},
            {stepCounts(f, e.act.steps), model::kEncSteps},
            {stepCounts(f, d.act.steps), model::kDecSteps}});
}
