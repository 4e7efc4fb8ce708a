//===- HostTensor.h - tensors in host memory --------------------*- C++ -*-===//
//
// Part of gnnc. The tensors that gnn-run reads, passes to compiled programs
// and writes: a dtype, a shape and row-major bytes.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNNER_HOSTTENSOR_H
#define GNN_RUNNER_HOSTTENSOR_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::gnn {

enum class DType { F32, F64, I64, I32, I8, Bool };

/// The safetensors name of a dtype ("F32", "I64", ...).
llvm::StringRef dtypeName(DType dtype);
std::optional<DType> parseDType(llvm::StringRef name);
size_t dtypeSize(DType dtype);

struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Row-major elements; 8-byte aligned storage.
  std::vector<uint64_t> storage;

  int64_t numElements() const;
  size_t numBytes() const { return numElements() * dtypeSize(dtype); }
  void *data() { return storage.data(); }
  const void *data() const { return storage.data(); }
  template <typename T> T *as() { return reinterpret_cast<T *>(data()); }
  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(data());
  }
  /// Allocates zeroed storage for the current dtype and shape.
  void allocate();
  std::string describe() const;
};

} // namespace mlir::gnn

#endif // GNN_RUNNER_HOSTTENSOR_H
