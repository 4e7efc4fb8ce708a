//===- LinearShapes.h - operand checks of the dense layers ------*- C++ -*-===//
//
// Part of gnnc's runtime. What the CPU (OpenBLAS) and GPU (cuBLAS) linear
// layers and GEMMs share: row-major views of memrefs and the size checks.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_LINEARSHAPES_H
#define GNNC_RUNTIME_LINEARSHAPES_H

#include "gnnc/dense.h"
#include "gnnc/errors.h"

namespace gnnc {
/// Row-major matrix view with unit column stride (the GEMM layout).
struct Matrix {
  float *data;
  int64_t rows, cols, ld;
};

/// Views `m`; false if it is not laid out row-major with unit column stride.
inline bool view(const gnn_memref2d_f32 *m, Matrix &out) {
  out = {m->aligned + m->offset, m->sizes[0], m->sizes[1], m->strides[0]};
  int64_t minLd = out.cols > 1 ? out.cols : 1;
  // A single row's stride is never used (and may be anything), nor is an
  // empty matrix's layout; BLAS wants ld >= max(1, cols).
  if (out.rows <= 1 || out.cols == 0)
    out.ld = minLd;
  return (m->strides[1] == 1 || m->sizes[1] <= 1) && out.ld >= minLd;
}

/// The sizes of out = input @ weight^T + bias fit together; a mismatch is
/// reported into `context` (the calling program's) and the layer must
/// compute nothing.
inline bool linearSizesFit(gnn_rt_context *context, const Matrix &x,
                           const Matrix &w, const Matrix &y,
                           const gnn_memref1d_f32 *bias) {
  if (x.cols != w.cols)
    return gnn_rt_rows_mismatch(context, x.cols, w.cols, GNN_RT_SIZE_ITEM),
           false;
  if (y.rows != x.rows)
    return gnn_rt_rows_mismatch(context, y.rows, x.rows,
                                GNN_RT_SIZE_INPUT_ROWS),
           false;
  if (y.cols != w.rows)
    return gnn_rt_rows_mismatch(context, y.cols, w.rows, GNN_RT_SIZE_ITEM),
           false;
  if (bias && bias->sizes[0] != w.rows)
    return gnn_rt_rows_mismatch(context, bias->sizes[0], w.rows,
                                GNN_RT_SIZE_ITEM),
           false;
  return true;
}

/// The sizes of c = op(a) @ op(b) fit together (op transposes where asked);
/// a mismatch is reported as by linearSizesFit.
inline bool gemmSizesFit(gnn_rt_context *context, const Matrix &a,
                         const Matrix &b, const Matrix &c, bool transposeA,
                         bool transposeB) {
  int64_t rows = transposeA ? a.cols : a.rows;
  int64_t inner = transposeA ? a.rows : a.cols;
  int64_t bInner = transposeB ? b.cols : b.rows;
  int64_t cols = transposeB ? b.rows : b.cols;
  // With a transposed, its rows are the input rows the sum runs over.
  int64_t innerCode = transposeA ? GNN_RT_SIZE_INPUT_ROWS : GNN_RT_SIZE_ITEM;
  int64_t rowsCode = transposeA ? GNN_RT_SIZE_ITEM : GNN_RT_SIZE_INPUT_ROWS;
  if (inner != bInner)
    return gnn_rt_rows_mismatch(context, bInner, inner, innerCode), false;
  if (c.rows != rows)
    return gnn_rt_rows_mismatch(context, c.rows, rows, rowsCode), false;
  if (c.cols != cols)
    return gnn_rt_rows_mismatch(context, c.cols, cols, GNN_RT_SIZE_ITEM), false;
  return true;
}
} // namespace gnnc

#endif // GNNC_RUNTIME_LINEARSHAPES_H
