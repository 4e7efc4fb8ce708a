//===- DeviceMemory.cpp - the CPU's and a GPU's call memory ---------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "DeviceMemory.h"

#include "gnnc/cuda.h"
#include "gnnc/errors.h"
#include "gnnc/memory.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace mlir::gnn;
using namespace mlir::gnn::detail;

ResidentCopies::~ResidentCopies() {
  for (auto &[data, c] : copies)
    gnn_cuda_free(c.copy);
}

/// A new unified block holding a copy of `bytes` at `from` (host memory
/// or any of the device's), made by the copy engines; null after the
/// runtime reported why not.
static void *unifiedBlockWith(const void *from, size_t bytes) {
  void *block = gnn_cuda_alloc(bytes);
  if (block && !gnn_cuda_copy(block, from, bytes)) {
    gnn_cuda_free(block);
    return nullptr;
  }
  return block;
}

bool ResidentCopies::place(const void *data, size_t bytes,
                           const void *&placed) {
  std::lock_guard<std::mutex> lock(mutex);
  Copy &c = copies[data];
  if (!c.copy || c.bytes != bytes) {
    gnn_cuda_free(c.copy);
    c = {unifiedBlockWith(data, bytes), bytes};
    if (!c.copy) {
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
  bool place(llvm::ArrayRef<Buffer> buffers,
             llvm::MutableArrayRef<const void *> placed) override {
    for (auto [b, at] : llvm::zip_equal(buffers, placed))
      at = b.data;
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
/// the program's resident copies of constant ones. A call's small arguments
/// (a step's token ids, positions, graphs) cross in one copy: each copy
/// costs the driver a call. The copies are queued on the thread's stream,
/// ahead of the call's kernels, without waiting for them (the driver is
/// done with pageable host memory when the call returns).
class CudaMemory final : public CallMemory {
public:
  explicit CudaMemory(ResidentCopies &resident) : resident(resident) {}
  CudaMemory(const CudaMemory &) = delete;
  CudaMemory &operator=(const CudaMemory &) = delete;
  ~CudaMemory() override {
    for (void *copy : copies)
      gnn_cuda_free(copy);
  }

  /// Larger arguments cross alone (gathering them would cost the host a
  /// copy of their bytes for a saved driver call).
  static constexpr size_t kGatheredBytes = size_t(1) << 20;

  bool place(llvm::ArrayRef<Buffer> buffers,
             llvm::MutableArrayRef<const void *> placed) override {
    // The offset of each gathered buffer in the gathered block; every one
    // aligned as a block of its own would be, and none empty (its address
    // is a distinct pointer into the block).
    constexpr size_t kAlone = ~size_t(0);
    std::vector<size_t> offsets(buffers.size(), kAlone);
    size_t gathered = 0;
    for (auto [i, b] : llvm::enumerate(buffers)) {
      placed[i] = b.data;
      if (!b.data || gnn_cuda_is_unified(b.data))
        continue;
      if (b.constant) {
        if (!resident.place(b.data, b.bytes, placed[i]))
          return false;
      } else if (b.bytes > kGatheredBytes) {
        void *copy = gnn_cuda_alloc(b.bytes);
        if (copy)
          copies.push_back(copy);
        if (!copy || !gnn_cuda_copy_queued(copy, b.data, b.bytes))
          return false;
        placed[i] = copy;
      } else {
        offsets[i] = gathered;
        gathered += llvm::alignTo(std::max<size_t>(b.bytes, 1),
                                  GNN_CUDA_BLOCK_ALIGNMENT);
      }
    }
    if (gathered == 0)
      return true;
    std::unique_ptr<char[]> host(new char[gathered]);
    for (auto [b, offset] : llvm::zip_equal(buffers, offsets))
      if (offset != kAlone)
        std::memcpy(host.get() + offset, b.data, b.bytes);
    auto *block = static_cast<char *>(gnn_cuda_alloc(gathered));
    if (block)
      copies.push_back(block);
    if (!block || !gnn_cuda_copy_queued(block, host.get(), gathered))
      return false;
    for (auto [at, offset] : llvm::zip_equal(placed, offsets))
      if (offset != kAlone)
        at = block + offset;
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
    return unifiedBlockWith(from, bytes);
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
