//===- GNNOps.cpp - gnn operations ----------------------------------------===//
//
// Part of gnnc. Custom syntax, verifiers and folders of the gnn ops.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gnn;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

ArrayRef<int64_t> mlir::gnn::getItemShape(ShapedType feature) {
  // (A 0-d tensor has no rows; the verifiers that need rows say so.)
  ArrayRef<int64_t> shape = feature.getShape();
  return shape.empty() ? shape : shape.drop_front();
}

FailureOr<SmallVector<int64_t>>
mlir::gnn::broadcastItemShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  SmallVector<int64_t> result(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < result.size(); ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    int64_t &out = result[result.size() - 1 - i];
    if (x == 1)
      out = y;
    else if (y == 1)
      out = x;
    else if (ShapedType::isDynamic(x))
      out = y;
    else if (ShapedType::isDynamic(y) || x == y)
      out = x;
    else
      return failure();
  }
  return result;
}

static std::string shapeToString(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      [&] { os << ", "; });
  os << "]";
  return os.str();
}

static RankedTensorType getFeatureType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

bool mlir::gnn::areCompatibleItemShapes(ArrayRef<int64_t> a,
                                        ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip_equal(a, b))
    if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
      return false;
  return true;
}

static bool areCompatible(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  return areCompatibleItemShapes(a, b);
}

static StringRef describeTarget(Target target) {
  switch (target) {
  case Target::Src:
    return "source nodes";
  case Target::Dst:
    return "destination nodes";
  case Target::Edge:
    return "edges";
  }
  llvm_unreachable("unknown target");
}

namespace {
/// Checks that every feature indexed by one target (source nodes, destination
/// nodes or edges) has the same number of rows as the others and the graph.
class RowChecker {
public:
  RowChecker(Operation *op, GraphType graph) : op(op) {
    for (Target t : {Target::Src, Target::Dst, Target::Edge}) {
      int64_t n = graph ? graph.getNumRows(t) : ShapedType::kDynamic;
      known[static_cast<unsigned>(t)] = {n, "the graph"};
    }
  }

  LogicalResult check(Target target, Value feature, const Twine &name) {
    auto type = getFeatureType(feature);
    if (type.getRank() < 1)
      return op->emitOpError() << name << " must have a leading row dimension";
    int64_t rows = type.getDimSize(0);
    auto &[count, source] = known[static_cast<unsigned>(target)];
    if (ShapedType::isDynamic(rows))
      return success();
    if (ShapedType::isDynamic(count)) {
      count = rows;
      source = name.str();
      return success();
    }
    if (count != rows)
      return op->emitOpError()
             << name << " has " << rows << " rows, but " << source << " has "
             << count << " " << describeTarget(target);
    return success();
  }

private:
  Operation *op;
  std::pair<int64_t, std::string> known[3];
};
} // namespace

SmallVector<Value> mlir::gnn::cloneElementBodyResults(
    OpBuilder &b, Region &body, ValueRange args,
    function_ref<Value(Operation &, IRMapping &)> lowerOp) {
  IRMapping map;
  map.map(body.getArguments(), args);
  for (Operation &op : body.front().without_terminator()) {
    if (Value lowered = lowerOp ? lowerOp(op, map) : Value())
      map.map(op.getResult(0), lowered);
    else
      b.clone(op, map);
  }
  SmallVector<Value> results;
  for (Value v : body.front().getTerminator()->getOperands())
    results.push_back(map.lookupOrDefault(v));
  return results;
}

Value mlir::gnn::cloneElementBody(OpBuilder &b, Region &body, ValueRange args) {
  return cloneElementBodyResults(b, body, args).front();
}

int64_t mlir::gnn::saturatedElementCount(ArrayRef<int64_t> sizes) {
  uint64_t count = 1;
  for (int64_t size : sizes)
    count = llvm::SaturatingMultiply(count, uint64_t(size));
  return int64_t(std::min<uint64_t>(count, INT64_MAX));
}

bool mlir::gnn::hasBoundedRowWidth(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() < 2)
    return true;
  int64_t elements = 1;
  for (int64_t size : tensor.getShape().drop_front()) {
    if (ShapedType::isDynamic(size))
      return true;
    if (size > kMaxStaticRowElements ||
        (size > 0 && elements > kMaxStaticRowElements / size))
      return false;
    elements *= size;
  }
  return true;
}

LogicalResult mlir::gnn::verifyStaticRowWidths(Operation *op) {
  auto check = [&](Type type, const char *what, unsigned i) -> LogicalResult {
    if (hasBoundedRowWidth(type))
      return success();
    return op->emitOpError() << what << " #" << i << " has rows of more than "
                             << kMaxStaticRowElements << " elements";
  };
  for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(t, "operand", i)))
      return failure();
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(t, "result", i)))
      return failure();
  return success();
}

static LogicalResult verifyEdgeSubset(Operation *op, Value graph, Value edges) {
  if (!edges)
    return success();
  if (auto filter = edges.getDefiningOp<FilterEdgesOp>())
    if (filter.getGraph() != graph)
      return op->emitOpError()
             << "edge subset was filtered from a different graph";
  return success();
}

static LogicalResult verifyFloatFeature(Operation *op, Type type,
                                        const Twine &name) {
  if (!isa<FloatType>(getElementTypeOrSelf(type)))
    return op->emitOpError()
           << name << " must have a float element type, got " << type;
  return success();
}

/// Checks the per-row shape of a result against the one its inputs imply.
static LogicalResult verifyResultItemShape(Operation *op, Value result,
                                           ArrayRef<int64_t> expected,
                                           const Twine &name) {
  ArrayRef<int64_t> actual = getItemShape(getFeatureType(result));
  if (!areCompatible(actual, expected))
    return op->emitOpError()
           << name << " has per-row shape " << shapeToString(actual)
           << ", but its inputs give " << shapeToString(expected);
  return success();
}

/// The per-row shape a built-in message function produces.
static FailureOr<SmallVector<int64_t>>
inferMessageItemShape(Operation *op, MessageFnAttr fn, ValueRange inputs) {
  SmallVector<int64_t> shape(getItemShape(getFeatureType(inputs[0])));
  if (fn.getArity() == 2) {
    ArrayRef<int64_t> rhs = getItemShape(getFeatureType(inputs[1]));
    FailureOr<SmallVector<int64_t>> merged = broadcastItemShapes(shape, rhs);
    if (failed(merged))
      return op->emitOpError()
             << "operands of '" << fn.getName() << "' have per-row shapes "
             << shapeToString(shape) << " and " << shapeToString(rhs)
             << " that do not broadcast";
    shape = *merged;
  }
  if (fn.getOp() == BinaryOp::Dot) {
    if (shape.empty())
      return op->emitOpError() << "'" << fn.getName()
                               << "' needs features with a per-row dimension";
    shape.back() = 1;
  }
  return shape;
}

/// Verifies one use of a built-in message function: arity, element types and
/// rows. Returns the per-row shape of the message.
static FailureOr<SmallVector<int64_t>>
verifyMessage(Operation *op, MessageFnAttr fn, ValueRange inputs,
              Type resultElement, RowChecker &rows) {
  if (inputs.size() != fn.getArity())
    return op->emitOpError()
           << "'" << fn.getName() << "' takes " << fn.getArity()
           << " operand(s), got " << inputs.size();
  for (auto [i, input] : llvm::enumerate(inputs)) {
    std::string name =
        "operand #" + std::to_string(i) + " of '" + fn.getName() + "'";
    if (failed(verifyFloatFeature(op, input.getType(), name)))
      return failure();
    if (getElementTypeOrSelf(input.getType()) != resultElement)
      return op->emitOpError() << name << " has element type "
                               << getElementTypeOrSelf(input.getType())
                               << ", but the result has " << resultElement;
    if (failed(rows.check(fn.getTarget(i), input, name)))
      return failure();
  }
  return inferMessageItemShape(op, fn, inputs);
}

/// The per-row shape of an elementwise body: its inputs broadcast together.
static FailureOr<SmallVector<int64_t>>
inferElementwiseItemShape(Operation *op, ValueRange inputs) {
  SmallVector<int64_t> shape;
  for (auto [i, input] : llvm::enumerate(inputs)) {
    ArrayRef<int64_t> item = getItemShape(getFeatureType(input));
    FailureOr<SmallVector<int64_t>> merged = broadcastItemShapes(shape, item);
    if (failed(merged))
      return op->emitOpError()
             << "input #" << i << " has per-row shape " << shapeToString(item)
             << ", which does not broadcast with " << shapeToString(shape);
    shape = *merged;
  }
  return shape;
}

/// A user-defined body sees one element of each input and yields the
/// elements of the results. It must not have side effects, so that lowerings
/// may run it in any order and any number of times.
static LogicalResult verifyElementwiseBody(Operation *op, Region &body,
                                           ValueRange inputs,
                                           TypeRange yieldTypes) {
  Block &block = body.front();
  if (block.getNumArguments() != inputs.size())
    return op->emitOpError()
           << "body takes " << block.getNumArguments()
           << " argument(s), but the op has " << inputs.size() << " input(s)";
  for (auto [i, arg, input] : llvm::enumerate(block.getArguments(), inputs)) {
    Type element = getElementTypeOrSelf(input.getType());
    if (arg.getType() != element)
      return op->emitOpError()
             << "body argument #" << i << " has type " << arg.getType()
             << ", but input #" << i << " has element type " << element;
  }
  auto yield = cast<YieldOp>(block.getTerminator());
  if (yield.getValues().getTypes() != yieldTypes) {
    InFlightDiagnostic diag = op->emitOpError() << "body must yield (";
    llvm::interleaveComma(yieldTypes, diag);
    diag << "), got (";
    llvm::interleaveComma(yield.getValues().getTypes(), diag);
    return diag << ")";
  }
  for (Operation &nested : block.without_terminator()) {
    if (!isMemoryEffectFree(&nested))
      return nested.emitOpError() << "has side effects, which the body of '"
                                  << op->getName() << "' must not have";
    for (Type type : nested.getResultTypes())
      if (isa<ShapedType>(type))
        return nested.emitOpError()
               << "produces " << type << ", but the body of '" << op->getName()
               << "' computes on single elements";
  }
  return success();
}

static LogicalResult verifyIdList(Operation *op, Value ids, Value feature,
                                  const Twine &what) {
  int64_t count = getFeatureType(ids).getDimSize(0);
  int64_t rows = getFeatureType(feature).getDimSize(0);
  if (!ShapedType::isDynamic(count) && !ShapedType::isDynamic(rows) &&
      count != rows)
    return op->emitOpError() << what << " has " << rows << " rows, but "
                             << count << " ids are given";
  return success();
}

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// tagged-input ::= target ssa-use
static ParseResult
parseTaggedInput(OpAsmParser &parser,
                 SmallVectorImpl<OpAsmParser::UnresolvedOperand> &inputs,
                 SmallVectorImpl<Attribute> &targets) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (parser.parseKeyword(&name))
    return failure();
  std::optional<Target> target = symbolizeTarget(name);
  if (!target)
    return parser.emitError(loc)
           << "expected input target 'u', 'v' or 'e', got '" << name << "'";
  targets.push_back(TargetAttr::get(parser.getContext(), *target));
  return parser.parseOperand(inputs.emplace_back());
}

/// Parses the tagged inputs after their opening paren.
static ParseResult
parseTaggedInputsTail(OpAsmParser &parser,
                      SmallVectorImpl<OpAsmParser::UnresolvedOperand> &inputs,
                      ArrayAttr &roles) {
  SmallVector<Attribute> targets;
  if (failed(parser.parseOptionalRParen()) &&
      (parser.parseCommaSeparatedList(
           [&] { return parseTaggedInput(parser, inputs, targets); }) ||
       parser.parseRParen()))
    return failure();
  roles = parser.getBuilder().getArrayAttr(targets);
  return success();
}

/// tagged-inputs ::= `(` (tagged-input (`,` tagged-input)*)? `)`
static ParseResult
parseTaggedInputs(OpAsmParser &parser,
                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &inputs,
                  ArrayAttr &roles) {
  if (parser.parseLParen())
    return failure();
  return parseTaggedInputsTail(parser, inputs, roles);
}

static void printTaggedInputs(OpAsmPrinter &printer, Operation *,
                              OperandRange inputs, ArrayAttr roles) {
  printer << "(";
  llvm::interleaveComma(llvm::zip_equal(roles, inputs), printer, [&](auto it) {
    auto [role, input] = it;
    printer << stringifyTarget(cast<TargetAttr>(role).getValue()) << " "
            << input;
  });
  printer << ")";
}

/// edge-function ::= tagged-inputs
///                 | message-fn `(` ssa-use-list `)` (`then` unary-chain)?
/// unary-chain   ::= `[` unary-fn (`,` unary-fn)* `]`
static ParseResult
parseEdgeFunction(OpAsmParser &parser,
                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &inputs,
                  MessageFnAttr &fn, ArrayAttr &roles, ArrayAttr &post) {
  if (succeeded(parser.parseOptionalLParen()))
    return parseTaggedInputsTail(parser, inputs, roles);

  fn = MessageFnAttr::parseBody(parser);
  if (!fn || parser.parseOperandList(inputs, AsmParser::Delimiter::Paren))
    return failure();
  if (failed(parser.parseOptionalKeyword("then")))
    return success();
  SmallVector<Attribute> chain;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            UnaryFnAttr unary = UnaryFnAttr::parseBody(parser);
            if (!unary)
              return failure();
            chain.push_back(unary);
            return success();
          }))
    return failure();
  post = parser.getBuilder().getArrayAttr(chain);
  return success();
}

static void printEdgeFunction(OpAsmPrinter &printer, Operation *op,
                              OperandRange inputs, MessageFnAttr fn,
                              ArrayAttr roles, ArrayAttr post) {
  if (!fn) {
    printTaggedInputs(printer, op, inputs,
                      roles ? roles : ArrayAttr::get(op->getContext(), {}));
    return;
  }
  printer << fn.getName() << "(" << inputs << ")";
  if (!post)
    return;
  printer << " then [";
  llvm::interleaveComma(post, printer, [&](Attribute attr) {
    cast<UnaryFnAttr>(attr).printBody(printer);
  });
  printer << "]";
}

/// message-list ::= `[` message (`,` message)* `]`
/// message      ::= message-fn `(` ssa-use-list `)` `->` reduce-kind
static ParseResult
parseMessageList(OpAsmParser &parser,
                 SmallVectorImpl<OpAsmParser::UnresolvedOperand> &inputs,
                 ArrayAttr &messages, ArrayAttr &reducers) {
  SmallVector<Attribute> fns, kinds;
  MLIRContext *ctx = parser.getContext();
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            MessageFnAttr fn = MessageFnAttr::parseBody(parser);
            if (!fn)
              return failure();
            SMLoc operandsLoc = parser.getCurrentLocation();
            size_t before = inputs.size();
            if (parser.parseOperandList(inputs, AsmParser::Delimiter::Paren))
              return failure();
            if (inputs.size() - before != fn.getArity())
              return parser.emitError(operandsLoc)
                     << "'" << fn.getName() << "' takes " << fn.getArity()
                     << " operand(s), got " << inputs.size() - before;
            SMLoc kindLoc = parser.getCurrentLocation();
            StringRef kindName;
            if (parser.parseArrow() || parser.parseKeyword(&kindName))
              return failure();
            std::optional<ReduceKind> kind = symbolizeReduceKind(kindName);
            if (!kind)
              return parser.emitError(kindLoc)
                     << "unknown reduce function '" << kindName
                     << "'; expected sum, max, min or mean";
            fns.push_back(fn);
            kinds.push_back(ReduceKindAttr::get(ctx, *kind));
            return success();
          }))
    return failure();
  messages = ArrayAttr::get(ctx, fns);
  reducers = ArrayAttr::get(ctx, kinds);
  return success();
}

static void printMessageList(OpAsmPrinter &printer, Operation *op,
                             OperandRange inputs, ArrayAttr messages,
                             ArrayAttr reducers) {
  printer << "[";
  unsigned next = 0;
  for (auto [i, attrs] : llvm::enumerate(llvm::zip_equal(messages, reducers))) {
    auto [fnAttr, kindAttr] = attrs;
    auto fn = cast<MessageFnAttr>(fnAttr);
    if (i > 0)
      printer << ", ";
    printer << fn.getName() << "(" << inputs.slice(next, fn.getArity())
            << ") -> "
            << stringifyReduceKind(cast<ReduceKindAttr>(kindAttr).getValue());
    next += fn.getArity();
  }
  printer << "]";
}

//===----------------------------------------------------------------------===//
// Graph construction and queries
//===----------------------------------------------------------------------===//

LogicalResult GraphFromCooOp::verify() {
  int64_t srcLen = getFeatureType(getSrc()).getDimSize(0);
  int64_t dstLen = getFeatureType(getDst()).getDimSize(0);
  if (!ShapedType::isDynamic(srcLen) && !ShapedType::isDynamic(dstLen) &&
      srcLen != dstLen)
    return emitOpError() << "has " << srcLen << " source ids but " << dstLen
                         << " destination ids";
  int64_t edges = getGraph().getType().getNumEdges();
  int64_t len = ShapedType::isDynamic(srcLen) ? dstLen : srcLen;
  if (!ShapedType::isDynamic(edges) && !ShapedType::isDynamic(len) &&
      edges != len)
    return emitOpError() << "result type promises " << edges << " edges, but "
                         << len << " ids are given";
  return success();
}

static OpFoldResult foldCount(MLIRContext *ctx, int64_t count) {
  if (ShapedType::isDynamic(count))
    return {};
  return IntegerAttr::get(IndexType::get(ctx), count);
}

OpFoldResult NumSrcNodesOp::fold(FoldAdaptor) {
  return foldCount(getContext(), getGraph().getType().getNumSrc());
}

OpFoldResult NumDstNodesOp::fold(FoldAdaptor) {
  return foldCount(getContext(), getGraph().getType().getNumDst());
}

OpFoldResult NumEdgesOp::fold(FoldAdaptor) {
  return foldCount(getContext(), getGraph().getType().getNumEdges());
}

LogicalResult EdgeEndpointsOp::verify() {
  int64_t edges = getGraph().getType().getNumEdges();
  for (Value ids : {getSrc(), getDst()}) {
    int64_t len = getFeatureType(ids).getDimSize(0);
    if (!ShapedType::isDynamic(edges) && !ShapedType::isDynamic(len) &&
        edges != len)
      return emitOpError() << "result has " << len << " ids, but the graph has "
                           << edges << " edges";
  }
  return success();
}

LogicalResult InSubgraphOp::verify() {
  GraphType parent = getGraph().getType(), sub = getResult().getType();
  if (sub.getStructure() != GraphStructure::General)
    return emitOpError() << "result must be a general graph (a subset of "
                            "in-edges has no block structure)";
  if (!ShapedType::isDynamic(sub.getNumSrc()) &&
      !ShapedType::isDynamic(parent.getNumSrc()) &&
      sub.getNumSrc() != parent.getNumSrc())
    return emitOpError() << "result promises " << sub.getNumSrc()
                         << " source nodes, but sources are the parent's";
  int64_t nodes = getFeatureType(getNodes()).getDimSize(0);
  if (!ShapedType::isDynamic(sub.getNumDst()) &&
      !ShapedType::isDynamic(nodes) && sub.getNumDst() != nodes)
    return emitOpError() << "result promises " << sub.getNumDst()
                         << " destination nodes, but " << nodes
                         << " nodes are listed";
  int64_t eids = getFeatureType(getEids()).getDimSize(0);
  if (!ShapedType::isDynamic(sub.getNumEdges()) &&
      !ShapedType::isDynamic(eids) && sub.getNumEdges() != eids)
    return emitOpError() << "result promises " << sub.getNumEdges()
                         << " edges, but has " << eids << " edge ids";
  return success();
}

//===----------------------------------------------------------------------===//
// ApplyEdgesOp
//===----------------------------------------------------------------------===//

void ApplyEdgesOp::build(OpBuilder &builder, OperationState &state,
                         Type resultType, Value graph, MessageFnAttr fn,
                         ValueRange inputs, ArrayAttr post, Value edges) {
  build(builder, state, resultType, graph, inputs, edges, fn,
        /*roles=*/ArrayAttr(), post && !post.empty() ? post : ArrayAttr());
}

Target ApplyEdgesOp::getInputTarget(unsigned i) {
  if (MessageFnAttr fn = getFnAttr())
    return fn.getTarget(i);
  return cast<TargetAttr>((*getRoles())[i]).getValue();
}

LogicalResult ApplyEdgesOp::verify() {
  auto graph = getGraph().getType();
  if (failed(verifyEdgeSubset(*this, getGraph(), getEdges())))
    return failure();
  RowChecker rows(*this, graph);
  auto resultType = getFeatureType(getResult());
  Type resultElement = resultType.getElementType();
  FailureOr<SmallVector<int64_t>> itemShape;

  if (MessageFnAttr fn = getFnAttr()) {
    if (hasBody())
      return emitOpError() << "has both a built-in function and a body";
    if (getRoles())
      return emitOpError() << "built-in functions determine input targets";
    itemShape = verifyMessage(*this, fn, getInputs(), resultElement, rows);
  } else {
    if (!hasBody())
      return emitOpError() << "needs a built-in message function or a body";
    if (getPost())
      return emitOpError()
             << "takes elementwise functions only after a built-in function";
    if (!getRoles() || getRoles()->size() != getInputs().size())
      return emitOpError() << "needs one target per input";
    if (getInputs().empty())
      return emitOpError() << "body needs at least one input";
    for (auto [i, input] : llvm::enumerate(getInputs()))
      if (failed(rows.check(getInputTarget(i), input,
                            "input #" + std::to_string(i))))
        return failure();
    itemShape = inferElementwiseItemShape(*this, getInputs());
  }
  if (failed(itemShape))
    return failure();
  if (getPost()) {
    if (getPost()->empty())
      return emitOpError() << "has an empty elementwise chain";
    if (failed(verifyFloatFeature(*this, resultType, "result")))
      return failure();
  }
  if (failed(rows.check(Target::Edge, getResult(), "result")))
    return failure();
  return verifyResultItemShape(*this, getResult(), *itemShape, "result");
}

LogicalResult ApplyEdgesOp::verifyRegions() {
  if (!hasBody())
    return success();
  return verifyElementwiseBody(
      *this, getBody(), getInputs(),
      TypeRange{getFeatureType(getResult()).getElementType()});
}

OpFoldResult ApplyEdgesOp::fold(FoldAdaptor) {
  // copy_e of a whole edge feature is that feature.
  MessageFnAttr fn = getFnAttr();
  if (fn && fn.getOp() == BinaryOp::Copy && fn.getLhs() == Target::Edge &&
      !getPost() && !getEdges() &&
      getInputs()[0].getType() == getResult().getType())
    return getInputs()[0];
  return {};
}

//===----------------------------------------------------------------------===//
// SendAndRecvOp
//===----------------------------------------------------------------------===//

OperandRange SendAndRecvOp::getMessageInputs(unsigned i) {
  unsigned start = 0;
  for (unsigned j = 0; j < i; ++j)
    start += getMessage(j).getArity();
  return getInputs().slice(start, getMessage(i).getArity());
}

LogicalResult SendAndRecvOp::verify() {
  if (failed(verifyEdgeSubset(*this, getGraph(), getEdges())))
    return failure();
  size_t count = getMessages().size();
  if (getReducers().size() != count)
    return emitOpError() << "has " << count << " message functions but "
                         << getReducers().size() << " reduce functions";
  if (getNumResults() != count)
    return emitOpError() << "has " << count << " message/reduce pairs but "
                         << getNumResults() << " results";
  if (count == 0)
    return emitOpError() << "needs at least one message/reduce pair";
  unsigned arity = 0;
  for (unsigned i = 0; i < count; ++i)
    arity += getMessage(i).getArity();
  if (arity != getInputs().size())
    return emitOpError() << "message functions take " << arity
                         << " operands, got " << getInputs().size();

  RowChecker rows(*this, getGraph().getType());
  for (unsigned i = 0; i < count; ++i) {
    Value result = getResult(i);
    std::string name = "result #" + std::to_string(i);
    Type element = getFeatureType(result).getElementType();
    FailureOr<SmallVector<int64_t>> itemShape =
        verifyMessage(*this, getMessage(i), getMessageInputs(i), element, rows);
    if (failed(itemShape) || failed(rows.check(Target::Dst, result, name)) ||
        failed(verifyResultItemShape(*this, result, *itemShape, name)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  if (failed(verifyEdgeSubset(*this, getGraph(), getEdges())))
    return failure();
  RowChecker rows(*this, getGraph().getType());
  auto inputType = getFeatureType(getInput());
  if (failed(verifyFloatFeature(*this, inputType, "input")) ||
      failed(rows.check(Target::Edge, getInput(), "input")) ||
      failed(rows.check(Target::Dst, getResult(), "result")))
    return failure();
  if (inputType.getElementType() !=
      getFeatureType(getResult()).getElementType())
    return emitOpError() << "result element type differs from the input's";
  return verifyResultItemShape(*this, getResult(), getItemShape(inputType),
                               "result");
}

//===----------------------------------------------------------------------===//
// ApplyNodesOp
//===----------------------------------------------------------------------===//

/// Inputs of node-wise ops share one node space.
static LogicalResult verifyNodeRows(Operation *op, ValueRange inputs,
                                    Value result) {
  RowChecker rows(op, GraphType());
  for (auto [i, input] : llvm::enumerate(inputs))
    if (failed(rows.check(Target::Dst, input, "input #" + std::to_string(i))))
      return failure();
  return result ? rows.check(Target::Dst, result, "result") : success();
}

LogicalResult ApplyNodesOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  if (getResults().empty())
    return emitOpError() << "needs at least one result";
  if (failed(verifyNodeRows(*this, getInputs(), getResult(0))))
    return failure();
  FailureOr<SmallVector<int64_t>> itemShape =
      inferElementwiseItemShape(*this, getInputs());
  if (failed(itemShape) || failed(verifyResultItemShape(
                               *this, getResult(0), *itemShape,
                               getNumResults() == 1 ? "result" : "result #0")))
    return failure();
  // One element loop writes every result at the same position.
  ArrayRef<int64_t> shape = getFeatureType(getResult(0)).getShape();
  for (unsigned i = 1; i < getNumResults(); ++i)
    if (getFeatureType(getResult(i)).getShape() != shape)
      return emitOpError() << "result #" << i << " has shape "
                           << shapeToString(
                                  getFeatureType(getResult(i)).getShape())
                           << ", but result #0 has " << shapeToString(shape);
  return success();
}

LogicalResult ApplyNodesOp::verifyRegions() {
  SmallVector<Type> elements;
  for (Value result : getResults())
    elements.push_back(getFeatureType(result).getElementType());
  return verifyElementwiseBody(*this, getBody(), getInputs(), elements);
}

//===----------------------------------------------------------------------===//
// FilterNodesOp / FilterEdgesOp
//===----------------------------------------------------------------------===//

/// A predicate sees one element per node or edge.
static LogicalResult verifyPredicateInputs(Operation *op, ValueRange inputs) {
  if (inputs.empty())
    return op->emitOpError() << "needs at least one input";
  for (auto [i, input] : llvm::enumerate(inputs)) {
    ArrayRef<int64_t> item = getItemShape(getFeatureType(input));
    if (!llvm::all_of(item, [](int64_t d) { return d == 1; }))
      return op->emitOpError()
             << "input #" << i << " has per-row shape " << shapeToString(item)
             << ", but a predicate needs one element per row";
  }
  return success();
}

LogicalResult FilterNodesOp::verify() {
  if (failed(verifyPredicateInputs(*this, getInputs())))
    return failure();
  return verifyNodeRows(*this, getInputs(), Value());
}

LogicalResult FilterNodesOp::verifyRegions() {
  return verifyElementwiseBody(*this, getBody(), getInputs(),
                               TypeRange{IntegerType::get(getContext(), 1)});
}

LogicalResult FilterEdgesOp::verify() {
  if (failed(verifyEdgeSubset(*this, getGraph(), getCandidates())) ||
      failed(verifyPredicateInputs(*this, getInputs())))
    return failure();
  if (getRoles().size() != getInputs().size())
    return emitOpError() << "needs one target per input";
  RowChecker rows(*this, getGraph().getType());
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (failed(rows.check(cast<TargetAttr>(getRoles()[i]).getValue(), input,
                          "input #" + std::to_string(i))))
      return failure();
  return success();
}

LogicalResult FilterEdgesOp::verifyRegions() {
  return verifyElementwiseBody(*this, getBody(), getInputs(),
                               TypeRange{IntegerType::get(getContext(), 1)});
}

//===----------------------------------------------------------------------===//
// FusedAttentionOp
//===----------------------------------------------------------------------===//

/// Clamp bounds: both or neither, in order.
static LogicalResult verifyClampBounds(Operation *op, std::optional<APFloat> lo,
                                       std::optional<APFloat> hi) {
  if (lo.has_value() != hi.has_value())
    return op->emitOpError() << "needs both clamp bounds or neither";
  if (lo && *lo > *hi)
    return op->emitOpError() << "clamp bounds are reversed";
  return success();
}

/// What gnn.fused_attention and its gradient share: float q, k, v with
/// rows along the graph, one element type and compatible per-row shapes,
/// and per-destination `outputs` (the results, or their gradients, named
/// `outputName #i`) of the shapes the attention gives.
/// Output `i` of an attention over `query` and `value` (0: the output, 1:
/// the log-sum-exp or the weight sums), or a value of that shape: one row
/// per destination, the query's element type.
static LogicalResult verifyAttentionOutput(Operation *op, RowChecker &rows,
                                           Value query, Value value,
                                           Value output, unsigned i,
                                           StringRef name) {
  if (getFeatureType(output).getElementType() !=
      getFeatureType(query).getElementType())
    return op->emitOpError()
           << name << " element type differs from the query's";
  SmallVector<SmallVector<int64_t>, 2> itemShapes =
      getAttentionResultItemShapes(getItemShape(getFeatureType(query)),
                                   getItemShape(getFeatureType(value)));
  if (failed(rows.check(Target::Dst, output, name)) ||
      failed(verifyResultItemShape(op, output, itemShapes[i], name)))
    return failure();
  return success();
}

static LogicalResult verifyAttentionFeatures(Operation *op, RowChecker &rows,
                                             Value query, Value key,
                                             Value value, ValueRange outputs,
                                             StringRef outputName) {
  Type element = getFeatureType(query).getElementType();
  for (auto [feature, name, target] :
       {std::make_tuple(query, "query", Target::Dst),
        std::make_tuple(key, "key", Target::Src),
        std::make_tuple(value, "value", Target::Src)}) {
    auto type = getFeatureType(feature);
    if (failed(verifyFloatFeature(op, type, name)) ||
        failed(rows.check(target, feature, name)))
      return failure();
    if (type.getElementType() != element)
      return op->emitOpError()
             << name << " element type differs from the query's";
    if (type.getRank() < 2)
      return op->emitOpError() << name << " needs a per-row feature dimension";
  }
  // query and key: [N, heads..., d]; value: [N, heads..., dv].
  ArrayRef<int64_t> q = getItemShape(getFeatureType(query));
  ArrayRef<int64_t> k = getItemShape(getFeatureType(key));
  ArrayRef<int64_t> v = getItemShape(getFeatureType(value));
  std::string why;
  if (failed(verifyAttentionInputShapes(q, k, v, &why)))
    return op->emitOpError() << why;
  for (auto [i, output] : llvm::enumerate(outputs))
    if (failed(verifyAttentionOutput(op, rows, query, value, output, i,
                                     (outputName + " #" + Twine(i)).str())))
      return failure();
  return success();
}

LogicalResult FusedAttentionOp::verify() {
  if (failed(verifyEdgeSubset(*this, getGraph(), getEdges())) ||
      failed(verifyClampBounds(*this, getClampLo(), getClampHi())))
    return failure();
  // Normalized: the output and, optionally, its log-sum-exp.
  unsigned count = getNumResults();
  if (getNormalize() ? (count < 1 || count > 2) : count != 2)
    return emitOpError() << "has " << count << " results, but "
                         << (getNormalize()
                                 ? "a normalized attention has 1 (the output) "
                                   "or 2 (and its log-sum-exp)"
                                 : "an unnormalized attention has 2");
  RowChecker rows(*this, getGraph().getType());
  return verifyAttentionFeatures(*this, rows, getQuery(), getKey(), getValue(),
                                 getResults(), "result");
}

LogicalResult FusedAttentionGradOp::verify() {
  if (failed(verifyEdgeSubset(*this, getGraph(), getEdges())) ||
      failed(verifyClampBounds(*this, getClampLo(), getClampHi())))
    return failure();
  unsigned count = getGrads().size();
  if (getNormalize() ? (count < 1 || count > 2) : count != 2)
    return emitOpError() << "takes "
                         << (getNormalize()
                                 ? "1 or 2 result gradients (of the "
                                   "output and its log-sum-exp)"
                                 : "2 result gradients (of wv and z)")
                         << ", got " << count;
  if (getSavedLse() && !getNormalize())
    return emitOpError()
           << "takes the forward's log-sum-exp only with `normalize`";
  RowChecker rows(*this, getGraph().getType());
  if (failed(verifyAttentionFeatures(*this, rows, getQuery(), getKey(),
                                     getValue(), getGrads(),
                                     "result gradient")))
    return failure();
  Type element = getFeatureType(getQuery()).getElementType();
  if (Value lse = getSavedLse())
    if (failed(verifyAttentionOutput(*this, rows, getQuery(), getValue(), lse,
                                     1, "saved log-sum-exp")))
      return failure();
  SmallVector<Value> inputs = {getQuery(), getKey(), getValue()};
  for (auto [result, input] : llvm::zip(getResults(), inputs))
    if (!areCompatible(getFeatureType(result).getShape(),
                       getFeatureType(input).getShape()) ||
        getFeatureType(result).getElementType() != element)
      return emitOpError() << "gradient type " << result.getType()
                           << " differs from its input's " << input.getType();
  return success();
}

LogicalResult mlir::gnn::verifyAttentionInputShapes(ArrayRef<int64_t> q,
                                                    ArrayRef<int64_t> k,
                                                    ArrayRef<int64_t> v,
                                                    std::string *why) {
  auto fail = [&](const Twine &message) {
    if (why)
      *why = message.str();
    return failure();
  };
  if (q.empty() || k.empty() || v.empty())
    return fail("query, key and value need a per-row feature dimension");
  if (!areCompatible(q, k))
    return fail("query per-row shape " + shapeToString(q) +
                " differs from the key's " + shapeToString(k));
  if (!areCompatible(q.drop_back(), v.drop_back()))
    return fail("value per-row shape " + shapeToString(v) +
                " does not have the query's heads " +
                shapeToString(q.drop_back()));
  return success();
}

SmallVector<SmallVector<int64_t>, 2>
mlir::gnn::getAttentionResultItemShapes(ArrayRef<int64_t> q,
                                        ArrayRef<int64_t> v) {
  SmallVector<int64_t> sum(v), weights(q.drop_back());
  weights.push_back(1);
  return {sum, weights};
}

//===----------------------------------------------------------------------===//
// GatherRowsOp / ScatterRowsOp
//===----------------------------------------------------------------------===//

/// An error unless each of `values` (named by `names`) has a leading row
/// dimension.
static LogicalResult verifyHaveRows(Operation *op, ValueRange values,
                                    ArrayRef<StringRef> names) {
  for (auto [value, name] : llvm::zip_equal(values, names))
    if (getFeatureType(value).getRank() < 1)
      return op->emitOpError() << name << " must have a leading row dimension";
  return success();
}

LogicalResult GatherRowsOp::verify() {
  if (failed(verifyHaveRows(*this, {getSource(), getResult()},
                            {"source", "result"})))
    return failure();
  auto source = getFeatureType(getSource());
  auto result = getFeatureType(getResult());
  if (source.getElementType() != result.getElementType())
    return emitOpError() << "result element type differs from the source's";
  if (failed(verifyResultItemShape(*this, getResult(), getItemShape(source),
                                   "result")))
    return failure();
  return verifyIdList(*this, getIds(), getResult(), "result");
}

LogicalResult ScatterRowsOp::verify() {
  if (failed(verifyHaveRows(*this, {getSource(), getDest(), getResult()},
                            {"source", "destination", "result"})))
    return failure();
  auto source = getFeatureType(getSource());
  auto dest = getFeatureType(getDest());
  if (source.getElementType() != dest.getElementType())
    return emitOpError() << "source element type differs from the "
                            "destination's";
  if (getAdd() && !isa<FloatType>(dest.getElementType()))
    return emitOpError() << "add needs a float element type, got "
                         << dest.getElementType();
  if (failed(verifyResultItemShape(*this, getSource(), getItemShape(dest),
                                   "source")))
    return failure();
  if (!areCompatible(dest.getShape(), getFeatureType(getResult()).getShape()) ||
      dest.getElementType() != getFeatureType(getResult()).getElementType())
    return emitOpError() << "result type " << getResult().getType()
                         << " differs from the destination type " << dest;
  return verifyIdList(*this, getIds(), getSource(), "source");
}

//===----------------------------------------------------------------------===//
// Dense node-wise layers
//===----------------------------------------------------------------------===//

/// Static sizes `a` and `b` must agree; dynamic sizes are checked at run time.
static LogicalResult verifySameSize(Operation *op, int64_t a, int64_t b,
                                    const Twine &what) {
  if (ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b)
    return success();
  return op->emitOpError() << what << " (" << a << " vs " << b << ")";
}

/// The result of a row-wise layer has the input's rows.
static LogicalResult verifyRowwise(Operation *op, Value input, Value result,
                                   int64_t width) {
  if (failed(verifyNodeRows(op, input, result)))
    return failure();
  return verifySameSize(op, getFeatureType(result).getDimSize(1), width,
                        "result width differs from the layer's");
}

/// An op's optional addend has the shape of the result it is added to.
static LogicalResult verifyAddend(Operation *op, Value addend, Value result) {
  if (!addend || areCompatible(getFeatureType(addend).getShape(),
                               getFeatureType(result).getShape()))
    return success();
  return op->emitOpError() << "addend shape "
                           << shapeToString(getFeatureType(addend).getShape())
                           << " differs from the result's "
                           << shapeToString(getFeatureType(result).getShape());
}

LogicalResult LinearOp::verify() {
  auto input = getFeatureType(getInput());
  auto weight = getFeatureType(getWeight());
  if (failed(verifyAddend(*this, getAddend(), getResult())))
    return failure();
  if (getTransposeWeight()) {
    if (getBias())
      return emitOpError() << "with transpose_weight takes no bias";
    if (failed(verifySameSize(*this, input.getDimSize(1), weight.getDimSize(0),
                              "input width differs from the weight's rows")))
      return failure();
    return verifyRowwise(*this, getInput(), getResult(), weight.getDimSize(1));
  }
  if (failed(verifySameSize(*this, input.getDimSize(1), weight.getDimSize(1),
                            "input width differs from the weight's columns")))
    return failure();
  if (getBias() &&
      failed(verifySameSize(*this, getFeatureType(getBias()).getDimSize(0),
                            weight.getDimSize(0),
                            "bias size differs from the weight's rows")))
    return failure();
  return verifyRowwise(*this, getInput(), getResult(), weight.getDimSize(0));
}

LogicalResult OuterSumOp::verify() {
  auto lhs = getFeatureType(getLhs()), rhs = getFeatureType(getRhs());
  if (!areCompatible(lhs.getShape().take_front(), rhs.getShape().take_front()))
    return emitOpError() << "operands have "
                         << shapeToString({lhs.getDimSize(0)}) << " and "
                         << shapeToString({rhs.getDimSize(0)}) << " rows";
  auto expected = {lhs.getDimSize(1), rhs.getDimSize(1)};
  if (!areCompatible(getFeatureType(getResult()).getShape(), expected))
    return emitOpError() << "result shape "
                         << shapeToString(
                                getFeatureType(getResult()).getShape())
                         << " differs from the operands' row widths "
                         << shapeToString(expected);
  return success();
}

LogicalResult LayerNormOp::verify() {
  int64_t width = getFeatureType(getInput()).getDimSize(1);
  if (failed(verifySameSize(*this, getFeatureType(getWeight()).getDimSize(0),
                            width,
                            "weight size differs from the input width")) ||
      failed(verifySameSize(*this, getFeatureType(getBias()).getDimSize(0),
                            width, "bias size differs from the input width")))
    return failure();
  if (!(getEps().convertToDouble() > 0.0))
    return emitOpError() << "needs a positive eps";
  return verifyRowwise(*this, getInput(), getResult(), width);
}

LogicalResult LayerNormGradOp::verify() {
  int64_t width = getFeatureType(getInput()).getDimSize(1);
  if (failed(verifySameSize(*this, getFeatureType(getWeight()).getDimSize(0),
                            width, "weight size differs from the input width")))
    return failure();
  if (!(getEps().convertToDouble() > 0.0))
    return emitOpError() << "needs a positive eps";
  // The gradient has the input's shape, as both results do.
  if (failed(verifyNodeRows(*this, {getInput(), getGrad()}, Value())) ||
      failed(verifySameSize(*this, getFeatureType(getGrad()).getDimSize(1),
                            width, "gradient width differs from the input's")))
    return failure();
  for (Value v : {getInputGrad(), getNormalizedGrad()})
    if (failed(verifyRowwise(*this, getInput(), v, width)))
      return failure();
  return verifyAddend(*this, getAddend(), getInputGrad());
}

/// `small` broadcasts to `large`: aligned from the right, each of its dims
/// is a static 1 or `large`'s.
static LogicalResult verifyBroadcastsTo(Operation *op, RankedTensorType small,
                                        RankedTensorType large,
                                        StringRef smallName,
                                        StringRef largeName) {
  if (small.getRank() > large.getRank())
    return op->emitOpError()
           << smallName << " rank " << small.getRank() << " exceeds the "
           << largeName << "'s " << large.getRank();
  int64_t offset = large.getRank() - small.getRank();
  for (auto [i, size] : llvm::enumerate(small.getShape())) {
    int64_t to = large.getDimSize(offset + i);
    if (size != 1 && !areCompatible({size}, {to}))
      return op->emitOpError()
             << smallName << " dimension " << i << " is "
             << shapeToString({size}) << ": it must be 1 or the " << largeName
             << "'s " << shapeToString({to});
  }
  return success();
}

LogicalResult SumToOp::verify() {
  auto in = getFeatureType(getInput());
  auto out = getFeatureType(getResult());
  if (failed(verifyFloatFeature(*this, in, "input")))
    return failure();
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "result element type differs from the input's";
  return verifyBroadcastsTo(*this, out, in, "result", "input");
}

OpFoldResult SumToOp::fold(FoldAdaptor) {
  // Equal types: a result dim of 1 is then a static 1 of the input, so
  // nothing is summed.
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult BroadcastOp::verify() {
  auto in = getFeatureType(getInput());
  auto like = getFeatureType(getLike());
  auto out = getType();
  if (out.getElementType() != in.getElementType())
    return emitOpError() << "result element type differs from the input's";
  if (out.getRank() != like.getRank() ||
      !areCompatible(out.getShape(), like.getShape()))
    return emitOpError() << "result shape " << shapeToString(out.getShape())
                         << " differs from the shape of 'like' "
                         << shapeToString(like.getShape());
  return verifyBroadcastsTo(*this, in, out, "input", "result");
}

OpFoldResult BroadcastOp::fold(FoldAdaptor) {
  // Equal types: every dim is a static 1 or the result's own size.
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

static LogicalResult verifyDropoutRate(Operation *op, APFloat rate) {
  double r = rate.convertToDouble();
  if (!(r >= 0.0 && r < 1.0))
    return op->emitOpError() << "rate must be in [0, 1), got " << r;
  return success();
}

LogicalResult DropoutOp::verify() {
  if (failed(verifyFloatFeature(*this, getInput().getType(), "input")))
    return failure();
  return verifyDropoutRate(*this, getRate());
}

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  // Nothing is dropped and nothing scaled.
  if (getRate().isZero())
    return getInput();
  return {};
}

LogicalResult DropoutElementOp::verify() {
  return verifyDropoutRate(*this, getRate());
}

OpFoldResult DropoutElementOp::fold(FoldAdaptor) {
  if (getRate().isZero())
    return getInput();
  return {};
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyRowwise(*this, getInput(), getResult(),
                       getFeatureType(getInput()).getDimSize(1));
}

static LogicalResult verifyTapeValue(Operation *op, Type type) {
  if (!TapeType::canHold(type))
    return op->emitOpError()
           << "cannot keep a " << type
           << " on a tape (ranked tensors without an encoding, of rank at "
              "most "
           << TapeType::kMaxRank << ", of float, integer or index elements)";
  return success();
}

LogicalResult TapeCreateOp::verify() {
  // Its lowering keeps what pops need at the function's entry.
  if (!(*this)->getParentOfType<FunctionOpInterface>())
    return emitOpError() << "must be inside a function (a tape lives in the "
                            "body of one)";
  // No use after the free, no second free: the free comes last in the
  // creation's block, after every use (or the op holding it).
  Operation *free = nullptr;
  for (Operation *user : getTape().getUsers()) {
    if (!isa<TapeFreeOp>(user))
      continue;
    if (free)
      return emitOpError() << "tape is freed twice";
    free = user;
  }
  if (!free)
    return success();
  if (free->getBlock() != getOperation()->getBlock())
    return emitOpError() << "tape must be freed in the block that creates it";
  for (Operation *user : getTape().getUsers()) {
    Operation *inBlock = free->getBlock()->findAncestorOpInBlock(*user);
    if (user != free && (!inBlock || !inBlock->isBeforeInBlock(free)))
      return emitOpError() << "tape is used after it is freed";
  }
  return success();
}

LogicalResult TapePushOp::verify() {
  return verifyTapeValue(*this, getValue().getType());
}

LogicalResult TapePopOp::verify() {
  return verifyTapeValue(*this, getValue().getType());
}

LogicalResult ResultReadyOp::verify() {
  if (!(*this)->getParentOfType<FunctionOpInterface>())
    return emitOpError() << "must be inside a function (it announces one of "
                            "the function's results)";
  // The host receives the value's bytes as the runtime copies a tape's.
  if (!TapeType::canHold(getValue().getType()))
    return emitOpError()
           << "cannot hand a " << getValue().getType()
           << " to the host (ranked tensors without an encoding, of rank at "
              "most "
           << TapeType::kMaxRank << ", of float, integer or index elements)";
  return success();
}

#define GET_OP_CLASSES
#include "GNN/IR/GNNOps.cpp.inc"
