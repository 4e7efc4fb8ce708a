//===- ApproximateVectorMath.cpp - vector math without libm calls ---------===//
//
// Part of gnnc. Applies MLIR's polynomial approximations to math ops on
// vectors only: a libm call per lane would undo the vectorization, while
// scalar ops keep libm's accuracy.
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_APPROXIMATEVECTORMATHPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
struct ApproximateVectorMathPass
    : gnn::impl::ApproximateVectorMathPassBase<ApproximateVectorMathPass> {
  void runOnOperation() override {
    SmallVector<Operation *> vectorMath;
    getOperation()->walk([&](Operation *op) {
      if (isa_and_nonnull<math::MathDialect>(op->getDialect()) &&
          llvm::any_of(op->getResultTypes(), llvm::IsaPred<VectorType>))
        vectorMath.push_back(op);
    });
    if (vectorMath.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    // Only the collected ops and what their rewrites create. Not converging
    // leaves valid IR (with some libm calls), so it is not an error.
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    (void)applyOpPatternsAndFold(vectorMath, std::move(patterns), config);
  }
};
} // namespace
