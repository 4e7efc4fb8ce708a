//===- SharedTiles.cpp - source rows staged in shared memory --------------===//
//
// Part of gnnc. See SharedTiles.h.
//
//===----------------------------------------------------------------------===//

#include "SharedTiles.h"
#include "AlignedRows.h"
#include "Warp.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

namespace {
/// Floats a lane loads before it stores them: enough loads in flight to
/// pay one memory latency for them all, few enough registers beside the
/// rows and sums a lane keeps.
constexpr int64_t kStageFloats = 32;
} // namespace

int64_t loops::sharedTileBytes(ArrayRef<int64_t> widths) {
  int64_t floats = 0;
  for (int64_t width : widths)
    floats += kTileSources * width;
  return floats * int64_t(sizeof(float));
}

SmallVector<Value> loops::sharedTiles(Lowering &l, ArrayRef<int64_t> widths) {
  MLIRContext *ctx = l.b.getContext();
  Attribute workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value bytes = l.b.create<gpu::DynamicSharedMemoryOp>(
      MemRefType::get({ShapedType::kDynamic}, l.b.getI8Type(),
                      MemRefLayoutAttrInterface{}, workgroup));
  SmallVector<Value> tiles;
  int64_t offset = 0;
  for (int64_t width : widths) {
    tiles.push_back(l.b.create<memref::ViewOp>(
        MemRefType::get({kTileSources, width}, l.b.getF32Type(),
                        MemRefLayoutAttrInterface{}, workgroup),
        bytes, l.idx(offset), ValueRange{}));
    offset += sharedTileBytes(width);
  }
  return tiles;
}

void loops::stageRows(Lowering &l, Value memref, ValueRange head, Value tile,
                      int64_t width, Value t, Value last, Value lane,
                      ArrayRef<Value> alignedInputs) {
  int64_t slice =
      width % kAccessFloats == 0 && llvm::is_contained(alignedInputs, memref)
          ? kAccessFloats
          : 1;
  int64_t slicesPerRow = width / slice;
  int64_t slices = kTileSources * slicesPerRow;
  int64_t perLane = llvm::divideCeil(slices, kWarp);
  int64_t batch = std::max<int64_t>(1, kStageFloats / slice);
  auto sliceType = VectorType::get({slice}, l.b.getF32Type());
  for (int64_t first = 0; first < perLane; first += batch) {
    SmallVector<std::tuple<Value, Value, Value>> loaded;
    for (int64_t i = first; i < std::min(perLane, first + batch); ++i) {
      // Slice i * 32 + lane (lanes past the last slice repeat it: the
      // same value to the same place).
      Value s = l.b.create<arith::MinUIOp>(
          l.b.create<arith::AddIOp>(lane, l.idx(i * kWarp)), l.idx(slices - 1));
      Value r = l.b.create<arith::DivUIOp>(s, l.idx(slicesPerRow));
      Value c = l.b.create<arith::MulIOp>(
          l.b.create<arith::RemUIOp>(s, l.idx(slicesPerRow)), l.idx(slice));
      SmallVector<Value> at = {
          l.b.create<arith::MinUIOp>(l.b.create<arith::AddIOp>(t, r), last)};
      llvm::append_range(at, head);
      at.push_back(c);
      // Scalars as memref loads, which take any layout (a statistic's
      // column may be strided).
      Value x;
      if (slice == 1) {
        x = l.b.create<memref::LoadOp>(memref, at);
      } else {
        auto load = l.b.create<vector::LoadOp>(sliceType, memref, at);
        markAlignedRow(load, alignedInputs);
        x = load;
      }
      loaded.emplace_back(r, c, x);
    }
    for (auto [r, c, x] : loaded) {
      if (slice == 1)
        l.b.create<memref::StoreOp>(x, tile, ValueRange{r, c});
      else
        l.b.create<vector::StoreOp>(x, tile, ValueRange{r, c});
    }
  }
}
