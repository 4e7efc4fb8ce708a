//===- LoopTarget.h - what the loops of the gnn lowering run on -*- C++ -*-===//
//
// Part of gnnc. The one description of the target that the op lowerings of
// convert-gnn-to-loops and convert-gnn-to-gpu consult: who runs a parallel
// iteration, and the CPU's choices. A lowering asks the target a question
// ("vector loops?", "how many chunks?") instead of reading a flag of its own.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_LOOPTARGET_H
#define GNN_CONVERSION_LOOPTARGET_H

#include "mlir/IR/Value.h"

#include <functional>

namespace mlir::gnn {
namespace loops {
class Lowering;
} // namespace loops

/// Builds, where the lowering stands, running totals in an index buffer of
/// n + 1 elements: element 0 becomes 0 and element v (1 <= v <= n) the sum
/// of elements 1..v (an in_ptr from in-degrees).
using RunningTotalsBuilder =
    std::function<void(loops::Lowering &, Value buffer, Value n)>;

struct LoopTarget {
  /// Who runs one iteration of an outer parallel loop.
  enum class Threads {
    /// A CPU core: an iteration takes a row and loops over its items in
    /// vectors.
    CpuCores,
    /// A GPU thread: an iteration per row and item (neighbouring threads
    /// touch neighbouring elements), scalar code, graph indices built in
    /// many short chunks.
    GpuThreads,
  };
  Threads threads = Threads::CpuCores;
  /// Fused attention over runs of destinations that share a source range
  /// as GEMM tiles through the runtime (a CPU call).
  bool attentionBlocks = true;
  /// Dense layers split into one runtime call per OpenMP thread.
  bool parallelDense = false;
  /// Running totals as a kernel of the target's own (the GPU's conversion
  /// sets a block-wide scan where it emits kernels); unset: a serial loop,
  /// which on a GPU runs on the host and waits for the device.
  RunningTotalsBuilder runningTotals;

  /// Rows as vectors of items, one iteration per row.
  bool vectorLoops() const { return threads == Threads::CpuCores; }
  /// One parallel iteration per element.
  bool elementPerThread() const { return threads == Threads::GpuThreads; }
  /// Whether the attention backward may take GEMM tiles (its tiles run
  /// inside one iteration per node, which only CPU cores do).
  bool attentionGradBlocks() const { return attentionBlocks && vectorLoops(); }
};

} // namespace mlir::gnn

#endif // GNN_CONVERSION_LOOPTARGET_H
