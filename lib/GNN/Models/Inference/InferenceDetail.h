//===- InferenceDetail.h - shared by the inference files --------*- C++ -*-===//
//
// Part of gnnc. Helpers and the private state types of TransformerModel
// that its loading, execution and search files share. Private to
// lib/GNN/Models/Inference.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_INFERENCEDETAIL_H
#define GNN_MODELS_INFERENCEDETAIL_H

#include "GNN/Models/TransformerBuilder.h"
#include "GNN/Models/TransformerModel.h"
#include "RowCache.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>

namespace mlir::gnn::detail {
using llvm::Error;
using llvm::Expected;

inline Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

struct GraphDeleter {
  void operator()(gnn_graph *g) const { gnn_graph_free(g); }
};
using GraphPtr = std::unique_ptr<gnn_graph, GraphDeleter>;

/// Wraps a runtime graph builder's result.
inline Expected<GraphPtr> built(int status, gnn_graph *graph, const char *err) {
  if (status != 0)
    return fail(llvm::Twine("cannot build a graph: ") + err);
  return GraphPtr(graph);
}

inline Expected<GraphPtr> fromCoo(int64_t numSrc, int64_t numDst,
                                  const std::vector<int64_t> &src,
                                  const std::vector<int64_t> &dst) {
  gnn_graph *g = nullptr;
  char err[256] = {0};
  int status = gnn_graph_from_coo(numSrc, numDst, int64_t(src.size()),
                                  src.data(), dst.data(), &g, err, sizeof(err));
  return built(status, g, err);
}

inline HostTensor ids(llvm::ArrayRef<int64_t> values) {
  return HostTensor::ids(values);
}

inline HostTensor zeros(std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = DType::F32;
  t.shape = std::move(shape);
  t.allocate();
  return t;
}

/// The sinusoidal position table of semantics.md, [rows, d], computed in
/// float32 as PyTorch computes it.
HostTensor sinusoidTable(int64_t rows, int64_t d);

/// The position table `name` of `weights` ([1, N, d], viewed as [N, d]),
/// or the sinusoids of `rows` positions when the weights have none.
HostTensor positionTable(const TensorMap &weights, llvm::StringRef name,
                         int64_t rows, int64_t d);

/// `module` as gnn IR text.
std::string printModule(ModuleOp module);

/// Results of one call, by name.
using Outputs = std::map<std::string, HostTensor>;

inline Expected<HostTensor> take(Outputs &outputs, const std::string &name,
                                 llvm::StringRef entry) {
  auto it = outputs.find(name);
  if (it == outputs.end())
    return fail("@" + entry + " returns no '" + name + "'");
  return std::move(it->second);
}
/// Moves the per-layer results kName(i) / vName(i) of `entry` into ks / vs.
inline Error takeLayers(Outputs &outputs, int64_t layers,
                        std::string (*kName)(int64_t),
                        std::string (*vName)(int64_t), llvm::StringRef entry,
                        std::vector<HostTensor> &ks,
                        std::vector<HostTensor> &vs) {
  ks.clear();
  vs.clear();
  for (int64_t i = 0; i < layers; ++i) {
    Expected<HostTensor> k = take(outputs, kName(i), entry);
    if (!k)
      return k.takeError();
    Expected<HostTensor> v = take(outputs, vName(i), entry);
    if (!v)
      return v.takeError();
    ks.push_back(std::move(*k));
    vs.push_back(std::move(*v));
  }
  return Error::success();
}

} // namespace mlir::gnn::detail

namespace mlir::gnn {
/// Run-time arguments of one call, by name.
struct TransformerModel::Inputs {
  std::map<std::string, const gnn_graph *> graphs;
  std::map<std::string, const HostTensor *> tensors;
  /// Tensors the program updates in place (the decoder's k/v caches).
  std::map<std::string, HostTensor *> updated;
};

/// An encoded batch and the decoder's k/v cache.
struct TransformerModel::Encoded {
  std::vector<int64_t> offsets, lengths;
  int64_t numSrc = 0;
  std::vector<HostTensor> crossK, crossV;
  std::vector<detail::RowCache> selfK, selfV;
  int64_t cacheRows = 0;
  /// ACT step counts of the source tokens (universal_transformer).
  std::optional<HostTensor> encSteps;
  /// For attention maps: the source graph and @encode's attention weights.
  detail::GraphPtr ee;
  detail::Outputs encAttention;
};

/// A decoder sequence: its tokens (from <sos>) and the cache rows of the
/// nodes computed so far.
struct TransformerModel::Hypothesis {
  int64_t example = 0;
  Sequence tokens = {kSos};
  std::vector<int64_t> rows;
  double logProb = 0.0;
  double score = 0.0;
  bool finished = false;
};
} // namespace mlir::gnn

#endif // GNN_MODELS_INFERENCEDETAIL_H
