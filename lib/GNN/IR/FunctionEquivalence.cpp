//===- FunctionEquivalence.cpp - functions that compute the same ----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/FunctionEquivalence.h"

#include "mlir/IR/OperationSupport.h"

using namespace mlir;

bool mlir::gnn::areEquivalentFunctions(FunctionOpInterface a,
                                       FunctionOpInterface b) {
  if (a.getFunctionType() != b.getFunctionType() ||
      a.getArgAttrsAttr() != b.getArgAttrsAttr() ||
      a.getResAttrsAttr() != b.getResAttrsAttr())
    return false;
  // Values of `a` and the values of `b` they correspond to, as the
  // comparison walks both bodies in order.
  DenseMap<Value, Value> equivalent;
  auto mark = [&](Value l, Value r) { equivalent[l] = r; };
  auto check = [&](Value l, Value r) {
    return success(equivalent.lookup(l) == r);
  };
  return OperationEquivalence::isRegionEquivalentTo(
      &a.getFunctionBody(), &b.getFunctionBody(), check, mark,
      OperationEquivalence::IgnoreLocations);
}
