//===- HeapLargeAllocas.cpp - large stack buffers to the heap -------------===//
//
// Part of gnnc. A program's stack buffers share a thread's stack of a few
// MiB; large or dynamically sized ones become heap buffers, which the
// deallocation pipeline frees.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <optional>

namespace mlir::gnn {
#define GEN_PASS_DEF_HEAPLARGEALLOCASPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// The bytes of a static `type` (saturated at INT64_MAX); none if its
/// sizes are dynamic or its element's size is not known here.
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  Type element = type.getElementType();
  int64_t bits;
  if (element.isIndex())
    bits = 64;
  else if (element.isIntOrFloat())
    bits = element.getIntOrFloatBitWidth();
  else
    return std::nullopt;
  uint64_t bytes = llvm::SaturatingMultiply(
      uint64_t(gnn::saturatedElementCount(type.getShape())),
      uint64_t(bits + 7) / 8);
  return int64_t(std::min<uint64_t>(bytes, INT64_MAX));
}

struct HeapLargeAllocasPass
    : gnn::impl::HeapLargeAllocasPassBase<HeapLargeAllocasPass> {
  using HeapLargeAllocasPassBase::HeapLargeAllocasPassBase;

  void runOnOperation() override {
    // A walk, not the greedy driver: the program's other ops stay as they
    // are (unused buffers included).
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](memref::AllocaOp alloca) {
      std::optional<int64_t> bytes = staticBytes(alloca.getType());
      if (bytes && *bytes <= maxStackBytes)
        return;
      rewriter.setInsertionPoint(alloca);
      rewriter.replaceOpWithNewOp<memref::AllocOp>(
          alloca, alloca.getType(), alloca.getDynamicSizes(),
          alloca.getSymbolOperands(), alloca.getAlignmentAttr());
    });
  }
};
} // namespace
