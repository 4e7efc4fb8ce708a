//===- RunningTotals.h - running totals of an index buffer on a GPU -*- C++
//-*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOGPU_RUNNINGTOTALS_H
#define GNN_CONVERSION_GNNTOGPU_RUNNINGTOTALS_H

#include "GNNToLoops/Lowering.h"

namespace mlir::gnn::loops {

/// Threads of the running totals' block.
constexpr int64_t kScanThreads = 1024;

/// A gpu.launch of one block that turns `buffer`'s elements 1..n into their
/// running totals and sets element 0 to 0 (LoopTarget::runningTotals of
/// the GPU's conversion).
void blockRunningTotals(Lowering &l, Value buffer, Value n);

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOGPU_RUNNINGTOTALS_H
