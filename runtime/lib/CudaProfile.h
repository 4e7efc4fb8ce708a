//===- CudaProfile.h - where a GPU program's time goes ----------*- C++ -*-===//
//
// Part of gnnc's runtime (internal). Once the host turns the profile on
// (gnn_cuda_profile_enable; gnnc's tools on GNNC_CUDA_PROFILE=1), the
// runtime times every kernel launch on the device (CUDA
// events) and every runtime call that blocks the host (unified allocations,
// frees, synchronizations, cuBLAS), and prints both tables to stderr when
// the process exits: what to look at before optimizing a program that runs
// slower on the GPU than expected.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_CUDAPROFILE_H
#define GNNC_RUNTIME_CUDAPROFILE_H

#include "CudaDriver.h"

#include <chrono>

namespace gnnc::cuda::profile {
/// Whether the profile is on.
bool enabled();

/// Remembers the kernel name of `function` for the report.
void nameFunction(CUfunction function, const char *name);

/// The events around one launch (null when not profiling).
struct Launch {
  CUevent start = nullptr, end = nullptr;
};
Launch beforeLaunch(const Driver &d, CUstream stream);
void afterLaunch(const Driver &d, Launch launch, CUfunction function,
                 CUstream stream);

/// Reads the times of the launches recorded so far; called after the host
/// waited for them. The driver may be shut down before the report at exit
/// (its own exit handler runs first when the host turned the profile on
/// before the driver's first call), so launches are settled while it runs.
void settle();

/// Adds the host time from construction to destruction to `call`'s row.
class HostCall {
public:
  explicit HostCall(const char *call);
  ~HostCall();
  HostCall(const HostCall &) = delete;
  HostCall &operator=(const HostCall &) = delete;

private:
  const char *call;
  std::chrono::steady_clock::time_point start;
};
} // namespace gnnc::cuda::profile

#endif // GNNC_RUNTIME_CUDAPROFILE_H
