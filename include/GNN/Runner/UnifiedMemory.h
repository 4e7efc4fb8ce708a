//===- UnifiedMemory.h - tensors that stay on the GPU -----------*- C++ -*-===//
//
// Part of gnnc. Tensors in the GPU's unified memory (gnn_cuda_alloc's),
// which programs compiled for the GPU read and update in place where a host
// tensor is copied in and out at every call: a trainer's parameters and
// Adam moments, a decoder's k/v caches and cross-attention k/v. The host
// may read and write them between calls like any tensor, at the price of
// their pages moving; the functions here fill and copy them on the device,
// so that pages the host never touches stay where the kernels read them.
// Each is an error without a device.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNNER_UNIFIEDMEMORY_H
#define GNN_RUNNER_UNIFIEDMEMORY_H

#include "GNN/Support/HostTensor.h"

#include "llvm/Support/Error.h"

namespace mlir::gnn {

/// A copy of `t` in unified memory.
llvm::Expected<HostTensor> unifiedCopy(const HostTensor &t);

/// A tensor of `dtype` and `shape` in unified memory, zeroed on the device.
llvm::Expected<HostTensor> unifiedZeros(DType dtype,
                                        std::vector<int64_t> shape);

/// Copies `bytes` from `from` to `to`, either or both in unified memory, by
/// the GPU's copy engines (between two unified blocks, on the device).
llvm::Error unifiedMemcpy(void *to, const void *from, size_t bytes);

} // namespace mlir::gnn

#endif // GNN_RUNNER_UNIFIEDMEMORY_H
