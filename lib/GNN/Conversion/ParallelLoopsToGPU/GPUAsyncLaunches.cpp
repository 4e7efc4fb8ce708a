//===- GPUAsyncLaunches.cpp - launches that do not wait for their kernel --===//
//
// Part of gnnc. A training step launches about a thousand kernels; waiting
// for each before the next is launched costs more than many of them run.
// Kernels go on the host thread's stream, which keeps them in order, and
// the host waits for them only before it touches memory itself.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/Passes.h"
#include "GNN/Conversion/RuntimeABI.h"
#include "GNN/IR/GNNDialect.h"
#include "GNN/Transforms/ViewedBuffer.h"
#include "HostCalls.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GPUASYNCLAUNCHESPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using mlir::gnn::CallGraph;

/// Whether `callee` is a runtime error report, which takes the context and
/// numbers and reads no buffer.
static bool isErrorReport(StringRef callee) {
  return llvm::any_of(gnn::abi::kRuntimeFunctions,
                      [&](const gnn::abi::RuntimeFunction &f) {
                        return gnn::abi::isErrorReport(f) && f.name == callee;
                      });
}

/// Whether `callee` is a runtime function that runs on the thread's stream
/// after the kernels launched there: a dense product (cuBLAS; the host's
/// fallback waits itself) or an id list's checks (host functions queued
/// there, which the runner binds for such programs).
static bool isStreamOrdered(StringRef callee) {
  return gnn::abi::isDenseProduct(callee) || callee == gnn::abi::kCheckBadId ||
         callee == gnn::abi::kCheckRepeatedId;
}

/// Whether `buffer` is the host's alone: on this function's stack, which
/// no kernel can address. (Heap buffers are all taken as shared: which of
/// them kernels use is not followed here.)
static bool isHostOnly(Value buffer) {
  return buffer.getDefiningOp<memref::AllocaOp>() != nullptr;
}

/// Whether `buffer` is a constant global of the host program: no kernel
/// addresses one (gnn-globals-to-buffers hands kernels copies), and no one
/// writes it.
static bool isConstantGlobal(Value buffer) {
  auto get = buffer.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return false;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  return global && global.getConstant();
}

/// Whether `op` copies a constant global into `buffer` (host data into it).
static bool copiesConstantInto(Operation *op, Value buffer) {
  auto copy = dyn_cast<memref::CopyOp>(op);
  return copy && copy.getTarget() == buffer &&
         isConstantGlobal(copy.getSource());
}

/// The program's functions that read and write no memory but the buffers
/// they are passed (bufferization's dealloc_helper, which compares the
/// addresses its caller stored and writes ownership flags), launch nothing
/// and call nothing, and that only the program calls: a call of one
/// touches just its arguments.
using HostLeaves = llvm::DenseSet<Operation *>;

static bool isFreshAt(Value buffer, Operation *access,
                      const HostLeaves &leaves);

/// Whether `op` is a call of one of `leaves`.
static bool callsLeaf(Operation *op, const HostLeaves &leaves) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && leaves.contains(SymbolTable::lookupNearestSymbolFrom(
                     call, call.getCalleeAttr()));
}

/// Whether `buffer` is allocated in `access`'s block and nothing before
/// `access` there has handed it to anything but loads, stores, casts and
/// calls of host leaves: no kernel has it yet. (A block freed while
/// kernels ran is not handed out again before its thread waited, so a
/// fresh one is the host's.)
static bool isFreshAt(Value buffer, Operation *access,
                      const HostLeaves &leaves) {
  Block *block = access->getBlock();
  // Casts (of the buffers a call takes) look through to their buffer.
  Value root = buffer;
  while (auto cast = root.getDefiningOp<memref::CastOp>())
    root = cast.getSource();
  auto alloc = root.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != block)
    return false;
  std::function<bool(Value)> handedOn = [&](Value value) {
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      if (user == access)
        return false;
      Operation *here = block->findAncestorOpInBlock(*user);
      if (!here || !here->isBeforeInBlock(access))
        return false;
      if (here != user)
        return true;
      if (auto cast = dyn_cast<memref::CastOp>(user))
        return handedOn(cast.getResult());
      return !isa<memref::LoadOp, memref::StoreOp, memref::DimOp>(user) &&
             !callsLeaf(user, leaves) && !copiesConstantInto(user, value);
    });
  };
  return !handedOn(root);
}

/// Whether `fn` touches no memory but through loads, stores and dims of
/// its own arguments and its stack, and launches and calls nothing.
static bool touchesOnlyItsArguments(func::FuncOp fn) {
  auto own = [&](Value buffer) {
    auto arg = dyn_cast<BlockArgument>(buffer);
    return isHostOnly(buffer) ||
           (arg && arg.getOwner() == &fn.getBody().front());
  };
  WalkResult result = fn.walk([&](Operation *op) {
    if (op == fn.getOperation())
      return WalkResult::advance();
    if (isa<gpu::LaunchFuncOp, CallOpInterface>(op))
      return WalkResult::interrupt();
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return own(load.getMemRef()) ? WalkResult::advance()
                                   : WalkResult::interrupt();
    if (auto store = dyn_cast<memref::StoreOp>(op))
      return own(store.getMemRef()) ? WalkResult::advance()
                                    : WalkResult::interrupt();
    if (isa<memref::DimOp>(op))
      return WalkResult::advance();
    bool ownEffects = op->getNumRegions() > 0 &&
                      op->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
    if (!ownEffects && !isPure(op)) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      SmallVector<MemoryEffects::EffectInstance> list;
      if (effects)
        effects.getEffects(list);
      if (!effects || !list.empty())
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// The private functions that touch only their arguments and that every
/// call passes buffers no kernel has had yet (fresh in the caller).
static HostLeaves findHostLeaves(ModuleOp module, const CallGraph &graph) {
  HostLeaves leaves;
  // Named by anything but a call (a function pointer): not a leaf.
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn.isPrivate() && !fn.isExternal() && !graph.addressed.contains(fn) &&
        touchesOnlyItsArguments(fn))
      leaves.insert(fn);
  // A leaf whose caller hands it a buffer that kernels may have is none;
  // dropping one can make another's buffers shared, hence until stable.
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *leaf : llvm::to_vector(leaves)) {
      auto found = graph.calls.find(leaf);
      if (found == graph.calls.end())
        continue;
      bool fresh = llvm::all_of(found->second, [&](func::CallOp call) {
        return llvm::all_of(call.getOperands(), [&](Value operand) {
          return !isa<BaseMemRefType>(operand.getType()) ||
                 isHostOnly(operand) || isFreshAt(operand, call, leaves);
        });
      });
      if (!fresh) {
        leaves.erase(leaf);
        changed = true;
      }
    }
  }
  return leaves;
}

/// Arguments whose buffers no kernel writes, so that a host read of one
/// need not wait: a public function's marked gnn.read_only
/// (gnn-read-only-arguments: the program never writes it), and a private
/// function's that every call passes such an argument, or a buffer of the
/// caller's that no kernel ever has (a layer's dropout seed, which the
/// caller stores and the callee only reads), or a view of either.
using ReadOnlyArguments = llvm::DenseSet<Value>;

/// Whether every use of `buffer` (through casts and views) is the host's:
/// loads, stores, sizes, its address and layout, a host leaf's call, its
/// deallocation, or a call passing it as one of `hostArgs`.
static bool onlyHostUses(Value buffer, const llvm::DenseSet<Value> &hostArgs,
                         const HostLeaves &leaves) {
  return llvm::all_of(buffer.getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (isa<memref::CastOp, ViewLikeOpInterface>(user) &&
        user->getNumResults() == 1 &&
        gnn::viewedBuffer(user->getResult(0)) == gnn::viewedBuffer(buffer))
      return onlyHostUses(user->getResult(0), hostArgs, leaves);
    if (isa<memref::LoadOp, memref::StoreOp, memref::DimOp,
            memref::ExtractAlignedPointerAsIndexOp,
            memref::ExtractStridedMetadataOp, memref::DeallocOp>(user) ||
        callsLeaf(user, leaves))
      return true;
    auto call = dyn_cast<func::CallOp>(user);
    if (!call)
      return false;
    auto callee = dyn_cast_or_null<func::FuncOp>(
        SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr()));
    return callee && !callee.isExternal() &&
           hostArgs.contains(callee.getArgument(use.getOperandNumber()));
  });
}

static ReadOnlyArguments findReadOnlyArguments(ModuleOp module,
                                               const CallGraph &graph,
                                               const HostLeaves &leaves) {
  // The private functions' buffer arguments that never reach a kernel
  // there or in what they call: all candidates first, then those with
  // another use dropped, until none is.
  llvm::DenseSet<Value> hostArgs;
  for (auto fn : module.getOps<func::FuncOp>())
    if (graph.knownCalls(fn))
      for (BlockArgument argument : fn.getArguments())
        if (isa<BaseMemRefType>(argument.getType()))
          hostArgs.insert(argument);
  for (bool changed = true; changed;) {
    changed = false;
    for (Value argument : llvm::to_vector(hostArgs))
      if (!onlyHostUses(argument, hostArgs, leaves)) {
        hostArgs.erase(argument);
        changed = true;
      }
  }
  ReadOnlyArguments readOnly;
  // A public function's marked arguments, where nothing in the module
  // calls it: its callers are the host's, whose kernels have finished (a
  // public function waits before it returns). One the module calls too is
  // taken as a private one below, its marking required as well.
  auto marked = [&](func::FuncOp fn, unsigned i) {
    return fn.isPublic() &&
           fn.getArgAttr(i, gnn::GNNDialect::kReadOnlyAttrName) != nullptr;
  };
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn.isPublic() && !fn.isExternal() && !graph.calls.count(fn) &&
        !graph.addressed.contains(fn))
      for (auto [i, argument] : llvm::enumerate(fn.getArguments()))
        if (isa<BaseMemRefType>(argument.getType()) && marked(fn, i))
          readOnly.insert(argument);
  // What a call passes is safe to read if no kernel writes it: a read-only
  // argument, or an allocation no kernel ever has.
  auto safe = [&](Value operand) {
    Value root = gnn::viewedBuffer(operand);
    return readOnly.contains(root) || (root.getDefiningOp<memref::AllocOp>() &&
                                       onlyHostUses(root, hostArgs, leaves));
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (auto fn : module.getOps<func::FuncOp>()) {
      const SmallVector<func::CallOp> *calls = graph.knownCalls(fn);
      if (!calls)
        continue;
      for (auto [i, argument] : llvm::enumerate(fn.getArguments()))
        if (isa<BaseMemRefType>(argument.getType()) &&
            !readOnly.contains(argument) && (!fn.isPublic() || marked(fn, i)) &&
            llvm::all_of(*calls, [&, i = i](func::CallOp call) {
              return safe(call.getOperand(i));
            })) {
          readOnly.insert(argument);
          changed = true;
        }
    }
  }
  return readOnly;
}

/// Whether `op` reads or writes memory that a kernel may also access, as
/// far as its interface tells; an op that says nothing of its effects
/// might.
static bool touchesMemory(Operation *op, const HostLeaves &leaves,
                          const ReadOnlyArguments &readOnly) {
  if (isPure(op))
    return false;
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return !isHostOnly(load.getMemRef()) &&
           !isConstantGlobal(load.getMemRef()) &&
           !readOnly.contains(gnn::viewedBuffer(load.getMemRef())) &&
           !isFreshAt(load.getMemRef(), op, leaves);
  // A constant copied into a buffer no kernel has (a function's copy of
  // its constants for its kernels, gnn-globals-to-buffers).
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    Value to = copy.getTarget();
    if (isConstantGlobal(copy.getSource()) &&
        (isHostOnly(to) || isFreshAt(to, op, leaves)))
      return false;
  }
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return !isHostOnly(store.getMemRef()) &&
           !isFreshAt(store.getMemRef(), op, leaves);
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return true;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::any_of(list, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect());
  });
}

/// Whether `op` itself, not the ops in its regions, may touch memory that
/// a kernel accesses.
static bool touchesItself(Operation *op, const HostLeaves &leaves,
                          const ReadOnlyArguments &readOnly) {
  if (op->getNumRegions() > 0 &&
      op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
    return false;
  return touchesMemory(op, leaves, readOnly);
}

namespace {
/// What a call means for the work queued on the stream.
enum class CallEffect {
  /// Reads no buffer a kernel may have: a runtime error report, a host
  /// leaf.
  None,
  /// May queue work on the stream and return before it is done: a dense
  /// product, or a function of the program (which waits where it touches
  /// memory itself).
  Queues,
  /// The runtime may read or write buffers on the host.
  Touches,
};

class Rewriter {
public:
  Rewriter(ModuleOp module, func::FuncOp wait, const HostLeaves &leaves,
           const ReadOnlyArguments &readOnly)
      : module(module), wait(wait), leaves(leaves), readOnly(readOnly),
        b(module.getContext()) {}

  /// Rewrites `block`; `inFlight`: kernels may run when it begins. Returns
  /// whether they may when it ends.
  bool visit(Block &block, bool inFlight) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
        makeAsync(launch);
        inFlight = true;
      } else if (auto call = dyn_cast<func::CallOp>(op)) {
        switch (effectOf(call)) {
        case CallEffect::None:
          break;
        case CallEffect::Queues:
          inFlight = true;
          break;
        case CallEffect::Touches:
          inFlight = waitBefore(&op, inFlight);
          break;
        }
      } else if (op.getNumRegions() > 0) {
        inFlight = visitRegions(op, inFlight);
      } else if (op.hasTrait<OpTrait::IsTerminator>()) {
        // Returns need no wait: a caller in the program waits where it
        // touches memory, and one outside it (the runner) synchronizes
        // after every call before it reads results or errors.
        continue;
      } else if (touchesMemory(&op, leaves, readOnly)) {
        inFlight = waitBefore(&op, inFlight);
      }
    }
    return inFlight;
  }

private:
  CallEffect effectOf(func::CallOp call) {
    StringRef name = call.getCallee();
    if (isErrorReport(name) || callsLeaf(call, leaves))
      return CallEffect::None;
    // A loop's tape: a push queues its copy after the kernels
    // (gnn_cuda_tape_create_queued, which the runner binds for programs
    // with asynchronous launches); the other calls keep the host's
    // bookkeeping, and the blocks a tape frees stay out of the pool until
    // the thread waits.
    if (gnn::abi::isTapePush(name))
      return CallEffect::Queues;
    if (name.starts_with(gnn::abi::kTapePop) ||
        llvm::is_contained({gnn::abi::kTapeCreate, gnn::abi::kTapeFree,
                            gnn::abi::kTapeRefused},
                           name))
      return CallEffect::None;
    auto callee = module.lookupSymbol<func::FuncOp>(name);
    if (isStreamOrdered(name) || (callee && !callee.isExternal()))
      return CallEffect::Queues;
    return CallEffect::Touches;
  }

  /// Inserts a wait before `op` if kernels may run; none do after it.
  bool waitBefore(Operation *op, bool inFlight) {
    if (inFlight) {
      b.setInsertionPoint(op);
      b.create<func::CallOp>(op->getLoc(), wait, ValueRange{});
    }
    return false;
  }

  /// The regions of a loop or a branch. Where nothing in them queues work
  /// on the stream (a launch, a dense product, a call of a function of the
  /// program), one wait before the op serves them if they touch memory
  /// (every iteration of a loop; every region of a branch), except that a
  /// branch some of whose ways touch nothing (a rarely taken copy) waits
  /// inside the ways that do, so that the others cost no wait. Otherwise
  /// each block starts with work possibly in flight.
  bool visitRegions(Operation &op, bool inFlight) {
    if (isa<scf::IfOp, scf::IndexSwitchOp>(op) && inFlight &&
        !touchesItself(&op, leaves, readOnly) && !queuesWork(op)) {
      // The ways that touch nothing (an empty else among them).
      bool untouchedWay = false;
      for (Region &region : op.getRegions())
        untouchedWay |= region.empty() || !touchesWithin(region);
      if (untouchedWay) {
        for (Region &region : op.getRegions())
          for (Block &inner : region)
            visit(inner, inFlight);
        // Some way leaves the kernels running.
        return true;
      }
    }
    bool queues = false, touches = false;
    op.walk([&](Operation *inner) {
      if (isa<gpu::LaunchFuncOp>(inner)) {
        queues = true;
      } else if (auto call = dyn_cast<func::CallOp>(inner)) {
        CallEffect effect = effectOf(call);
        queues |= effect == CallEffect::Queues;
        touches |= effect == CallEffect::Touches;
      } else {
        touches |= touchesItself(inner, leaves, readOnly);
      }
    });
    if (!queues)
      return touches ? waitBefore(&op, inFlight) : inFlight;
    if (touchesItself(&op, leaves, readOnly))
      waitBefore(&op, inFlight);
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        visit(inner, /*inFlight=*/true);
    return true;
  }

  /// Whether anything in `op`'s regions queues work on the stream.
  bool queuesWork(Operation &op) {
    bool queues = false;
    op.walk([&](Operation *inner) {
      if (isa<gpu::LaunchFuncOp>(inner))
        queues = true;
      else if (auto call = dyn_cast<func::CallOp>(inner))
        queues |= effectOf(call) == CallEffect::Queues;
    });
    return queues;
  }

  /// Whether anything in `region` may touch memory a kernel accesses.
  bool touchesWithin(Region &region) {
    bool touches = false;
    region.walk([&](Operation *inner) {
      if (auto call = dyn_cast<func::CallOp>(inner))
        touches |= effectOf(call) == CallEffect::Touches;
      else
        touches |= touchesItself(inner, leaves, readOnly);
    });
    return touches;
  }

  /// `launch` on the thread's stream, not waited for.
  void makeAsync(gpu::LaunchFuncOp launch) {
    if (launch.getAsyncToken())
      return;
    b.setInsertionPoint(launch);
    Location loc = launch.getLoc();
    Type token = b.getType<gpu::AsyncTokenType>();
    SmallVector<Value> dependencies(launch.getAsyncDependencies());
    if (dependencies.empty())
      dependencies.push_back(
          b.create<gpu::WaitOp>(loc, token, ValueRange{}).getAsyncToken());
    std::optional<gpu::KernelDim3> cluster;
    if (launch.hasClusterSize())
      cluster = launch.getClusterSizeOperandValues();
    b.create<gpu::LaunchFuncOp>(
        loc, launch.getKernelAttr(), launch.getGridSizeOperandValues(),
        launch.getBlockSizeOperandValues(), launch.getDynamicSharedMemorySize(),
        launch.getKernelOperands(), token, dependencies, cluster);
    launch.erase();
  }

  ModuleOp module;
  func::FuncOp wait;
  const HostLeaves &leaves;
  const ReadOnlyArguments &readOnly;
  OpBuilder b;
};

struct GPUAsyncLaunchesPass
    : gnn::impl::GPUAsyncLaunchesPassBase<GPUAsyncLaunchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Work is queued by launches and by the runtime's dense products.
    bool queues = false;
    module.walk([&](Operation *op) {
      auto call = dyn_cast<func::CallOp>(op);
      queues = isa<gpu::LaunchFuncOp>(op) ||
               (call && isStreamOrdered(call.getCallee()));
      return queues ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (!queues)
      return;
    auto wait = module.lookupSymbol<func::FuncOp>(gnn::abi::kWaitForLaunches);
    if (!wait) {
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      wait = b.create<func::FuncOp>(module.getLoc(), gnn::abi::kWaitForLaunches,
                                    b.getFunctionType({}, {}));
      wait.setPrivate();
    }
    CallGraph graph(module);
    HostLeaves leaves = findHostLeaves(module, graph);
    ReadOnlyArguments readOnly = findReadOnlyArguments(module, graph, leaves);
    Rewriter rewriter(module, wait, leaves, readOnly);
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal())
        for (Block &block : fn.getBody())
          // The caller may have left kernels running, except for a host
          // leaf, whose buffers no kernel has had.
          rewriter.visit(block, /*inFlight=*/!leaves.contains(fn));
  }
};
} // namespace
