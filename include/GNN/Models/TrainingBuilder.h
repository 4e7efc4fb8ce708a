//===- TrainingBuilder.h - the Transformer's training loss as IR -*- C++
//-*-===//
//
// Part of gnnc. The teacher-forced forward of a whole batch and its
// label-smoothed loss (docs/training.md) as one gnn
// function, for the differentiation pass to write the training step from.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_TRAININGBUILDER_H
#define GNN_MODELS_TRAININGBUILDER_H

#include "GNN/Models/TransformerBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::gnn {

/// The functions of a training module and their run-time arguments:
///
///   @train_loss(ee, dd, ed, src_tokens, src_positions, tgt_tokens,
///               tgt_positions, pe, label_ids, pad_ids, label_weights,
///               [rng], weights) -> objective, loss, log_probs
///   @eval_loss(the same without rng) -> objective, loss, log_probs
///
/// and for a Universal Transformer
///
///   @train_loss(ee, dd, ed, src_tokens, src_positions, tgt_tokens,
///               tgt_positions, pe, time_pe, label_ids, pad_ids,
///               label_weights, act_weights_enc, act_weights_dec, [rng],
///               weights)
///       -> objective, loss, act_loss, log_probs, enc_steps, dec_steps
///
/// Every decoder node is computed (no cache). `label_ids` holds, for
/// decoder node n with label y, the index n * tgt_vocab + y into the
/// flattened log-probs, `pad_ids` n * tgt_vocab + <pad>; `label_weights`
/// ([N, 1]) is 1 / n_tokens for each node (0 for a node labelled <pad>), so
/// that `loss` (a 0-d tensor) is the batch's loss of training.md: the
/// smoothed KL divergence summed over nodes and classes over n_tokens.
/// `act_weights_*` ([nodes, 1]) hold act_loss_weight / (all encoder and
/// decoder nodes), so that `act_loss` = act_loss_weight * mean(r) over the
/// nodes' remainders. `objective` (what the gradient is of) is `loss`, plus
/// `act_loss` for a Universal Transformer.
/// `rng` (tensor<2xi64>: Philox seed and first counter offset) exists when
/// training with dropout; @eval_loss never drops out.
namespace model {
constexpr const char *kTrainLoss = "train_loss", *kEvalLoss = "eval_loss",
                     *kLoss = "loss", *kLabelIds = "label_ids",
                     *kPadIds = "pad_ids", *kLabelWeights = "label_weights",
                     *kRng = "rng", *kObjective = "objective",
                     *kActLoss = "act_loss",
                     *kActWeightsEnc = "act_weights_enc",
                     *kActWeightsDec = "act_weights_dec";
} // namespace model

/// The training step of a training module, built from its differentiated
/// loss @train_grad (see buildTrainStep):
///
///   @train_step(<@train_grad's run-time inputs>, adam,
///               param.<p>, adam.m.<p>, adam.v.<p>, [accum.<p>], ...)
///       -> <@train_grad's results but the gradients>,
///          param.<p>, adam.m.<p>, adam.v.<p>, [accum.<p>], ...
///
/// calls @train_grad and sums each parameter's gradients (those of every
/// argument that is that parameter, in the order of their names) and, with
/// accumulation, the sum kept in accum.<p>. On an update step (adam[6] > 0)
/// Adam updates the parameter from that sum and accum.<p> is cleared;
/// otherwise accum.<p> keeps the sum. Without accumulation (an update every
/// batch) there is no accum.<p>. A non-finite objective changes nothing. Every
/// parameter, moment and sum is updated in place (writable arguments whose
/// results are their updates). Adam is torch.optim.Adam in float32: m += (1 -
/// b1)(g - m); v = v b2 + (1 - b2) g^2; p += step (m / (sqrt(v) / c2 + eps)).
/// `adam` (tensor<7xf32>) holds the fields of AdamField in its order. The
/// updates are private functions `train_update` (made unique), each of a few
/// parameters.
///
/// With accumulation there is also
///   @train_apply(adam, param.<p>, adam.m.<p>, adam.v.<p>, accum.<p>, ...)
///       -> param.<p>, adam.m.<p>, adam.v.<p>, accum.<p>, ...
/// the update of a step from the sums in accum.<p> alone (no batch): a
/// data-parallel run adds every rank's gradients into accum.<p> in the
/// order @train_step adds them, then applies them with it.
namespace model {
constexpr const char *kTrainStep = "train_step", *kAdamHyper = "adam";
constexpr const char *kTrainUpdate = "train_update";
constexpr const char *kTrainApply = "train_apply";

/// The layout of @train_step's `adam` argument, which the trainer writes
/// and the step reads: one float32 per field, in this order.
enum AdamField : int64_t {
  kAdamOneMinusBeta1, // 1 - b1
  kAdamBeta2,         // b2
  kAdamOneMinusBeta2, // 1 - b2
  kAdamStep,          // -lr / (1 - b1^t)
  kAdamCorrection2,   // sqrt(1 - b2^t)
  kAdamEpsilon,       // eps
  kAdamUpdate,        // 1 on an update step, else 0
  kAdamHyperSize
};

/// The prefixes under which a trainer's state names each parameter's
/// tensors: the parameter, Adam's moments and the accumulated gradients.
/// @train_step's writable arguments are named so too.
constexpr const char *kParamPrefix = "param.", *kMoment1Prefix = "adam.m.",
                     *kMoment2Prefix = "adam.v.", *kAccumPrefix = "accum.";
} // namespace model

struct TrainingBuildOptions {
  /// Dropout rate of @train_loss (0: none, and no rng argument).
  double dropout = 0.0;
  /// Label smoothing eps in [0, 1).
  double labelSmoothing = 0.1;
};

/// A parameter that @train_step trains: the arguments of @train_grad that
/// are this one tensor (several for tied weights).
struct TrainedParameter {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<std::string> arguments;
};

/// Adds @train_step to `grad`'s module; fails (with a diagnostic) if `grad`
/// lacks an objective, a gradient of a parameter's argument, or has a
/// gradient of the wrong shape.
LogicalResult buildTrainStep(func::FuncOp grad, const ModelConfig &config,
                             llvm::ArrayRef<TrainedParameter> parameters,
                             bool accumulate);

/// The training module of `config`'s model; null (with
/// the verifier's diagnostics emitted on `context`) if a builder made
/// invalid IR. `hasWeight` says which optional tensors (biases) exist.
OwningOpRef<ModuleOp>
buildTrainingModule(MLIRContext &context, const ModelConfig &config,
                    llvm::function_ref<bool(llvm::StringRef)> hasWeight,
                    const TrainingBuildOptions &options);

} // namespace mlir::gnn

#endif // GNN_MODELS_TRAININGBUILDER_H
