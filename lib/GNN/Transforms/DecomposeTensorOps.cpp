//===- DecomposeTensorOps.cpp - tensor ops that bufferization lacks -------===//
//
// Part of gnnc. Upstream tensor ops without a bufferization rule, rewritten
// with upstream's decomposition patterns into ops that have one.
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_DECOMPOSETENSOROPSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
struct DecomposeTensorOpsPass
    : gnn::impl::DecomposeTensorOpsPassBase<DecomposeTensorOpsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    tensor::populateDecomposeTensorConcatPatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
