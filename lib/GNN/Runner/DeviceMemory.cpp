//===- DeviceMemory.cpp - the CPU's and a GPU's call memory ---------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "DeviceMemory.h"

#include "gnnc/cuda.h"
#include "gnnc/errors.h"
#include "gnnc/memory.h"

#include <cstring>
#include <vector>

using namespace mlir::gnn;
using namespace mlir::gnn::detail;

ResidentCopies::~ResidentCopies() {
  for (auto &[data, c] : copies)
    gnn_cuda_free(c.copy);
}

bool ResidentCopies::place(const void *data, size_t bytes,
                           const void *&placed) {
  placed = data;
  if (gnn_cuda_is_unified(data))
    return true;
  std::lock_guard<std::mutex> lock(mutex);
  Copy &c = copies[data];
  if (!c.copy || c.bytes != bytes) {
    gnn_cuda_free(c.copy);
    c = {gnn_cuda_alloc(bytes), bytes};
    if (!c.copy || !gnn_cuda_copy(c.copy, data, bytes)) {
      gnn_cuda_free(c.copy);
      copies.erase(data);
      return false;
    }
  }
  placed = c.copy;
  return true;
}

namespace {
/// Compiled code reads and writes the caller's memory.
class HostMemory final : public CallMemory {
public:
  bool place(const void *data, size_t, bool, const void *&placed) override {
    placed = data;
    return true;
  }
  void finish() override {}
  bool hostReadable() const override { return true; }
  bool copyToHost(void *to, const void *from, size_t bytes) override {
    std::memcpy(to, from, bytes);
    return true;
  }
  void *keepOnDevice(const void *, size_t) override {
    gnn_rt_report("host memory is not a device's");
    return nullptr;
  }
  Deleter deleter() const override { return &gnn_rt_free; }
};

/// Arguments in unified memory: copies for this call (freed with it), or
/// the program's resident copies of constant ones.
class CudaMemory final : public CallMemory {
public:
  explicit CudaMemory(ResidentCopies &resident) : resident(resident) {}
  CudaMemory(const CudaMemory &) = delete;
  CudaMemory &operator=(const CudaMemory &) = delete;
  ~CudaMemory() override {
    for (void *copy : copies)
      gnn_cuda_free(copy);
  }

  bool place(const void *data, size_t bytes, bool constant,
             const void *&placed) override {
    if (constant)
      return resident.place(data, bytes, placed);
    placed = data;
    if (gnn_cuda_is_unified(data))
      return true;
    void *copy = gnn_cuda_alloc(bytes);
    if (!copy)
      return false;
    copies.push_back(copy);
    if (!gnn_cuda_copy(copy, data, bytes))
      return false;
    placed = copy;
    return true;
  }
  void finish() override {
    (void)gnn_cuda_synchronize(); // failures are reported
  }
  bool hostReadable() const override { return false; }
  bool copyToHost(void *to, const void *from, size_t bytes) override {
    return gnn_cuda_copy(to, from, bytes);
  }
  void *keepOnDevice(const void *from, size_t bytes) override {
    void *kept = gnn_cuda_alloc(bytes);
    if (!kept || !gnn_cuda_copy(kept, from, bytes)) {
      gnn_cuda_free(kept);
      return nullptr;
    }
    return kept;
  }
  Deleter deleter() const override { return &gnn_cuda_free; }

private:
  ResidentCopies &resident;
  std::vector<void *> copies;
};
} // namespace

std::unique_ptr<CallMemory> CallMemory::create(Device device,
                                               ResidentCopies &resident) {
  if (device == Device::CUDA)
    return std::make_unique<CudaMemory>(resident);
  return std::make_unique<HostMemory>();
}
