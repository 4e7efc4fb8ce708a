//===- PlaceBuffers.cpp - each buffer in the memory of who touches it -----===//
//
// Part of gnnc. A GPU program's buffers come from unified memory, which
// host code and kernels share: the driver tracks its pages and moves them
// to whichever side touches them. Most of a step's buffers (activations,
// gradients, the backward's temporaries) are touched by kernels and cuBLAS
// alone, and many small ones (bufferization's ownership lists) by the host
// alone; only the rest (slots the host sets and kernels fill, results the
// caller reads) need both. The host program's memory flow is followed
// through views, calls, returns, loops and selects to tell which sides may
// touch each allocation's memory.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/Passes.h"
#include "GNN/Conversion/RuntimeABI.h"
#include "HostCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GPUPLACEBUFFERSPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;
using mlir::gnn::CallGraph;

namespace {
/// Who may touch a buffer's memory: a set of these.
enum Side : unsigned { kNone = 0, kHost = 1, kDevice = 2, kBoth = 3 };
} // namespace

/// Who touches the buffer that `cast` makes unranked: a tape push copies a
/// dense buffer with the driver (a device copy, from any memory) and
/// gathers another's elements on the host; anything else is unknown.
static Side unrankedUse(memref::CastOp cast) {
  bool pushesOnly = llvm::all_of(cast->getUsers(), [](Operation *user) {
    auto call = dyn_cast<func::CallOp>(user);
    return call && gnn::abi::isTapePush(call.getCallee());
  });
  if (!pushesOnly)
    return kBoth;
  auto source = dyn_cast<MemRefType>(cast.getSource().getType());
  return source && source.getLayout().isIdentity() ? kDevice : kHost;
}

namespace {
/// The host program's memref values, the values each may pass its memory
/// to, and who touches each directly.
class MemoryFlow {
public:
  MemoryFlow(ModuleOp module, const CallGraph &graph) : graph(graph) {
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal())
        fn.walk([&](Operation *op) {
          for (OpOperand &use : op->getOpOperands())
            if (isa<BaseMemRefType>(use.get().getType()))
              follow(use);
        });
    close();
  }

  /// Who may touch the memory that `v` holds.
  Side sides(Value v) const {
    auto found = reach.find(v);
    return found == reach.end() ? kNone : found->second;
  }

private:
  void flows(Value from, Value to) { sources[to].push_back(from); }
  void touches(Value v, Side side) {
    direct[v] = Side(direct.lookup(v) | side);
  }

  /// Where operand `index` of a region branch goes: the successor input
  /// (a region's block argument or a result) at its place among the
  /// operands forwarded to each successor.
  /// An operand no successor takes is the op's own use: anyone's.
  void
  flowsToSuccessors(Value from, unsigned index,
                    ArrayRef<RegionSuccessor> successors,
                    function_ref<OperandRange(RegionSuccessor &)> forwarded) {
    bool taken = false;
    for (RegionSuccessor successor : successors) {
      OperandRange operands = forwarded(successor);
      ValueRange inputs = successor.getSuccessorInputs();
      if (operands.empty())
        continue;
      unsigned begin = operands.getBeginOperandIndex();
      if (index < begin || index - begin >= operands.size() ||
          index - begin >= inputs.size())
        continue;
      flows(from, inputs[index - begin]);
      taken = true;
    }
    if (!taken)
      touches(from, kBoth);
  }

  /// Records where `use`'s memory goes, or who touches it there.
  void follow(OpOperand &use) {
    Value v = use.get();
    Operation *op = use.getOwner();
    // A kernel not yet outlined runs its body on the device, where the ops
    // below would be taken for the host's.
    if (op->getParentOfType<gpu::LaunchOp>())
      return touches(v, kBoth);
    // No access: sizes, addresses (bufferization's ownership checks),
    // deallocation.
    if (isa<memref::DimOp, memref::ExtractAlignedPointerAsIndexOp,
            memref::DeallocOp>(op))
      return;
    if (isa<gpu::LaunchFuncOp>(op))
      return touches(v, kDevice);
    // The host's own accesses; a copy left in host code is a memcpy.
    if (isa<memref::LoadOp, memref::StoreOp, memref::CopyOp,
            memref::AtomicRMWOp, memref::GenericAtomicRMWOp>(op))
      return touches(v, kHost);
    if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(op))
      return flows(v, meta.getBaseBuffer());
    if (auto cast = dyn_cast<memref::CastOp>(op)) {
      if (isa<MemRefType>(cast.getType()))
        return flows(v, cast.getResult());
      return touches(v, unrankedUse(cast));
    }
    if (auto view = dyn_cast<ViewLikeOpInterface>(op);
        view && view.getViewSource() == v) {
      for (Value r : op->getResults())
        if (isa<BaseMemRefType>(r.getType()))
          flows(v, r);
      return;
    }
    if (isa<arith::SelectOp>(op))
      return flows(v, op->getResult(0));
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = dyn_cast_or_null<func::FuncOp>(
          SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr()));
      if (callee && !callee.isExternal())
        return flows(v, callee.getArgument(use.getOperandNumber()));
      // The dense products run on cuBLAS (their host fallback, for layouts
      // lowered code never makes, refuses device memory); the runtime's
      // other functions run on the host.
      return touches(v, gnn::abi::isDenseProduct(call.getCallee()) ? kDevice
                                                                   : kHost);
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // A public function's results go to the host's caller, which may
      // read them or pass them to another call's kernels.
      auto fn = ret->getParentOfType<func::FuncOp>();
      const SmallVector<func::CallOp> *calls = graph.knownCalls(fn);
      if (fn.isPublic() || !calls)
        return touches(v, kBoth);
      for (func::CallOp call : *calls)
        flows(v, call.getResult(use.getOperandNumber()));
      return;
    }
    // Loops and branches: a value a terminator yields, or that a loop
    // starts with, becomes the block argument or result in its place.
    unsigned index = use.getOperandNumber();
    if (auto terminator = dyn_cast<RegionBranchTerminatorOpInterface>(op);
        terminator && isa<RegionBranchOpInterface>(op->getParentOp())) {
      SmallVector<RegionSuccessor> successors;
      terminator.getSuccessorRegions(
          SmallVector<Attribute>(op->getNumOperands()), successors);
      return flowsToSuccessors(v, index, successors, [&](RegionSuccessor &s) {
        return terminator.getSuccessorOperands(RegionBranchPoint(s));
      });
    }
    if (auto branch = dyn_cast<RegionBranchOpInterface>(op)) {
      SmallVector<RegionSuccessor> successors;
      branch.getSuccessorRegions(RegionBranchPoint::parent(), successors);
      return flowsToSuccessors(v, index, successors, [&](RegionSuccessor &s) {
        return branch.getEntrySuccessorOperands(RegionBranchPoint(s));
      });
    }
    // Whatever else: anyone.
    touches(v, kBoth);
  }

  /// `reach`: who touches the memory of each value, directly or through
  /// the values it flows to.
  void close() {
    SmallVector<Value> work;
    for (auto [v, side] : direct) {
      reach[v] = side;
      work.push_back(v);
    }
    while (!work.empty()) {
      Value v = work.pop_back_val();
      Side side = reach[v];
      auto found = sources.find(v);
      if (found == sources.end())
        continue;
      for (Value from : found->second) {
        Side &known = reach[from];
        if ((known | side) != known) {
          known = Side(known | side);
          work.push_back(from);
        }
      }
    }
  }

  const CallGraph &graph;
  /// For each value, the values whose memory may flow into it.
  DenseMap<Value, SmallVector<Value>> sources;
  DenseMap<Value, Side> direct;
  DenseMap<Value, Side> reach;
};

/// Replaces an allocation by a block of device or host memory from the
/// runtime, viewed as its type (its deallocation frees the block the view
/// starts at, as before).
class BlockAllocator {
public:
  explicit BlockAllocator(ModuleOp module) : module(module), layout(module) {}

  /// Whether `alloc`'s type has such a view and its alignment is the
  /// blocks'.
  static bool viewable(memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    return type.getLayout().isIdentity() && !type.getMemorySpace() &&
           isa<IntegerType, FloatType, IndexType>(type.getElementType()) &&
           alloc.getAlignment().value_or(0) <= gnn::abi::kBlockAlignment;
  }

  void replace(memref::AllocOp alloc, StringRef allocator) {
    MemRefType type = alloc.getType();
    OpBuilder b(alloc);
    Location loc = alloc.getLoc();
    // The element size times the static sizes, then the dynamic ones.
    int64_t fixed = int64_t(layout.getTypeSize(type.getElementType()));
    for (int64_t size : type.getShape())
      if (!ShapedType::isDynamic(size))
        fixed *= size;
    Value bytes = b.create<arith::ConstantIndexOp>(loc, fixed);
    for (Value size : alloc.getDynamicSizes())
      bytes = b.create<arith::MulIOp>(loc, bytes, size);
    Value count = b.create<arith::IndexCastOp>(loc, b.getI64Type(), bytes);
    auto block =
        b.create<func::CallOp>(loc, declare(allocator), ValueRange{count});
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value view = b.create<memref::ViewOp>(loc, type, block.getResult(0), zero,
                                          alloc.getDynamicSizes());
    alloc.replaceAllUsesWith(view);
    alloc.erase();
  }

private:
  /// `name`: (i64) -> memref<?xi8>, through its C interface.
  func::FuncOp declare(StringRef name) {
    if (auto fn = module.lookupSymbol<func::FuncOp>(name))
      return fn;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto fn = b.create<func::FuncOp>(
        module.getLoc(), name,
        b.getFunctionType(
            {b.getI64Type()},
            {MemRefType::get({ShapedType::kDynamic}, b.getI8Type())}));
    fn.setPrivate();
    fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
    return fn;
  }

  ModuleOp module;
  DataLayout layout;
};

struct GPUPlaceBuffersPass
    : gnn::impl::GPUPlaceBuffersPassBase<GPUPlaceBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    CallGraph graph(module);
    MemoryFlow flow(module, graph);
    SmallVector<std::pair<memref::AllocOp, Side>> placed;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal())
        fn.walk([&](memref::AllocOp alloc) {
          Side side = flow.sides(alloc.getResult());
          if ((side == kHost || side == kDevice) &&
              BlockAllocator::viewable(alloc))
            placed.push_back({alloc, side});
        });
    BlockAllocator allocator(module);
    for (auto [alloc, side] : placed)
      allocator.replace(alloc, side == kDevice ? gnn::abi::kDeviceAlloc
                                               : gnn::abi::kHostAlloc);
  }
};
} // namespace
