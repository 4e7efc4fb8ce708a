//===- DedupKernels.cpp - one module for each distinct kernel -------------===//
//
// Part of gnnc. Kernel outlining gives every launch its own gpu.module, and
// a program launches the same kernel from many places (a copy of a given
// shape, the checks of a lookup, a layer's loops in its forward and in its
// backward's tape form): a tiny Universal Transformer's training program
// outlines 616 kernels of which 120 differ. Each module is compiled by
// LLVM's NVPTX backend and again by the driver when it is loaded, so the
// duplicates cost compile time twice and load time at every run.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/Hashing.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GPUDEDUPKERNELSPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

/// The kernel of a module that holds one kernel and nothing else (what
/// outlining makes), or null.
static gpu::GPUFuncOp soleKernel(gpu::GPUModuleOp module) {
  Block &body = module.getBodyRegion().front();
  if (!llvm::hasSingleElement(body.without_terminator()))
    return nullptr;
  auto kernel = dyn_cast<gpu::GPUFuncOp>(body.front());
  return kernel && kernel.isKernel() ? kernel : nullptr;
}

/// `kernel`'s attributes but its name.
static DictionaryAttr attributesButName(gpu::GPUFuncOp kernel) {
  NamedAttrList attributes(kernel->getAttrDictionary());
  attributes.erase(SymbolTable::getSymbolAttrName());
  return attributes.getDictionary(kernel.getContext());
}

/// A hash of what `kernel` computes: its attributes but its name, and each
/// op of its body in order (name, attributes, types; not locations).
static llvm::hash_code structuralHash(gpu::GPUFuncOp kernel) {
  llvm::hash_code hash = hash_value(attributesButName(kernel));
  kernel.getBody().walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// Whether `a` and `b` compute the same: the same attributes but their
/// names and equivalent bodies (the same ops on corresponding values).
static bool sameKernel(gpu::GPUFuncOp a, gpu::GPUFuncOp b) {
  return attributesButName(a) == attributesButName(b) &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

namespace {
struct GPUDedupKernelsPass
    : gnn::impl::GPUDedupKernelsPassBase<GPUDedupKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The kept kernel of each distinct one, by hash; what replaces each
    // duplicate's module.
    DenseMap<llvm::hash_code, SmallVector<gpu::GPUFuncOp>> kept;
    DenseMap<StringAttr, SymbolRefAttr> replacement;
    SmallVector<gpu::GPUModuleOp> duplicates;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      gpu::GPUFuncOp kernel = soleKernel(gpuModule);
      if (!kernel)
        continue;
      SmallVector<gpu::GPUFuncOp> &same = kept[structuralHash(kernel)];
      auto *original = llvm::find_if(
          same, [&](gpu::GPUFuncOp k) { return sameKernel(k, kernel); });
      if (original == same.end()) {
        same.push_back(kernel);
        continue;
      }
      auto keptModule = (*original)->getParentOfType<gpu::GPUModuleOp>();
      replacement[gpuModule.getNameAttr()] =
          SymbolRefAttr::get(keptModule.getNameAttr(),
                             {FlatSymbolRefAttr::get(original->getNameAttr())});
      duplicates.push_back(gpuModule);
    }
    if (duplicates.empty())
      return;
    // Launches go to the kept kernels; a module named by anything else
    // stays.
    DenseSet<StringAttr> named;
    module.walk([&](Operation *op) {
      if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
        auto found = replacement.find(launch.getKernelModuleName());
        if (found != replacement.end())
          launch.setKernelAttr(found->second);
        return;
      }
      op->getAttrDictionary().walk(
          [&](SymbolRefAttr ref) { named.insert(ref.getRootReference()); });
    });
    for (gpu::GPUModuleOp duplicate : duplicates)
      if (!named.contains(duplicate.getNameAttr()))
        duplicate.erase();
  }
};
} // namespace
