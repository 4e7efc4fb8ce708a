//===- InitAll.h - register every gnn dialect and pass ----------*- C++ -*-===//
//
// Part of gnnc. The one place that tools call to make gnn available.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_INITALL_H
#define GNN_INITALL_H

#include "GNN/Conversion/Passes.h"
#include "GNN/IR/GNNDialect.h"
#include "GNN/Pipelines/Pipelines.h"
#include "GNN/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"

namespace mlir::gnn {

inline void registerAllDialects(DialectRegistry &registry) {
  registry.insert<GNNDialect>();
}

/// Every upstream dialect and extension, and gnn's: what tools and tests
/// that parse and lower gnn programs need.
inline void registerAllDialectsAndExtensions(DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  gnn::registerAllDialects(registry);
  gnn::registerGPUBarrierEffects(registry);
}

inline void registerAllPasses() {
  registerGNNTransformsPasses();
  registerGNNConversionPasses();
  registerGNNPipelines();
}

} // namespace mlir::gnn

#endif // GNN_INITALL_H
