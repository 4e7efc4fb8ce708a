//===- DeviceCopies.cpp - a GPU program's buffer copies as kernels --------===//
//
// Part of gnnc. See gnn-device-copies in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"
#include "GNN/Transforms/ViewedBuffer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_DEVICECOPIESPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// Whether a kernel can address the buffer `v` views: not the host's stack,
/// nor a global of the host program's data.
bool deviceAddressable(Value v) {
  return !isa_and_nonnull<memref::AllocaOp, memref::GetGlobalOp>(
      gnn::viewedBuffer(v).getDefiningOp());
}

/// Whether `copy` is the host's: not inside a parallel loop (an element
/// form, which becomes a kernel itself) or a kernel.
bool onHost(memref::CopyOp copy) {
  return !copy->getParentOfType<scf::ParallelOp>() &&
         !copy->getParentOfType<scf::ForallOp>() &&
         !copy->getParentOfType<gpu::LaunchOp>() &&
         !copy->getParentOfType<gpu::GPUFuncOp>();
}

/// One parallel iteration per element of `copy`, its flat row-major index
/// split into the indices of each dim.
void copyByElements(memref::CopyOp copy) {
  ImplicitLocOpBuilder b(copy.getLoc(), copy);
  Value source = copy.getSource(), target = copy.getTarget();
  auto type = cast<MemRefType>(source.getType());
  Value zero = b.create<arith::ConstantIndexOp>(0);
  Value one = b.create<arith::ConstantIndexOp>(1);
  SmallVector<Value> sizes;
  Value count;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    sizes.push_back(
        type.isDynamicDim(d)
            ? b.create<memref::DimOp>(source, d).getResult()
            : b.create<arith::ConstantIndexOp>(type.getDimSize(d)).getResult());
    count = count ? b.create<arith::MulIOp>(count, sizes.back()).getResult()
                  : sizes.back();
  }
  if (!count)
    count = one;
  b.create<scf::ParallelOp>(
      ValueRange{zero}, ValueRange{count}, ValueRange{one},
      [&](OpBuilder &nested, Location loc, ValueRange ivs) {
        ImplicitLocOpBuilder e(loc, nested);
        SmallVector<Value> at(type.getRank());
        Value rest = ivs.front();
        for (int64_t d = type.getRank() - 1; d >= 0; --d) {
          if (d == 0) {
            at[d] = rest;
            break;
          }
          at[d] = e.create<arith::RemUIOp>(rest, sizes[d]);
          rest = e.create<arith::DivUIOp>(rest, sizes[d]);
        }
        Value x = e.create<memref::LoadOp>(source, at);
        e.create<memref::StoreOp>(x, target, at);
      });
  copy.erase();
}

struct DeviceCopiesPass : gnn::impl::DeviceCopiesPassBase<DeviceCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      if (isa<MemRefType>(copy.getSource().getType()) && onHost(copy) &&
          deviceAddressable(copy.getSource()) &&
          deviceAddressable(copy.getTarget()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies)
      copyByElements(copy);
  }
};
} // namespace
