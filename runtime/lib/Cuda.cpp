//===- Cuda.cpp - gnnc's CUDA runtime over the driver API -----------------===//
//
// Part of gnnc's runtime. The driver is opened with dlopen on first use, so
// nothing links libcuda: on a machine without it, gnn_cuda_init says so and
// every other call reports an error instead of crashing.
//
//===----------------------------------------------------------------------===//

#include "gnnc/cuda.h"
#include "CudaDriver.h"
#include "CudaGraphs.h"
#include "CudaPool.h"
#include "CudaProfile.h"
#include "DynamicLibrary.h"
#include "HeldMemory.h"
#include "RuntimeInstance.h"
#include "SizeClasses.h"
#include "gnnc/errors.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {
using namespace gnnc::cuda;

struct State {
  std::once_flag once;
  bool ready = false;
  std::string why;
  Driver driver{};
  /// The device gnn_cuda_use_device asked for (modulo the device count).
  int requested = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  // Lowered code loads its kernels' module at every launch; the binary is a
  // constant of the program, so one load per binary serves them all.
  std::mutex modulesMutex;
  std::map<const void *, CUmodule> modules;
  // Kernel timing (gnn_cuda_time_kernels): the events around each launch
  // since the last gnn_cuda_take_kernel_ms.
  std::mutex timingMutex;
  bool timing = false;
  std::vector<std::pair<CUevent, CUevent>> launches;
};

State &state() {
  static State s;
  return s;
}

/// The host thread's stream, created at its first use and kept: lowered
/// code asks for a stream around every launch.
CUstream &threadStream() {
  thread_local CUstream stream = nullptr;
  return stream;
}

/// gnn_cuda_use_graphs: launches between waits captured into graphs.
std::atomic<bool> graphsOn{false};
/// CU_STREAM_NON_BLOCKING: no implicit ordering with the legacy stream,
/// whose work would invalidate a capture.
constexpr unsigned kStreamNonBlocking = 1;

void reportGraphFailure(const char *call, int result);

/// This thread's segment graphs when launches on its stream are captured
/// (graphs on, the driver has them, no kernel timing or profile, whose
/// events cannot be captured); null otherwise.
SegmentGraphs *threadGraphs(const Driver &d, CUstream stream);
/// Launches the segment this thread captured, if any (at a wait).
void flushThreadGraphs();
/// Whether this thread is capturing a segment.
bool threadCapturing();

/// Whether kernels this thread launched on its stream may still run: an
/// asynchronous launch leaves them running until the host waits.
bool &launchesInFlight() {
  thread_local bool inFlight = false;
  return inFlight;
}

/// Unified blocks, and host blocks a pending check reads, that this thread
/// freed while its kernels (or checks) may still use them. They go to the
/// pool once the thread has waited: the pool may hand a block to another
/// thread, or to host code that touches it before any wait of this
/// thread's. (Device blocks are reused in stream order, see streamFreed;
/// other host blocks go back at once.)
std::vector<void *> &freedInFlight() {
  thread_local std::vector<void *> blocks;
  return blocks;
}

/// The blocks that this thread's deferred checks read (pendingChecks),
/// until the thread waits: the only work that may read host memory later
/// than the host frees it (a queued copy of pageable memory is done with it
/// when the call returns).
std::set<const void *> &readByPendingChecks() {
  thread_local std::set<const void *> blocks;
  return blocks;
}

/// A check of what the thread's kernels found (an id list's slot, which
/// they lowered to its first bad entry), run once they are done.
using PendingCheck = std::function<void()>;

/// The thread's checks deferred to its next wait, in order. They only
/// report (the kernels after a lookup read row 0 or nothing for a bad id),
/// so the host need not stop for them, nor the device: as host functions
/// queued on the stream, each was a node in a step's graph that stalled
/// the device until the driver's thread had run it (26 a decoding step of
/// the 6-layer model, 10 a training step). Their buffers stay out of the
/// pool until they ran (readByPendingChecks, freedInFlight).
std::vector<PendingCheck> &pendingChecks() {
  thread_local std::vector<PendingCheck> checks;
  return checks;
}

void giveToPool(void *block);
/// Returns the device blocks this thread freed in flight to their pools.
void giveStreamFreedToPool();

/// The most blocks a thread holds back before it waits for its kernels.
constexpr size_t kMaxFreedInFlight = 256;

/// This thread's kernels have finished.
void launchesDone() {
  launchesInFlight() = false;
  profile::settle();
  std::vector<PendingCheck> checks;
  checks.swap(pendingChecks());
  for (PendingCheck &check : checks)
    check();
  std::vector<void *> blocks;
  blocks.swap(freedInFlight());
  for (void *block : blocks)
    giveToPool(block);
  giveStreamFreedToPool();
  readByPendingChecks().clear();
}

std::string describe(CUresult result) {
  const char *text = nullptr;
  if (state().driver.getErrorString)
    state().driver.getErrorString(result, &text);
  return text ? text : "CUDA error " + std::to_string(result);
}

void initialize(State &s) {
  void *library = gnnc::openFirst({"libcuda.so.1"});
  if (!library) {
    s.why = "no CUDA driver: libcuda.so.1 cannot be loaded";
    return;
  }
  Driver &d = s.driver;
  gnnc::Symbols symbols(library);
  symbols.need("cuInit", d.init);
  symbols.need("cuDeviceGetCount", d.deviceGetCount);
  symbols.need("cuDeviceGet", d.deviceGet);
  symbols.need("cuDeviceGetAttribute", d.deviceGetAttribute);
  symbols.need("cuDeviceGetName", d.deviceGetName);
  symbols.need("cuDevicePrimaryCtxRetain", d.primaryCtxRetain);
  symbols.need("cuCtxSetCurrent", d.ctxSetCurrent);
  symbols.need("cuCtxSynchronize", d.ctxSynchronize);
  symbols.need("cuModuleLoadData", d.moduleLoadData);
  symbols.need("cuModuleGetFunction", d.moduleGetFunction);
  symbols.need("cuLaunchKernel", d.launchKernel);
  symbols.need("cuStreamCreate", d.streamCreate);
  symbols.need("cuStreamSynchronize", d.streamSynchronize);
  symbols.need("cuMemAllocManaged", d.memAllocManaged);
  symbols.need("cuMemAlloc_v2", d.memAlloc);
  symbols.need("cuMemFree_v2", d.memFree);
  symbols.need("cuGetErrorString", d.getErrorString);
  symbols.need("cuMemsetD32_v2", d.memsetD32);
  symbols.need("cuMemcpy", d.memcpy);
  symbols.need("cuEventCreate", d.eventCreate);
  symbols.need("cuEventRecord", d.eventRecord);
  symbols.need("cuEventSynchronize", d.eventSynchronize);
  symbols.need("cuEventElapsedTime", d.eventElapsedTime);
  symbols.need("cuEventDestroy_v2", d.eventDestroy);
  symbols.bind("cuMemcpyAsync", d.memcpyAsync);
  symbols.bind("cuMemPrefetchAsync_v2", d.memPrefetch);
  symbols.bind("cuPointerGetAttribute", d.pointerGetAttribute);
  symbols.bind("cuMemGetInfo_v2", d.memGetInfo);
  symbols.bind("cuStreamBeginCapture_v2", d.graphs.streamBeginCapture);
  symbols.bind("cuStreamEndCapture", d.graphs.streamEndCapture);
  symbols.bind("cuGraphInstantiateWithFlags", d.graphs.graphInstantiate);
  symbols.bind("cuGraphExecUpdate_v2", d.graphs.graphExecUpdate);
  symbols.bind("cuGraphLaunch", d.graphs.graphLaunch);
  symbols.bind("cuGraphDestroy", d.graphs.graphDestroy);
  symbols.bind("cuGraphExecDestroy", d.graphs.graphExecDestroy);
  if (const char *missing = symbols.missing()) {
    s.why = std::string("the CUDA driver lacks ") + missing;
    return;
  }
  int count = 0;
  if (CUresult r = d.init(0); r != kSuccess) {
    s.why = "the CUDA driver does not initialize: " + describe(r);
    return;
  }
  if (d.deviceGetCount(&count) != kSuccess || count == 0) {
    s.why = "no CUDA device";
    return;
  }
  int ordinal = s.requested % count;
  std::string name = "CUDA device " + std::to_string(ordinal);
  if (CUresult r = d.deviceGet(&s.device, ordinal); r != kSuccess) {
    s.why = name + ": " + describe(r);
    return;
  }
  if (CUresult r = d.primaryCtxRetain(&s.context, s.device); r != kSuccess) {
    s.why = name + " has no usable context: " + describe(r);
    return;
  }
  s.ready = true;
}

} // namespace

const Driver *gnnc::cuda::driver() {
  State &s = state();
  std::call_once(s.once, [&] { initialize(s); });
  if (!s.ready) {
    gnn_rt_report(s.why.c_str());
    return nullptr;
  }
  if (CUresult r = s.driver.ctxSetCurrent(s.context); r != kSuccess) {
    gnn_rt_report(("cuCtxSetCurrent: " + describe(r)).c_str());
    return nullptr;
  }
  return &s.driver;
}

void gnnc::cuda::noteQueuedWork() { launchesInFlight() = true; }

bool gnnc::cuda::ok(CUresult result, const char *call) {
  if (result == kSuccess)
    return true;
  gnn_rt_report((std::string(call) + ": " + describe(result)).c_str());
  return false;
}
namespace {
/// This thread's segments, made at its first captured launch.
std::unique_ptr<SegmentGraphs> &threadSegments() {
  thread_local std::unique_ptr<SegmentGraphs> graphs;
  return graphs;
}

void reportGraphFailure(const char *call, int result) {
  (void)ok(result, call);
}

SegmentGraphs *threadGraphs(const Driver &d, CUstream stream) {
  if (!graphsOn.load() || stream != threadStream() || profile::enabled() ||
      !d.graphs.complete())
    return nullptr;
  std::unique_ptr<SegmentGraphs> &graphs = threadSegments();
  if (!graphs)
    graphs = std::make_unique<SegmentGraphs>(d.graphs, reportGraphFailure);
  return graphs.get();
}

void flushThreadGraphs() {
  // A failed segment is reported (its kernels may not have run): the
  // program's run ends with that error.
  if (SegmentGraphs *graphs = threadSegments().get())
    (void)graphs->flush();
}

bool threadCapturing() {
  SegmentGraphs *graphs = threadSegments().get();
  return graphs && graphs->capturing();
}
} // namespace

extern "C" void gnn_cuda_use_graphs(int on) { graphsOn.store(on != 0); }

extern "C" void gnn_cuda_use_device(int index) {
  state().requested = index < 0 ? 0 : index;
}

extern "C" int gnn_cuda_init(char *why, size_t whySize) {
  State &s = state();
  std::call_once(s.once, [&] { initialize(s); });
  if (!s.ready && why && whySize > 0)
    std::snprintf(why, whySize, "%s", s.why.c_str());
  return s.ready;
}

extern "C" int gnn_cuda_compute_capability(int *major, int *minor) {
  const Driver *d = driver();
  return d &&
         ok(d->deviceGetAttribute(major, kAttrComputeMajor, state().device),
            "cuDeviceGetAttribute") &&
         ok(d->deviceGetAttribute(minor, kAttrComputeMinor, state().device),
            "cuDeviceGetAttribute");
}

extern "C" int gnn_cuda_device_name(char *name, size_t nameSize) {
  const Driver *d = driver();
  return d && nameSize > 0 &&
         ok(d->deviceGetName(name, int(nameSize), state().device),
            "cuDeviceGetName");
}

namespace {
/// The unified and device memory the process holds from the driver (every
/// pool's).
gnnc::HeldMemory &heldMemory() {
  static gnnc::HeldMemory held;
  return held;
}

/// Whether `bytes` more than the device has free are asked for: then a
/// unified block is refused up front (the driver would grant it and page
/// it between host and device, and a device so oversubscribed can hang).
/// Reported when the try is `final`.
bool beyondFreeMemory(const Driver &d, uint64_t bytes, bool final) {
  size_t free = 0, total = 0;
  if (!d.memGetInfo || d.memGetInfo(&free, &total) != kSuccess || bytes <= free)
    return false;
  if (final) {
    char message[160];
    std::snprintf(message, sizeof(message),
                  "out of device memory: a block of %llu bytes asked for, "
                  "%llu of %llu free",
                  (unsigned long long)bytes, (unsigned long long)free,
                  (unsigned long long)total);
    gnn_rt_report(message);
  }
  return true;
}

/// A fresh block of `bytes` from the driver's `name` (`allocate`: unified
/// or device memory); null if the device has none, reported when the try
/// is `final` (else the pool returns its kept blocks and asks again).
template <typename Allocate>
void *allocateBlock(uint64_t bytes, bool final, const char *name,
                    Allocate allocate) {
  profile::HostCall timed(name);
  const Driver *d = driver();
  if (!d || beyondFreeMemory(*d, bytes, final))
    return nullptr;
  CUdeviceptr pointer = 0;
  CUresult result = allocate(*d, &pointer);
  if (result != kSuccess) {
    if (final)
      (void)ok(result, name);
    return nullptr;
  }
  heldMemory().acquired(reinterpret_cast<void *>(pointer), bytes);
  return reinterpret_cast<void *>(pointer);
}

void *allocateUnified(uint64_t bytes, bool final) {
  return allocateBlock(bytes, final, "cuMemAllocManaged",
                       [&](const Driver &d, CUdeviceptr *pointer) {
                         return d.memAllocManaged(pointer, bytes,
                                                  kMemAttachGlobal);
                       });
}

void *allocateDevice(uint64_t bytes, bool final) {
  return allocateBlock(bytes, final, "cuMemAlloc",
                       [&](const Driver &d, CUdeviceptr *pointer) {
                         return d.memAlloc(pointer, bytes);
                       });
}

/// A fresh block of host memory for buffers only the host program touches
/// (gnn_cuda_alloc_host), aligned like the driver's blocks.
void *allocateHost(uint64_t bytes, bool final) {
  uint64_t rounded = gnnc::roundUp(bytes, GNN_CUDA_BLOCK_ALIGNMENT);
  void *block = rounded >= bytes
                    ? std::aligned_alloc(GNN_CUDA_BLOCK_ALIGNMENT, rounded)
                    : nullptr;
  if (!block && final)
    gnn_rt_report("out of host memory for a GPU program's buffer");
  return block;
}

void freeHost(void *block) { std::free(block); }

/// Returns a unified or device block to the driver.
void freeBlock(void *pointer) {
  // Never a block a running kernel uses: those reach the pool only after
  // their thread waited (gnn_cuda_free).
  profile::HostCall timed("cuMemFree");
  heldMemory().released(pointer);
  if (const Driver *d = driver())
    ok(d->memFree(reinterpret_cast<CUdeviceptr>(pointer)), "cuMemFree");
}

/// gnn_cuda_set_pool_limit's bytes: the bound of each instance's pools made
/// after it. By default 16 MB: a device's footprint is what benchmarks
/// compare, and on the 6-layer d_model 512 training step a bound of 512 MB
/// held 292 MiB more at the peak and asked the driver for blocks 8 times as
/// often in steady state (bench/gpu/train.sh --stand-in).
std::atomic<uint64_t> poolLimit{uint64_t(16) << 20};

enum class Memory { Unified, Device, Host };

std::unique_ptr<Pool> &poolSlot(gnn_rt_runtime &instance, Memory memory) {
  switch (memory) {
  case Memory::Unified:
    return instance.cudaPool;
  case Memory::Device:
    return instance.cudaDevicePool;
  case Memory::Host:
    break;
  }
  return instance.cudaHostPool;
}

/// `instance`'s pool of `memory`, made at its first use.
Pool &poolOf(gnn_rt_runtime &instance, Memory memory) {
  std::lock_guard<std::mutex> lock(instance.cudaPoolMutex);
  std::unique_ptr<Pool> &pool = poolSlot(instance, memory);
  if (pool)
    return *pool;
  if (memory == Memory::Host)
    pool = std::make_unique<Pool>(allocateHost, freeHost, poolLimit.load());
  else
    pool = std::make_unique<Pool>(memory == Memory::Unified ? allocateUnified
                                                            : allocateDevice,
                                  freeBlock, poolLimit.load());
  return *pool;
}

/// The pool of `memory` of the instance this thread runs for: its bound
/// context's, or the default one's.
Pool &pool(Memory memory) {
  return poolOf(gnnc::runtimeOf(gnnc::boundContext()), memory);
}

/// `block` back to the pool that handed it out (this thread's instance's
/// first, as host blocks go back: gnnc::freeIntoOwningPool), or to the
/// driver if none did (its instance is gone). No pool is made for it.
void giveToPool(void *block) {
  if (!block)
    return;
  auto takesBack = [&](gnn_rt_runtime &instance) {
    std::lock_guard<std::mutex> lock(instance.cudaPoolMutex);
    for (Memory memory : {Memory::Unified, Memory::Device, Memory::Host})
      if (std::unique_ptr<Pool> &pool = poolSlot(instance, memory);
          pool && pool->takeBack(block))
        return true;
    return false;
  };
  gnn_rt_runtime &mine = gnnc::runtimeOf(gnnc::boundContext());
  if (takesBack(mine) || gnnc::anyInstance([&](gnn_rt_runtime &instance) {
        return &instance != &mine && takesBack(instance);
      }))
    return;
  freeBlock(block);
}

/// A device block this thread freed while its kernels may still use it.
struct StreamFreed {
  void *block;
  Pool *pool;
};

/// This thread's device blocks freed in flight, by capacity. Only kernels,
/// cuBLAS and copies queued on this thread's stream touch device memory
/// (the host cannot), so this thread's later work, queued behind the
/// kernels that used a block, may reuse it at once: stream order keeps
/// them apart, in a captured graph too. Other threads get the blocks after
/// this one waits. A step so reuses its temporaries as it goes, as a
/// stream-ordered allocator does, instead of holding every one it freed
/// until the wait (or waiting mid-step when they are too many).
std::multimap<uint64_t, StreamFreed> &streamFreed() {
  thread_local std::multimap<uint64_t, StreamFreed> blocks;
  return blocks;
}

/// A block of `pool`'s for `bytes` from this thread's stream-freed ones
/// (at most a quarter larger, as the pool reuses its kept blocks); null if
/// none.
void *reuseOnStream(Pool &pool, uint64_t bytes) {
  uint64_t capacity = Pool::capacityOfRequest(bytes);
  std::multimap<uint64_t, StreamFreed> &blocks = streamFreed();
  for (auto it = blocks.lower_bound(capacity);
       it != blocks.end() && it->first - capacity <= capacity / 4; ++it)
    if (it->second.pool == &pool) {
      void *block = it->second.block;
      blocks.erase(it);
      return block;
    }
  return nullptr;
}

/// Whether `block` is a device block of this thread's instance, now kept
/// for reuse on this thread's stream.
bool keepOnStream(void *block) {
  Pool &device = pool(Memory::Device);
  std::optional<uint64_t> capacity = device.capacityOf(block);
  if (!capacity)
    return false;
  streamFreed().emplace(*capacity, StreamFreed{block, &device});
  return true;
}

/// Whether `block` is a host block of this thread's instance that no
/// pending check reads, now back in its pool: kernels cannot touch host
/// memory, so it is free to reuse whatever runs.
bool giveBackHostBlock(void *block) {
  return !readByPendingChecks().count(block) &&
         pool(Memory::Host).takeBack(block);
}

void giveStreamFreedToPool() {
  std::multimap<uint64_t, StreamFreed> blocks;
  blocks.swap(streamFreed());
  for (auto &[capacity, freed] : blocks)
    giveToPool(freed.block);
}

/// Before a block is handed out: blocks freed while kernels run wait for
/// the next wait; a long run of kernels with no host access between them
/// would otherwise hold them all (a fresh block for every temporary) until
/// it ends. Device blocks are reused as they go (streamFreed), so only
/// many of them unused for a long run forces a wait.
void boundFreedInFlight() {
  if (freedInFlight().size() >= kMaxFreedInFlight ||
      streamFreed().size() >= 4 * kMaxFreedInFlight)
    gnn_cuda_wait_for_launches();
}
} // namespace

void gnnc::bequeathCudaPool(gnn_rt_runtime &runtime) {
  for (Memory memory : {Memory::Unified, Memory::Device, Memory::Host}) {
    Pool &heir = poolOf(*gnn_rt_default_runtime(), memory);
    std::lock_guard<std::mutex> lock(runtime.cudaPoolMutex);
    if (std::unique_ptr<Pool> &pool = poolSlot(runtime, memory))
      pool->bequeath(heir);
  }
}

extern "C" void *gnn_cuda_alloc(size_t bytes) {
  const Driver *d = driver();
  if (!d)
    return nullptr;
  boundFreedInFlight();
  // Blocks have at least a page, so that a buffer of no elements still has
  // a distinct address (the driver rejects empty allocations).
  bool reused = false;
  void *block = pool(Memory::Unified).take(bytes, reused);
  // Kernels write most buffers first: map the pages on the device now, in
  // bulk, rather than fault them in one by one at the first launch; a kept
  // block's pages may have moved to the host since (the host read them).
  // (Not while this thread captures a segment: a prefetch is no graph
  // node, and the block's pages move at their first touch instead.)
  if (block && d->memPrefetch && bytes > 0 && !threadCapturing()) {
    profile::HostCall timed(reused ? "cuMemPrefetchAsync (kept block)"
                                   : "cuMemPrefetchAsync (new block)");
    (void)d->memPrefetch(reinterpret_cast<CUdeviceptr>(block), bytes,
                         {kLocationDevice, state().device}, 0, nullptr);
  }
  return block;
}

namespace {
/// A block of `memory` from this thread's instance's pool as a memref<?xi8>
/// (zeros when there is none, reported).
void handOutBlock(gnn_memref1d_i8 *result, int64_t bytes, Memory memory) {
  *result = {};
  if (bytes < 0) {
    gnn_rt_report("a buffer of negative size asked for");
    return;
  }
  if (!driver()) // reported
    return;
  boundFreedInFlight();
  Pool &from = pool(memory);
  void *block = memory == Memory::Device && launchesInFlight()
                    ? reuseOnStream(from, uint64_t(bytes))
                    : nullptr;
  bool reused = false;
  if (!block)
    block = from.take(uint64_t(bytes), reused);
  if (block)
    *result = {static_cast<int8_t *>(block), static_cast<int8_t *>(block), 0,
               bytes, 1};
}
} // namespace

extern "C" void _mlir_ciface_gnn_cuda_alloc_device(gnn_memref1d_i8 *result,
                                                   int64_t bytes) {
  handOutBlock(result, bytes, Memory::Device);
}

extern "C" void _mlir_ciface_gnn_cuda_alloc_host(gnn_memref1d_i8 *result,
                                                 int64_t bytes) {
  handOutBlock(result, bytes, Memory::Host);
}

extern "C" void *gnn_cuda_aligned_alloc(size_t alignment, size_t bytes) {
  // Managed allocations are aligned to at least 256 bytes.
  if (alignment > GNN_CUDA_BLOCK_ALIGNMENT) {
    gnn_rt_report("unified memory cannot be aligned beyond 256 bytes");
    return nullptr;
  }
  return gnn_cuda_alloc(bytes);
}

extern "C" void gnn_cuda_free(void *pointer) {
  if (!pointer || !launchesInFlight())
    giveToPool(pointer);
  else if (!keepOnStream(pointer) && !giveBackHostBlock(pointer))
    freedInFlight().push_back(pointer); // see freedInFlight
}

extern "C" void gnn_cuda_set_pool_limit(uint64_t bytes) {
  poolLimit.store(bytes);
}

extern "C" uint64_t gnn_cuda_cached_memory_bytes(void) {
  return pool(Memory::Unified).keptBytes() + pool(Memory::Device).keptBytes() +
         pool(Memory::Host).keptBytes();
}

extern "C" uint64_t gnn_cuda_peak_memory_bytes(void) {
  return heldMemory().peak();
}

extern "C" int gnn_cuda_is_unified(const void *pointer) {
  // Asked of every argument of a GPU program's call: no report where there
  // is no device, and a pointer the driver does not know is not unified.
  if (!pointer || !gnn_cuda_init(nullptr, 0))
    return 0;
  const Driver *d = driver();
  unsigned managed = 0;
  return d && d->pointerGetAttribute &&
         d->pointerGetAttribute(&managed, kPointerIsManaged,
                                reinterpret_cast<CUdeviceptr>(pointer)) ==
             kSuccess &&
         managed != 0;
}

extern "C" int gnn_cuda_copy(void *to, const void *from, size_t bytes) {
  profile::HostCall timed("cuMemcpy");
  const Driver *d = driver();
  return d && (bytes == 0 ||
               ok(d->memcpy(reinterpret_cast<CUdeviceptr>(to),
                            reinterpret_cast<CUdeviceptr>(from), bytes),
                  "cuMemcpy"));
}

extern "C" int gnn_cuda_zero(void *pointer, size_t bytes) {
  if (bytes % sizeof(uint32_t) != 0) {
    gnn_rt_report("gnn_cuda_zero: a byte count not a multiple of 4");
    return 0;
  }
  profile::HostCall timed("cuMemsetD32");
  const Driver *d = driver();
  // The set runs on the legacy stream, which the threads' non-blocking
  // streams do not wait for: it is waited for here, before any launch
  // reads the memory.
  return d &&
         (bytes == 0 || (ok(d->memsetD32(reinterpret_cast<CUdeviceptr>(pointer),
                                         0, bytes / sizeof(uint32_t)),
                            "cuMemsetD32") &&
                         ok(d->ctxSynchronize(), "cuCtxSynchronize")));
}

extern "C" int gnn_cuda_copy_queued(void *to, const void *from, size_t bytes) {
  const Driver *d = driver();
  if (!d)
    return 0;
  if (bytes == 0)
    return 1;
  // Captured segments hold kernels and cuBLAS products: while capturing (or
  // without the driver's queued copy) the copy waits and copies.
  if (!d->memcpyAsync || threadCapturing()) {
    gnn_cuda_wait_for_launches();
    return gnn_cuda_copy(to, from, bytes);
  }
  auto stream = static_cast<CUstream>(gnn_cuda_stream_create());
  if (!stream)
    return 0;
  profile::HostCall timed("cuMemcpyAsync");
  if (!ok(d->memcpyAsync(reinterpret_cast<CUdeviceptr>(to),
                         reinterpret_cast<CUdeviceptr>(from), bytes, stream),
          "cuMemcpyAsync"))
    return 0;
  launchesInFlight() = true;
  return 1;
}

extern "C" int gnn_cuda_synchronize(void) {
  flushThreadGraphs();
  profile::HostCall timed("cuCtxSynchronize");
  const Driver *d = driver();
  if (!d || !ok(d->ctxSynchronize(), "cuCtxSynchronize")) {
    // The device failed (reported): what its kernels found is lost, and
    // the deferred checks' contexts may not outlive the failed call.
    pendingChecks().clear();
    return 0;
  }
  launchesDone();
  return 1;
}

extern "C" void *gnn_cuda_module_load(void *data, size_t) {
  const Driver *d = driver();
  if (!d)
    return nullptr;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.modulesMutex);
  if (auto found = s.modules.find(data); found != s.modules.end())
    return found->second;
  CUmodule module = nullptr;
  if (!ok(d->moduleLoadData(&module, data), "cuModuleLoadData"))
    return nullptr;
  s.modules[data] = module;
  return module;
}

extern "C" void *gnn_cuda_module_load_jit(void *data, int) {
  // The driver compiles PTX that it is handed as a module.
  return gnn_cuda_module_load(data, 0);
}

extern "C" void gnn_cuda_module_unload(void *) {
  // Modules stay loaded for the next launch (see State::modules).
}

extern "C" void *gnn_cuda_module_get_function(void *module, const char *name) {
  const Driver *d = driver();
  CUfunction function = nullptr;
  if (!d || !module)
    return nullptr;
  if (!ok(d->moduleGetFunction(&function, module, name), "cuModuleGetFunction"))
    return nullptr;
  profile::nameFunction(function, name);
  return function;
}

extern "C" void gnn_cuda_launch_kernel(void *function, intptr_t gridX,
                                       intptr_t gridY, intptr_t gridZ,
                                       intptr_t blockX, intptr_t blockY,
                                       intptr_t blockZ, int32_t sharedBytes,
                                       void *stream, void **params,
                                       void **extra, size_t) {
  const Driver *d = driver();
  if (!d || !function)
    return;
  State &s = state();
  std::pair<CUevent, CUevent> events{nullptr, nullptr};
  bool timed = false;
  {
    std::lock_guard<std::mutex> lock(s.timingMutex);
    timed = s.timing && ok(d->eventCreate(&events.first, 0), "cuEventCreate");
    if (timed && !ok(d->eventCreate(&events.second, 0), "cuEventCreate")) {
      d->eventDestroy(events.first);
      timed = false;
    }
  }
  if (timed)
    (void)d->eventRecord(events.first, stream);
  // Captured into the thread's segment where graphs are on; launched as
  // it is where the driver refuses the capture (reported).
  SegmentGraphs *graphs = timed ? nullptr : threadGraphs(*d, stream);
  if (graphs && !graphs->beforeLaunch(stream))
    graphs = nullptr;
  profile::Launch profiled = profile::beforeLaunch(*d, stream);
  {
    profile::HostCall call("cuLaunchKernel");
    ok(d->launchKernel(function, unsigned(gridX), unsigned(gridY),
                       unsigned(gridZ), unsigned(blockX), unsigned(blockY),
                       unsigned(blockZ), unsigned(sharedBytes), stream, params,
                       extra),
       "cuLaunchKernel");
  }
  profile::afterLaunch(*d, profiled, function, stream);
  if (graphs) {
    graphs->noteLaunch(function);
    // The device starts on the stretch's first part while the host
    // captures the next (a failure is reported; the call ends with it).
    if (graphs->full())
      (void)graphs->split();
  }
  noteQueuedWork();
  if (!timed)
    return;
  (void)d->eventRecord(events.second, stream);
  std::lock_guard<std::mutex> lock(s.timingMutex);
  s.launches.push_back(events);
}

extern "C" void gnn_cuda_time_kernels(int on) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.timingMutex);
  s.timing = on != 0;
}

extern "C" double gnn_cuda_take_kernel_ms(void) {
  const Driver *d = driver();
  State &s = state();
  std::vector<std::pair<CUevent, CUevent>> launches;
  {
    std::lock_guard<std::mutex> lock(s.timingMutex);
    launches.swap(s.launches);
  }
  double total = 0;
  for (auto [start, end] : launches) {
    float ms = 0;
    if (d && ok(d->eventSynchronize(end), "cuEventSynchronize") &&
        ok(d->eventElapsedTime(&ms, start, end), "cuEventElapsedTime"))
      total += ms;
    if (d) {
      d->eventDestroy(start);
      d->eventDestroy(end);
    }
  }
  return total;
}

extern "C" void *gnn_cuda_stream_create(void) {
  // Lowered code creates, synchronizes and destroys a stream around every
  // launch; one stream per host thread, kept, serves them all without a
  // driver call each time.
  CUstream &stream = threadStream();
  const Driver *d = driver();
  unsigned flags = graphsOn.load() ? kStreamNonBlocking : 0;
  if (!d || (!stream && !ok(d->streamCreate(&stream, flags), "cuStreamCreate")))
    return nullptr;
  return stream;
}

extern "C" void gnn_cuda_stream_destroy(void *) {
  // The thread's stream stays for its next launch (see above).
}

extern "C" void gnn_cuda_stream_synchronize(void *stream) {
  if (stream == threadStream())
    flushThreadGraphs();
  profile::HostCall timed("cuStreamSynchronize (after each launch)");
  if (const Driver *d = driver())
    ok(d->streamSynchronize(stream), "cuStreamSynchronize");
  if (stream == threadStream())
    launchesDone();
}

namespace {
/// Notes the blocks of a check's buffers (see readByPendingChecks), before
/// it is deferred.
void noteReadByCheck(std::initializer_list<const gnn_memref1d_i64 *> buffers) {
  for (const gnn_memref1d_i64 *b : buffers)
    readByPendingChecks().insert(b->allocated);
}

/// `check` after the thread's kernels: now if none may still run, else at
/// the thread's next wait (see pendingChecks).
void deferCheck(PendingCheck check) {
  if (launchesInFlight())
    pendingChecks().push_back(std::move(check));
  else
    check();
}
} // namespace

extern "C" void _mlir_ciface_gnn_cuda_check_bad_id_queued(
    gnn_rt_context *context, gnn_memref1d_i64 *slot, gnn_memref1d_i64 *ids,
    int64_t bound) {
  noteReadByCheck({slot, ids});
  deferCheck([context, slot = *slot, ids = *ids, bound]() mutable {
    _mlir_ciface_gnn_rt_check_bad_id(context, &slot, &ids, bound);
  });
}

extern "C" void _mlir_ciface_gnn_cuda_check_repeated_id_queued(
    gnn_rt_context *context, gnn_memref1d_i64 *slot, gnn_memref1d_i64 *ids,
    gnn_memref1d_i64 *first, int64_t line, int64_t column) {
  noteReadByCheck({slot, ids, first});
  deferCheck([context, slot = *slot, ids = *ids, first = *first, line,
              column]() mutable {
    _mlir_ciface_gnn_rt_check_repeated_id(context, &slot, &ids, &first, line,
                                          column);
  });
}

extern "C" void gnn_cuda_wait_for_launches(void) {
  if (!launchesInFlight())
    return;
  flushThreadGraphs();
  {
    profile::HostCall timed("cuStreamSynchronize (before host access)");
    if (const Driver *d = driver())
      ok(d->streamSynchronize(threadStream()), "cuStreamSynchronize");
  }
  launchesDone();
}
