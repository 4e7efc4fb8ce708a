//===- HostTensor.cpp - tensors in host memory ----------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Runner/HostTensor.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

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

void HostTensor::allocate() { storage.assign((numBytes() + 7) / 8, 0); }

std::string HostTensor::describe() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << dtypeName(dtype) << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}
