//===- SameTensors.h - bitwise comparison of tensor maps --------*- C++ -*-===//
//
// Part of gnnc's unit tests.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_UNITTESTS_SAMETENSORS_H
#define GNN_UNITTESTS_SAMETENSORS_H

#include "GNN/Support/SafeTensors.h"

#include <cstring>

namespace mlir::gnn::testing {
/// The same names, shapes and bytes.
inline bool sameBytes(const TensorMap &a, const TensorMap &b) {
  if (a.size() != b.size())
    return false;
  for (const auto &[name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.shape != t.shape ||
        std::memcmp(it->second.data(), t.data(), t.numBytes()) != 0)
      return false;
  }
  return true;
}
} // namespace mlir::gnn::testing

#endif // GNN_UNITTESTS_SAMETENSORS_H
