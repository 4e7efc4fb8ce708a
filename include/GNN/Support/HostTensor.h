//===- HostTensor.h - tensors in host memory --------------------*- C++ -*-===//
//
// Part of gnnc. The tensors that gnn-run reads, passes to compiled programs
// and writes: a dtype, a shape and row-major bytes.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_HOSTTENSOR_H
#define GNN_SUPPORT_HOSTTENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::gnn {

enum class DType { F32, F64, I64, I32, I8, Bool };

/// The safetensors name of a dtype ("F32", "I64", ...).
llvm::StringRef dtypeName(DType dtype);
std::optional<DType> parseDType(llvm::StringRef name);
size_t dtypeSize(DType dtype);

/// Row-major elements in storage of its own: copies are deep, moves are
/// cheap, and a buffer a compiled program returned can be taken over
/// without copying it.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;

  HostTensor() = default;
  HostTensor(const HostTensor &other);
  HostTensor &operator=(const HostTensor &other);
  HostTensor(HostTensor &&) = default;
  HostTensor &operator=(HostTensor &&) = default;

  int64_t numElements() const;
  size_t numBytes() const { return numElements() * dtypeSize(dtype); }
  void *data() { return bytes; }
  const void *data() const { return bytes; }
  template <typename T> T *as() { return reinterpret_cast<T *>(data()); }
  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(data());
  }
  /// Allocates zeroed storage (8-byte aligned) for the current dtype and
  /// shape, from the runtime's pool, its pages written (faulted in) now.
  void allocate();
  /// Allocates storage that is not zeroed, from the runtime's pool (large
  /// blocks are reused, not mapped and faulted in afresh): for tensors the
  /// caller fills at once.
  void allocateUninitialized();
  /// Takes over the elements at `elements` (row-major, for the current dtype
  /// and shape), which live in the block `block`, released by `release`.
  void adopt(void *block, void *elements, void (*release)(void *));
  /// Refers to the elements at `elements` (row-major, for the current dtype
  /// and shape) without owning them: their owner must outlive this tensor.
  void borrow(void *elements) { adopt(nullptr, elements, &releaseNothing); }
  /// A tensor that refers to this one's elements without owning them (see
  /// borrow): valid while this one lives and keeps its storage.
  HostTensor view() const {
    HostTensor v;
    v.dtype = dtype;
    v.shape = shape;
    v.borrow(const_cast<void *>(data()));
    return v;
  }
  /// The rows of `parts` (at least one; same dtype and row shape) one after
  /// the other.
  static HostTensor concatRows(llvm::ArrayRef<HostTensor> parts);
  /// A 1-D int64 tensor of `values` (node and edge ids, token ids, counts).
  static HostTensor ids(llvm::ArrayRef<int64_t> values);
  std::string describe() const;

private:
  static void releaseNothing(void *) {}
  std::unique_ptr<void, void (*)(void *)> block{nullptr, &releaseNothing};
  void *bytes = nullptr;
};

} // namespace mlir::gnn

#endif // GNN_SUPPORT_HOSTTENSOR_H
