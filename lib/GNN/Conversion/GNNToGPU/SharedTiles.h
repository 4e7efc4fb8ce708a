//===- SharedTiles.h - source rows staged in shared memory ------*- C++ -*-===//
//
// Part of gnnc. The tiled attention kernels (forward and backward) walk a
// warp's union of source ranges in lockstep, every lane reading the same
// rows at each step. Read from global memory, each step costs the warp a
// memory latency that a warp or two per scheduler cannot hide; staged a
// tile of kTileSources steps at a time in shared memory (a warp to a block,
// coalesced 16-byte slices, several loads in flight per lane before their
// stores), the tile costs about one latency and each step a shared-memory
// read.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOGPU_SHAREDTILES_H
#define GNN_CONVERSION_GNNTOGPU_SHAREDTILES_H

#include "GNNToLoops/Lowering.h"

namespace mlir::gnn::loops {

/// Source rows a warp stages at a time.
constexpr int64_t kTileSources = 32;
/// The most dynamic shared memory a launch gets without asking the driver
/// for more; rows that need more are read from global memory.
constexpr int64_t kSharedTileBytesLimit = 48 * 1024;

/// Bytes of shared memory for tiles of kTileSources f32 rows of each of
/// `widths`, one after the other.
int64_t sharedTileBytes(ArrayRef<int64_t> widths);

/// Those tiles as views (memref<kTileSources x width x f32> in workgroup
/// memory) of the launch's dynamic shared memory; built in the launch body.
SmallVector<Value> sharedTiles(Lowering &l, ArrayRef<int64_t> widths);

/// Rows t, t + 1, ..., t + kTileSources - 1 of `memref` (f32, indexed
/// [row, head..., column], `width` columns) into `tile`, rows past `last`
/// repeating it. The warp's 32 lanes (`lane`, the thread id in a block of
/// one warp) take consecutive slices, 16 bytes each where `memref` is one
/// of `alignedInputs` (rows start aligned) and `width` allows.
void stageRows(Lowering &l, Value memref, ValueRange head, Value tile,
               int64_t width, Value t, Value last, Value lane,
               ArrayRef<Value> alignedInputs);

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOGPU_SHAREDTILES_H
