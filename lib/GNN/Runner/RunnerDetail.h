//===- RunnerDetail.h - the JIT runner's parts ------------------*- C++ -*-===//
//
// Part of gnnc (internal to MLIRGNNRunner). JitProgram's jobs, one file
// each: the signature of an entry from its IR (Signature.cpp), the checks
// of a call's arguments (Arguments.cpp), the runtime's symbols a program
// links against (RuntimeSymbols.cpp), a call with the ABI's descriptors
// (Invocation.cpp), inputs staged ahead of a call (StagedInputs.cpp);
// compiling through the pipelines and the cache, and loading, stay in
// JitRunner.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNNER_RUNNERDETAIL_H
#define GNN_RUNNER_RUNNERDETAIL_H

#include "GNN/Runner/JitRunner.h"

#include "gnnc/graph.h"
#include "gnnc/runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <array>
#include <map>
#include <memory>
#include <string>

namespace mlir::gnn::detail {

inline llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A run context, destroyed with its pointer.
using ContextPtr = std::unique_ptr<gnn_rt_context, void (*)(gnn_rt_context *)>;

/// A new context of `runtime` for one run's errors (and, bound to a
/// thread, its allocations from the instance's pool).
inline llvm::Expected<ContextPtr> newRunContext(gnn_rt_runtime *runtime) {
  ContextPtr context(gnn_rt_context_create_in(runtime),
                     &gnn_rt_context_destroy);
  if (!context)
    return error("out of memory for the runtime context");
  return std::move(context);
}

/// Binds the calling thread to a run's context while it lives: the
/// runtime's allocations come from its instance's pool, its failures go
/// into it.
class BoundContext {
public:
  explicit BoundContext(gnn_rt_context *context)
      : before(gnn_rt_context_bind(context)) {}
  ~BoundContext() { gnn_rt_context_bind(before); }
  BoundContext(const BoundContext &) = delete;
  BoundContext &operator=(const BoundContext &) = delete;

private:
  gnn_rt_context *before;
};

/// A graph's array members in gnn_graph_part order (the graph type
/// conversion's), from GNN_GRAPH_PART_SRC on; graphArrayCounts gives their
/// element counts in the same order.
template <typename Graph> auto graphArrayMembers(Graph &g) {
  static_assert(GNN_GRAPH_PART_NUM_SRC == 0 && GNN_GRAPH_PART_SRC == 1 &&
                    GNN_GRAPH_PART_DST == 2 && GNN_GRAPH_PART_IN_PTR == 3 &&
                    GNN_GRAPH_PART_IN_SRC == 4 && GNN_GRAPH_PART_IN_EID == 5 &&
                    GNN_GRAPH_NUM_PARTS == 6,
                "the arrays follow gnn_graph_part, after the count");
  return std::array{&g.src, &g.dst, &g.in_ptr, &g.in_src, &g.in_eid};
}
inline std::array<int64_t, GNN_GRAPH_NUM_PARTS - 1>
graphArrayCounts(const gnn_graph &g) {
  return {g.num_edges, g.num_edges, g.num_dst + 1, g.num_edges, g.num_edges};
}

/// The signature of `fn`; `names` override `gnn.name` argument attributes.
/// An error for an argument or result the runner cannot pass, or two of
/// one name.
llvm::Expected<EntryPoint> signatureOf(func::FuncOp fn,
                                       llvm::ArrayRef<std::string> names);

/// Checks a call's arguments against `entry`: kinds, dtypes, ranks, static
/// sizes, extents, and the rows its ops need of the graphs given.
llvm::Error checkArguments(const EntryPoint &entry,
                           llvm::ArrayRef<Argument> args);

/// The symbols a program compiled for `device` links against besides its
/// buffers' allocator (which each CodegenTarget adds): the runtime's
/// functions (runtimeSymbols), the GPU launch functions and MLIR's strided
/// copy.
std::map<std::string, void *> linkedSymbols(Device device, bool asyncLaunches);

/// The allocation functions of lowered memrefs (MLIR's
/// _mlir_memref_to_llvm_alloc, _aligned_alloc and _free), added to
/// `symbols`.
template <typename Alloc, typename AlignedAlloc, typename Free>
void addAllocator(std::map<std::string, void *> &symbols, Alloc *alloc,
                  AlignedAlloc *alignedAlloc, Free *free) {
  symbols["_mlir_memref_to_llvm_alloc"] = reinterpret_cast<void *>(alloc);
  symbols["_mlir_memref_to_llvm_aligned_alloc"] =
      reinterpret_cast<void *>(alignedAlloc);
  symbols["_mlir_memref_to_llvm_free"] = reinterpret_cast<void *>(free);
}

} // namespace mlir::gnn::detail

#endif // GNN_RUNNER_RUNNERDETAIL_H
