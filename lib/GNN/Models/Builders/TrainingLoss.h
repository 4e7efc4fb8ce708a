//===- TrainingLoss.h - what the training functions share -------*- C++ -*-===//
//
// Part of gnnc. The run-time inputs of a training function and the
// label-smoothed loss, shared by the Transformer's and the Universal
// Transformer's training builders. Private to lib/GNN/Models.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_BUILDERS_TRAININGLOSS_H
#define GNN_MODELS_BUILDERS_TRAININGLOSS_H

#include "FunctionBuilder.h"
#include "GNN/Models/TrainingBuilder.h"

namespace mlir::gnn::models {

struct LossInputs {
  Value labelIds, padIds, labelWeights;
};

/// A training function's arguments, in order (TrainingBuilder.h); timePE
/// and the ACT weights only for a Universal Transformer.
struct TrainingInputs {
  Value ee, dd, ed, srcTokens, srcPositions, tgtTokens, tgtPositions, pe,
      timePE;
  LossInputs loss;
  Value actWeightsEnc, actWeightsDec;
};

/// Adds the inputs to `f`, and `rng` with dropout at `dropout` if above 0.
TrainingInputs trainingInputs(FunctionBuilder &f, bool universal,
                              double dropout);

/// The batch's label-smoothed KL loss of log-probs `lp` ([N, V]),
/// weighted per node by label_weights, as a [1, 1] tensor.
Value smoothedLoss(FunctionBuilder &f, Value lp, const LossInputs &in,
                   double eps);

/// The Universal Transformer's training function `name`: the objective
/// (loss + act_loss), loss, act_loss, log_probs, enc_steps, dec_steps.
void buildUniversalLoss(ModuleOp module, const ModelConfig &c,
                        llvm::StringRef name, double dropout, double eps,
                        llvm::function_ref<bool(llvm::StringRef)> hasWeight);

} // namespace mlir::gnn::models

#endif // GNN_MODELS_BUILDERS_TRAININGLOSS_H
