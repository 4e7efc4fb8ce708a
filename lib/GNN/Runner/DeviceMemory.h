//===- DeviceMemory.h - where a call's buffers live -------------*- C++ -*-===//
//
// Part of gnnc. The device interface of a call of compiled code: where its
// arguments are handed over, how it is waited for, how its results reach
// the host. The CPU hands compiled code the caller's buffers and takes row-
// major results over as they are; a GPU's calls place arguments in unified
// memory (constant ones once per program), wait for their kernels and copy
// results back through the copy engines. Invocation asks this interface,
// never the device's kind. Private to lib/GNN/Runner.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_RUNNER_DEVICEMEMORY_H
#define GNN_RUNNER_DEVICEMEMORY_H

#include "GNN/Runner/JitRunner.h"

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

namespace mlir::gnn::detail {

/// Device copies of a program's constant arguments (weights), by host
/// address: made at their first use, kept for later calls, freed with the
/// program.
class ResidentCopies {
public:
  ResidentCopies() = default;
  ResidentCopies(const ResidentCopies &) = delete;
  ResidentCopies &operator=(const ResidentCopies &) = delete;
  ~ResidentCopies();

  /// Sets `placed` to the device copy of `bytes` of host memory at `data`;
  /// false after the runtime reported why not. (Data in unified memory
  /// needs no copy: the caller takes it as it is.)
  bool place(const void *data, size_t bytes, const void *&placed);

private:
  struct Copy {
    void *copy = nullptr;
    size_t bytes = 0;
  };
  std::mutex mutex;
  std::map<const void *, Copy> copies;
};

/// The buffers of one call on a device.
class CallMemory {
public:
  using Deleter = void (*)(void *);

  virtual ~CallMemory() = default;

  /// For `device`, constant arguments kept in `resident`.
  static std::unique_ptr<CallMemory> create(Device device,
                                            ResidentCopies &resident);

  /// One of the caller's buffers that a call reads or updates: `bytes` at
  /// `data` (null data: an empty tensor); a `constant` one keeps its
  /// address and contents while the program lives.
  struct Buffer {
    const void *data;
    size_t bytes;
    bool constant;
  };
  /// Sets `placed[i]` to the buffer compiled code gets for `buffers[i]`
  /// (null data stays null); constant ones may stay placed across calls.
  /// False after the runtime reported why not.
  virtual bool place(llvm::ArrayRef<Buffer> buffers,
                     llvm::MutableArrayRef<const void *> placed) = 0;
  /// Waits for the call's work (failures go to the bound context).
  virtual void finish() = 0;
  /// Whether host code reads the program's buffers as they are (results
  /// are taken over, updates are already in place).
  virtual bool hostReadable() const = 0;
  /// Copies `bytes` of a program buffer into host memory; false after the
  /// runtime reported why not.
  virtual bool copyToHost(void *to, const void *from, size_t bytes) = 0;
  /// A new block of the device's that the host can also read (unified
  /// memory) holding a copy of `bytes` of a program buffer, made on the
  /// device; null after the runtime reported why not. Only for devices
  /// whose buffers the host cannot read.
  virtual void *keepOnDevice(const void *from, size_t bytes) = 0;
  /// Frees a buffer the program allocated.
  virtual Deleter deleter() const = 0;
};

} // namespace mlir::gnn::detail

#endif // GNN_RUNNER_DEVICEMEMORY_H
