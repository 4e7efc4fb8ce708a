//===- GraphParts.h - a gnn graph as the values it is made of ---*- C++ -*-===//
//
// Part of gnnc. A `!gnn.graph` value becomes the index arrays of the
// runtime's gnn_graph (runtime/include/gnnc/graph.h lists them) wherever it
// crosses an op that is not a gnn op: function signatures, calls and returns,
// scf.for/scf.while/scf.if and arith.select. The gnn op lowerings then find
// every graph they use as a cast of those parts.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_CONVERSION_GRAPHPARTS_H
#define GNN_CONVERSION_GRAPHPARTS_H

#include "gnnc/graph.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/OneToNTypeConversion.h"

namespace mlir::gnn {

/// The types of a graph's parts, in gnn_graph_part order: `index`, then five
/// `tensor<?xindex>`.
SmallVector<Type> getGraphPartTypes(MLIRContext *context);

/// Converts every `!gnn.graph` into its parts and leaves other types alone.
/// Materializations are `builtin.unrealized_conversion_cast`s: parts to a
/// graph (one result), a graph to its parts (GNN_GRAPH_NUM_PARTS results).
class GraphTypeConverter : public OneToNTypeConverter {
public:
  GraphTypeConverter();
};

/// The 1:N conversions of func.func (with argument and result attributes
/// kept on each part), func.call, func.return, scf.for, scf.while, scf.if,
/// scf.yield, scf.condition and arith.select.
void populateGraphDecompositionPatterns(GraphTypeConverter &converter,
                                        RewritePatternSet &patterns);

/// Decomposes every graph that crosses a non-gnn op in `module`.
LogicalResult decomposeGraphs(ModuleOp module);

/// The parts of `graph` when it is a cast of them (as the decomposition and
/// the lowerings of graph-building ops leave every graph), else failure.
FailureOr<SmallVector<Value>> getGraphParts(Value graph);

/// Replaces each cast of a graph to its parts whose graph is itself a cast
/// of parts by those parts, then erases graph casts without uses.
void foldGraphCasts(ModuleOp module);

} // namespace mlir::gnn

#endif // GNN_CONVERSION_GRAPHPARTS_H
