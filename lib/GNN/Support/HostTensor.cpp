//===- HostTensor.cpp - tensors in host memory ----------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/HostTensor.h"
#include "gnnc/memory.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>

using namespace mlir::gnn;

llvm::StringRef mlir::gnn::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::I8:
    return "I8";
  case DType::Bool:
    return "BOOL";
  }
  return "?";
}

std::optional<DType> mlir::gnn::parseDType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("F32", DType::F32)
      .Case("F64", DType::F64)
      .Case("I64", DType::I64)
      .Case("I32", DType::I32)
      .Case("I8", DType::I8)
      .Case("BOOL", DType::Bool)
      .Default(std::nullopt);
}

size_t mlir::gnn::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::I8:
  case DType::Bool:
    return 1;
  }
  return 1;
}

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

HostTensor::HostTensor(const HostTensor &other)
    : dtype(other.dtype), shape(other.shape) {
  if (!other.data()) {
    allocate();
    return;
  }
  allocateUninitialized();
  std::memcpy(data(), other.data(), numBytes());
}

HostTensor &HostTensor::operator=(const HostTensor &other) {
  if (this != &other)
    *this = HostTensor(other);
  return *this;
}

void HostTensor::allocate() {
  // Zeroed by writing, not by calloc's lazily mapped zero pages: a compiled
  // program that reads such a page (an optimizer's moments) and then writes
  // it would take a second fault per page whose copy-on-write flushes the
  // page from every thread's TLB (an interrupt to each core). Written pages
  // cost one fault each; large blocks come from the runtime's pool.
  allocateUninitialized();
  std::memset(data(), 0, std::max<size_t>(numBytes(), 1));
}

void HostTensor::allocateUninitialized() {
  void *fresh = gnn_rt_alloc(std::max<size_t>(numBytes(), 1));
  if (!fresh)
    llvm::report_bad_alloc_error("HostTensor: out of memory");
  adopt(fresh, fresh, &gnn_rt_free);
}

void HostTensor::adopt(void *newBlock, void *elements,
                       void (*release)(void *)) {
  block = std::unique_ptr<void, void (*)(void *)>(newBlock, release);
  bytes = elements;
}

HostTensor HostTensor::ids(llvm::ArrayRef<int64_t> values) {
  HostTensor t;
  t.dtype = DType::I64;
  t.shape = {int64_t(values.size())};
  t.allocateUninitialized();
  if (!values.empty())
    std::memcpy(t.data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

HostTensor HostTensor::concatRows(llvm::ArrayRef<HostTensor> parts) {
  assert(!parts.empty() && "nothing to join");
  if (parts.size() == 1)
    return parts[0];
  HostTensor joined;
  joined.dtype = parts[0].dtype;
  joined.shape = parts[0].shape;
  joined.shape[0] = 0;
  for (const HostTensor &part : parts) {
    assert(part.dtype == joined.dtype &&
           part.shape.size() == joined.shape.size() && "rows of another shape");
    joined.shape[0] += part.shape[0];
  }
  joined.allocateUninitialized();
  char *to = static_cast<char *>(joined.data());
  for (const HostTensor &part : parts) {
    std::memcpy(to, part.data(), part.numBytes());
    to += part.numBytes();
  }
  return joined;
}

std::string HostTensor::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  // A shape of absurd rank (from a hostile file) is shown in part.
  constexpr size_t kShown = 8;
  os << dtypeName(dtype) << "[";
  for (size_t i = 0; i < shape.size() && i < kShown; ++i)
    os << (i ? ", " : "") << shape[i];
  if (shape.size() > kShown)
    os << ", ... (" << shape.size() << " dimensions)";
  os << "]";
  return os.str();
}
