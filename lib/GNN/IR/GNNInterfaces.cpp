//===- GNNInterfaces.cpp - gnn op interfaces ------------------------------===//
//
// Part of gnnc. The interfaces, and the gnn ops' implementations of them.
//
//===----------------------------------------------------------------------===//

#include "GNN/IR/GNNOps.h"

using namespace mlir;
using namespace mlir::gnn;

#include "GNN/IR/GNNInterfaces.cpp.inc"

static RowKind rowsOf(Target target) {
  switch (target) {
  case Target::Src:
    return RowKind::SrcNodes;
  case Target::Dst:
    return RowKind::DstNodes;
  case Target::Edge:
    return RowKind::Edges;
  }
  llvm_unreachable("unknown target");
}

/// An edge subset's ids are edge ids of the graph.
static void addEdges(Value edges, SmallVectorImpl<FeatureRows> &rows) {
  if (edges)
    rows.push_back({edges, RowKind::EdgeIds});
}

void ApplyEdgesOp::getRowRequirements(SmallVectorImpl<FeatureRows> &rows) {
  for (auto [i, input] : llvm::enumerate(getInputs()))
    rows.push_back({input, rowsOf(getInputTarget(i))});
  addEdges(getEdges(), rows);
}

void SendAndRecvOp::getRowRequirements(SmallVectorImpl<FeatureRows> &rows) {
  for (unsigned i = 0; i < getNumResults(); ++i)
    for (auto [j, input] : llvm::enumerate(getMessageInputs(i)))
      rows.push_back({input, rowsOf(getMessage(i).getTarget(j))});
  addEdges(getEdges(), rows);
}

void ReduceOp::getRowRequirements(SmallVectorImpl<FeatureRows> &rows) {
  rows.push_back({getInput(), RowKind::Edges});
  addEdges(getEdges(), rows);
}

void FilterEdgesOp::getRowRequirements(SmallVectorImpl<FeatureRows> &rows) {
  // Candidates outside the graph's edges are never kept, not an error.
  for (auto [input, role] : llvm::zip_equal(getInputs(), getRoles()))
    rows.push_back({input, rowsOf(cast<TargetAttr>(role).getValue())});
}

void FusedAttentionOp::getRowRequirements(SmallVectorImpl<FeatureRows> &rows) {
  rows.push_back({getQuery(), RowKind::DstNodes});
  rows.push_back({getKey(), RowKind::SrcNodes});
  rows.push_back({getValue(), RowKind::SrcNodes});
  addEdges(getEdges(), rows);
}

void FusedAttentionGradOp::getRowRequirements(
    SmallVectorImpl<FeatureRows> &rows) {
  rows.push_back({getQuery(), RowKind::DstNodes});
  rows.push_back({getKey(), RowKind::SrcNodes});
  rows.push_back({getValue(), RowKind::SrcNodes});
  for (Value g : getGrads())
    rows.push_back({g, RowKind::DstNodes});
  if (Value lse = getSavedLse())
    rows.push_back({lse, RowKind::DstNodes});
  addEdges(getEdges(), rows);
}
