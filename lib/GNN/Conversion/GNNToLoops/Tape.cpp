//===- Tape.cpp - lower tapes of loop iterations --------------------------===//
//
// Part of gnnc. A `!gnn.tape` becomes the runtime's gnn_rt_tape pointer
// (gnnc/tape.h): pushes pass the value's buffer as an unranked memref, pops
// get a buffer the program owns (and frees as it frees its own). A tape
// lives in one function: its ops read the pointer from the cast its
// creation left. Creating one takes the runtime context (added by
// gnn-pass-runtime-context), into which a pop that finds no matching value
// reports.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "gnnc/tape.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

static_assert(TapeType::kMaxRank == GNN_TAPE_MAX_RANK &&
                  abi::kTapeMaxRank == GNN_TAPE_MAX_RANK,
              "the dialect, the ABI list and the runtime agree on tape ranks");

/// The runtime's pointer of a tape created in this function.
static FailureOr<Value> tapePointer(Operation *op, Value tape) {
  auto cast = tape.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || cast.getNumOperands() != 1 ||
      !isa<LLVM::LLVMPointerType>(cast.getOperand(0).getType()))
    return op->emitOpError()
           << "needs a tape created in the same function by gnn.tape_create";
  return cast.getOperand(0);
}

std::pair<std::string, int64_t> loops::elementOf(RankedTensorType type) {
  Type elem = type.getElementType();
  std::string name;
  llvm::raw_string_ostream os(name);
  elem.print(os);
  int64_t bytes = elem.isIndex() ? 8 : (elem.getIntOrFloatBitWidth() + 7) / 8;
  return {name, bytes};
}

LogicalResult loops::lowerTapeCreate(TapeCreateOp op, RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  auto ptr = LLVM::LLVMPointerType::get(l.b.getContext());
  auto module = op->getParentOfType<ModuleOp>();
  declareFunction(module, abi::kTapeCreate, {}, {ptr}, /*cInterface=*/false);
  Value tape =
      l.b.create<func::CallOp>(abi::kTapeCreate, TypeRange{ptr}).getResult(0);
  l.rewriter.replaceOpWithNewOp<UnrealizedConversionCastOp>(op, op.getType(),
                                                            tape);
  return success();
}

LogicalResult loops::lowerTapePush(TapePushOp op, RewriterBase &rewriter) {
  FailureOr<Value> tape = tapePointer(op, op.getTape());
  if (failed(tape))
    return failure();
  Lowering l(op, rewriter);
  auto type = cast<RankedTensorType>(op.getValue().getType());
  auto [element, bytes] = elementOf(type);
  Value buffer = l.b.create<memref::CastOp>(
      UnrankedMemRefType::get(type.getElementType(), 0),
      l.toMemref(op.getValue()));
  SmallVector<Value> args = {*tape, buffer,
                             l.b.create<arith::ConstantIntOp>(bytes, 64)};
  std::string name = abi::tapePushName(element);
  declareFunction(op->getParentOfType<ModuleOp>(), name,
                  ValueRange(args).getTypes(), {}, /*cInterface=*/false);
  l.b.create<func::CallOp>(name, TypeRange{}, args);
  rewriter.eraseOp(op);
  return success();
}

LogicalResult loops::lowerTapePop(TapePopOp op, RewriterBase &rewriter) {
  FailureOr<Value> tape = tapePointer(op, op.getTape());
  if (failed(tape))
    return failure();
  Lowering l(op, rewriter);
  auto type = cast<RankedTensorType>(op.getType());
  auto [element, bytes] = elementOf(type);
  // The runtime fills in every size: the declared buffer is all dynamic.
  SmallVector<int64_t> dynamic(type.getRank(), ShapedType::kDynamic);
  auto popped = MemRefType::get(dynamic, type.getElementType());
  // The type's sizes (-1 where dynamic), which the runtime checks against
  // the value's and gives a failed pop's zeros: constants, written once at
  // the function's entry rather than in every iteration of the backward's
  // loop.
  Value shape;
  {
    OpBuilder::InsertionGuard guard(l.b);
    auto fn = op->getParentOfType<FunctionOpInterface>();
    l.b.setInsertionPointToStart(&fn.getFunctionBody().front());
    auto shapeType = MemRefType::get({abi::kTapeMaxRank}, l.b.getI64Type());
    shape = l.b.create<memref::AllocaOp>(shapeType);
    for (auto [i, size] : llvm::enumerate(type.getShape())) {
      // In this order on every compiler (argument order is unspecified).
      Value position = l.idx(i);
      Value value = l.b.create<arith::ConstantIntOp>(
          ShapedType::isDynamic(size) ? -1 : size, 64);
      l.b.create<memref::StoreOp>(value, shape, position);
    }
  }
  SmallVector<Value> args = {
      *tape, l.b.create<arith::ConstantIntOp>(type.getRank(), 64),
      l.b.create<arith::ConstantIntOp>(bytes, 64), shape};
  std::string name = abi::tapePopName(element, type.getRank());
  declareFunction(op->getParentOfType<ModuleOp>(), name,
                  ValueRange(args).getTypes(), {popped}, /*cInterface=*/true);
  Value buffer =
      l.b.create<func::CallOp>(name, TypeRange{popped}, args).getResult(0);
  auto typed = MemRefType::get(type.getShape(), type.getElementType());
  if (typed != popped)
    buffer = l.b.create<memref::CastOp>(typed, buffer);
  return l.replaceWithBuffers(op, buffer);
}

LogicalResult loops::lowerTapeRefused(TapeRefusedOp op,
                                      RewriterBase &rewriter) {
  FailureOr<Value> tape = tapePointer(op, op.getTape());
  if (failed(tape))
    return failure();
  Lowering l(op, rewriter);
  declareFunction(op->getParentOfType<ModuleOp>(), abi::kTapeRefused,
                  {(*tape).getType()}, {l.b.getI32Type()},
                  /*cInterface=*/false);
  Value answer = l.b.create<func::CallOp>(abi::kTapeRefused,
                                          TypeRange{l.b.getI32Type()}, *tape)
                     .getResult(0);
  rewriter.replaceOpWithNewOp<arith::CmpIOp>(
      op, arith::CmpIPredicate::ne, answer,
      l.b.create<arith::ConstantIntOp>(0, 32));
  return success();
}

LogicalResult loops::lowerTapeFree(TapeFreeOp op, RewriterBase &rewriter) {
  FailureOr<Value> tape = tapePointer(op, op.getTape());
  if (failed(tape))
    return failure();
  Lowering l(op, rewriter);
  declareFunction(op->getParentOfType<ModuleOp>(), abi::kTapeFree,
                  {(*tape).getType()}, {}, /*cInterface=*/false);
  l.b.create<func::CallOp>(abi::kTapeFree, TypeRange{}, *tape);
  rewriter.eraseOp(op);
  return success();
}
