//===- LoopAdjoints.cpp - the adjoints of scf.for, scf.while, scf.if ------===//
//
// Part of gnnc. A loop's body becomes a function of (induction variable,
// carried values, values it uses from outside) and gets a backward function
// like any callee. The reverse loop runs the iterations last to first: it
// recomputes the state entering iteration j by running the body j times
// from the initial values (nothing per iteration is stored; the work is
// O(trip count^2) body runs, bounded by the loop's trip count), then calls
// the body's backward with the gradients of what iteration j yielded.
// Gradients of the values used from outside add up over the iterations.
// scf.while runs once more to count its iterations, then reverses them the
// same way through its two regions (the condition's and the body's) as two
// functions (WhileAdjoint.cpp). scf.if outlines its two branches the same
// way; its adjoint is an scf.if on the same condition calling the taken
// branch's backward.
//
//===----------------------------------------------------------------------===//

#include "Adjoints.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::gnn;
using namespace mlir::gnn::autodiff;

std::string autodiff::freshSymbolName(ModuleOp module, StringRef name,
                                      StringRef suffix) {
  std::string fresh = (name + suffix).str();
  for (int i = 1; SymbolTable::lookupSymbolIn(module, fresh); ++i)
    fresh = (name + suffix + Twine(i)).str();
  return fresh;
}

func::FuncOp autodiff::outlineRegion(Operation *loop, Region &region,
                                     ArrayRef<Value> captured,
                                     StringRef suffix) {
  auto parent = loop->getParentOfType<func::FuncOp>();
  auto module = parent->getParentOfType<ModuleOp>();
  Block &block = region.front();
  SmallVector<Type> inputs(block.getArgumentTypes());
  for (Value v : captured)
    inputs.push_back(v.getType());
  Operation *terminator = block.getTerminator();
  OpBuilder b(parent);
  b.setInsertionPointAfter(parent);
  std::string name = freshSymbolName(module, parent.getSymName(), suffix);
  auto fn = b.create<func::FuncOp>(
      loop->getLoc(), name,
      b.getFunctionType(inputs, terminator->getOperandTypes()));
  fn.setPrivate();
  Block *entry = fn.addEntryBlock();
  IRMapping map;
  map.map(block.getArguments(),
          entry->getArguments().take_front(block.getNumArguments()));
  map.map(captured, entry->getArguments().drop_front(block.getNumArguments()));
  b.setInsertionPointToStart(entry);
  for (Operation &op : block.without_terminator())
    b.clone(op, map);
  SmallVector<Value> results;
  for (Value v : terminator->getOperands())
    results.push_back(map.lookupOrDefault(v));
  b.create<func::ReturnOp>(loop->getLoc(), results);
  return fn;
}

LogicalResult autodiff::differentiateFor(scf::ForOp loop, AdjointBuilder &ad,
                                         CalleeDifferentiator &callees) {
  llvm::SetVector<Value> capturedSet;
  getUsedValuesDefinedAbove(loop.getRegion(), capturedSet);
  SmallVector<Value> captured = capturedSet.takeVector();
  // The body's arguments are the induction variable and the carried values.
  func::FuncOp body =
      outlineRegion(loop, loop.getRegion(), captured, "_loop_body");
  FailureOr<func::FuncOp> vjp = callees.vjpOf(body, loop);
  if (failed(vjp))
    return failure();

  ImplicitLocOpBuilder &b = ad.b;
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  Type indexType = lb.getType();
  auto constant = [&](int64_t v) -> Value {
    return b.create<arith::ConstantOp>(b.getIntegerAttr(indexType, v));
  };
  // Trip count: ceil((ub - lb) / step), 0 for an empty range.
  Value zero = constant(0), one = constant(1);
  Value span = b.create<arith::SubIOp>(ub, lb);
  Value trips =
      b.create<arith::MaxSIOp>(b.create<arith::CeilDivSIOp>(span, step), zero);

  // Carried: the gradients of the float carried values, then of the float
  // captured values.
  SmallVector<unsigned> carriedFloat, capturedFloat;
  for (auto [i, v] : llvm::enumerate(loop.getInitArgs()))
    if (isFloatTensor(v.getType()))
      carriedFloat.push_back(i);
  for (auto [i, v] : llvm::enumerate(captured))
    if (isFloatTensor(v.getType()))
      capturedFloat.push_back(i);
  SmallVector<Value> init;
  for (unsigned i : carriedFloat) {
    Value r = loop.getResult(i);
    Value d = ad.adjoint(r);
    init.push_back(d ? d : ad.zerosLike(r));
  }
  for (unsigned i : capturedFloat)
    init.push_back(ad.zerosLike(captured[i]));

  auto reverse = b.create<scf::ForOp>(zero, trips, one, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(reverse.getBody());
    ValueRange grads = reverse.getRegionIterArgs();
    // Iteration j = trips - 1 - k, induction value lb + j * step.
    Value j = b.create<arith::SubIOp>(b.create<arith::SubIOp>(trips, one),
                                      reverse.getInductionVar());
    Value iv = b.create<arith::AddIOp>(lb, b.create<arith::MulIOp>(j, step));
    // The state entering iteration j, recomputed from the initial values.
    auto replay = b.create<scf::ForOp>(lb, iv, step, loop.getInitArgs());
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(replay.getBody());
      SmallVector<Value> args = {replay.getInductionVar()};
      llvm::append_range(args, replay.getRegionIterArgs());
      llvm::append_range(args, captured);
      auto next = b.create<func::CallOp>(body, args);
      b.create<scf::YieldOp>(next.getResults());
    }
    SmallVector<Value> args = {iv};
    llvm::append_range(args, replay.getResults());
    llvm::append_range(args, captured);
    llvm::append_range(args, grads.take_front(carriedFloat.size()));
    auto back = b.create<func::CallOp>(*vjp, args);
    // The backward returns the gradients of its float arguments in order:
    // carried values first, then captured ones.
    SmallVector<Value> next;
    unsigned at = 0;
    for (auto [i, v] : llvm::enumerate(loop.getInitArgs()))
      if (isFloatTensor(v.getType()))
        next.push_back(back.getResult(at++));
    for (auto [k, i] : llvm::enumerate(capturedFloat)) {
      (void)i;
      next.push_back(
          ad.add(grads[carriedFloat.size() + k], back.getResult(at++)));
    }
    b.create<scf::YieldOp>(next);
  }
  for (auto [k, i] : llvm::enumerate(carriedFloat)) {
    Value initial = loop.getInitArgs()[i];
    if (ad.isActive(initial))
      ad.accumulate(initial, reverse.getResult(k));
  }
  for (auto [k, i] : llvm::enumerate(capturedFloat))
    if (ad.isActive(captured[i]))
      ad.accumulate(captured[i], reverse.getResult(carriedFloat.size() + k));
  return success();
}

LogicalResult autodiff::differentiateIf(scf::IfOp op, AdjointBuilder &ad,
                                        CalleeDifferentiator &callees) {
  // Both branches become functions of every value either uses from
  // outside, so that their backward functions have one signature.
  llvm::SetVector<Value> capturedSet;
  getUsedValuesDefinedAbove(op->getRegions(), capturedSet);
  SmallVector<Value> captured = capturedSet.takeVector();
  func::FuncOp thenFn =
      outlineRegion(op, op.getThenRegion(), captured, "_if_then");
  func::FuncOp elseFn =
      outlineRegion(op, op.getElseRegion(), captured, "_if_else");
  FailureOr<func::FuncOp> thenVjp = callees.vjpOf(thenFn, op);
  if (failed(thenVjp))
    return failure();
  FailureOr<func::FuncOp> elseVjp = callees.vjpOf(elseFn, op);
  if (failed(elseVjp))
    return failure();

  ImplicitLocOpBuilder &b = ad.b;
  SmallVector<Value> operands(captured);
  for (Value r : op.getResults())
    if (isFloatTensor(r.getType())) {
      Value d = ad.adjoint(r);
      operands.push_back(d ? d : ad.zerosLike(r));
    }
  TypeRange gradTypes = thenVjp->getResultTypes();
  auto back = b.create<scf::IfOp>(gradTypes, op.getCondition(),
                                  /*withElseRegion=*/true);
  for (auto [region, vjp] : {std::pair(&back.getThenRegion(), *thenVjp),
                             std::pair(&back.getElseRegion(), *elseVjp)}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&region->front());
    auto call = b.create<func::CallOp>(vjp, operands);
    b.create<scf::YieldOp>(call.getResults());
  }
  unsigned next = 0;
  for (Value v : captured) {
    if (!isFloatTensor(v.getType()))
      continue;
    Value d = back.getResult(next++);
    if (ad.isActive(v))
      ad.accumulate(v, d);
  }
  return success();
}
