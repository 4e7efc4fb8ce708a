//===- OutlineKernels.cpp - each distinct gnn kernel generated once -------===//
//
// Part of gnnc. Moves every gnn op that lowers to loops of its own into a
// private function and makes equivalent ops (same op, attributes, body and
// types) call the same one, so that lowering and LLVM see each distinct
// kernel once however often a program uses it.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/FunctionEquivalence.h"
#include "GNN/IR/GNNDialect.h"
#include "GNN/IR/GNNOps.h"
#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using namespace mlir::gnn;

namespace {
/// Ops that lower to loops (or a kernel) of their own.
bool isKernelOp(Operation *op) {
  return isa<ApplyEdgesOp, SendAndRecvOp, ReduceOp, ApplyNodesOp, DropoutOp,
             SumToOp, BroadcastOp, FilterNodesOp, FilterEdgesOp,
             FusedAttentionOp, FusedAttentionGradOp, LayerNormOp,
             LayerNormGradOp, LogSoftmaxOp>(op);
}

/// Whether `v` may bufferize to a strided view (a slice of a larger
/// tensor). Kernels take identity-layout buffers, so passing one would need
/// a copy; such ops stay where they are and read the view directly.
bool mayBeStridedView(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<tensor::ExtractSliceOp>(def))
    return true;
  if (isa<tensor::CastOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
    return mayBeStridedView(def->getOperand(0));
  // Updates written into their destination's buffer.
  if (auto scatter = dyn_cast<ScatterRowsOp>(def))
    return mayBeStridedView(scatter.getDest());
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
    return mayBeStridedView(dps.getTiedOpOperand(cast<OpResult>(v))->get());
  return false;
}

/// Values from outside an op's regions that its kernel can take.
struct OutsideValues {
  /// Cloned into the kernel, where they stay foldable.
  SmallVector<Operation *> constants;
  /// Passed as extra arguments after the op's operands: scalars, and
  /// tensors the body reads elements of (an optimizer's gate reads the
  /// objective in each element, so that a GPU's kernel reads it rather
  /// than the host).
  SmallVector<Value> values;
};

/// The outside values an op's regions use; none if one is neither a
/// constant, nor a scalar, nor a tensor that is not a strided view.
std::optional<OutsideValues> outsideValues(Operation *op) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  OutsideValues outside;
  for (Value v : captured) {
    if (matchPattern(v, m_Constant()))
      outside.constants.push_back(v.getDefiningOp());
    else if (isa<IntegerType, FloatType, IndexType>(v.getType()) ||
             (isa<RankedTensorType>(v.getType()) && !mayBeStridedView(v)))
      outside.values.push_back(v);
    else
      return std::nullopt;
  }
  return outside;
}

bool isKernelFunction(func::FuncOp fn) {
  return fn->hasAttr(GNNDialect::kKernelAttrName);
}

/// The op a kernel function holds: the one its result comes from (the
/// constants its body uses come first).
Operation *kernelOp(func::FuncOp fn) {
  if (fn.isExternal() || fn.getBody().front().empty())
    return nullptr;
  return fn.getBody().front().getTerminator()->getPrevNode();
}

/// The function type, op name and attributes: kernels that differ in any
/// of them are never compared in full.
llvm::hash_code kernelHash(func::FuncOp fn, Operation *op) {
  return llvm::hash_combine(fn.getFunctionType(), op->getName(),
                            op->getRawDictionaryAttrs(), op->hashProperties());
}

struct OutlineKernelsPass
    : public gnn::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Kernels by hash, including those of an earlier run.
    DenseMap<llvm::hash_code, SmallVector<func::FuncOp>> kernels;
    // Ops to outline, with the outside values their bodies use.
    SmallVector<std::pair<Operation *, OutsideValues>> candidates;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (isKernelFunction(fn)) {
        if (Operation *op = kernelOp(fn))
          kernels[kernelHash(fn, op)].push_back(fn);
        continue;
      }
      fn.walk([&](Operation *op) {
        if (!isKernelOp(op))
          return;
        if (llvm::any_of(op->getOperands(), mayBeStridedView))
          return;
        if (std::optional<OutsideValues> outside = outsideValues(op))
          candidates.push_back({op, std::move(*outside)});
      });
    }

    OpBuilder b(module.getContext());
    for (auto &[op, outside] : candidates) {
      SmallVector<Value> operands(op->getOperands());
      llvm::append_range(operands, outside.values);
      b.setInsertionPointToEnd(module.getBody());
      auto type = b.getFunctionType(ValueRange(operands).getTypes(),
                                    op->getResultTypes());
      std::string name = ("gnn_kernel_" + op->getName().stripDialect()).str();
      auto kernel = b.create<func::FuncOp>(op->getLoc(), name, type);
      kernel.setPrivate();
      kernel->setAttr(GNNDialect::kKernelAttrName, b.getUnitAttr());
      // LLVM must not copy the kernel back into each caller.
      kernel->setAttr("no_inline", b.getUnitAttr());
      Block *entry = kernel.addEntryBlock();
      b.setInsertionPointToStart(entry);
      // Operand i becomes argument i, also where one value is passed
      // twice; the outside values the body uses follow, and its constants
      // are cloned in.
      IRMapping mapping;
      for (Operation *c : outside.constants)
        mapping.map(c->getResult(0), b.clone(*c)->getResult(0));
      for (auto [i, v] : llvm::enumerate(outside.values))
        mapping.map(v, entry->getArgument(op->getNumOperands() + i));
      Operation *copy = b.clone(*op, mapping);
      for (unsigned i = 0; i < op->getNumOperands(); ++i)
        copy->setOperand(i, entry->getArgument(i));
      b.create<func::ReturnOp>(op->getLoc(), copy->getResults());

      SmallVector<func::FuncOp> &same = kernels[kernelHash(kernel, copy)];
      auto it = llvm::find_if(same, [&](func::FuncOp k) {
        return areEquivalentFunctions(k, kernel);
      });
      func::FuncOp callee;
      if (it != same.end()) {
        callee = *it;
        kernel.erase();
      } else {
        symbols.insert(kernel); // renamed if the name is taken
        same.push_back(kernel);
        callee = kernel;
      }
      b.setInsertionPoint(op);
      auto call = b.create<func::CallOp>(op->getLoc(), callee, operands);
      op->replaceAllUsesWith(call.getResults());
      op->erase();
    }
  }
};
} // namespace
