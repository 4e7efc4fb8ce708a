//===- ParserQuarantine.cpp - freed memory kept while MLIR parses ---------===//
//
// Part of gnnc. Defines `free` for the executables that link it: the
// executable comes first in symbol lookup, so MLIR's and the C++ runtime's
// frees (operator delete included) come here, and go on to the `free` that
// would otherwise have been found (glibc's, or a preloaded allocator's)
// unless a ParserQuarantine is alive on the calling thread. `free` is
// defined in this file, beside the guard, so that every tool that uses the
// guard links it.
//
//===----------------------------------------------------------------------===//

#include "GNN/Support/ParserQuarantine.h"

#include <atomic>
#include <cstdlib>
#include <dlfcn.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GNN_SANITIZER_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define GNN_SANITIZER_ALLOCATOR 1
#endif

// Under AddressSanitizer, whose allocator defines `free` itself and keeps
// freed memory out of reuse for a while, the guard does nothing.
#ifndef GNN_SANITIZER_ALLOCATOR
namespace {
using FreeFn = void (*)(void *);

/// The `free` after this executable's in lookup order.
std::atomic<FreeFn> nextFree{nullptr};
/// Set while this thread looks nextFree up (dlsym may free).
thread_local bool resolving = false;

/// Guards alive on this thread, and the blocks they keep. Plain data: no
/// thread-exit destructor runs after other code may still free.
thread_local unsigned depth = 0;
thread_local void **kept = nullptr;
thread_local size_t keptCount = 0, keptCapacity = 0;

FreeFn resolveNextFree() {
  FreeFn fn = nextFree.load(std::memory_order_acquire);
  if (fn || resolving)
    return fn;
  resolving = true;
  fn = reinterpret_cast<FreeFn>(dlsym(RTLD_NEXT, "free"));
  resolving = false;
  if (fn)
    nextFree.store(fn, std::memory_order_release);
  return fn;
}

/// Records `p` as kept; false where the list cannot grow.
bool keep(void *p) {
  if (keptCount == keptCapacity) {
    size_t grown = keptCapacity ? 2 * keptCapacity : 4096;
    // realloc frees the old list inside the allocator, not through here.
    auto *list = static_cast<void **>(std::realloc(kept, grown * sizeof(p)));
    if (!list)
      return false;
    kept = list;
    keptCapacity = grown;
  }
  kept[keptCount++] = p;
  return true;
}

void releaseKept() {
  void **list = kept;
  size_t count = keptCount;
  kept = nullptr;
  keptCount = keptCapacity = 0;
  if (FreeFn fn = resolveNextFree()) {
    for (size_t i = 0; i < count; ++i)
      fn(list[i]);
    fn(list);
  }
}
} // namespace

/// A block that can be neither kept nor handed on (no memory for the list,
/// or while looking up the next `free`) is left allocated: a leak is safe,
/// a reuse is not.
extern "C" __attribute__((visibility("default"))) void free(void *p) noexcept {
  if (!p)
    return;
  if (depth > 0) {
    keep(p);
    return;
  }
  if (FreeFn fn = resolveNextFree())
    fn(p);
}

bool mlir::gnn::ParserQuarantine::keepsMemory() { return true; }

mlir::gnn::ParserQuarantine::ParserQuarantine() {
  // Looked up before the first block must be handed on.
  resolveNextFree();
  ++depth;
}

void mlir::gnn::ParserQuarantine::release() {
  if (!active)
    return;
  active = false;
  if (--depth == 0)
    releaseKept();
}

mlir::gnn::ParserQuarantine::~ParserQuarantine() { release(); }

size_t mlir::gnn::ParserQuarantine::keptBlocks() { return keptCount; }

#else

bool mlir::gnn::ParserQuarantine::keepsMemory() { return false; }
mlir::gnn::ParserQuarantine::ParserQuarantine() = default;
void mlir::gnn::ParserQuarantine::release() { active = false; }
mlir::gnn::ParserQuarantine::~ParserQuarantine() = default;
size_t mlir::gnn::ParserQuarantine::keptBlocks() { return 0; }

#endif
