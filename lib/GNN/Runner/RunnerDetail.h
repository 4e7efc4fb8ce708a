//===- RunnerDetail.h - the JIT runner's parts ------------------*- C++ -*-===//
//
// Part of gnnc (internal to MLIRGNNRunner). JitProgram's jobs, one file
// each: the signature of an entry from its IR (Signature.cpp), the checks
// of a call's arguments (Arguments.cpp), the runtime's symbols a program
// links against (RuntimeSymbols.cpp), a call with the ABI's descriptors
// (Invocation.cpp); compiling through the pipelines and the cache, and
// loading, stay in JitRunner.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNNER_RUNNERDETAIL_H
#define GNN_RUNNER_RUNNERDETAIL_H

#include "GNN/Runner/JitRunner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>

namespace mlir::gnn::detail {

inline llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
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
