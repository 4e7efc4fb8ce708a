//===- PerfMap.cpp - compiled functions' names for perf -------------------===//
//
// Part of gnnc. A JITLink plugin that appends each linked function's address,
// size and name to perf's map of the process once its addresses are final.
//
//===----------------------------------------------------------------------===//

#include "PerfMap.h"

#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unistd.h>

using namespace llvm;

namespace {
class PerfMapPlugin : public orc::ObjectLinkingLayer::Plugin {
public:
  explicit PerfMapPlugin(std::unique_ptr<raw_fd_ostream> file)
      : file(std::move(file)) {}

  void modifyPassConfig(orc::MaterializationResponsibility &,
                        jitlink::LinkGraph &,
                        jitlink::PassConfiguration &config) override {
    config.PostFixupPasses.push_back([this](jitlink::LinkGraph &g) {
      std::lock_guard<std::mutex> lock(mutex);
      for (jitlink::Symbol *symbol : g.defined_symbols())
        if (symbol->isCallable() && symbol->hasName() && symbol->getSize())
          *file << format("%llx %llx ",
                          (unsigned long long)symbol->getAddress().getValue(),
                          (unsigned long long)symbol->getSize())
                << symbol->getName() << "\n";
      file->flush();
      return Error::success();
    });
  }
  Error notifyFailed(orc::MaterializationResponsibility &) override {
    return Error::success();
  }
  Error notifyRemovingResources(orc::JITDylib &, orc::ResourceKey) override {
    return Error::success();
  }
  void notifyTransferringResources(orc::JITDylib &, orc::ResourceKey,
                                   orc::ResourceKey) override {}

private:
  std::unique_ptr<raw_fd_ostream> file;
  std::mutex mutex;
};
} // namespace

void mlir::gnn::listFunctionsForPerf(orc::LLJIT &jit) {
  auto *layer = dyn_cast<orc::ObjectLinkingLayer>(&jit.getObjLinkingLayer());
  if (!layer)
    return;
  std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  std::error_code ec;
  auto file = std::make_unique<raw_fd_ostream>(path, ec, sys::fs::OF_Append);
  if (!ec)
    layer->addPlugin(std::make_unique<PerfMapPlugin>(std::move(file)));
}
