//===- SimplifyDeallocations.cpp - dealloc simplification within budget ---===//
//
// Part of gnnc. Runs the upstream buffer-deallocation-simplification pass
// on each function whose bufferization.dealloc ops name at most
// `max-operands` memrefs, and splits the dealloc ops of the others by where
// their buffers come from; see Passes.td.
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "gnn-simplify-deallocations"

namespace mlir::gnn {
#define GEN_PASS_DEF_SIMPLIFYDEALLOCATIONSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// Where the buffer of a memref value may come from, for the functions of
/// a module after ownership-based deallocation: an op that makes a fresh
/// buffer each time it runs (one that allocates it, or a call: under the
/// deallocation's function boundary ABI a callee hands over buffers it
/// owns, never its arguments' or a global), memory that existed before the
/// function ran (its arguments, globals), or anywhere. Two values may alias
/// only where they share an origin or one may come from anywhere. A call's
/// results share one origin, unless its callee is seen to return buffers
/// that do not alias (or alias only in known classes).
class BufferOrigins {
public:
  using Origin = const void *;
  using Origins = SmallVector<Origin, 2>;

  /// The origins of `value`'s buffer (following views and the values that
  /// region branches forward).
  Origins of(Value value);

  static Origin anywhere() { return &anywhereTag; }
  static Origin preexisting() { return &preexistingTag; }

private:
  /// The origin of `result` where `def` makes a fresh buffer for it.
  std::optional<Origin> freshOrigin(Operation *def, Value result);
  /// For each result of `fn`, one result standing for those whose buffers
  /// it may share (itself where none); null where that is not known (also
  /// while `fn` is being looked at).
  const SmallVector<unsigned> *resultClasses(FunctionOpInterface fn);

  static inline char anywhereTag, preexistingTag;
  SymbolTableCollection symbols;
  DenseMap<Value, Origins> cache;
  DenseMap<Operation *, std::optional<SmallVector<unsigned>>> classes;
};
} // namespace

/// Calls `fn` with each value that `branch` may forward into `input` (one of
/// its results or an argument of one of its regions' entry blocks); false
/// where not all of them are known (a region that ends otherwise than by a
/// region branch terminator, an input the op produces itself).
static bool forEachIncoming(RegionBranchOpInterface branch, Value input,
                            function_ref<void(Value)> fn) {
  bool found = false, unknown = false;
  auto match = [&](const RegionSuccessor &successor, OperandRange operands) {
    for (auto [i, in] : llvm::enumerate(successor.getSuccessorInputs())) {
      if (in != input)
        continue;
      if (i < operands.size()) {
        fn(operands[i]);
        found = true;
      } else {
        unknown = true;
      }
    }
  };
  auto point = [](const RegionSuccessor &successor) {
    return successor.isParent() ? RegionBranchPoint::parent()
                                : RegionBranchPoint(successor.getSuccessor());
  };
  SmallVector<RegionSuccessor> successors;
  branch.getSuccessorRegions(RegionBranchPoint::parent(), successors);
  for (const RegionSuccessor &s : successors)
    match(s, branch.getEntrySuccessorOperands(point(s)));
  for (Region &region : branch->getRegions())
    for (Block &block : region) {
      auto terminator =
          block.empty()
              ? nullptr
              : dyn_cast<RegionBranchTerminatorOpInterface>(block.back());
      if (!terminator)
        return false;
      successors.clear();
      branch.getSuccessorRegions(&region, successors);
      for (const RegionSuccessor &s : successors)
        match(s, terminator.getSuccessorOperands(point(s)));
    }
  return found && !unknown;
}

const SmallVector<unsigned> *
BufferOrigins::resultClasses(FunctionOpInterface fn) {
  if (auto it = classes.find(fn); it != classes.end())
    return it->second ? &*it->second : nullptr;
  classes[fn] = std::nullopt;
  unsigned numResults = fn.getResultTypes().size();
  llvm::EquivalenceClasses<unsigned> sharing;
  for (unsigned i = 0; i < numResults; ++i)
    sharing.insert(i);
  bool known = true;
  for (Block &block : fn.getFunctionBody()) {
    if (block.empty() || !block.back().hasTrait<OpTrait::ReturnLike>() ||
        block.back().getNumOperands() != numResults)
      continue;
    DenseMap<Origin, unsigned> firstWith;
    for (auto [i, v] : llvm::enumerate(block.back().getOperands())) {
      if (!isa<BaseMemRefType>(v.getType()))
        continue;
      // Memory from before the call is never handed over (the ABI clones
      // it), so only fresh origins may be shared.
      for (Origin o : of(v)) {
        if (o == anywhere())
          known = false;
        else if (o == preexisting())
          continue;
        else if (auto [it, inserted] = firstWith.try_emplace(o, i); !inserted)
          sharing.unionSets(it->second, i);
      }
    }
  }
  if (!known)
    return nullptr;
  SmallVector<unsigned> leaders;
  for (unsigned i = 0; i < numResults; ++i)
    leaders.push_back(sharing.getLeaderValue(i));
  classes[fn] = std::move(leaders);
  return &*classes[fn];
}

std::optional<BufferOrigins::Origin> BufferOrigins::freshOrigin(Operation *def,
                                                                Value result) {
  if (auto call = dyn_cast<CallOpInterface>(def)) {
    auto callee =
        dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable(&symbols));
    if (!callee || callee.isExternal())
      return std::nullopt;
    // One origin per class of results the callee may return the same
    // buffer for.
    if (const SmallVector<unsigned> *leaders = resultClasses(callee))
      return def
          ->getResult((*leaders)[cast<OpResult>(result).getResultNumber()])
          .getAsOpaquePointer();
    return def;
  }
  auto effects = dyn_cast<MemoryEffectOpInterface>(def);
  if (effects &&
      effects.getEffectOnValue<MemoryEffects::Allocate>(result).has_value())
    return result.getAsOpaquePointer();
  return std::nullopt;
}

BufferOrigins::Origins BufferOrigins::of(Value value) {
  if (auto it = cache.find(value); it != cache.end())
    return it->second;
  Origins origins;
  auto add = [&](Origin o) {
    if (!llvm::is_contained(origins, o))
      origins.push_back(o);
  };
  // A walk over the values `value` may be, each visited once (loops
  // forward values in cycles).
  SmallVector<Value> worklist = {value};
  DenseSet<Value> seen = {value};
  auto visit = [&](Value v) {
    if (seen.insert(v).second)
      worklist.push_back(v);
  };
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Block *block = arg.getOwner();
      Operation *parent = block->getParentOp();
      if (block->isEntryBlock() && isa<FunctionOpInterface>(parent))
        add(preexisting());
      else if (auto branch = dyn_cast<RegionBranchOpInterface>(parent);
               !branch || !block->isEntryBlock() ||
               !forEachIncoming(branch, v, visit))
        add(anywhere());
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      visit(view.getViewSource());
    else if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(def))
      visit(metadata.getSource());
    else if (isa<memref::GetGlobalOp>(def))
      add(preexisting());
    else if (std::optional<Origin> fresh = freshOrigin(def, v))
      add(*fresh);
    else if (auto branch = dyn_cast<RegionBranchOpInterface>(def);
             !branch || !forEachIncoming(branch, v, visit))
      add(anywhere());
  }
  cache[value] = origins;
  return origins;
}

/// Replaces `op` by one dealloc op per group of its memrefs that may alias
/// one another, each retaining only the values that may alias its memrefs
/// (a retained value's updated condition is the disjunction of its
/// groups'; false where none retains it). Whether a buffer is freed is
/// then decided without run-time alias checks against unrelated memrefs.
static void splitByOrigin(bufferization::DeallocOp op, BufferOrigins &origins) {
  ValueRange memrefs = op.getMemrefs(), retained = op.getRetained();
  llvm::EquivalenceClasses<unsigned> groups;
  DenseMap<BufferOrigins::Origin, unsigned> firstWith;
  for (auto [i, memref] : llvm::enumerate(memrefs)) {
    groups.insert(i);
    for (BufferOrigins::Origin o : origins.of(memref)) {
      // A buffer from anywhere may alias every other and every retained
      // value: nothing to split.
      if (o == BufferOrigins::anywhere())
        return;
      if (auto [it, inserted] = firstWith.try_emplace(o, i); !inserted)
        groups.unionSets(it->second, i);
    }
  }

  struct Group {
    SmallVector<Value> memrefs, conditions, retained;
    SmallVector<unsigned> retainedIndex;
  };
  SmallVector<Group, 1> split;
  DenseMap<unsigned, unsigned> groupOfLeader;
  for (auto [i, memref] : llvm::enumerate(memrefs)) {
    auto [it, inserted] =
        groupOfLeader.try_emplace(groups.getLeaderValue(i), split.size());
    if (inserted)
      split.emplace_back();
    split[it->second].memrefs.push_back(memref);
    split[it->second].conditions.push_back(op.getConditions()[i]);
  }
  // A retained value stays with the groups of the memrefs it may alias.
  size_t kept = 0;
  for (auto [j, value] : llvm::enumerate(retained)) {
    BufferOrigins::Origins from = origins.of(value);
    SmallVector<unsigned> with;
    if (llvm::is_contained(from, BufferOrigins::anywhere())) {
      with = llvm::to_vector(llvm::seq<unsigned>(0, split.size()));
    } else {
      for (BufferOrigins::Origin o : from)
        if (auto it = firstWith.find(o); it != firstWith.end()) {
          unsigned g = groupOfLeader[groups.getLeaderValue(it->second)];
          if (!llvm::is_contained(with, g))
            with.push_back(g);
        }
    }
    for (unsigned g : with) {
      split[g].retained.push_back(value);
      split[g].retainedIndex.push_back(j);
    }
    kept += with.size();
  }
  if (split.size() == 1 && kept == retained.size())
    return;

  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> updated(retained.size());
  for (Group &g : split) {
    auto dealloc = b.create<bufferization::DeallocOp>(loc, g.memrefs,
                                                      g.conditions, g.retained);
    for (auto [k, j] : llvm::enumerate(g.retainedIndex)) {
      Value condition = dealloc.getUpdatedConditions()[k];
      updated[j] = updated[j]
                       ? b.create<arith::OrIOp>(loc, updated[j], condition)
                       : condition;
    }
  }
  for (auto [condition, old] : llvm::zip(updated, op.getUpdatedConditions()))
    if (!condition && !old.use_empty())
      condition = b.create<arith::ConstantIntOp>(loc, 0, b.getI1Type());
  op->replaceAllUsesWith(updated);
  op->erase();
}

namespace {
struct SimplifyDeallocationsPass
    : public gnn::impl::SimplifyDeallocationsPassBase<
          SimplifyDeallocationsPass> {
  using SimplifyDeallocationsPassBase::SimplifyDeallocationsPassBase;

  void runOnOperation() override {
    OpPassManager simplify(func::FuncOp::getOperationName());
    simplify.addPass(
        bufferization::createBufferDeallocationSimplificationPass());
    SmallVector<bufferization::DeallocOp> toSplit;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      int64_t named = 0;
      SmallVector<bufferization::DeallocOp> deallocs;
      fn.walk([&](bufferization::DeallocOp op) {
        named += op.getMemrefs().size() + op.getRetained().size();
        deallocs.push_back(op);
      });
      LLVM_DEBUG(llvm::dbgs() << fn.getSymName() << ": dealloc ops name "
                              << named << " memrefs\n");
      if (named > maxOperands)
        llvm::append_range(toSplit, deallocs);
      else if (failed(runPipeline(simplify, fn)))
        return signalPassFailure();
    }
    // After the upstream simplification, which may erase ops: the origins
    // are looked up once the memrefs no longer change.
    BufferOrigins origins;
    for (bufferization::DeallocOp op : toSplit)
      splitByOrigin(op, origins);
  }
};
} // namespace
