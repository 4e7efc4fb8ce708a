//===- OptimizerBuilder.cpp - the Adam update as gnn IR -------------------===//
//
// Part of gnnc. @adam_update: one elementwise gnn.apply_nodes per moment and
// per parameter, every tensor updated in the caller's buffer, so the
// training program keeps parameters and optimizer state where they are.
//
//===----------------------------------------------------------------------===//

#include "TrainingLoss.h"

#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::models;

void models::buildAdamUpdate(
    ModuleOp module, const ModelConfig &c,
    llvm::ArrayRef<std::pair<std::string, std::vector<int64_t>>> parameters) {
  FunctionBuilder f(module, model::kAdamUpdate, c,
                    [](llvm::StringRef) { return false; });
  ImplicitLocOpBuilder &b = f.b;
  Value hyper =
      f.input(model::kAdamHyper, RankedTensorType::get({6}, b.getF32Type()));
  // The hyperparameters, captured by the elementwise bodies.
  SmallVector<Value> h;
  for (int64_t i = 0; i < 6; ++i)
    h.push_back(b.create<tensor::ExtractOp>(hyper, ValueRange{f.index(i)}));
  Value w1 = h[0], b2 = h[1], w2 = h[2], step = h[3], c2 = h[4], eps = h[5];
  FunctionBuilder::Named results;
  for (const auto &[name, shape] : parameters) {
    auto type = RankedTensorType::get(shape, b.getF32Type());
    Value p = f.updatedInput("param." + name, type);
    Value m = f.updatedInput("adam.m." + name, type);
    Value v = f.updatedInput("adam.v." + name, type);
    Value g = f.input("grad." + name, type);
    Value m2 = f.apply({m, g}, type, [&](ValueRange e) -> Value {
      Value delta = b.create<arith::SubFOp>(e[1], e[0]);
      return b.create<arith::AddFOp>(e[0], b.create<arith::MulFOp>(w1, delta));
    });
    Value v2 = f.apply({v, g}, type, [&](ValueRange e) -> Value {
      Value square = b.create<arith::MulFOp>(e[1], e[1]);
      return b.create<arith::AddFOp>(b.create<arith::MulFOp>(e[0], b2),
                                     b.create<arith::MulFOp>(w2, square));
    });
    Value p2 = f.apply({p, m2, v2}, type, [&](ValueRange e) -> Value {
      Value root = b.create<math::SqrtOp>(e[2]);
      Value denom =
          b.create<arith::AddFOp>(b.create<arith::DivFOp>(root, c2), eps);
      Value ratio = b.create<arith::DivFOp>(e[1], denom);
      return b.create<arith::AddFOp>(e[0],
                                     b.create<arith::MulFOp>(step, ratio));
    });
    results.push_back({p2, "param." + name});
    results.push_back({m2, "adam.m." + name});
    results.push_back({v2, "adam.v." + name});
  }
  f.finish(results);
}
