//===- ModelInputs.h - run-time inputs of the model functions ---*- C++ -*-===//
//
// Part of gnnc. The arguments that both architectures' @encode and @decode
// take from the runner (graphs, token ids, positions), declared in one
// place so that their names and order agree. Private to the builders.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_BUILDERS_MODELINPUTS_H
#define GNN_MODELS_BUILDERS_MODELINPUTS_H

#include "FunctionBuilder.h"
#include "GNN/Models/TransformerBuilder.h"

namespace mlir::gnn::models {

/// @encode's first arguments: the source graph (a complete graph per
/// example), the token ids and positions of its nodes, and the position
/// table.
struct EncoderInputs {
  Value graph, tokens, positions, pe;
};

inline EncoderInputs encoderInputs(FunctionBuilder &f) {
  // Braced initializers run in order: the arguments keep this order.
  return {f.input(model::kEE, f.graph(GraphStructure::Complete)),
          f.input(model::kSrcTokens, f.ids()),
          f.input(model::kSrcPositions, f.ids()), f.input(model::kPE, f.x())};
}

/// @decode's first arguments: the decoder and encoder-decoder graphs, the
/// token ids and positions of the new nodes, their cache slots, and the
/// position table. The decoder graph is general: an incremental step's
/// nodes attend to their hypotheses' cache rows, which are not a range.
/// Each new node attends to its example's encoder nodes, examples in order.
struct DecoderInputs {
  Value dd, ed, tokens, positions, slots, pe;
};

inline DecoderInputs decoderInputs(FunctionBuilder &f) {
  return {f.input(model::kDD, f.graph()),
          f.input(model::kED, f.graph(GraphStructure::Bipartite)),
          f.input(model::kTgtTokens, f.ids()),
          f.input(model::kTgtPositions, f.ids()),
          f.input(model::kCacheSlots, f.ids()),
          f.input(model::kPE, f.x())};
}

} // namespace mlir::gnn::models

#endif // GNN_MODELS_BUILDERS_MODELINPUTS_H
