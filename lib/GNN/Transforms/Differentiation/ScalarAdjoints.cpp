//===- ScalarAdjoints.cpp - derivatives of element bodies -----------------===//
//
// Part of gnnc. Reverse mode over the scalar arith and math ops of an
// element body (a message function, a user-defined body), built as scalar
// ops in the body of the adjoint op.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::autodiff;

Value autodiff::emitMessage(OpBuilder &b, Location loc, MessageFnAttr fn,
                            ArrayAttr post, ValueRange x) {
  Value y;
  switch (fn.getOp()) {
  case BinaryOp::Copy:
    y = x[0];
    break;
  case BinaryOp::Add:
    y = b.create<arith::AddFOp>(loc, x[0], x[1]);
    break;
  case BinaryOp::Sub:
    y = b.create<arith::SubFOp>(loc, x[0], x[1]);
    break;
  case BinaryOp::Mul:
  case BinaryOp::Dot:
    y = b.create<arith::MulFOp>(loc, x[0], x[1]);
    break;
  case BinaryOp::Div:
    y = b.create<arith::DivFOp>(loc, x[0], x[1]);
    break;
  }
  if (!post)
    return y;
  Type t = y.getType();
  auto constant = [&](const APFloat &c) -> Value {
    return b.create<arith::ConstantOp>(loc,
                                       b.getFloatAttr(t, c.convertToDouble()));
  };
  for (auto fnAttr : post.getAsRange<UnaryFnAttr>()) {
    switch (fnAttr.getKind()) {
    case UnaryKind::Scale:
      y = b.create<arith::MulFOp>(loc, y, constant(fnAttr.getA()));
      break;
    case UnaryKind::Clamp:
      // Inclusive bounds pass the gradient, as torch.clamp does.
      y = b.create<arith::MaximumFOp>(loc, y, constant(fnAttr.getA()));
      y = b.create<arith::MinimumFOp>(loc, y, constant(fnAttr.getB()));
      break;
    case UnaryKind::Exp:
      y = b.create<math::ExpOp>(loc, y);
      break;
    case UnaryKind::Relu: {
      // relu(0) passes no gradient, as torch.relu.
      Value zero = b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, 0.0));
      Value positive =
          b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, y, zero);
      y = b.create<arith::SelectOp>(loc, positive, y, zero);
      break;
    }
    case UnaryKind::Neg:
      y = b.create<arith::NegFOp>(loc, y);
      break;
    }
  }
  return y;
}

namespace {
/// Adjoints of the scalar values of one body.
class ScalarSweep {
public:
  ScalarSweep(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  void add(Value v, Value d) {
    Value &slot = adjoints[v];
    slot = slot ? b.create<arith::AddFOp>(loc, slot, d).getResult() : d;
  }
  Value get(Value v) const { return adjoints.lookup(v); }

  LogicalResult visit(Operation *op);

private:
  Value c(Type t, double v) {
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, v));
  }
  Value mul(Value x, Value y) { return b.create<arith::MulFOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(loc, x, y); }
  Value neg(Value x) { return b.create<arith::NegFOp>(loc, x); }
  Value sub(Value x, Value y) { return b.create<arith::SubFOp>(loc, x, y); }
  Value select(Value c, Value x, Value y) {
    return b.create<arith::SelectOp>(loc, c, x, y);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return b.create<arith::CmpFOp>(loc, p, x, y);
  }

  OpBuilder &b;
  Location loc;
  llvm::DenseMap<Value, Value> adjoints;
};
} // namespace

LogicalResult ScalarSweep::visit(Operation *op) {
  // Ops without a float result, and piecewise-constant ones, pass nothing.
  if (op->getNumResults() != 1 || !isa<FloatType>(op->getResult(0).getType()))
    return success();
  Value y = op->getResult(0);
  Value dy = get(y);
  if (!dy)
    return success();
  Type t = y.getType();
  auto x = [&](unsigned i) { return op->getOperand(i); };
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case<arith::ConstantOp, math::FloorOp, math::CeilOp, math::RoundOp,
            math::RoundEvenOp, math::TruncOp, arith::SIToFPOp, arith::UIToFPOp>(
          [](Operation *) { return success(); })
      .Case<arith::AddFOp>([&](auto) {
        add(x(0), dy);
        add(x(1), dy);
        return success();
      })
      .Case<arith::SubFOp>([&](auto) {
        add(x(0), dy);
        add(x(1), neg(dy));
        return success();
      })
      .Case<arith::MulFOp>([&](auto) {
        add(x(0), mul(dy, x(1)));
        add(x(1), mul(dy, x(0)));
        return success();
      })
      .Case<arith::DivFOp>([&](auto) {
        Value q = div(dy, x(1));
        add(x(0), q);
        add(x(1), neg(mul(q, y)));
        return success();
      })
      .Case<arith::NegFOp>([&](auto) {
        add(x(0), neg(dy));
        return success();
      })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](auto) {
        Value first = cmp(arith::CmpFPredicate::OGE, x(0), x(1));
        add(x(0), select(first, dy, c(t, 0)));
        add(x(1), select(first, c(t, 0), dy));
        return success();
      })
      .Case<arith::MinimumFOp, arith::MinNumFOp>([&](auto) {
        Value first = cmp(arith::CmpFPredicate::OLE, x(0), x(1));
        add(x(0), select(first, dy, c(t, 0)));
        add(x(1), select(first, c(t, 0), dy));
        return success();
      })
      .Case<arith::SelectOp>([&](auto) {
        add(x(1), select(x(0), dy, c(t, 0)));
        add(x(2), select(x(0), c(t, 0), dy));
        return success();
      })
      .Case<arith::ExtFOp, arith::TruncFOp>([&](auto) {
        Type from = x(0).getType();
        Value d = from.getIntOrFloatBitWidth() > t.getIntOrFloatBitWidth()
                      ? b.create<arith::ExtFOp>(loc, from, dy).getResult()
                      : b.create<arith::TruncFOp>(loc, from, dy).getResult();
        add(x(0), d);
        return success();
      })
      .Case<math::ExpOp>([&](auto) {
        add(x(0), mul(dy, y));
        return success();
      })
      .Case<math::Exp2Op>([&](auto) {
        add(x(0), mul(mul(dy, y), c(t, llvm::numbers::ln2)));
        return success();
      })
      .Case<math::ExpM1Op>([&](auto) {
        add(x(0), mul(dy, b.create<arith::AddFOp>(loc, y, c(t, 1))));
        return success();
      })
      .Case<math::LogOp>([&](auto) {
        add(x(0), div(dy, x(0)));
        return success();
      })
      .Case<math::Log2Op>([&](auto) {
        add(x(0), div(dy, mul(x(0), c(t, llvm::numbers::ln2))));
        return success();
      })
      .Case<math::Log10Op>([&](auto) {
        add(x(0), div(dy, mul(x(0), c(t, llvm::numbers::ln10))));
        return success();
      })
      .Case<math::Log1pOp>([&](auto) {
        add(x(0), div(dy, b.create<arith::AddFOp>(loc, x(0), c(t, 1))));
        return success();
      })
      .Case<math::SqrtOp>([&](auto) {
        add(x(0), div(mul(dy, c(t, 0.5)), y));
        return success();
      })
      .Case<math::RsqrtOp>([&](auto) {
        // d/dx x^(-1/2) = -y / (2x)
        add(x(0), neg(div(mul(mul(dy, c(t, 0.5)), y), x(0))));
        return success();
      })
      .Case<math::TanhOp>([&](auto) {
        add(x(0), mul(dy, sub(c(t, 1), mul(y, y))));
        return success();
      })
      .Case<math::SinOp>([&](auto) {
        add(x(0), mul(dy, b.create<math::CosOp>(loc, x(0))));
        return success();
      })
      .Case<math::CosOp>([&](auto) {
        add(x(0), neg(mul(dy, b.create<math::SinOp>(loc, x(0)))));
        return success();
      })
      .Case<math::AtanOp>([&](auto) {
        add(x(0),
            div(dy, b.create<arith::AddFOp>(loc, c(t, 1), mul(x(0), x(0)))));
        return success();
      })
      .Case<math::ErfOp>([&](auto) {
        Value g = b.create<math::ExpOp>(loc, neg(mul(x(0), x(0))));
        add(x(0), mul(dy, mul(g, c(t, 2 * llvm::numbers::inv_sqrtpi))));
        return success();
      })
      .Case<math::AbsFOp>([&](auto) {
        // |x|' is 0 at 0, as in torch.
        Value zero = c(t, 0);
        Value sign = select(
            cmp(arith::CmpFPredicate::OGT, x(0), zero), dy,
            select(cmp(arith::CmpFPredicate::OLT, x(0), zero), neg(dy), zero));
        add(x(0), sign);
        return success();
      })
      .Case<math::FmaOp>([&](auto) {
        add(x(0), mul(dy, x(1)));
        add(x(1), mul(dy, x(0)));
        add(x(2), dy);
        return success();
      })
      .Case<math::PowFOp>([&](auto) {
        // d/da a^b = b a^(b-1); d/db a^b = a^b log a.
        Value pm1 = b.create<math::PowFOp>(loc, x(0), sub(x(1), c(t, 1)));
        add(x(0), mul(dy, mul(x(1), pm1)));
        add(x(1), mul(dy, mul(y, b.create<math::LogOp>(loc, x(0)))));
        return success();
      })
      .Default([&](Operation *op) {
        return op->emitOpError()
               << "has no derivative (in an element body that "
                  "gnn-differentiate differentiates)";
      });
}

FailureOr<SmallVector<Value>>
autodiff::scalarAdjoints(OpBuilder &b, Location loc, ArrayRef<Operation *> ops,
                         Value root, Value seed, ValueRange wrt) {
  ScalarSweep sweep(b, loc);
  sweep.add(root, seed);
  for (Operation *op : llvm::reverse(ops))
    if (failed(sweep.visit(op)))
      return failure();
  SmallVector<Value> result;
  for (Value v : wrt) {
    Value d = sweep.get(v);
    result.push_back(
        d ? d
          : b.create<arith::ConstantOp>(loc, b.getFloatAttr(v.getType(), 0.0))
                .getResult());
  }
  return result;
}
