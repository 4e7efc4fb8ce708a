//===- RowCache.h - a decoder k/v cache -------------------------*- C++ -*-===//
//
// Part of gnnc. The rows of a decoder's self-attention keys or values, one
// per decoded node, in storage with room for more. Private to
// lib/GNN/Models/Inference.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_MODELS_INFERENCE_ROWCACHE_H
#define GNN_MODELS_INFERENCE_ROWCACHE_H

#include "GNN/Support/HostTensor.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace mlir::gnn::detail {

/// A decoder k/v cache: one row per decoded node (the outermost dimension),
/// in storage with room for more, so that a step appends its nodes' rows
/// without moving the earlier ones (the storage doubles when full). Rows
/// past the ones in use are zeros: an appended row is zero until the
/// @decode that it is handed to fills it. A model on a GPU keeps the
/// storage in unified memory, which @decode updates in place on the device
/// and the host never touches: the cache does not cross to the host.
class RowCache {
public:
  RowCache(std::vector<int64_t> rowShape, bool unified)
      : rowShape(std::move(rowShape)), unified(unified) {
    storage.shape = view.shape = shapeOf(0);
  }
  // A copy's view would still borrow the original's storage.
  RowCache(const RowCache &) = delete;
  RowCache &operator=(const RowCache &) = delete;
  RowCache(RowCache &&) = default;
  RowCache &operator=(RowCache &&) = default;

  /// Appends `fresh` zeroed rows, which the next @decode fills; returns all
  /// rows, a view that the next append invalidates.
  llvm::Expected<HostTensor *> append(int64_t fresh);

  /// Takes @decode's result for this cache: the view itself when the result
  /// is marked as the update of the cache argument (`gnn.updates`, as the
  /// built modules mark it), else (a module given as IR without the mark)
  /// its rows are copied in.
  llvm::Error store(const HostTensor &result, llvm::StringRef name);

private:
  std::vector<int64_t> shapeOf(int64_t rows) const;
  /// Zeroed storage of `rows` rows, in host or unified memory.
  llvm::Expected<HostTensor> zeroedStorage(int64_t rows) const;
  /// Copies `bytes` from `from` to `to`, both in the cache's memory.
  llvm::Error copy(void *to, const void *from, size_t bytes) const;

  std::vector<int64_t> rowShape;
  bool unified;
  HostTensor storage; // [capacity, rowShape...]
  HostTensor view;    // its first rows
};

/// Appends `fresh` rows to each of `caches` and sets `views` to their rows.
llvm::Error appendRows(std::vector<RowCache> &caches, int64_t fresh,
                       std::vector<HostTensor *> &views);

} // namespace mlir::gnn::detail

#endif // GNN_MODELS_INFERENCE_ROWCACHE_H
