//===- TrainingBuilder.cpp - the Transformer's training loss as IR -------===//
//
// Part of gnnc. @train_loss and @eval_loss: encoder, every decoder node
// teacher-forced, generator, and the label-smoothed KL loss of
// training.md, built from the same layer bodies as the inference module.
//
//===----------------------------------------------------------------------===//

#include "GNN/Models/TrainingBuilder.h"
#include "TrainingLoss.h"
#include "TransformerLayers.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::models;

TrainingInputs models::trainingInputs(FunctionBuilder &f, bool universal,
                                      double dropout) {
  TrainingInputs in;
  // The trainer's batches: complete, causal and bipartite blocks.
  in.ee = f.input(model::kEE, f.graph(GraphStructure::Complete));
  in.dd = f.input(model::kDD, f.graph(GraphStructure::Causal));
  in.ed = f.input(model::kED, f.graph(GraphStructure::Bipartite));
  in.srcTokens = f.input(model::kSrcTokens, f.ids());
  in.srcPositions = f.input(model::kSrcPositions, f.ids());
  in.tgtTokens = f.input(model::kTgtTokens, f.ids());
  in.tgtPositions = f.input(model::kTgtPositions, f.ids());
  in.pe = f.input(model::kPE, f.x());
  if (universal)
    in.timePE = f.input(model::kTimePE, f.x());
  in.loss.labelIds = f.input(model::kLabelIds, f.ids());
  in.loss.padIds = f.input(model::kPadIds, f.ids());
  in.loss.labelWeights = f.input(model::kLabelWeights, f.rows(1));
  if (universal) {
    in.actWeightsEnc = f.input(model::kActWeightsEnc, f.rows(1));
    in.actWeightsDec = f.input(model::kActWeightsDec, f.rows(1));
  }
  if (dropout > 0)
    f.enableDropout(dropout);
  return in;
}

/// The loss of log-probs `lp` [N, V] against the smoothed targets: per node
/// with label y, t_y = 1 - eps, t_c = eps / (V - 2) for every other class
/// but <pad>, so sum_c t_c (log t_c - lp_c) =
///   C - (1 - eps - b) lp_y - b (sum_c lp_c - lp_pad), b = eps / (V - 2),
/// where C = sum_c t_c log t_c; weighted by label_weights and summed.
Value models::smoothedLoss(FunctionBuilder &f, Value lp, const LossInputs &in,
                           double eps) {
  ImplicitLocOpBuilder &b = f.b;
  int64_t vocab = f.c.tgtVocab;
  double spread = eps > 0 ? eps / double(vocab - 2) : 0.0;
  double constant = 0;
  if (eps > 0)
    constant = (1 - eps) * std::log(1 - eps) + eps * std::log(spread);
  auto column =
      RankedTensorType::get({ShapedType::kDynamic, 1}, b.getF32Type());
  auto flatType = RankedTensorType::get({ShapedType::kDynamic}, b.getF32Type());
  Value flat = b.create<tensor::CollapseShapeOp>(
      flatType, lp, SmallVector<ReassociationIndices>{{0, 1}});
  SmallVector<OpFoldResult> shape = {f.numRows(flat), b.getIndexAttr(1)};
  Value cells = b.create<tensor::ExpandShapeOp>(
      column, flat, SmallVector<ReassociationIndices>{{0, 1}}, shape);
  Value picked = f.gather(cells, in.labelIds, column);
  Value pad = f.gather(cells, in.padIds, column);
  Value rowSum = b.create<SumToOp>(column, lp);
  Value perNode =
      f.apply({picked, pad, rowSum, in.labelWeights}, column,
              [&](ValueRange e) -> Value {
                Value others = b.create<arith::SubFOp>(e[2], e[1]);
                Value mass = b.create<arith::AddFOp>(
                    b.create<arith::MulFOp>(f.constant(1 - eps - spread), e[0]),
                    b.create<arith::MulFOp>(f.constant(spread), others));
                Value kl = b.create<arith::SubFOp>(f.constant(constant), mass);
                return b.create<arith::MulFOp>(kl, e[3]);
              });
  return b.create<SumToOp>(RankedTensorType::get({1, 1}, b.getF32Type()),
                           perNode);
}

namespace {
void buildLoss(ModuleOp module, const ModelConfig &c, llvm::StringRef name,
               double dropout, double eps,
               llvm::function_ref<bool(llvm::StringRef)> hasWeight) {
  FunctionBuilder f(module, name, c, hasWeight);
  TrainingInputs in = trainingInputs(f, /*universal=*/false, dropout);
  Value ee = in.ee, dd = in.dd, ed = in.ed, pe = in.pe;
  Value srcTokens = in.srcTokens, srcPositions = in.srcPositions;
  Value tgtTokens = in.tgtTokens, tgtPositions = in.tgtPositions;

  Value x = f.dropout(
      f.embed("src_embed.lut.weight", c.srcVocab, srcTokens, srcPositions, pe));
  for (int64_t i = 0; i < c.layers; ++i)
    x = f.callLayer("encoder_layer", layerName("encoder", i),
                    {{x, "x"}, {ee, model::kEE}},
                    [](FunctionBuilder &l, ValueRange in) {
                      return encoderLayer(l, in[0], in[1], false);
                    })[0];
  Value memory = f.layerNorm(x, "encoder.norm");

  Value y = f.dropout(
      f.embed("tgt_embed.lut.weight", c.tgtVocab, tgtTokens, tgtPositions, pe));
  for (int64_t i = 0; i < c.layers; ++i) {
    bool last = i == c.layers - 1;
    std::string L = layerName("decoder", i);
    SmallVector<Value> kv =
        f.callLayer("cross_kv_layer", L, {{memory, model::kMemory}}, crossKV);
    SmallVector<Value> qkv =
        f.callLayer("decoder_self_qkv", L, {{y, "y"}}, decoderSelfQKV);
    y = f.callLayer(last ? "decoder_last_layer" : "decoder_layer", L,
                    {{y, "y"},
                     {qkv[0], "q"},
                     {qkv[1], "k"},
                     {qkv[2], "v"},
                     {dd, model::kDD},
                     {ed, model::kED},
                     {kv[0], "cross_k"},
                     {kv[1], "cross_v"}},
                    [&](FunctionBuilder &l, ValueRange in) {
                      return decoderLayer(l, in, last, false);
                    })[0];
  }
  Value lp = f.logSoftmax(f.linear(y, "generator.proj", f.d, c.tgtVocab));
  auto scalar = RankedTensorType::get({}, f.b.getF32Type());
  Value loss = f.b.create<SumToOp>(scalar, smoothedLoss(f, lp, in.loss, eps));
  f.finish({{loss, model::kObjective},
            {loss, model::kLoss},
            {lp, model::kLogProbs}});
}
} // namespace

OwningOpRef<ModuleOp> mlir::gnn::buildTrainingModule(
    MLIRContext &context, const ModelConfig &config,
    llvm::function_ref<bool(llvm::StringRef)> hasWeight,
    const TrainingBuildOptions &options) {
  auto build = config.architecture == Architecture::UniversalTransformer
                   ? buildUniversalLoss
                   : buildLoss;
  return buildModule(context, [&](ModuleOp module) {
    build(module, config, model::kTrainLoss, options.dropout,
          options.labelSmoothing, hasWeight);
    build(module, config, model::kEvalLoss, 0.0, options.labelSmoothing,
          hasWeight);
  });
}
