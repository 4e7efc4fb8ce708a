//===- CheckVectorSizes.cpp - vectors too large to compile ----------------===//
//
// Part of gnnc. LLVM's code generation takes time about quadratic in the
// lanes of a vector wider than the machine's registers; a program given to
// the runner may not name vector types beyond a bound.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_CHECKVECTORSIZESPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
struct CheckVectorSizesPass
    : gnn::impl::CheckVectorSizesPassBase<CheckVectorSizesPass> {
  using CheckVectorSizesPassBase::CheckVectorSizesPassBase;

  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](Operation *op) {
      VectorType vector = largestVector(op);
      if (!vector)
        return;
      int64_t elements = gnn::saturatedElementCount(vector.getShape());
      if (elements <= maxElements)
        return;
      failed = true;
      op->emitOpError() << "uses " << vector << ", a vector of " << elements
                        << " elements; at most " << int64_t(maxElements)
                        << " compile in reasonable time (LLVM's code "
                           "generation takes time about quadratic in the "
                           "lanes)";
    });
    if (failed)
      signalPassFailure();
  }

  /// The vector type with the most elements that `op` names: in its
  /// operand, result and block argument types and its attributes
  /// (properties included), nested ones too.
  static VectorType largestVector(Operation *op) {
    VectorType largest;
    auto visit = [&](VectorType v) {
      if (!largest || gnn::saturatedElementCount(v.getShape()) >
                          gnn::saturatedElementCount(largest.getShape()))
        largest = v;
    };
    for (Type t : op->getOperandTypes())
      t.walk(visit);
    for (Type t : op->getResultTypes())
      t.walk(visit);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Type t : block.getArgumentTypes())
          t.walk(visit);
    op->getAttrDictionary().walk(visit);
    if (Attribute properties = op->getPropertiesAsAttribute())
      properties.walk(visit);
    return largest;
  }
};
} // namespace
