//===- RuntimeABI.h - runtime functions that compiled code calls -*- C++
//-*-===//
//
// Part of gnnc. The one list of the runtime (runtime/include/gnnc) entry
// points that lowered gnn programs call, by the names the compiler emits.
// The runner binds exactly these (JitRunner's runtimeSymbols); a unit test
// checks both sides against this list.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_RUNTIMEABI_H
#define GNN_CONVERSION_RUNTIMEABI_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::gnn::abi {

/// Error reports (gnnc/errors.h); each takes the caller's gnn_rt_context
/// first, then i64 values.
constexpr llvm::StringLiteral kEdgeOutOfRange = "gnn_rt_edge_out_of_range";
constexpr llvm::StringLiteral kRowsMismatch = "gnn_rt_rows_mismatch";
constexpr llvm::StringLiteral kIdOutOfRange = "gnn_rt_id_out_of_range";
/// The device forms' check of an id list after its kernels (gnnc/errors.h):
/// (context, memref<1xi64> slot, memref<?xindex, strided<[?], offset: ?>>
/// ids, i64 bound) -> (); queued on the stream in programs whose launches
/// do not wait.
constexpr llvm::StringLiteral kCheckBadId = "gnn_rt_check_bad_id";
/// A scatter's distinct-id check after its kernels, the same way: (context,
/// memref<1xi64> slot, ids, memref<?xi64, strided> first entries, i64 line,
/// i64 column) -> ().
constexpr llvm::StringLiteral kCheckRepeatedId = "gnn_rt_check_repeated_id";
constexpr llvm::StringLiteral kBadCoo = "gnn_rt_bad_coo";
/// Values that make an upstream op invalid at run time
/// (gnn-guard-runtime-values): a gnn_rt_value_error (gnnc/errors.h), five
/// values, the line and the column.
constexpr llvm::StringLiteral kBadValue = "gnn_rt_bad_value";
/// The most bytes one new tensor may take (gnnc/memory.h): () -> i64.
constexpr llvm::StringLiteral kAllocationLimit =
    "gnn_rt_allocation_limit_bytes";
/// Dense layers and the attention tiles' GEMM (gnnc/dense.h), called
/// through their C-interface (`_mlir_ciface_`) wrappers.
constexpr llvm::StringLiteral kLinear = "gnn_rt_linear";
constexpr llvm::StringLiteral kLinearNoBias = "gnn_rt_linear_nobias";
constexpr llvm::StringLiteral kGemm = "gnn_rt_gemm";
constexpr llvm::StringLiteral kGemmAt = "gnn_rt_gemm_at";
constexpr llvm::StringLiteral kTranspose = "gnn_rt_transpose";
/// Flags of kGemm's transpose argument (GNN_GEMM_TRANSPOSE_A, _B and
/// GNN_GEMM_LAYER).
constexpr int32_t kGemmTransposeB = 1;
constexpr int32_t kGemmTransposeA = 2;
constexpr int32_t kGemmLayer = 4;

/// Binds the calling thread to a runtime context and returns its previous
/// one (gnnc/runtime.h): (ptr) -> ptr, called by OpenMP's threads on
/// entering and leaving a parallel region (gnn-bind-parallel-threads).
constexpr llvm::StringLiteral kContextBind = "gnn_rt_context_bind";

/// Waits for the kernels the host thread launched asynchronously
/// (gnnc/cuda.h; gnn-gpu-async-launches calls it).
constexpr llvm::StringLiteral kWaitForLaunches = "gnn_cuda_wait_for_launches";

/// What a check's slot holds while no entry failed (GNN_RT_NO_ENTRY).
constexpr int64_t kNoEntry = INT64_MAX;

/// The alignment of every block a GPU program gets from the runtime
/// (GNN_CUDA_BLOCK_ALIGNMENT).
constexpr int64_t kBlockAlignment = 256;

/// A block of device or of host memory of the given bytes, as a
/// memref<?xi8> (gnnc/cuda.h; gnn-gpu-place-buffers calls them):
/// (i64) -> memref<?xi8>, freed like every buffer (gnn_cuda_free).
constexpr llvm::StringLiteral kDeviceAlloc = "gnn_cuda_alloc_device";
constexpr llvm::StringLiteral kHostAlloc = "gnn_cuda_alloc_host";

/// Tapes of loop iterations (gnnc/tape.h). Push and pop are declared once
/// per element type (pop also per rank), since their memref types differ:
/// `<kTapePush>_<element>` takes an unranked memref (its rank and a pointer
/// to its descriptor) and the element size; `<kTapePop>_<element>_r<rank>`
/// takes the rank, the element size and the type's sizes (-1 where dynamic)
/// as a `memref<8xi64>` and returns the memref through its C interface.
/// Creating a tape takes the runtime context, where pops report their errors.
/// The runner binds every such name to gnn_rt_tape_push / gnn_rt_tape_pop.
constexpr llvm::StringLiteral kTapeCreate = "gnn_rt_tape_create";
constexpr llvm::StringLiteral kTapeFree = "gnn_rt_tape_free";
constexpr llvm::StringLiteral kTapeRefused = "gnn_rt_tape_refused";
constexpr llvm::StringLiteral kTapePush = "gnn_rt_tape_push";
constexpr llvm::StringLiteral kTapePop = "gnn_rt_tape_pop";
/// Announced results (gnnc/runtime.h): (context, slot, data, bytes) -> (),
/// called by code lowered from gnn.result_ready.
constexpr llvm::StringLiteral kResultReady = "gnn_rt_result_ready";
/// The element types a tape holds, as MLIR prints them (TapeType::canHold).
constexpr llvm::StringLiteral kTapeElementTypes[] = {
    "f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "index"};
/// GNN_TAPE_MAX_RANK.
constexpr int64_t kTapeMaxRank = 8;

inline std::string tapePushName(llvm::StringRef element) {
  return (kTapePush + "_" + element).str();
}
inline std::string tapePopName(llvm::StringRef element, int64_t rank) {
  return (kTapePop + "_" + element + "_r" + llvm::Twine(rank)).str();
}

struct RuntimeFunction {
  llvm::StringLiteral name;
  /// Called through `_mlir_ciface_<name>` (memref arguments).
  bool cInterface;
  /// Takes the caller's gnn_rt_context as its first argument.
  bool takesContext;
  /// Number of i64 arguments after the context (error reports only).
  unsigned i64Arguments;
};

/// Whether `f` reports an error: (context, i64...) -> (), declared up front
/// by convert-gnn-to-loops.
inline bool isErrorReport(const RuntimeFunction &f) {
  return f.takesContext && !f.cInterface && f.name != kTapeCreate &&
         f.name != kResultReady;
}

constexpr RuntimeFunction kRuntimeFunctions[] = {
    {kEdgeOutOfRange, false, true, 4},
    {kRowsMismatch, false, true, 3},
    {kIdOutOfRange, false, true, 3},
    {kCheckBadId, true, true, 0},
    {kCheckRepeatedId, true, true, 0},
    {kBadCoo, false, true, 3},
    {kBadValue, false, true, 8},
    {kAllocationLimit, false, false, 0},
    // The dense products report sizes that do not fit to the caller.
    {kLinear, true, true, 0},
    {kLinearNoBias, true, true, 0},
    {kGemm, true, true, 0},
    {kGemmAt, true, true, 0},
    {kTranspose, true, true, 0},
    {kTapeCreate, false, true, 0},
    {kTapeFree, false, false, 0},
    {kTapeRefused, false, false, 0},
    {kWaitForLaunches, false, false, 0},
    {kDeviceAlloc, true, false, 0},
    {kHostAlloc, true, false, 0},
    {kContextBind, false, false, 0},
    {kResultReady, false, true, 0},
};

/// The symbol compiled code links against for `f`.
inline std::string symbolOf(const RuntimeFunction &f) {
  return (f.cInterface ? "_mlir_ciface_" : "") + f.name.str();
}

/// Whether `callee` is a dense product, which runs on cuBLAS in a GPU
/// program (on the thread's stream, after its kernels).
inline bool isDenseProduct(llvm::StringRef callee) {
  return callee == kLinear || callee == kLinearNoBias || callee == kGemm ||
         callee == kGemmAt;
}

/// Whether `callee` pushes a value onto a loop's tape (any element type).
inline bool isTapePush(llvm::StringRef callee) {
  return callee.starts_with(kTapePush) &&
         callee.drop_front(kTapePush.size()).starts_with("_");
}

/// The symbols of the tape's pushes and pops, for every element type and
/// rank.
inline std::vector<std::string> tapePushSymbols() {
  std::vector<std::string> symbols;
  for (llvm::StringRef element : kTapeElementTypes)
    symbols.push_back(tapePushName(element));
  return symbols;
}
inline std::vector<std::string> tapePopSymbols() {
  std::vector<std::string> symbols;
  for (llvm::StringRef element : kTapeElementTypes)
    for (int64_t rank = 0; rank <= kTapeMaxRank; ++rank)
      symbols.push_back("_mlir_ciface_" + tapePopName(element, rank));
  return symbols;
}

} // namespace mlir::gnn::abi

#endif // GNN_CONVERSION_RUNTIMEABI_H
