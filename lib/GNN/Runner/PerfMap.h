//===- PerfMap.h - compiled functions' names for perf -----------*- C++ -*-===//
//
// Part of gnnc. Where asked (CompileOptions::perfMap; the tools ask on
// GNNC_PERF_MAP=1), every function of the programs a process loads (the
// outlined parallel bodies included) is listed in /tmp/perf-<pid>.map, the file
// `perf report` reads to name code it finds outside any mapped file.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNNER_PERFMAP_H
#define GNN_RUNNER_PERFMAP_H

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace mlir::gnn {

/// Lists the functions `jit` links from now on in perf's map of this
/// process, if the JIT links with JITLink.
void listFunctionsForPerf(llvm::orc::LLJIT &jit);

} // namespace mlir::gnn

#endif // GNN_RUNNER_PERFMAP_H
