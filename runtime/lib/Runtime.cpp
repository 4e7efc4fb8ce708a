//===- Runtime.cpp - runtime instances and the thread's bound context -----===//
//
// Part of gnnc's runtime. Instances other than the default one are listed,
// so that a block freed on a thread bound to another instance (or to none)
// still goes back to the pool that handed it out.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInstance.h"

#include <algorithm>
#include <mutex>
#include <new>
#include <vector>

namespace {
std::mutex registryMutex;
/// The instances besides the default one; guarded by registryMutex.
std::vector<gnn_rt_runtime *> &registry() {
  static auto *instances = new std::vector<gnn_rt_runtime *>;
  return *instances;
}

thread_local gnn_rt_context *bound = nullptr;
} // namespace

extern "C" const char *
gnn_rt_settings_problem(const gnn_rt_settings *settings) {
  if (!settings)
    return "no settings";
  if (settings->threads < 0)
    return "a runtime's thread count must not be negative";
  if (settings->tape_budget_bytes < 0)
    return "a runtime's tape budget must not be negative";
  return nullptr;
}

extern "C" void gnn_rt_settings_init(gnn_rt_settings *settings) {
  if (!settings)
    return;
  *settings = gnn_rt_settings();
  settings->threads = 0;
  settings->keep_freed_blocks = 1;
  settings->pool_limit_bytes = GNN_RT_DEFAULT_POOL_LIMIT;
  settings->tape_budget_bytes = 0;
  settings->small_gemm = 1;
}

extern "C" gnn_rt_runtime *gnn_rt_default_runtime(void) {
  // Never destroyed: compiled code may free buffers during exit.
  static gnn_rt_runtime *instance = [] {
    gnn_rt_settings defaults;
    gnn_rt_settings_init(&defaults);
    return new gnn_rt_runtime(defaults);
  }();
  return instance;
}

extern "C" gnn_rt_runtime *
gnn_rt_runtime_create(const gnn_rt_settings *settings) {
  gnn_rt_settings chosen;
  gnn_rt_settings_init(&chosen);
  if (settings)
    chosen = *settings;
  if (gnn_rt_settings_problem(&chosen))
    return nullptr;
  auto *instance = new (std::nothrow) gnn_rt_runtime(chosen);
  if (!instance)
    return nullptr;
  std::lock_guard<std::mutex> lock(registryMutex);
  registry().push_back(instance);
  return instance;
}

extern "C" void gnn_rt_runtime_destroy(gnn_rt_runtime *runtime) {
  if (!runtime || runtime == gnn_rt_default_runtime())
    return;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    auto &instances = registry();
    instances.erase(std::remove(instances.begin(), instances.end(), runtime),
                    instances.end());
  }
  // Results the host still holds outlive the instance.
  runtime->pool.bequeath(gnn_rt_default_runtime()->pool);
  if (runtime->cudaPool || runtime->cudaDevicePool || runtime->cudaHostPool)
    gnnc::bequeathCudaPool(*runtime);
  delete runtime;
}

extern "C" void gnn_rt_runtime_settings(const gnn_rt_runtime *runtime,
                                        gnn_rt_settings *settings) {
  if (settings)
    *settings = (runtime ? runtime : gnn_rt_default_runtime())->settings;
}

extern "C" gnn_rt_context *gnn_rt_context_create_in(gnn_rt_runtime *runtime) {
  return new (std::nothrow)
      gnn_rt_context(runtime ? runtime : gnn_rt_default_runtime());
}

extern "C" gnn_rt_runtime *gnn_rt_context_runtime(gnn_rt_context *context) {
  return &gnnc::runtimeOf(context);
}

extern "C" gnn_rt_context *gnn_rt_context_bind(gnn_rt_context *context) {
  gnn_rt_context *before = bound;
  bound = context;
  return before;
}

extern "C" void gnn_rt_context_set_result_hook(gnn_rt_context *context,
                                               gnn_rt_result_hook hook,
                                               void *user) {
  if (!context)
    return;
  context->resultHook = hook;
  context->resultHookUser = user;
}

extern "C" void gnn_rt_result_ready(gnn_rt_context *context, int64_t slot,
                                    const void *data, int64_t bytes) {
  if (context && context->resultHook)
    context->resultHook(context->resultHookUser, slot, data, bytes);
}

gnn_rt_context *gnnc::boundContext() { return bound; }

gnn_rt_runtime &gnnc::runtimeOf(gnn_rt_context *context) {
  return context ? *context->runtime : *gnn_rt_default_runtime();
}

gnnc::HostPool &gnnc::currentPool() { return runtimeOf(bound).pool; }

bool gnnc::anyInstance(const std::function<bool(gnn_rt_runtime &)> &found) {
  if (found(*gnn_rt_default_runtime()))
    return true;
  std::lock_guard<std::mutex> lock(registryMutex);
  for (gnn_rt_runtime *instance : registry())
    if (found(*instance))
      return true;
  return false;
}

bool gnnc::freeIntoOwningPool(void *block) {
  HostPool &mine = currentPool();
  return mine.takeBack(block) || anyInstance([&](gnn_rt_runtime &instance) {
           return &instance.pool != &mine && instance.pool.takeBack(block);
         });
}
