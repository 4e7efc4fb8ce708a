//===- GNNAttrs.cpp - gnn enums and attributes ----------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNAttrs.h"
#include "GNN/IR/GNNDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::gnn;

#include "GNN/IR/GNNEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "GNN/IR/GNNAttrs.cpp.inc"

void GNNDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "GNN/IR/GNNAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// MessageFnAttr
//===----------------------------------------------------------------------===//

std::string MessageFnAttr::getName() const {
  if (getOp() == BinaryOp::Copy)
    return ("copy_" + stringifyTarget(getLhs())).str();
  return (stringifyTarget(getLhs()) + "_" + stringifyBinaryOp(getOp()) + "_" +
          stringifyTarget(getRhs()))
      .str();
}

MessageFnAttr MessageFnAttr::parseName(MLIRContext *ctx, StringRef name) {
  SmallVector<StringRef, 3> parts;
  name.split(parts, '_');
  if (parts.size() == 2 && parts[0] == "copy") {
    std::optional<Target> target = symbolizeTarget(parts[1]);
    if (!target)
      return {};
    return MessageFnAttr::get(ctx, BinaryOp::Copy, *target, *target);
  }
  if (parts.size() != 3)
    return {};
  std::optional<Target> lhs = symbolizeTarget(parts[0]);
  std::optional<BinaryOp> op = symbolizeBinaryOp(parts[1]);
  std::optional<Target> rhs = symbolizeTarget(parts[2]);
  if (!lhs || !op || !rhs || *op == BinaryOp::Copy || *lhs == *rhs)
    return {};
  return MessageFnAttr::get(ctx, *op, *lhs, *rhs);
}

LogicalResult
MessageFnAttr::verify(function_ref<InFlightDiagnostic()> emitError, BinaryOp op,
                      Target lhs, Target rhs) {
  if (op == BinaryOp::Copy && lhs != rhs)
    return emitError() << "copy message functions have a single target";
  if (op != BinaryOp::Copy && lhs == rhs)
    return emitError() << "binary message functions combine two distinct "
                          "targets, got '"
                       << stringifyTarget(lhs) << "' twice";
  return success();
}

MessageFnAttr MessageFnAttr::parseBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  if (parser.parseKeywordOrString(&name))
    return {};
  MessageFnAttr fn = parseName(parser.getContext(), name);
  if (!fn)
    parser.emitError(loc) << "unknown message function '" << name << "'";
  return fn;
}

Attribute MessageFnAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  MessageFnAttr fn = parseBody(parser);
  if (!fn || parser.parseGreater())
    return {};
  return fn;
}

void MessageFnAttr::print(AsmPrinter &printer) const {
  printer << "<" << getName() << ">";
}

//===----------------------------------------------------------------------===//
// UnaryFnAttr
//===----------------------------------------------------------------------===//

unsigned UnaryFnAttr::getNumConstants(UnaryKind kind) {
  switch (kind) {
  case UnaryKind::Scale:
    return 1;
  case UnaryKind::Clamp:
    return 2;
  case UnaryKind::Exp:
  case UnaryKind::Relu:
  case UnaryKind::Neg:
    return 0;
  }
  llvm_unreachable("unknown unary kind");
}

LogicalResult UnaryFnAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  UnaryKind kind, APFloat a, APFloat b) {
  if (!a.isFinite() || !b.isFinite())
    return emitError() << "constants of '" << stringifyUnaryKind(kind)
                       << "' must be finite";
  if (kind == UnaryKind::Clamp && b.compare(a) == APFloat::cmpLessThan)
    return emitError() << "clamp bounds are reversed: lower bound "
                       << a.convertToDouble() << " exceeds upper bound "
                       << b.convertToDouble();
  return success();
}

UnaryFnAttr UnaryFnAttr::parseBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseKeyword(&name))
    return {};
  std::optional<UnaryKind> kind = symbolizeUnaryKind(name);
  if (!kind) {
    parser.emitError(loc) << "unknown elementwise function '" << name << "'";
    return {};
  }
  double constants[2] = {0.0, 0.0};
  unsigned count = getNumConstants(*kind);
  if (count > 0) {
    if (parser.parseLParen())
      return {};
    for (unsigned i = 0; i < count; ++i)
      if ((i > 0 && parser.parseComma()) || parser.parseFloat(constants[i]))
        return {};
    if (parser.parseRParen())
      return {};
  }
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    *kind, APFloat(constants[0]), APFloat(constants[1]));
}

void UnaryFnAttr::printBody(AsmPrinter &printer) const {
  printer << stringifyUnaryKind(getKind());
  unsigned count = getNumConstants(getKind());
  if (count == 0)
    return;
  printer << "(";
  printer.printFloat(getA());
  if (count == 2) {
    printer << ", ";
    printer.printFloat(getB());
  }
  printer << ")";
}

Attribute UnaryFnAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  UnaryFnAttr fn = parseBody(parser);
  if (!fn || parser.parseGreater())
    return {};
  return fn;
}

void UnaryFnAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer);
  printer << ">";
}

double UnaryFnAttr::apply(double x) const {
  switch (getKind()) {
  case UnaryKind::Scale:
    return x * getA().convertToDouble();
  case UnaryKind::Clamp:
    return std::min(std::max(x, getA().convertToDouble()),
                    getB().convertToDouble());
  case UnaryKind::Exp:
    return std::exp(x);
  case UnaryKind::Relu:
    return x > 0.0 ? x : 0.0;
  case UnaryKind::Neg:
    return -x;
  }
  llvm_unreachable("unknown unary kind");
}
