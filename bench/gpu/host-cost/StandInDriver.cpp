//===- StandInDriver.cpp - a CUDA driver and cuBLAS that run nothing ------===//
//
// Part of gnnc's benchmarks. What a GPU step costs the host (the compiled
// program's own code, the runtime's pools, launches, captures and graph
// updates) is measured on a machine without a GPU by loading this library as
// libcuda.so.1 and libcublas.so.13 in front of the real ones
// (`bench/gpu/train.sh --stand-in` puts it first in LD_LIBRARY_PATH). It
// answers each entry point the runtime binds (runtime/lib/Cuda.cpp,
// CudaDense.cpp) as a driver would for a host that never waits for the device:
// memory is host memory, copies from the host are done at once, host functions
// run when queued, and kernels, sets, products, copies on the device and graphs
// do nothing but count. What the device would have written never is: a copy
// from the device to the host writes float 1.0 words (so that the loss the host
// reads back is finite), and so does a fresh block's first page, which the host
// may read in place (unified memory); the rest reads as zeros. Only the host's
// work is real, and only runs whose host control does not depend on device
// results are meaningful (training the Transformer; not decoding, which stops
// at the first token).
//
// With GNNC_STAND_IN_KERNEL_US=T each kernel keeps a device clock busy for T
// microseconds (a graph's launch: each kernel captured in it) and a wait
// (stream, context or event synchronization) sleeps until the clock is
// idle, so that what the host overlaps with the device shows: work a
// thread does while another waits for the device costs no time. cuBLAS's
// products and copies take none.
//
// With GNNC_STAND_IN_REPORT=1 the counts are written to stderr at exit,
// one line per library (STAND_IN_LIBRARY: cuda or cublas); with
// GNNC_STAND_IN_KERNELS=FILE, each kernel's launches, grids and blocks go to
// FILE as a table (where a kernel runs too few threads for its work).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <sys/mman.h>
#include <thread>

namespace {
using Result = int;
constexpr Result kSuccess = 0, kOutOfMemory = 2, kInvalidValue = 1;

struct Counts {
  std::atomic<unsigned long long> kernels{0}, products{0}, graphLaunches{0},
      captures{0}, allocations{0}, frees{0}, copies{0}, sets{0}, waits{0},
      hostFunctions{0};
  ~Counts() {
    const char *report = std::getenv("GNNC_STAND_IN_REPORT");
    if (!report || std::strcmp(report, "1") != 0)
      return;
    if (std::strcmp(STAND_IN_LIBRARY, "cublas") == 0) {
      std::fprintf(stderr, "stand-in libcublas: %llu products\n",
                   products.load());
      return;
    }
    std::fprintf(stderr,
                 "stand-in libcuda: %llu kernel launches, %llu captures, "
                 "%llu graph launches, %llu allocations, %llu frees, "
                 "%llu copies, %llu sets, %llu waits, %llu host functions\n",
                 kernels.load(), captures.load(), graphLaunches.load(),
                 allocations.load(), frees.load(), copies.load(), sets.load(),
                 waits.load(), hostFunctions.load());
  }
};
Counts counts;

/// Blocks handed out, by address: their size and whether they are unified.
struct Blocks {
  std::mutex mutex;
  std::map<unsigned long long, std::pair<size_t, bool>> sizes;

  /// The size of the block handed out that `pointer` lies in, and whether
  /// it is managed (unified); none if it lies in none.
  std::optional<std::pair<size_t, bool>> blockOf(unsigned long long pointer) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = sizes.upper_bound(pointer);
    if (it == sizes.begin())
      return std::nullopt;
    --it;
    if (pointer - it->first >= it->second.first)
      return std::nullopt;
    return it->second;
  }
  bool holds(unsigned long long pointer) {
    return blockOf(pointer).has_value();
  }
};
Blocks &blocks() {
  static Blocks *b = new Blocks; // outlives the runtime's exit handlers
  return *b;
}

/// What the host reads where the device would have written: float 1.0s.
void fillWithOnes(void *to, size_t bytes) {
  constexpr float kOne = 1.0f;
  for (size_t i = 0; i < bytes / sizeof(float); ++i)
    std::memcpy(static_cast<float *>(to) + i, &kOne, sizeof(float));
}

Result allocate(unsigned long long *pointer, size_t bytes, bool unified) {
  if (!pointer || bytes == 0)
    return kInvalidValue;
  // Fresh anonymous pages cost the host no more than the driver's own
  // mapping does; only the first page is touched.
  void *block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED)
    return kOutOfMemory;
  fillWithOnes(block, std::min<size_t>(bytes, 4096));
  *pointer = reinterpret_cast<unsigned long long>(block);
  std::lock_guard<std::mutex> lock(blocks().mutex);
  blocks().sizes[*pointer] = {bytes, unified};
  ++counts.allocations;
  return kSuccess;
}

int dummyObject; // what handles point at
void *handle() { return &dummyObject; }

/// The device's time (GNNC_STAND_IN_KERNEL_US): when the work queued so far
/// on each stream is done. (Streams do not share the device's cores here:
/// only one stream at a time runs kernels in gnnc's runs.)
struct DeviceClock {
  using Clock = std::chrono::steady_clock;
  std::chrono::duration<double, std::micro> perKernel{0};
  std::mutex mutex;
  std::map<void *, Clock::time_point> idleAt;
  DeviceClock() {
    if (const char *us = std::getenv("GNNC_STAND_IN_KERNEL_US"))
      perKernel = decltype(perKernel)(std::max(0.0, std::atof(us)));
  }
  void run(void *stream, unsigned long long kernels) {
    if (perKernel.count() == 0 || kernels == 0)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    Clock::time_point &at = idleAt[stream];
    at = std::max(Clock::now(), at) +
         std::chrono::duration_cast<Clock::duration>(perKernel * kernels);
  }
  /// Until `stream`'s work is done (every stream's: null).
  void wait(void *stream) {
    Clock::time_point until;
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto &[on, at] : idleAt)
        if (!stream || on == stream)
          until = std::max(until, at);
    }
    std::this_thread::sleep_until(until);
  }
};
DeviceClock deviceClock;

/// The kernels this thread's stream capture has recorded, while it lasts.
thread_local std::optional<unsigned long long> capturedKernels;
/// A captured graph or its executable: how many kernels it launches.
struct GraphKernels {
  unsigned long long kernels = 0;
};

/// A kernel's launches: how many, the smallest and largest grid, and the
/// most threads of one launch.
struct Launches {
  unsigned long long count = 0, maxThreads = 0;
  unsigned minGrid = ~0u, maxGrid = 0, block = 0;
};
struct Kernels {
  std::mutex mutex;
  /// By name; a function's handle is its entry's Launches (map entries stay
  /// put).
  std::map<std::string, Launches> byName;
  ~Kernels() {
    // Only the driver's copy launches kernels (cuBLAS's would write an
    // empty table over it).
    const char *path = std::getenv("GNNC_STAND_IN_KERNELS");
    if (std::strcmp(STAND_IN_LIBRARY, "cuda") != 0 || !path || !*path)
      return;
    FILE *out = std::fopen(path, "w");
    if (!out)
      return;
    std::fprintf(out, "%-56s %8s %10s %10s %6s %12s\n", "kernel", "launches",
                 "min grid", "max grid", "block", "max threads");
    for (auto &[name, l] : byName)
      std::fprintf(out, "%-56s %8llu %10u %10u %6u %12llu\n", name.c_str(),
                   l.count, l.minGrid, l.maxGrid, l.block, l.maxThreads);
    std::fclose(out);
  }
};
Kernels kernels;
} // namespace

extern "C" {
Result cuInit(unsigned) { return kSuccess; }
Result cuDeviceGetCount(int *count) {
  *count = 1;
  return kSuccess;
}
Result cuDeviceGet(int *device, int) {
  *device = 0;
  return kSuccess;
}
Result cuDeviceGetAttribute(int *value, int attribute, int) {
  switch (attribute) {
  case 75: // compute capability major: an sm_90 device
    *value = 9;
    break;
  case 89: // concurrent managed access
    *value = 1;
    break;
  default:
    *value = 0;
  }
  return kSuccess;
}
Result cuDeviceGetName(char *name, int length, int) {
  std::snprintf(name, length, "stand-in driver (no GPU)");
  return kSuccess;
}
Result cuDevicePrimaryCtxRetain(void **context, int) {
  *context = handle();
  return kSuccess;
}
Result cuCtxSetCurrent(void *) { return kSuccess; }
Result cuCtxSynchronize() {
  ++counts.waits;
  deviceClock.wait(nullptr);
  return kSuccess;
}
Result cuModuleLoadData(void **module, const void *) {
  *module = handle();
  return kSuccess;
}
Result cuModuleGetFunction(void **function, void *, const char *name) {
  std::lock_guard<std::mutex> lock(kernels.mutex);
  *function = &kernels.byName[name];
  return kSuccess;
}
Result cuLaunchKernel(void *function, unsigned gridX, unsigned gridY,
                      unsigned gridZ, unsigned blockX, unsigned blockY,
                      unsigned blockZ, unsigned, void *stream, void **,
                      void **) {
  ++counts.kernels;
  if (capturedKernels)
    ++*capturedKernels;
  else
    deviceClock.run(stream, 1);
  unsigned grid = gridX * gridY * gridZ, block = blockX * blockY * blockZ;
  std::lock_guard<std::mutex> lock(kernels.mutex);
  Launches &l = *static_cast<Launches *>(function);
  ++l.count;
  l.minGrid = std::min(l.minGrid, grid);
  l.maxGrid = std::max(l.maxGrid, grid);
  l.block = block;
  l.maxThreads = std::max(l.maxThreads, (unsigned long long)grid * block);
  return kSuccess;
}
Result cuStreamCreate(void **stream, unsigned) {
  // Streams are told apart (DeviceClock): each its own handle, never
  // dereferenced (the runtime keeps its threads' streams for good).
  static std::atomic<uintptr_t> streams{0};
  *stream = reinterpret_cast<void *>(0x1000 + 16 * ++streams);
  return kSuccess;
}
Result cuStreamSynchronize(void *stream) {
  ++counts.waits;
  deviceClock.wait(stream);
  return kSuccess;
}
Result cuMemAllocManaged(unsigned long long *pointer, size_t bytes, unsigned) {
  return allocate(pointer, bytes, true);
}
Result cuMemAlloc_v2(unsigned long long *pointer, size_t bytes) {
  return allocate(pointer, bytes, false);
}
Result cuMemFree_v2(unsigned long long pointer) {
  size_t bytes;
  {
    std::lock_guard<std::mutex> lock(blocks().mutex);
    auto it = blocks().sizes.find(pointer);
    if (it == blocks().sizes.end())
      return kInvalidValue;
    bytes = it->second.first;
    blocks().sizes.erase(it);
  }
  munmap(reinterpret_cast<void *>(pointer), bytes);
  ++counts.frees;
  return kSuccess;
}
Result cuGetErrorString(Result, const char **text) {
  *text = "stand-in driver error";
  return kSuccess;
}
Result cuMemsetD32_v2(unsigned long long, unsigned, size_t) {
  ++counts.sets;
  return kSuccess;
}
Result cuMemcpy(unsigned long long to, unsigned long long from, size_t bytes) {
  ++counts.copies;
  bool toDevice = blocks().holds(to);
  if (!blocks().holds(from))
    std::memmove(reinterpret_cast<void *>(to), reinterpret_cast<void *>(from),
                 bytes);
  else if (!toDevice)
    fillWithOnes(reinterpret_cast<void *>(to), bytes);
  return kSuccess;
}
Result cuMemcpyAsync(unsigned long long to, unsigned long long from,
                     size_t bytes, void *) {
  return cuMemcpy(to, from, bytes);
}
Result cuLaunchHostFunc(void *, void (*function)(void *), void *data) {
  ++counts.hostFunctions;
  function(data);
  return kSuccess;
}
Result cuEventCreate(void **event, unsigned) {
  *event = handle();
  return kSuccess;
}
Result cuEventRecord(void *, void *) { return kSuccess; }
Result cuEventSynchronize(void *) {
  ++counts.waits;
  deviceClock.wait(nullptr);
  return kSuccess;
}
Result cuEventElapsedTime(float *ms, void *, void *) {
  *ms = 0;
  return kSuccess;
}
Result cuEventDestroy_v2(void *) { return kSuccess; }
Result cuMemPrefetchAsync_v2(unsigned long long, size_t, int, unsigned,
                             void *) {
  return kSuccess;
}
Result cuPointerGetAttribute(void *data, int attribute,
                             unsigned long long pointer) {
  if (attribute != 8) // CU_POINTER_ATTRIBUTE_IS_MANAGED
    return kInvalidValue;
  // Any address in a block, as the driver answers.
  std::optional<std::pair<size_t, bool>> block = blocks().blockOf(pointer);
  *static_cast<unsigned *>(data) = block && block->second;
  return kSuccess;
}
Result cuMemGetInfo_v2(size_t *free, size_t *total) {
  *free = *total = size_t(140) << 30;
  return kSuccess;
}
Result cuStreamBeginCapture_v2(void *, int) {
  ++counts.captures;
  capturedKernels = 0;
  return kSuccess;
}
Result cuStreamEndCapture(void *, void **graph) {
  *graph = new GraphKernels{capturedKernels.value_or(0)};
  capturedKernels.reset();
  return kSuccess;
}
Result cuGraphInstantiateWithFlags(void **exec, void *graph,
                                   unsigned long long) {
  *exec = new GraphKernels(*static_cast<GraphKernels *>(graph));
  return kSuccess;
}
Result cuGraphExecUpdate_v2(void *exec, void *graph, int *info) {
  *static_cast<GraphKernels *>(exec) = *static_cast<GraphKernels *>(graph);
  if (info)
    *info = 0; // CU_GRAPH_EXEC_UPDATE_SUCCESS
  return kSuccess;
}
Result cuGraphLaunch(void *exec, void *stream) {
  ++counts.graphLaunches;
  deviceClock.run(stream, static_cast<GraphKernels *>(exec)->kernels);
  return kSuccess;
}
Result cuGraphDestroy(void *graph) {
  delete static_cast<GraphKernels *>(graph);
  return kSuccess;
}
Result cuGraphExecDestroy(void *exec) {
  delete static_cast<GraphKernels *>(exec);
  return kSuccess;
}

// cuBLAS (CudaDense.cpp binds these three).
int cublasCreate_v2(void **blas) {
  *blas = handle();
  return 0;
}
int cublasSetStream_v2(void *, void *) { return 0; }
int cublasSgemm_v2(void *, int, int, int, int, int, const float *,
                   const float *, int, const float *, int, const float *,
                   float *, int) {
  ++counts.products;
  return 0;
}
}
