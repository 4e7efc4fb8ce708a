//===- TransformerLayers.h - the Transformer's layer bodies -----*- C++ -*-===//
//
// Part of gnnc. The layer bodies that the inference functions (@encode,
// @decode) and the training functions build alike. Private to
// lib/GNN/Models.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_BUILDERS_TRANSFORMERLAYERS_H
#define GNN_MODELS_BUILDERS_TRANSFORMERLAYERS_H

#include "FunctionBuilder.h"

namespace mlir::gnn::models {

/// "encoder.layers.3".
std::string layerName(const char *stack, int64_t i);

/// Where cross-attention of decoder layer `L` takes q/k/v and output.
std::pair<std::string, std::string> crossModules(const ModelConfig &c,
                                                 const std::string &L);

/// One encoder layer (pre-norm self-attention, then feed-forward), its
/// weights named under kLayerPrefix; with `weights`, its attention's
/// per-edge weights are a second result. Dropout (when `f` trains with it)
/// on the attention and feed-forward outputs and inside the feed-forward.
FunctionBuilder::Named encoderLayer(FunctionBuilder &f, Value x, Value graph,
                                    bool weights);

/// The rest of a decoder layer once the new nodes' self-attention k/v are
/// known: in = {y, q, k (all), v (all), dd, ed, cross k, cross v}; with
/// `weights`, the self- and cross-attention's per-edge weights follow the
/// result.
FunctionBuilder::Named decoderLayer(FunctionBuilder &f, ValueRange in,
                                    bool last, bool weights);

/// The decoder layer's self-attention q, k, v of `y`.
FunctionBuilder::Named decoderSelfQKV(FunctionBuilder &l, ValueRange in);

/// The cross-attention k, v of the memory in[0].
FunctionBuilder::Named crossKV(FunctionBuilder &l, ValueRange in);

} // namespace mlir::gnn::models

#endif // GNN_MODELS_BUILDERS_TRANSFORMERLAYERS_H
