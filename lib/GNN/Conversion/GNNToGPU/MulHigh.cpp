//===- MulHigh.cpp - 32-bit products' high halves with mul.hi -------------===//
//
// Part of gnnc. See gnn-gpu-mul-high in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "GNN/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_GPUMULHIGHPASS
#include "GNN/Conversion/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
bool isI32(Type type) { return type.isInteger(32); }

struct SplitExtendedProduct : OpConversionPattern<arith::MulUIExtendedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::MulUIExtendedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value low =
        rewriter.create<arith::MulIOp>(loc, adaptor.getLhs(), adaptor.getRhs());
    Value high = rewriter
                     .create<LLVM::CallIntrinsicOp>(
                         loc, rewriter.getI32Type(),
                         rewriter.getStringAttr("llvm.nvvm.mulhi.ui"),
                         ValueRange{adaptor.getLhs(), adaptor.getRhs()})
                     .getResult(0);
    rewriter.replaceOp(op, {low, high});
    return success();
  }
};

struct GPUMulHighPass : gnn::impl::GPUMulHighPassBase<GPUMulHighPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    // Scalars only: a vector's lanes would need the intrinsic each.
    target.addDynamicallyLegalOp<arith::MulUIExtendedOp>(
        [](arith::MulUIExtendedOp op) {
          return !isI32(op.getLhs().getType());
        });
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(context);
    patterns.add<SplitExtendedProduct>(context);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
