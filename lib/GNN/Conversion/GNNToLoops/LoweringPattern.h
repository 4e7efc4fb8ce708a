//===- LoweringPattern.h - a gnn op lowering as a pattern -------*- C++ -*-===//
//
// Part of gnnc. The op lowerings build loops (or kernels) through a rewriter
// and replace their op; this wraps one as a pattern of MLIR's dialect
// conversion, which lowers producers before users and hands each pattern
// the values that replaced its operands.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GNNTOLOOPS_LOWERINGPATTERN_H
#define GNN_CONVERSION_GNNTOLOOPS_LOWERINGPATTERN_H

#include "mlir/Transforms/DialectConversion.h"

#include <functional>

namespace mlir::gnn::loops {

template <typename OpT> struct LoweringPattern : OpConversionPattern<OpT> {
  using Lower = std::function<LogicalResult(OpT, RewriterBase &)>;
  LoweringPattern(MLIRContext *context, Lower lower, PatternBenefit benefit = 1)
      : OpConversionPattern<OpT>(context, benefit), lower(std::move(lower)) {}

  LogicalResult
  matchAndRewrite(OpT op, typename OpConversionPattern<OpT>::OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // The conversion replaces a lowered producer's results only when it
    // commits; until then the op reads them through the adaptor. Taking the
    // replacements as its operands lets a lowering look through a graph
    // (or tape) operand to the cast of parts that its producer became. The
    // change is tracked, and undone if the lowering fails.
    rewriter.modifyOpInPlace(op,
                             [&] { op->setOperands(adaptor.getOperands()); });
    return lower(op, rewriter);
  }

  Lower lower;
};

template <typename OpT>
void addLowering(RewritePatternSet &patterns,
                 typename LoweringPattern<OpT>::Lower lower,
                 PatternBenefit benefit = 1) {
  patterns.add<LoweringPattern<OpT>>(patterns.getContext(), std::move(lower),
                                     benefit);
}

} // namespace mlir::gnn::loops

#endif // GNN_CONVERSION_GNNTOLOOPS_LOWERINGPATTERN_H
