//===- Passes.h - gnn transformation passes ---------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_TRANSFORMS_PASSES_H
#define GNN_TRANSFORMS_PASSES_H

#include "GNN/IR/GNNDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace gnn {

#define GEN_PASS_DECL
#include "GNN/Transforms/Passes.h.inc"

/// The rewrite behind gnn-fuse-attention, for pipelines that run it with
/// other patterns.
void populateFuseAttentionPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "GNN/Transforms/Passes.h.inc"

} // namespace gnn
} // namespace mlir

#endif // GNN_TRANSFORMS_PASSES_H
