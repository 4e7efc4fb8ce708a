//===- DataLayout.cpp - NVPTX's data layout on the kernels' module --------===//
//
// Part of gnnc. See gnn-gpu-data-layout in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GPUDATALAYOUTPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// The layout of LLVM's nvptx64 target (64-bit pointers).
constexpr llvm::StringLiteral kNVPTX64Layout =
    "e-i64:64-i128:128-v16:16-v32:32-n16:32:64";

struct GPUDataLayoutPass
    : public gnn::impl::GPUDataLayoutPassBase<GPUDataLayoutPass> {
  void runOnOperation() override {
    getOperation()->setAttr(LLVM::LLVMDialect::getDataLayoutAttrName(),
                            StringAttr::get(&getContext(), kNVPTX64Layout));
  }
};
} // namespace
