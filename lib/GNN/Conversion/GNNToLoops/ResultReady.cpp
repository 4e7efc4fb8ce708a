//===- ResultReady.cpp - lower announcements of final results -------------===//
//
// Part of gnnc. gnn.result_ready becomes a call of the runtime's
// gnn_rt_result_ready (gnnc/runtime.h) with the value's bytes: the address
// of its buffer and their number. The buffer has the identity layout (the
// bufferization copies a value that lives elsewhere), so its elements are
// dense from that address. The context argument comes from
// gnn-pass-runtime-context.
//
//===----------------------------------------------------------------------===//

#include "Lowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::loops;

LogicalResult loops::lowerResultReady(ResultReadyOp op,
                                      RewriterBase &rewriter) {
  Lowering l(op, rewriter);
  auto type = cast<RankedTensorType>(op.getValue().getType());
  Value buffer = l.toMemref(op.getValue());
  Value bytes = l.b.create<arith::ConstantIndexOp>(elementOf(type).second);
  for (int64_t i = 0; i < type.getRank(); ++i)
    bytes = l.b.create<arith::MulIOp>(bytes, l.dim(buffer, i));
  auto i64 = l.b.getI64Type();
  Value address = l.b.create<arith::IndexCastOp>(
      i64, l.b.create<memref::ExtractAlignedPointerAsIndexOp>(buffer));
  SmallVector<Value> args = {
      l.b.create<arith::ConstantIntOp>(op.getSlot(), 64),
      l.b.create<LLVM::IntToPtrOp>(LLVM::LLVMPointerType::get(l.b.getContext()),
                                   address),
      l.b.create<arith::IndexCastOp>(i64, bytes)};
  declareFunction(op->getParentOfType<ModuleOp>(), abi::kResultReady,
                  ValueRange(args).getTypes(), {}, /*cInterface=*/false);
  l.b.create<func::CallOp>(abi::kResultReady, TypeRange{}, args);
  rewriter.eraseOp(op);
  return success();
}
