//===- AnnounceResults.cpp - hand results to the host early ---------------===//
//
// Part of gnnc. Places gnn.result_ready after the op that computes each
// result of the named functions, so that the host can use a result (a
// layer's gradients) while the rest of the function still runs.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNDialect.h"
#include "GNN/IR/GNNOps.h"
#include "GNN/IR/GNNTypes.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_ANNOUNCERESULTSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {
void announceResults(func::FuncOp function) {
  if (!function.getBody().hasOneBlock())
    return;
  Block &body = function.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return;
  llvm::DenseSet<int64_t> announced;
  for (auto op : body.getOps<ResultReadyOp>())
    announced.insert(op.getSlot());
  // The op announcing the last result of each defining op (or of the
  // entry), so that one op's results are announced in their order.
  llvm::DenseMap<Operation *, Operation *> lastAnnouncement;
  OpBuilder b(function.getContext());
  for (auto [slot, value] : llvm::enumerate(ret.getOperands())) {
    if (!TapeType::canHold(value.getType()) || announced.contains(slot))
      continue;
    Operation *def = value.getDefiningOp();
    Operation *&last = lastAnnouncement[def];
    if (last)
      b.setInsertionPointAfter(last);
    else if (def)
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(&body);
    last = b.create<ResultReadyOp>(value.getLoc(), value, slot);
    announced.insert(slot);
  }
}

struct AnnounceResultsPass
    : gnn::impl::AnnounceResultsPassBase<AnnounceResultsPass> {
  using AnnounceResultsPassBase::AnnounceResultsPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (const std::string &name : functions) {
      auto function = module.lookupSymbol<func::FuncOp>(name);
      if (!function || function.isExternal()) {
        module.emitError() << "gnn-announce-results: no function '" << name
                           << "' with a body";
        return signalPassFailure();
      }
      announceResults(function);
    }
  }
};
} // namespace
