//===- KernelDestinations.cpp - kernels write where callers copy to -------===//
//
// Part of gnnc. A kernel call whose new result buffer is only copied into
// another buffer (an optimizer's update of a parameter, a cache's new rows)
// becomes a call of a variant of the kernel that writes into that buffer
// itself: no allocation, no copy (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "BufferAliases.h"
#include "GNN/IR/GNNDialect.h"
#include "GNN/Transforms/Passes.h"
#include "GNN/Transforms/ViewedBuffer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/SetVector.h"

#include <optional>
#include <string>

namespace mlir::gnn {
#define GEN_PASS_DEF_KERNELDESTINATIONSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// The buffer a kernel allocates in its entry block and returns as its
/// result `index` (and as no other), if it does.
memref::AllocOp returnedAllocation(func::FuncOp kernel, unsigned index) {
  if (kernel.isExternal() || !kernel.getBody().hasOneBlock() ||
      index >= kernel.getNumResults() ||
      !kernel->hasAttr(gnn::GNNDialect::kKernelAttrName))
    return {};
  auto ret = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  auto alloc = ret.getOperand(index).getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != &kernel.getBody().front() ||
      !alloc.getType().getLayout().isIdentity() ||
      llvm::count(ret.getOperands(), alloc.getResult()) != 1)
    return {};
  return alloc;
}

/// The induction variable `v` is, if it is one of a loop with step 1.
bool isUnitStepInductionVariable(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return false;
  Operation *loop = arg.getOwner()->getParentOp();
  if (auto parallel = dyn_cast<scf::ParallelOp>(loop))
    return arg.getArgNumber() < parallel.getNumLoops() &&
           matchPattern(parallel.getStep()[arg.getArgNumber()], m_One());
  if (auto serial = dyn_cast<scf::ForOp>(loop))
    return arg == serial.getInductionVar() &&
           matchPattern(serial.getStep(), m_One());
  return false;
}

/// The unit-step induction variable whose mixed-radix digits `at` are, if
/// they are: `at` = (flat / e1 / ... / en-1, ..., (flat / en) % en-1,
/// flat % en), as a parallel iteration per row and item indexes its element
/// (the GPU form of gnn.apply_nodes). Distinct values of `flat` give
/// distinct digits, whatever the divisors.
Value delinearizedInductionVariable(ValueRange at) {
  if (at.size() < 2)
    return {};
  auto last = at.back().getDefiningOp<arith::RemUIOp>();
  if (!last)
    return {};
  Value flat = last.getLhs(), x = flat;
  for (size_t k = at.size() - 1; k >= 1; --k) {
    auto digit = at[k].getDefiningOp<arith::RemUIOp>();
    if (!digit || digit.getLhs() != x)
      return {};
    Value quotient;
    for (Operation *user : x.getUsers())
      if (auto div = dyn_cast<arith::DivUIOp>(user);
          div && div.getLhs() == x && div.getRhs() == digit.getRhs())
        quotient = div;
    if (!quotient)
      return {};
    x = quotient;
  }
  if (at.front() != x || !isUnitStepInductionVariable(flat))
    return {};
  return flat;
}

/// Whether the kernel may also read its result's buffer through argument
/// `input`: it reads that argument only by scalar loads, writes its result
/// by one scalar store, and each load reads the element the store writes,
/// before it writes it, in an iteration that no other iteration shares (the
/// same distinct unit-step induction variables, or the digits of one). So
/// each element is read
/// before it is overwritten, and only by the iteration that overwrites it:
/// what gnn.apply_nodes is lowered to, for an input of the result's shape.
bool readsOnlyElementItWrites(memref::AllocOp result, BlockArgument input) {
  memref::StoreOp store;
  for (Operation *user : result->getUsers()) {
    if (isa<func::ReturnOp, memref::DimOp>(user))
      continue;
    auto s = dyn_cast<memref::StoreOp>(user);
    if (!s || store)
      return false;
    store = s;
  }
  if (!store)
    return false;
  // The induction variables that tell iterations apart: the indices
  // themselves, or the one variable they are the digits of.
  ValueRange at = store.getIndices();
  llvm::SmallPtrSet<Value, 4> distinct;
  if (Value flat = delinearizedInductionVariable(at)) {
    distinct.insert(flat);
  } else {
    distinct.insert(at.begin(), at.end());
    if (distinct.size() != at.size() ||
        !llvm::all_of(at, isUnitStepInductionVariable))
      return false;
  }
  // Every loop around the store is one of those: no iteration of an outer
  // loop comes back to an element.
  for (Operation *parent = store->getParentOp(); !isa<func::FuncOp>(parent);
       parent = parent->getParentOp()) {
    auto loop = dyn_cast<LoopLikeOpInterface>(parent);
    if (!loop)
      continue;
    std::optional<SmallVector<Value>> ivs = loop.getLoopInductionVars();
    if (!ivs || ivs->empty() ||
        !llvm::all_of(*ivs, [&](Value iv) { return distinct.contains(iv); }))
      return false;
  }
  for (Operation *user : input.getUsers()) {
    if (isa<memref::DimOp>(user))
      continue;
    auto load = dyn_cast<memref::LoadOp>(user);
    if (!load || load.getIndices() != at ||
        load->getBlock() != store->getBlock() || !load->isBeforeInBlock(store))
      return false;
  }
  return true;
}

struct KernelDestinationsPass
    : public gnn::impl::KernelDestinationsPassBase<KernelDestinationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    gnn::FreshResults fresh(module);
    DominanceInfo dominance(module);
    // A pass instance may run on several modules (one per split input).
    variants.clear();
    SmallVector<memref::CopyOp> copies;
    module.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies)
      writeInPlace(copy, symbols, fresh, dominance);
    // Kernels that only their variants replaced are not compiled.
    llvm::SetVector<func::FuncOp> kernels;
    for (auto [key, into] : variants)
      kernels.insert(key.first);
    for (func::FuncOp kernel : kernels)
      if (SymbolTable::symbolKnownUseEmpty(kernel, module))
        symbols.erase(kernel);
    variants.clear();
  }

  /// `copy` of a kernel's result, replaced by a call that writes into the
  /// copy's target where that is the same.
  void writeInPlace(memref::CopyOp copy, SymbolTable &symbols,
                    gnn::FreshResults &fresh, DominanceInfo &dominance) {
    auto call = copy.getSource().getDefiningOp<func::CallOp>();
    if (!call || call->getBlock() != copy->getBlock())
      return;
    unsigned index = cast<OpResult>(copy.getSource()).getResultNumber();
    auto kernel = symbols.lookup<func::FuncOp>(call.getCallee());
    memref::AllocOp result =
        kernel ? returnedAllocation(kernel, index) : nullptr;
    Value target = copy.getTarget();
    auto targetType = dyn_cast<MemRefType>(target.getType());
    if (!result || !targetType || !targetType.getLayout().isIdentity() ||
        !memref::CastOp::areCastCompatible(targetType, result.getType()) ||
        !dominance.properlyDominates(target, call))
      return;
    // Whose memory the target is must be known: an argument's or a buffer
    // the function allocates.
    Value base = gnn::viewedBuffer(target);
    if (!isa<BlockArgument>(base) &&
        !isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
            base.getDefiningOp()))
      return;
    // The target keeps its old contents until the copy: nothing between
    // the call and the copy may read or write that memory. The kernel
    // itself may read it only element by element (see
    // readsOnlyElementItWrites), through the argument it then writes.
    SmallVector<unsigned, 1> readArguments;
    bool untouched = gnn::visitAliasUses(
        copy->getBlock(), {base}, fresh, [&](OpOperand &use, Operation *op) {
          if (op != call)
            return !call->isBeforeInBlock(op) || !op->isBeforeInBlock(copy);
          unsigned k = use.getOperandNumber();
          if (gnn::withoutCasts(use.get()) != gnn::withoutCasts(target) ||
              use.get().getType() != result.getType() ||
              !readsOnlyElementItWrites(result, kernel.getArgument(k)))
            return false;
          readArguments.push_back(k);
          return true;
        });
    if (!untouched)
      return;
    // The result is read only until the copy, which then leaves the
    // target equal to it.
    for (Operation *user : call->getResult(index).getUsers()) {
      Operation *at = copy->getBlock()->findAncestorOpInBlock(*user);
      if (!at || (at != copy && !at->isBeforeInBlock(copy)))
        return;
    }
    OpBuilder b(call);
    Value destination = target;
    SmallVector<Value> operands(call.getOperands());
    func::FuncOp into;
    if (readArguments.size() == 1) {
      // The kernel writes through the argument it reads: one buffer to
      // its code, so LLVM's vectorizer needs no run-time check that the
      // result's buffer and that argument's do not overlap (they do). That
      // argument, of the result's type, stands for the result.
      into = variantWritingInto(kernel, index, readArguments.front(), symbols);
      destination = call.getOperand(readArguments.front());
    } else {
      into = variantWritingInto(kernel, index, std::nullopt, symbols);
      if (targetType != result.getType())
        destination =
            b.create<memref::CastOp>(call.getLoc(), result.getType(), target);
      operands.push_back(destination);
    }
    auto inPlace = b.create<func::CallOp>(call.getLoc(), into, operands);
    // The other results, in order, are the variant's.
    for (unsigned i = 0, k = 0; i < call->getNumResults(); ++i)
      call.getResult(i).replaceAllUsesWith(i == index ? destination
                                                      : inPlace.getResult(k++));
    copy->erase();
    call->erase();
  }

  /// The kernel writing its result `index` into argument `argument`
  /// (`_into_arg<k>`) or, without one, into a buffer passed as a last
  /// argument (`_into`); its other results stay results. Made once per
  /// kernel, result and argument.
  func::FuncOp variantWritingInto(func::FuncOp kernel, unsigned index,
                                  std::optional<unsigned> argument,
                                  SymbolTable &symbols) {
    func::FuncOp &into =
        variants[{kernel, {index, argument ? int(*argument) : -1}}];
    if (into)
      return into;
    memref::AllocOp result = returnedAllocation(kernel, index);
    into = kernel.clone();
    // A variant of a variant (a kernel of several results) adds the next
    // argument it writes to the name: `_into_arg4_2_1`.
    bool first = llvm::none_of(
        variants, [&](const auto &made) { return made.second == kernel; });
    std::string suffix =
        argument ? (first ? "_arg" : "_") + std::to_string(*argument) : "";
    into.setName((kernel.getName() +
                  (first ? "_into" : (argument ? "" : "_into")) + suffix)
                     .str());
    symbols.insert(into, std::next(Block::iterator(kernel)));
    Block &body = into.getBody().front();
    unsigned written = argument.value_or(into.getNumArguments());
    if (!argument)
      into.insertArgument(written, result.getType(), /*argAttrs=*/{},
                          result.getLoc());
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    auto alloc = ret.getOperand(index).getDefiningOp<memref::AllocOp>();
    alloc.getResult().replaceAllUsesWith(body.getArgument(written));
    alloc->erase();
    ret->eraseOperands(index, 1);
    into.eraseResult(index);
    return into;
  }

  /// Variants by kernel, the result they write and the argument they write
  /// it into (-1: a last one).
  DenseMap<std::pair<func::FuncOp, std::pair<unsigned, int>>, func::FuncOp>
      variants;
};
} // namespace
