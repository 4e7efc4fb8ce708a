//===- AssumeAlignedRows.cpp - the kernels' row alignment stated ----------===//
//
// Part of gnnc. See gnn-gpu-assume-aligned-rows in Passes.td and
// AlignedRows.h.
//
//===----------------------------------------------------------------------===//

#include "AlignedRows.h"
#include "GNN/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GPUASSUMEALIGNEDROWSPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// The kernel argument a marked load reads (through casts, which keep the
/// pointer, offset and strides), or null.
BlockArgument kernelArgument(Value memref, gpu::GPUFuncOp kernel) {
  while (auto cast = memref.getDefiningOp<memref::CastOp>())
    memref = cast.getSource();
  auto argument = dyn_cast<BlockArgument>(memref);
  if (!argument || argument.getOwner() != &kernel.getBody().front())
    return {};
  return argument;
}

struct GPUAssumeAlignedRowsPass
    : public gnn::impl::GPUAssumeAlignedRowsPassBase<GPUAssumeAlignedRowsPass> {
  void runOnOperation() override {
    getOperation().walk([](gpu::GPUFuncOp kernel) {
      llvm::SetVector<BlockArgument> aligned;
      kernel.walk([&](vector::LoadOp load) {
        if (!load->removeAttr(gnn::GNNDialect::kAlignedRowsAttrName))
          return;
        if (BlockArgument argument = kernelArgument(load.getBase(), kernel))
          aligned.insert(argument);
      });
      if (aligned.empty())
        return;
      OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
      for (BlockArgument argument : aligned)
        for (Value holds :
             gnn::loops::rowAlignmentConditions(b, argument.getLoc(), argument))
          b.create<LLVM::AssumeOp>(argument.getLoc(), holds);
    });
  }
};
} // namespace
