//===- DenseProfile.h - time of the host's dense products ------*- C++ -*-===//
//
// Part of gnnc's runtime (internal). Once the host turns the profile on
// (gnn_rt_dense_profile_enable; gnnc's tools on GNNC_DENSE_PROFILE=1), the
// runtime times every dense product on the host (the
// layers, their gradients and the attention tiles) and prints, when the
// process exits, one row per product shape: calls, seconds, the share of
// all products' time and the rate of a call in GFLOP/s, to hold against
// the machine's sgemm peak. The rows of a layer vary with the batch, so a
// shape names the layer's fixed sides and counts its rows.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_DENSEPROFILE_H
#define GNNC_RUNTIME_DENSEPROFILE_H

#include <chrono>
#include <cstdint>

namespace gnnc::dense_profile {
/// Whether the profile is on.
bool enabled();

/// What computes a product.
enum class Kind {
  /// A dense layer (gnn_rt_linear, or gnn_rt_gemm for a layer): its widths
  /// are fixed, its rows (or, for a weight gradient, the rows it sums
  /// over) vary with the batch.
  Layer,
  /// An attention tile or another product whose sides all vary.
  Tile,
};

/// Adds the time from construction to destruction to the row of the
/// product c[rows x cols] = op(a)[rows x inner] @ op(b)[inner x cols].
class Product {
public:
  Product(Kind kind, bool transposeA, bool transposeB, int64_t rows,
          int64_t cols, int64_t inner);
  ~Product();
  Product(const Product &) = delete;
  Product &operator=(const Product &) = delete;

private:
  bool on;
  Kind kind;
  bool transposeA, transposeB;
  int64_t rows, cols, inner;
  std::chrono::steady_clock::time_point start;
};
} // namespace gnnc::dense_profile

#endif // GNNC_RUNTIME_DENSEPROFILE_H
