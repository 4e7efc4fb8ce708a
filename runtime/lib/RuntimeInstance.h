//===- RuntimeInstance.h - runtime instances and run contexts ---*- C++ -*-===//
//
// Part of gnnc's runtime (internal). A run's context points at its
// runtime instance, whose settings and pool the runtime's functions use; a
// thread bound to a context (gnn_rt_context_bind) allocates from that
// instance's pool and reports the runtime's own failures into it.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_RUNTIMEINSTANCE_H
#define GNNC_RUNTIME_RUNTIMEINSTANCE_H

#include "CudaPool.h"
#include "HostPool.h"

#include "gnnc/runtime.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

struct gnn_rt_runtime {
  explicit gnn_rt_runtime(const gnn_rt_settings &settings)
      : settings(settings), pool(settings) {}
  const gnn_rt_settings settings;
  gnnc::HostPool pool;
  /// The unified-memory pool of GPU programs and the pools of their device
  /// and host memory (buffers only kernels, or only the host, touch:
  /// gnn_cuda_alloc_device and _host), each made at the instance's first
  /// allocation of its kind (Cuda.cpp); guarded by cudaPoolMutex.
  std::mutex cudaPoolMutex;
  std::unique_ptr<gnnc::cuda::Pool> cudaPool;
  std::unique_ptr<gnnc::cuda::Pool> cudaDevicePool;
  std::unique_ptr<gnnc::cuda::Pool> cudaHostPool;
};

struct gnn_rt_context {
  explicit gnn_rt_context(gnn_rt_runtime *runtime) : runtime(runtime) {}
  gnn_rt_runtime *const runtime; // never null
  std::mutex mutex;
  std::string pending;    // empty: no error
  int64_t tapeBudget = 0; // 0: the instance's
  gnn_rt_result_hook resultHook = nullptr;
  void *resultHookUser = nullptr;
};

namespace gnnc {
/// The context bound to the calling thread, or null.
gnn_rt_context *boundContext();
/// `context`'s instance; the default one for null.
gnn_rt_runtime &runtimeOf(gnn_rt_context *context);
/// The pool gnn_rt_alloc draws from on this thread: the bound context's
/// instance's, else the default instance's.
HostPool &currentPool();
/// Takes back `block` into whichever instance's pool handed it out; false
/// if none did.
bool freeIntoOwningPool(void *block);
/// Whether `found` holds for an instance: the default one, then the others
/// (under the instances' list's lock, so that none is destroyed meanwhile).
bool anyInstance(const std::function<bool(gnn_rt_runtime &)> &found);
/// Hands `runtime`'s live unified-memory blocks to the default instance's
/// pool, and its kept ones back to the driver (Cuda.cpp).
void bequeathCudaPool(gnn_rt_runtime &runtime);
} // namespace gnnc

#endif // GNNC_RUNTIME_RUNTIMEINSTANCE_H
