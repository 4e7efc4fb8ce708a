//===- Signature.cpp - an entry's signature from its IR ------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "RunnerDetail.h"

#include "GNN/IR/GNNOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::gnn;
using mlir::gnn::detail::error;

namespace {
std::optional<DType> dtypeOf(Type type) {
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  if (type.isIndex() || type.isInteger(64))
    return DType::I64;
  if (type.isInteger(32))
    return DType::I32;
  if (type.isInteger(8))
    return DType::I8;
  if (type.isInteger(1))
    return DType::Bool;
  return std::nullopt;
}

/// Row requirements that gnn ops (GraphFeatureOpInterface) put on the
/// entry's tensor arguments.
std::vector<RowRequirement> collectRequirements(func::FuncOp fn) {
  std::vector<RowRequirement> out;
  auto argIndex = [&](Value v) -> std::optional<unsigned> {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &fn.getBody().front())
      return std::nullopt;
    return arg.getArgNumber();
  };
  auto kindOf = [](RowKind kind) {
    switch (kind) {
    case RowKind::SrcNodes:
      return RowRequirement::SrcRows;
    case RowKind::DstNodes:
      return RowRequirement::DstRows;
    case RowKind::Edges:
      return RowRequirement::EdgeRows;
    case RowKind::EdgeIds:
      return RowRequirement::EdgeIds;
    }
    llvm_unreachable("unknown row kind");
  };
  fn.walk([&](GraphFeatureOpInterface op) {
    SmallVector<FeatureRows> rows;
    op.getRowRequirements(rows);
    std::optional<unsigned> g = argIndex(op.getFeatureGraph());
    for (const FeatureRows &r : rows)
      if (std::optional<unsigned> t = argIndex(r.feature); g && t)
        out.push_back({*t, *g, kindOf(r.kind)});
  });
  return out;
}
} // namespace

llvm::Expected<EntryPoint>
mlir::gnn::detail::signatureOf(func::FuncOp fn,
                               llvm::ArrayRef<std::string> names) {
  EntryPoint entry;
  entry.name = fn.getSymName().str();
  for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
    Parameter p;
    if (i < names.size() && !names[i].empty())
      p.name = names[i];
    else if (auto name = fn.getArgAttrOfType<StringAttr>(
                 i, gnn::GNNDialect::kNameAttrName))
      p.name = name.str();
    else
      p.name = "arg" + std::to_string(i);
    auto writable = fn.getArgAttrOfType<BoolAttr>(
        i, bufferization::BufferizationDialect::kWritableAttrName);
    p.writable = writable && writable.getValue();
    if (isa<GraphType>(type)) {
      p.isGraph = true;
    } else if (auto tensor = dyn_cast<RankedTensorType>(type)) {
      std::optional<DType> dtype = dtypeOf(tensor.getElementType());
      if (!dtype)
        return error("argument '" + p.name + "' of '" + entry.name +
                     "' has unsupported element type");
      p.dtype = *dtype;
      p.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    } else {
      return error("argument '" + p.name + "' of '" + entry.name +
                   "' must be a graph or a ranked tensor");
    }
    entry.parameters.push_back(std::move(p));
  }
  for (auto [i, type] : llvm::enumerate(fn.getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    std::optional<DType> dtype =
        tensor ? dtypeOf(tensor.getElementType()) : std::nullopt;
    if (!dtype)
      return error("result #" + llvm::Twine(i) + " of '" + entry.name +
                   "' must be a ranked tensor of a supported element type");
    Parameter p;
    if (auto name = fn.getResultAttrOfType<StringAttr>(
            i, gnn::GNNDialect::kNameAttrName))
      p.name = name.str();
    else
      p.name = "result" + std::to_string(i);
    p.dtype = *dtype;
    p.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    if (auto updated = fn.getResultAttrOfType<StringAttr>(
            i, gnn::GNNDialect::kUpdatesAttrName)) {
      auto it = llvm::find_if(entry.parameters, [&](const Parameter &a) {
        return a.writable && a.name == updated.getValue() &&
               a.dtype == p.dtype && a.shape == p.shape;
      });
      if (it == entry.parameters.end())
        return error("result '" + p.name + "' of '" + entry.name +
                     "' updates '" + updated.getValue() +
                     "', which is not a writable argument of its type");
      p.updates = unsigned(it - entry.parameters.begin());
    }
    entry.results.push_back(std::move(p));
  }
  // Arguments are bound and results written by name: two of one name would
  // bind one of them twice, or lose one.
  for (auto [kind, list] : {std::pair{"arguments", &entry.parameters},
                            {"results", &entry.results}}) {
    llvm::StringMap<size_t> seen;
    for (auto [i, p] : llvm::enumerate(*list))
      if (auto [it, fresh] = seen.try_emplace(p.name, i); !fresh)
        return error(llvm::Twine(kind) + " #" + llvm::Twine(it->second) +
                     " and #" + llvm::Twine(i) + " of '" + entry.name +
                     "' are both named '" + p.name + "'");
  }
  entry.requirements = collectRequirements(fn);
  return entry;
}
