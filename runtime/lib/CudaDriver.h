//===- CudaDriver.h - the CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// Part of gnnc's runtime (internal). The driver entry points the runtime
// uses, bound with dlsym from libcuda.so.1 on first use.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_CUDADRIVER_H
#define GNNC_RUNTIME_CUDADRIVER_H

#include "CudaGraphs.h"

#include <cstddef>

namespace gnnc::cuda {
// The few driver API types used here; the driver's C ABI is stable.
using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;
using CUdeviceptr = unsigned long long;
/// CUmemLocation of cuMemPrefetchAsync_v2.
struct CUmemLocation {
  int type; // 1: a device, 2: the host
  int id;
};
constexpr CUresult kSuccess = 0;
constexpr int kAttrComputeMajor = 75, kAttrComputeMinor = 76;
/// CU_POINTER_ATTRIBUTE_IS_MANAGED of cuPointerGetAttribute.
constexpr int kPointerIsManaged = 8;
constexpr unsigned kMemAttachGlobal = 1;
constexpr int kLocationDevice = 1;

struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxSynchronize)();
  CUresult (*moduleLoadData)(CUmodule *, const void *);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  CUresult (*streamCreate)(CUstream *, unsigned);
  CUresult (*streamSynchronize)(CUstream);
  CUresult (*memAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  /// Optional: a host function queued on a stream.
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*getErrorString)(CUresult, const char **);
  CUresult (*memsetD32)(CUdeviceptr, unsigned, size_t);
  CUresult (*memcpy)(CUdeviceptr, CUdeviceptr, size_t);
  /// Optional: a copy queued on a stream.
  CUresult (*memcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventSynchronize)(CUevent);
  CUresult (*eventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*eventDestroy)(CUevent);
  // Optional (null where the driver lacks it): moves unified memory to
  // where it is used next instead of page by page on first touch.
  CUresult (*memPrefetch)(CUdeviceptr, size_t, CUmemLocation, unsigned,
                          CUstream);
  CUresult (*pointerGetAttribute)(void *, int, CUdeviceptr);
  /// Optional: the device's free and total memory.
  CUresult (*memGetInfo)(size_t *, size_t *);
  /// Optional: stream capture and graphs (CudaGraphs.h).
  GraphCalls graphs;
};

/// The driver with device 0's context current on this thread, or null after
/// reporting why not (through gnn_rt_report).
const Driver *driver();

/// Notes that work this thread queued on its stream may still run, so that
/// gnn_cuda_wait_for_launches waits for it.
void noteQueuedWork();

/// Reports a failed driver call; returns whether it succeeded.
bool ok(CUresult result, const char *call);

} // namespace gnnc::cuda

#endif // GNNC_RUNTIME_CUDADRIVER_H
