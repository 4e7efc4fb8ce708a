//===- ExpandRoundedDivisions.cpp - floor and ceil divisions, exactly -----===//
//
// Part of gnnc. arith.floordivsi and arith.ceildivsi from divsi and remsi
// and a correction of one, which cannot overflow (upstream's expansion
// negates the dividend, which overflows for the smallest value).
//
//===----------------------------------------------------------------------===//

#include "GNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::gnn {
#define GEN_PASS_DEF_EXPANDROUNDEDDIVISIONSPASS
#include "GNN/Transforms/Passes.h.inc"
} // namespace mlir::gnn

using namespace mlir;

namespace {
/// A constant `value` of `type` (an integer, an index or a vector of them;
/// arith's createScalarOrSplatConstant takes no index).
Value splat(ImplicitLocOpBuilder &b, Type type, int64_t value) {
  Type element = getElementTypeOrSelf(type);
  TypedAttr scalar = b.getIntegerAttr(element, value);
  if (auto vector = dyn_cast<VectorType>(type))
    return b.create<arith::ConstantOp>(
        DenseElementsAttr::get(vector, ArrayRef<Attribute>(scalar)));
  return b.create<arith::ConstantOp>(scalar);
}

/// The truncating quotient of `n` by `m`, moved by `step` (-1: floor, +1:
/// ceil) where the remainder is not zero and, for the floor, has the other
/// sign than `m` (the truncation went up), for the ceiling the same sign
/// (it went down).
Value roundedQuotient(ImplicitLocOpBuilder &b, Value n, Value m, int step) {
  Type type = n.getType();
  Value zero = splat(b, type, 0);
  Value q = b.create<arith::DivSIOp>(n, m);
  Value r = b.create<arith::RemSIOp>(n, m);
  Value inexact = b.create<arith::CmpIOp>(arith::CmpIPredicate::ne, r, zero);
  Value rNegative = b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, r, zero);
  Value mNegative = b.create<arith::CmpIOp>(arith::CmpIPredicate::slt, m, zero);
  Value signs = b.create<arith::CmpIOp>(step < 0 ? arith::CmpIPredicate::ne
                                                 : arith::CmpIPredicate::eq,
                                        rNegative, mNegative);
  Value moved = b.create<arith::AndIOp>(inexact, signs);
  Value next = b.create<arith::AddIOp>(q, splat(b, type, step));
  return b.create<arith::SelectOp>(moved, next, q);
}

template <typename OpT, int Step>
struct ExpandRoundedDivision : OpConversionPattern<OpT> {
  using OpConversionPattern<OpT>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    rewriter.replaceOp(
        op, roundedQuotient(b, adaptor.getLhs(), adaptor.getRhs(), Step));
    return success();
  }
};

struct ExpandRoundedDivisionsPass
    : gnn::impl::ExpandRoundedDivisionsPassBase<ExpandRoundedDivisionsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addIllegalOp<arith::FloorDivSIOp, arith::CeilDivSIOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(context);
    patterns.add<ExpandRoundedDivision<arith::FloorDivSIOp, -1>,
                 ExpandRoundedDivision<arith::CeilDivSIOp, 1>>(context);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
