//===- Arguments.cpp - the checks of a call's arguments ------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "RunnerDetail.h"

using namespace mlir;
using namespace mlir::gnn;
using mlir::gnn::detail::error;

/// Sizes bound as graph counts are (GNN_GRAPH_MAX_COUNT). A tensor with no
/// elements costs no memory at any size, but compiled code still walks its
/// rows: its sizes are bounded far lower (a [2^40, 0] input ran for
/// minutes).
static llvm::Error checkExtents(const std::string &name, const HostTensor &t) {
  constexpr int64_t kMaxEmptyExtent = int64_t(1) << 24;
  bool empty = llvm::is_contained(t.shape, 0);
  for (auto [d, size] : llvm::enumerate(t.shape)) {
    if (size > GNN_GRAPH_MAX_COUNT)
      return error("argument '" + name + "' has size " + llvm::Twine(size) +
                   " in dimension " + llvm::Twine(d) + ", more than 2^40");
    if (empty && size > kMaxEmptyExtent)
      return error("argument '" + name + "' has no elements but size " +
                   llvm::Twine(size) + " in dimension " + llvm::Twine(d) +
                   ", more than 2^24");
  }
  return llvm::Error::success();
}

llvm::Error mlir::gnn::detail::checkArguments(const EntryPoint &entry,
                                              llvm::ArrayRef<Argument> args) {
  const std::vector<Parameter> &parameters = entry.parameters;
  if (args.size() != parameters.size())
    return error("expected " + llvm::Twine(parameters.size()) +
                 " arguments, got " + llvm::Twine(args.size()));
  for (auto [i, p] : llvm::enumerate(parameters)) {
    const Argument &a = args[i];
    if (p.isGraph) {
      if (!a.graph)
        return error("argument '" + p.name + "' must be a graph");
      continue;
    }
    if (!a.value())
      return error("argument '" + p.name + "' must be a tensor");
    if (a.updated && !p.writable)
      return error("argument '" + p.name +
                   "' is read-only; it cannot be updated in place");
    const HostTensor &t = *a.value();
    if (t.dtype != p.dtype)
      return error("argument '" + p.name + "' has dtype " + dtypeName(t.dtype) +
                   ", expected " + dtypeName(p.dtype));
    if (t.shape.size() != p.shape.size())
      return error("argument '" + p.name + "' has rank " +
                   llvm::Twine(t.shape.size()) + ", expected " +
                   llvm::Twine(p.shape.size()));
    for (auto [d, size] : llvm::enumerate(p.shape))
      if (!ShapedType::isDynamic(size) && t.shape[d] != size)
        return error("argument '" + p.name + "' has size " +
                     llvm::Twine(t.shape[d]) + " in dimension " +
                     llvm::Twine(d) + ", expected " + llvm::Twine(size));
    if (llvm::Error e = checkExtents(p.name, t))
      return e;
  }
  for (const RowRequirement &r : entry.requirements) {
    const gnn_graph &g = *args[r.graphArg].graph;
    const HostTensor &t = *args[r.arg].value();
    const std::string &name = parameters[r.arg].name;
    const std::string &graphName = parameters[r.graphArg].name;
    int64_t rows = t.shape.empty() ? 0 : t.shape[0];
    auto expect = [&](int64_t n, const char *what) -> llvm::Error {
      if (rows == n)
        return llvm::Error::success();
      return error("argument '" + name + "' has " + llvm::Twine(rows) +
                   " rows, but graph '" + graphName + "' has " +
                   llvm::Twine(n) + " " + what);
    };
    switch (r.kind) {
    case RowRequirement::SrcRows:
      if (auto e = expect(g.num_src, "source nodes"))
        return e;
      break;
    case RowRequirement::DstRows:
      if (auto e = expect(g.num_dst, "destination nodes"))
        return e;
      break;
    case RowRequirement::EdgeRows:
      if (auto e = expect(g.num_edges, "edges"))
        return e;
      break;
    case RowRequirement::EdgeIds:
      for (int64_t i = 0; i < t.numElements(); ++i)
        if (t.as<int64_t>()[i] < 0 || t.as<int64_t>()[i] >= g.num_edges)
          return error("argument '" + name + "' holds edge id " +
                       llvm::Twine(t.as<int64_t>()[i]) + ", but graph '" +
                       graphName + "' has " + llvm::Twine(g.num_edges) +
                       " edges");
      break;
    }
  }
  return llvm::Error::success();
}
