//===- SafeTensors.h - read and write safetensors files ---------*- C++ -*-===//
//
// Part of gnnc. A reader that validates everything before use (header
// length, JSON, dtypes, shapes, offsets inside the file, overlaps) and names
// the tensor and the problem in its errors.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_SAFETENSORS_H
#define GNN_SUPPORT_SAFETENSORS_H

#include "GNN/Support/HostTensor.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace mlir::gnn {

/// Tensors by name, in name order.
using TensorMap = std::map<std::string, HostTensor>;

llvm::Expected<TensorMap> parseSafeTensors(llvm::StringRef bytes,
                                           llvm::StringRef what);
llvm::Expected<TensorMap> readSafeTensors(llvm::StringRef path);
std::string serializeSafeTensors(const TensorMap &tensors);
llvm::Error writeSafeTensors(llvm::StringRef path, const TensorMap &tensors);

/// The first floating-point tensor of `tensors` (in name order) that holds
/// NaN or infinity.
std::optional<std::string> firstNonFiniteTensor(const TensorMap &tensors);

} // namespace mlir::gnn

#endif // GNN_SUPPORT_SAFETENSORS_H
