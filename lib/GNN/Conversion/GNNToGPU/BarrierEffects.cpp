//===- BarrierEffects.cpp - gpu.barrier's memory effects ------------------===//
//
// Part of gnnc. convert-gnn-to-gpu builds kernels with shared memory and
// barriers before buffers are deallocated, and the deallocation pipeline
// refuses ops whose memory effects are unknown, which gpu.barrier's are
// upstream. A barrier orders the block's reads and writes: it reads and
// writes memory as far as any pass is concerned, so nothing moves across it
// or removes it.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
struct BarrierEffects
    : public MemoryEffectOpInterface::ExternalModel<BarrierEffects,
                                                    gpu::BarrierOp> {
  void
  getEffects(Operation *,
             SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};
} // namespace

void mlir::gnn::registerGPUBarrierEffects(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, gpu::GPUDialect *) {
    gpu::BarrierOp::attachInterface<BarrierEffects>(*ctx);
  });
}
