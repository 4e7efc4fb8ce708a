//===- GlobalsToBuffers.cpp - globals copied into allocated buffers -------===//
//
// Part of gnnc. A GPU kernel cannot address the host program's data, where
// bufferized constants live; buffers allocated by the GPU pipeline are in
// unified memory, so a function reads each global through a copy of its
// own, made once at its entry.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/Passes.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GLOBALSTOBUFFERSPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
struct GlobalsToBuffersPass
    : gnn::impl::GlobalsToBuffersPassBase<GlobalsToBuffersPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    SmallVector<memref::GetGlobalOp> reads;
    fn.walk([&](memref::GetGlobalOp read) {
      MemRefType type = read.getType();
      if (type.hasStaticShape() && type.getLayout().isIdentity())
        reads.push_back(read);
    });
    // Copies first, then the reads go: the builder's insertion point is
    // the function's first op, which may be one of the reads.
    OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
    llvm::StringMap<Value> copies;
    for (memref::GetGlobalOp read : reads) {
      Value &copy = copies[read.getName()];
      if (copy)
        continue;
      Location loc = read.getLoc();
      auto global =
          b.create<memref::GetGlobalOp>(loc, read.getType(), read.getName());
      copy = b.create<memref::AllocOp>(loc, read.getType());
      b.create<memref::CopyOp>(loc, global, copy);
    }
    for (memref::GetGlobalOp read : reads) {
      read.replaceAllUsesWith(copies.lookup(read.getName()));
      read.erase();
    }
  }
};
} // namespace
