//===- Launch.cpp - joining the processes a launcher started -------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/Distributed/Launch.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>

using namespace mlir::gnn;

/// The directory of the file that holds this code (a tool, or a library
/// that bindings load).
static std::string ownDirectory() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&haveNCCL), &info) || !info.dli_fname)
    return ".";
  return llvm::sys::path::parent_path(info.dli_fname).str();
}

llvm::Expected<std::unique_ptr<Communicator>>
mlir::gnn::openMPIWorld(int &argc, char **&argv) {
  std::string dir = ownDirectory();
  std::string tried;
  void *plugin = nullptr;
  for (const char *relative : {"", "../lib"}) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, relative, kMPIPlugin);
    // Global, as MPI's own components expect to find MPI's symbols.
    plugin = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (plugin)
      break;
    if (!tried.empty())
      tried += "; ";
    tried += dlerror();
  }
  if (!plugin)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "started by an MPI launcher, but gnnc's MPI support cannot be "
        "loaded (%s); build gnnc with MPI installed (scripts/setup.sh)",
        tried.c_str());
  auto *open =
      reinterpret_cast<OpenCommunicator *>(dlsym(plugin, kMPIPluginEntry));
  if (!open)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%s has no %s", kMPIPlugin, kMPIPluginEntry);
  char why[512] = "";
  Communicator *world = open(&argc, &argv, why, sizeof(why));
  if (!world)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot join the MPI run: %s",
                                   static_cast<const char *>(why));
  return std::unique_ptr<Communicator>(world);
}

bool mlir::gnn::haveNCCL() {
#ifdef GNN_HAVE_NCCL
  return true;
#else
  return false;
#endif
}
