//===- GNNInterfaces.td - gnn op interfaces ----------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_IR_GNNINTERFACES_TD
#define GNN_IR_GNNINTERFACES_TD

include "mlir/IR/OpBase.td"

def GNN_GraphFeatureOpInterface : OpInterface<"GraphFeatureOpInterface"> {
  let cppNamespace = "::mlir::gnn";
  let description = [{
    An op that reads features along a graph: the first dimension of each
    feature operand is indexed by the graph's source nodes, destination
    nodes or edges, and an edge subset lists edge ids. Runners check these
    rows against the graphs they are given before a call, so a mismatch is
    an error naming the arguments; compiled code checks them again. Every op
    that takes a graph and features implements it (a unit test holds each
    such op to it).
  }];
  let methods = [
    InterfaceMethod<"The graph that the features are read along.",
      "::mlir::Value", "getFeatureGraph", (ins), [{}], [{
        return $_op.getGraph();
      }]>,
    InterfaceMethod<[{
        Appends each feature operand (and edge id list) with what its rows
        are indexed by.
      }],
      "void", "getRowRequirements",
      (ins "::llvm::SmallVectorImpl<::mlir::gnn::FeatureRows> &":$rows)>
  ];
}

#endif // GNN_IR_GNNINTERFACES_TD
