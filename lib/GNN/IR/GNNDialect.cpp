//===- GNNDialect.cpp - the gnn dialect -----------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNDialect.h"
#include "GNN/IR/GNNOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::gnn;

#include "GNN/IR/GNNOpsDialect.cpp.inc"

void GNNDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "GNN/IR/GNNOps.cpp.inc"
      >();
}

Operation *GNNDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  // Counts fold to index constants.
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

static LogicalResult verifyName(Operation *op, NamedAttribute attr) {
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' must be a non-empty string";
  return success();
}

LogicalResult GNNDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kAlignedRowsAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) ||
        op->getName().getStringRef() != "vector.load")
      return op->emitError()
             << "'" << name << "' must be a unit attribute of a vector.load";
    return success();
  }
  if (name != kKernelAttrName)
    return op->emitError() << "'" << name
                           << "' is not an operation attribute of the gnn "
                              "dialect (gnn.kernel, gnn.aligned_rows)";
  if (!isa<UnitAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
    return op->emitError() << "'" << name
                           << "' must be a unit attribute of a function";
  return success();
}

/// Whether `op` is a function lowered past the func dialect (an LLVM
/// function), whose signature no longer carries what gnn attributes name.
static bool isLoweredPastFunc(Operation *op) {
  return op->getName().getDialectNamespace() != "func";
}

LogicalResult GNNDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned region,
                                                   unsigned arg,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kNameAttrName)
    return verifyName(op, attr);
  if (name == kDifferentiableAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a unit attribute";
    Region &body = op->getRegion(region);
    Type type = body.empty() ? Type() : body.getArgument(arg).getType();
    if (auto function = dyn_cast<FunctionOpInterface>(op))
      type = function.getArgumentTypes()[arg];
    // A float tensor, or the buffer it becomes in bufferization; lowered
    // further, arguments are no longer typed by element.
    auto shaped = dyn_cast_or_null<ShapedType>(type);
    if (!isLoweredPastFunc(op) &&
        (!shaped || !isa<FloatType>(shaped.getElementType())))
      return op->emitError()
             << "'" << name << "' marks argument #" << arg << " of type "
             << type << ", which is not a float tensor";
    return success();
  }
  if (name == kRuntimeContextAttrName || name == kReadOnlyAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a unit attribute";
    return success();
  }
  return op->emitError() << "'" << name
                         << "' is not an argument attribute of the gnn "
                            "dialect (gnn.name, gnn.differentiable, "
                            "gnn.runtime_context, gnn.read_only)";
}

LogicalResult GNNDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                      unsigned,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kNameAttrName)
    return verifyName(op, attr);
  if (name != kUpdatesAttrName)
    return op->emitError() << "'" << name
                           << "' is not a result attribute of the gnn "
                              "dialect (gnn.name, gnn.updates)";
  if (failed(verifyName(op, attr)))
    return failure();
  // The updated argument must exist. (Lowered further, memref arguments
  // lose their attributes; a single result keeps its own.)
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function || isLoweredPastFunc(op))
    return success();
  StringAttr updated = cast<StringAttr>(attr.getValue());
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
    if (function.getArgAttr(i, kNameAttrName) == updated)
      return success();
  return op->emitError() << "'" << name << "' names '" << updated.getValue()
                         << "', which is no argument's gnn.name";
}
