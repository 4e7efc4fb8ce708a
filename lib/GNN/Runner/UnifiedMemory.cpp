//===- UnifiedMemory.cpp - tensors that stay on the GPU -------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/UnifiedMemory.h"
#include "RunnerDetail.h"

#include "gnnc/cuda.h"
#include "gnnc/errors.h"

#include <optional>

using namespace mlir::gnn;
using mlir::gnn::detail::error;

namespace {
/// The runtime's report of the failure that just happened, as an error.
llvm::Error reported(const llvm::Twine &what) {
  char message[512];
  (void)gnn_rt_take_error(message, sizeof(message));
  return error(what + ": " + message);
}

/// The bytes of `t`'s block: whole words, which gnn_cuda_zero sets.
size_t blockBytes(const HostTensor &t) { return (t.numBytes() + 3) / 4 * 4; }

/// A tensor of `dtype` and `shape` adopting a new unified block, or none
/// (reported).
std::optional<HostTensor> unifiedTensor(DType dtype,
                                        std::vector<int64_t> shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  void *block = gnn_cuda_alloc(blockBytes(t));
  if (!block)
    return std::nullopt;
  t.adopt(block, block, &gnn_cuda_free);
  return t;
}
} // namespace

llvm::Expected<HostTensor> mlir::gnn::unifiedCopy(const HostTensor &t) {
  std::optional<HostTensor> u = unifiedTensor(t.dtype, t.shape);
  if (!u || !gnn_cuda_copy(u->data(), t.data(), t.numBytes()))
    return reported("cannot keep a tensor in unified memory");
  return std::move(*u);
}

llvm::Expected<HostTensor> mlir::gnn::unifiedZeros(DType dtype,
                                                   std::vector<int64_t> shape) {
  std::optional<HostTensor> u = unifiedTensor(dtype, std::move(shape));
  if (!u || !gnn_cuda_zero(u->data(), blockBytes(*u)))
    return reported("cannot make a zeroed tensor in unified memory");
  return std::move(*u);
}

llvm::Error mlir::gnn::unifiedMemcpy(void *to, const void *from, size_t bytes) {
  if (!gnn_cuda_copy(to, from, bytes))
    return reported("cannot copy unified memory");
  return llvm::Error::success();
}
