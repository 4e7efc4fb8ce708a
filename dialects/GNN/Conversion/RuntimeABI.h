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

#include <cstdint>

namespace mlir::gnn::abi {

/// Error reports (gnnc/errors.h); each takes the caller's gnn_rt_context
/// first, then i64 values.
constexpr llvm::StringLiteral kEdgeOutOfRange = "gnn_rt_edge_out_of_range";
constexpr llvm::StringLiteral kRowsMismatch = "gnn_rt_rows_mismatch";
constexpr llvm::StringLiteral kIdOutOfRange = "gnn_rt_id_out_of_range";
constexpr llvm::StringLiteral kBadCoo = "gnn_rt_bad_coo";
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

struct RuntimeFunction {
  llvm::StringLiteral name;
  /// Called through `_mlir_ciface_<name>` (memref arguments).
  bool cInterface;
  /// Takes the caller's gnn_rt_context as its first argument.
  bool takesContext;
  /// Number of i64 arguments after the context (error reports only).
  unsigned i64Arguments;
};

constexpr RuntimeFunction kRuntimeFunctions[] = {
    {kEdgeOutOfRange, false, true, 4}, {kRowsMismatch, false, true, 3},
    {kIdOutOfRange, false, true, 3},   {kBadCoo, false, true, 3},
    {kLinear, true, false, 0},         {kLinearNoBias, true, false, 0},
    {kGemm, true, false, 0},           {kGemmAt, true, false, 0},
    {kTranspose, true, false, 0},
};

/// The symbol compiled code links against for `f`.
inline std::string symbolOf(const RuntimeFunction &f) {
  return (f.cInterface ? "_mlir_ciface_" : "") + f.name.str();
}

} // namespace mlir::gnn::abi

#endif // GNN_CONVERSION_RUNTIMEABI_H
