//===- CheckDimIndices.cpp - dimension queries within their rank ----------===//
//
// Part of gnnc. Rejects `tensor.dim` and `memref.dim` with a constant index
// outside their operand's rank before the lowering's canonicalizations,
// some of whose upstream patterns index the operand's shape with it
// unchecked.
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ShapedOpInterfaces.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_CHECKDIMINDICESPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
struct CheckDimIndicesPass
    : gnn::impl::CheckDimIndicesPassBase<CheckDimIndicesPass> {
  void runOnOperation() override {
    bool outOfRange = false;
    getOperation()->walk([&](ShapedDimOpInterface dim) {
      auto shaped = dyn_cast<ShapedType>(dim.getShapedValue().getType());
      std::optional<int64_t> index = getConstantIntValue(dim.getDimension());
      if (!shaped || !shaped.hasRank() || !index)
        return;
      int64_t rank = shaped.getRank();
      if (*index >= 0 && *index < rank)
        return;
      outOfRange = true;
      // (The verifiers reject rank-0 operands.)
      dim->emitOpError() << "dimension index " << *index
                         << " is out of range for a rank-" << rank
                         << " operand (0 to " << rank - 1 << ")";
    });
    if (outOfRange)
      signalPassFailure();
  }
};
} // namespace
