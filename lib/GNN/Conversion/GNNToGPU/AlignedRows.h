//===- AlignedRows.h - 16-byte row accesses in the GPU kernels --*- C++ -*-===//
//
// Part of gnnc. The tiled attention kernels read whole rows (or slices of
// them) of q, k, v and the upstream gradient with one vector load each.
// LLVM lowers such a load to 16-byte loads (ld.global.v4.f32) only where it
// can prove the address 16-byte aligned, and a memref's pointer, offset and
// strides are run-time values: without proof, every element is a load of its
// own, four times the load instructions of the arithmetic they feed. So the
// host makes sure rows start aligned (a buffer whose rows do not is copied,
// which program-made buffers never need), the kernel's row loads are marked,
// and once kernels are functions of their own (after outlining and buffer
// deallocation, which cannot see through an assumption),
// gnn-gpu-assume-aligned-rows states it with llvm.intr.assume, from which
// LLVM's alignment inference takes it.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOGPU_ALIGNEDROWS_H
#define GNN_CONVERSION_GNNTOGPU_ALIGNEDROWS_H

#include "GNNToLoops/Lowering.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::gnn::loops {

/// Bytes of one vector access (ld.global.v4.f32), and its floats.
constexpr int64_t kAccessBytes = 16;
constexpr int64_t kAccessFloats = kAccessBytes / 4;

/// Whether slices of `slice` elements starting at multiples of `slice` in
/// the rows of `type` (f32, the last dim contiguous) can be 16-byte
/// accesses once rows start aligned.
bool vectorizableRows(MemRefType type, int64_t slice);

/// `memref` when each of its rows starts 16-byte aligned (its aligned
/// pointer, offset and every stride but the last's: checked at run time),
/// else a copy of it in a fresh buffer (GPU allocations are aligned), as a
/// value of the same type.
Value withAlignedRows(Lowering &l, Value memref);

/// A kernel input whose rows it reads in slices of `slice` elements: where
/// 16-byte accesses can serve them (vectorizableRows), `f`'s buffer
/// becomes withAlignedRows' and is added to `aligned`, the buffers whose
/// row loads markAlignedRow marks.
void alignRows(Lowering &l, Feature &f, int64_t slice,
               SmallVectorImpl<Value> &aligned);

/// Marks `load` (a kernel's row load) for gnn-gpu-assume-aligned-rows if
/// its buffer is one of `aligned`.
void markAlignedRow(vector::LoadOp load, ArrayRef<Value> aligned);

/// `size` elements of `memref` from `index` on (along its last dim) as
/// scalars, from one vector load (marked where `memref` is one of
/// `aligned`): a single address per row, not one per element, so that the
/// element offsets stay constants instead of registers.
SmallVector<Value> loadRow(Lowering &l, Value memref, ValueRange index,
                           int64_t size, ArrayRef<Value> aligned = {});

/// What makes each row of `memref` start 16-byte aligned: its aligned
/// pointer a multiple of 16 bytes, its offset and every stride but the
/// last a multiple of 4 elements (i1 values, all true).
SmallVector<Value> rowAlignmentConditions(OpBuilder &b, Location loc,
                                          Value memref);

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOGPU_ALIGNEDROWS_H
