//===- HeapSettings.h - malloc's policy for the tools ----------*- C++ -*-===//
//
// Part of gnnc (no MLIR). The tools run the same compiled step again and
// again; malloc's defaults hand the heap's freed top back to the kernel
// after every step, so the next one faults it in afresh.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_SUPPORT_HEAPSETTINGS_H
#define GNN_SUPPORT_HEAPSETTINGS_H

namespace mlir::gnn {

/// Has malloc keep freed heap memory for reuse, up to 64 MiB at the heap's
/// top, and map only blocks of 32 MiB and more on their own (glibc's own
/// adaptive thresholds settle there once it has seen such blocks; before,
/// its trim threshold is 128 KiB). Large buffers of compiled programs come
/// from the runtime's pool, not from here. Left as they are where the user
/// set malloc's thresholds (GLIBC_TUNABLES, MALLOC_TRIM_THRESHOLD_,
/// MALLOC_MMAP_THRESHOLD_), and off glibc. Call at the start of main, before
/// other threads start.
void keepFreedHeapForReuse();

} // namespace mlir::gnn

#endif // GNN_SUPPORT_HEAPSETTINGS_H
