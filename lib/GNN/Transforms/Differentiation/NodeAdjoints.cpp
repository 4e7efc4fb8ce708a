//===- NodeAdjoints.cpp - adjoints of node-wise and row ops ---------------===//
//
// Part of gnnc. Element bodies over nodes, row subsets (gather and scatter
// are each other's transpose), broadcasting and its sums, dropout (its
// mask regenerated), row-wise normalizations and reshapes.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::autodiff;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static LogicalResult differentiate(ApplyNodesOp op, AdjointBuilder &ad) {
  // Each result that the loss depends on adds its own term.
  for (auto [r, result] : llvm::enumerate(op.getResults())) {
    Value dy = ad.adjoint(result);
    if (!dy)
      continue;
    for (auto [i, input] : llvm::enumerate(op.getInputs())) {
      if (!ad.isActive(input))
        continue;
      FailureOr<Value> t = ad.elementAdjoint(
          Value(), Value(), op.getInputs(), {}, dy, Target::Dst, i,
          [&, r = r](OpBuilder &b, ValueRange x) {
            return cloneElementBodyResults(b, op.getBody(), x)[r];
          });
      if (failed(t))
        return failure();
      ad.accumulateSummed(input, *t);
    }
  }
  return success();
}

static LogicalResult differentiate(GatherRowsOp op, AdjointBuilder &ad) {
  Value source = op.getSource();
  Value dy = ad.adjoint(op.getResult());
  ad.accumulate(source,
                ad.b.create<ScatterRowsOp>(source.getType(), dy,
                                           ad.zerosLike(source), op.getIds(),
                                           /*add=*/true));
  return success();
}

static LogicalResult differentiate(ScatterRowsOp op, AdjointBuilder &ad) {
  Value dy = ad.adjoint(op.getResult());
  Value source = op.getSource(), dest = op.getDest();
  if (ad.isActive(source))
    ad.accumulate(source,
                  ad.b.create<GatherRowsOp>(source.getType(), dy, op.getIds()));
  if (ad.isActive(dest)) {
    // Replaced rows did not reach the result.
    Value d =
        op.getAdd()
            ? dy
            : ad.b.create<ScatterRowsOp>(dest.getType(), ad.zerosLike(source),
                                         dy, op.getIds(), /*add=*/false)
                  .getResult();
    ad.accumulate(dest, d);
  }
  return success();
}

static LogicalResult differentiate(SumToOp op, AdjointBuilder &ad) {
  Value in = op.getInput();
  ad.accumulate(in, ad.b.create<BroadcastOp>(in.getType(),
                                             ad.adjoint(op.getResult()), in));
  return success();
}

static LogicalResult differentiate(BroadcastOp op, AdjointBuilder &ad) {
  if (ad.isActive(op.getInput()))
    ad.accumulateSummed(op.getInput(), ad.adjoint(op.getResult()));
  return success();
}

static LogicalResult differentiate(DropoutOp op, AdjointBuilder &ad) {
  ad.accumulate(op.getInput(),
                ad.b.create<DropoutOp>(op.getType(), ad.adjoint(op.getResult()),
                                       op.getSeed(), op.getOffset(),
                                       op.getRateAttr()));
  return success();
}

static LogicalResult differentiate(LogSoftmaxOp op, AdjointBuilder &ad) {
  // dx = dy - softmax(x) * sum(dy) per row.
  Value y = op.getResult(), dy = ad.adjoint(y);
  auto rowSum = RankedTensorType::get({tensorType(y).getDimSize(0), 1},
                                      tensorType(y).getElementType());
  Value total = ad.sumTo(dy, rowSum);
  Location loc = ad.b.getLoc();
  ad.accumulate(op.getInput(),
                ad.applyNodes({dy, y, total}, tensorType(y),
                              [&](OpBuilder &b, ValueRange e) -> Value {
                                Value p = b.create<math::ExpOp>(loc, e[1]);
                                return b.create<arith::SubFOp>(
                                    loc, e[0],
                                    b.create<arith::MulFOp>(loc, p, e[2]));
                              }));
  return success();
}

static LogicalResult differentiate(LinearOp op, AdjointBuilder &ad) {
  // y = x W^T + b + a (or, transposed, y = x W + a).
  Value x = op.getInput(), w = op.getWeight(), dy = ad.adjoint(op.getResult());
  bool transposed = op.getTransposeWeight();
  if (ad.isActive(x))
    ad.accumulate(x, ad.b.create<LinearOp>(x.getType(), dy, w, Value(),
                                           /*transpose_weight=*/!transposed,
                                           /*addend=*/Value()));
  if (ad.isActive(w)) {
    Value dw = transposed ? ad.b.create<OuterSumOp>(w.getType(), x, dy)
                          : ad.b.create<OuterSumOp>(w.getType(), dy, x);
    ad.accumulate(w, dw);
  }
  if (Value bias = op.getBias(); bias && ad.isActive(bias))
    ad.accumulate(bias, ad.sumTo(dy, bias.getType()));
  if (Value addend = op.getAddend(); addend && ad.isActive(addend)) {
    // The addend's type may be the result's with other static sizes.
    Value da = dy.getType() == addend.getType()
                   ? dy
                   : ad.b.create<tensor::CastOp>(addend.getType(), dy);
    ad.accumulate(addend, da);
  }
  return success();
}

static LogicalResult differentiate(OuterSumOp op, AdjointBuilder &ad) {
  // r = sum_n outer(a[n], b[n]): da[n] = dr @ b[n], db[n] = dr^T @ a[n].
  Value a = op.getLhs(), b = op.getRhs(), dr = ad.adjoint(op.getResult());
  if (ad.isActive(a))
    ad.accumulate(a, ad.b.create<LinearOp>(a.getType(), b, dr, Value(),
                                           /*transpose_weight=*/false,
                                           /*addend=*/Value()));
  if (ad.isActive(b))
    ad.accumulate(b, ad.b.create<LinearOp>(b.getType(), a, dr, Value(),
                                           /*transpose_weight=*/true,
                                           /*addend=*/Value()));
  return success();
}

static LogicalResult differentiate(LayerNormOp op, AdjointBuilder &ad) {
  // gnn.layer_norm_grad recomputes each row's statistics and gives the
  // input's gradient and dy * xh, whose sum over rows is the weight's; the
  // bias's is the sum of dy.
  Value x = op.getInput(), w = op.getWeight(), dy = ad.adjoint(op.getResult());
  if (ad.isActive(x) || ad.isActive(w)) {
    auto grad =
        ad.b.create<LayerNormGradOp>(x.getType(), x.getType(), x, w, dy,
                                     /*addend=*/Value(), op.getEpsAttr());
    if (ad.isActive(x))
      ad.accumulate(x, grad.getInputGrad());
    if (ad.isActive(w))
      ad.accumulate(w, ad.sumTo(grad.getNormalizedGrad(), w.getType()));
  }
  if (ad.isActive(op.getBias()))
    ad.accumulate(op.getBias(), ad.sumTo(dy, op.getBias().getType()));
  return success();
}

static LogicalResult differentiate(tensor::ExpandShapeOp op,
                                   AdjointBuilder &ad) {
  ad.accumulate(op.getSrc(), ad.b.create<tensor::CollapseShapeOp>(
                                 op.getSrcType(), ad.adjoint(op.getResult()),
                                 op.getReassociationIndices()));
  return success();
}

static LogicalResult differentiate(tensor::CollapseShapeOp op,
                                   AdjointBuilder &ad) {
  Value src = op.getSrc();
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < op.getSrcType().getRank(); ++d)
    sizes.push_back(
        op.getSrcType().isDynamicDim(d)
            ? OpFoldResult(ad.b.create<tensor::DimOp>(src, d).getResult())
            : OpFoldResult(ad.b.getIndexAttr(op.getSrcType().getDimSize(d))));
  ad.accumulate(src, ad.b.create<tensor::ExpandShapeOp>(
                         op.getSrcType(), ad.adjoint(op.getResult()),
                         op.getReassociationIndices(), sizes));
  return success();
}

static LogicalResult differentiate(tensor::CastOp op, AdjointBuilder &ad) {
  ad.accumulate(op.getSource(),
                ad.b.create<tensor::CastOp>(op.getSource().getType(),
                                            ad.adjoint(op.getResult())));
  return success();
}

LogicalResult autodiff::differentiateNodeOp(Operation *op, AdjointBuilder &ad,
                                            bool &handled) {
  handled = true;
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case<ApplyNodesOp, GatherRowsOp, ScatterRowsOp, SumToOp, BroadcastOp,
            DropoutOp, LogSoftmaxOp, LinearOp, OuterSumOp, LayerNormOp,
            tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
          [&](auto op) { return differentiate(op, ad); })
      .Default([&](Operation *) {
        handled = false;
        return success();
      });
}
