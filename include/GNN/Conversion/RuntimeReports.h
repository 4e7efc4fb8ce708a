//===- RuntimeReports.h - calls that report bad run-time values -*- C++ -*-===//
//
// Part of gnnc. Compiled code reports a value an operation cannot take
// (an index past the end, a repeated scatter id, ...) through
// gnn_rt_bad_value; the guard pass and the lowerings build that call here,
// alike, with the operation's place in the program.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_RUNTIMEREPORTS_H
#define GNN_CONVERSION_RUNTIMEREPORTS_H

#include "GNN/Conversion/RuntimeABI.h"
#include "gnnc/errors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <utility>

namespace mlir::gnn {

/// The line and column of the first file location in `loc`; {0, 0} when
/// it has none.
inline std::pair<int64_t, int64_t> lineAndColumn(Location loc) {
  std::pair<int64_t, int64_t> place{0, 0};
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      place = {file.getLine(), file.getColumn()};
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return place;
}

/// The call that reports `kind` with up to five i64 `values` (missing ones
/// 0) and the place of `loc`, at `b`'s insertion point.
inline void buildBadValueReport(OpBuilder &b, Location loc,
                                gnn_rt_value_error kind,
                                ArrayRef<Value> values) {
  assert(values.size() <= 5 && "gnn_rt_bad_value takes five values");
  auto constant = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIntOp>(loc, v, 64);
  };
  auto [line, column] = lineAndColumn(loc);
  SmallVector<Value> arguments = {constant(int64_t(kind))};
  arguments.append(values.begin(), values.end());
  while (arguments.size() < 6)
    arguments.push_back(constant(0));
  arguments.push_back(constant(line));
  arguments.push_back(constant(column));
  b.create<func::CallOp>(loc, abi::kBadValue, TypeRange{}, arguments);
}

} // namespace mlir::gnn

#endif // GNN_CONVERSION_RUNTIMEREPORTS_H
