//===- GNNTypes.cpp - gnn types -------------------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNTypes.h"
#include "GNN/IR/GNNDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gnn;

#define GET_TYPEDEF_CLASSES
#include "GNN/IR/GNNOpsTypes.cpp.inc"

void GNNDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "GNN/IR/GNNOpsTypes.cpp.inc"
      >();
}

int64_t GraphType::getNumRows(Target target) const {
  switch (target) {
  case Target::Src:
    return getNumSrc();
  case Target::Dst:
    return getNumDst();
  case Target::Edge:
    return getNumEdges();
  }
  llvm_unreachable("unknown target");
}

LogicalResult GraphType::verify(function_ref<InFlightDiagnostic()> emitError,
                                GraphStructure structure, int64_t numSrc,
                                int64_t numDst, int64_t numEdges) {
  for (auto [name, count] :
       {std::make_pair("src", numSrc), std::make_pair("dst", numDst),
        std::make_pair("edges", numEdges)})
    if (count < 0 && !ShapedType::isDynamic(count))
      return emitError() << "graph '" << name
                         << "' count must be non-negative, got " << count;
  bool homogeneous = structure == GraphStructure::Complete ||
                     structure == GraphStructure::Causal;
  if (homogeneous && !ShapedType::isDynamic(numSrc) &&
      !ShapedType::isDynamic(numDst) && numSrc != numDst)
    return emitError() << "a " << stringifyGraphStructure(structure)
                       << " graph has one node space, but src = " << numSrc
                       << " and dst = " << numDst;
  // Every structure except `general` is a set of dense blocks, so a static
  // edge count bounds from below and above by the node counts.
  if (!ShapedType::isDynamic(numSrc) && !ShapedType::isDynamic(numDst) &&
      !ShapedType::isDynamic(numEdges) &&
      structure != GraphStructure::General && numEdges > numSrc * numDst)
    return emitError() << "a " << stringifyGraphStructure(structure)
                       << " graph of " << numSrc << " x " << numDst
                       << " nodes cannot have " << numEdges << " edges";
  return success();
}

Type GraphType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef structureName;
  if (parser.parseLess() || parser.parseKeyword(&structureName))
    return {};
  std::optional<GraphStructure> structure =
      symbolizeGraphStructure(structureName);
  if (!structure) {
    parser.emitError(loc) << "unknown graph structure '" << structureName
                          << "'; expected general, complete, causal or "
                             "bipartite";
    return {};
  }
  int64_t counts[3] = {ShapedType::kDynamic, ShapedType::kDynamic,
                       ShapedType::kDynamic};
  const char *keys[3] = {"src", "dst", "edges"};
  unsigned next = 0;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return {};
    unsigned index = next;
    while (index < 3 && key != keys[index])
      ++index;
    if (index == 3) {
      parser.emitError(keyLoc)
          << "expected 'src', 'dst' or 'edges' (in this order), got '" << key
          << "'";
      return {};
    }
    if (parser.parseEqual() || parser.parseInteger(counts[index]))
      return {};
    next = index + 1;
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); }, parser.getContext(),
                    *structure, counts[0], counts[1], counts[2]);
}

void GraphType::print(AsmPrinter &printer) const {
  printer << "<" << stringifyGraphStructure(getStructure());
  if (!ShapedType::isDynamic(getNumSrc()))
    printer << ", src = " << getNumSrc();
  if (!ShapedType::isDynamic(getNumDst()))
    printer << ", dst = " << getNumDst();
  if (!ShapedType::isDynamic(getNumEdges()))
    printer << ", edges = " << getNumEdges();
  printer << ">";
}

bool TapeType::canHold(Type type) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getEncoding() || tensor.getRank() > kMaxRank)
    return false;
  Type elem = tensor.getElementType();
  if (auto i = llvm::dyn_cast<IntegerType>(elem))
    return llvm::is_contained({1u, 8u, 16u, 32u, 64u}, i.getWidth());
  return llvm::isa<IndexType, Float16Type, BFloat16Type, Float32Type,
                   Float64Type>(elem);
}
