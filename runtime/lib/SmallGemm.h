//===- SmallGemm.h - small GEMMs on JIT-compiled kernels --------*- C++ -*-===//
//
// Part of gnnc's runtime. The attention tiles multiply matrices of a few
// dozen to a few hundred rows on each thread, many times a call, and the
// dense layers of small models split their rows over the threads into
// products a few hundred wide. OpenBLAS copies both operands into packed
// panels and clears the output for beta = 0 on every such call; libxsmm
// compiles one kernel per shape that keeps the output tile in registers and
// reads the operands where they lie.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_SMALLGEMM_H
#define GNNC_RUNTIME_SMALLGEMM_H

#include "LinearShapes.h"

namespace gnnc {
/// The largest side (rows, columns, inner size) given to a small kernel:
/// larger products are OpenBLAS's, whose blocking for caches they need.
constexpr int64_t kSmallGemmMaxSide = 512;
/// Sides of small kernels are multiples of this. libxsmm keeps every kernel
/// it compiles (about 9 KB each) for the life of the process: tiles of
/// every size up to 64 x 256 would compile tens of thousands (16,384 shapes
/// of one product took 145 MB); whole multiples of 8 are a few hundred per
/// product, and the full tiles of long sequences are among them.
constexpr int64_t kSmallGemmQuantum = 8;

/// c = op(a) @ op(b) + beta * c on the calling thread through a libxsmm
/// kernel (op transposes where asked; b transposed is first copied into a
/// buffer of its own). Returns false, writing nothing, where no kernel
/// applies: alpha other than 1, beta other than 0 or 1, a side above
/// kSmallGemmMaxSide or not a multiple of kSmallGemmQuantum, no kernel for
/// this CPU. The caller asks only where its runtime instance's settings
/// allow small kernels. Sizes must fit (gemmSizesFit) and be non-zero.
bool smallGemm(const Matrix &a, const Matrix &b, const Matrix &c,
               bool transposeA, bool transposeB, float alpha, float beta);

/// Rows of c per kernel call of layerGemm (for op(a) = a), and rows of a
/// and b per call (for op(a) = transpose(a), summed into c).
constexpr int64_t kLayerRows = 64;
constexpr int64_t kLayerInner = 128;
/// The widest layer layerGemm takes. Up to 256 wide, libxsmm's kernels ran
/// 4-100% faster than OpenBLAS's packed sgemm on a thread's 950 rows
/// (gnn-bench-dense, 2-core Xeon, AVX-512: 167 against 138 GFLOP/s at
/// 128 x 128, 148 against 73 at 128 x 29, 153 against 147 at 256 x 256);
/// at 512 neither was reliably ahead, and OpenBLAS blocks the wider ones
/// for the caches.
constexpr int64_t kLayerMaxWidth = 256;

/// c = op(a) @ op(b) + beta * c for a dense layer on the calling thread
/// (not both transposed), through libxsmm. Where op(a) = a (the layer and
/// its input gradient), c's rows go kLayerRows at a time (b transposed is
/// copied once); where op(a) = transpose(a) (its weight gradient, summed
/// over the rows of a and b), kLayerInner of those rows at a time. The
/// other sides are the layer's widths, any value up to kLayerMaxWidth: a
/// layer compiles a few kernels (its full blocks and each remainder) for
/// the process's life. Returns false, writing nothing, where no kernel
/// applies (alpha and beta as for smallGemm, wider layers, or
/// an empty product). Sizes must fit (gemmSizesFit).
bool layerGemm(const Matrix &a, const Matrix &b, const Matrix &c,
               bool transposeA, bool transposeB, float alpha, float beta);

/// out = transpose(in); out must be in.cols x in.rows.
void transpose(const Matrix &in, const Matrix &out);
} // namespace gnnc

#endif // GNNC_RUNTIME_SMALLGEMM_H
