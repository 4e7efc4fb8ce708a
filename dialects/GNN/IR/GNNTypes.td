//===- GNNTypes.td - gnn types -----------------------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_IR_GNNTYPES_TD
#define GNN_IR_GNNTYPES_TD

include "GNN/IR/GNNAttrs.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class GNN_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<GNN_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def GNN_GraphType : GNN_Type<"Graph", "graph"> {
  let summary = "a directed graph from a source to a destination node space";
  let description = [{
    A set of directed edges `u -> v` from a source node space of `src` nodes
    into a destination node space of `dst` nodes. Edge ids run over
    `0..edges-1` and index edge features; node ids index node features. For
    homogeneous graphs both spaces are the same. The runtime value carries
    the node and edge counts, the source and destination arrays indexed by
    edge id, and a CSR by destination (in-edge offsets, source ids and edge
    ids) through which destinations receive.

    Counts are static integers or dynamic (omitted). `structure` is a promise
    that lowerings may exploit; every structure describes a batch of
    independent blocks (one per example), so a batch is one graph:
    - `general`: any edge set;
    - `complete`: in each block, every node sends to every node (self-loops
      included); source and destination spaces are the same;
    - `causal`: in each block, node `i` sends to node `j` iff `i <= j`;
      source and destination spaces are the same;
    - `bipartite`: every source node of a block sends to every destination
      node of the same block.

    ```mlir
    !gnn.graph<general>
    !gnn.graph<complete, src = 4, dst = 4, edges = 16>
    !gnn.graph<bipartite, edges = 12>
    ```
  }];
  let parameters = (ins
    EnumParameter<GNN_GraphStructure>:$structure,
    "int64_t":$numSrc,
    "int64_t":$numDst,
    "int64_t":$numEdges
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    TypeBuilder<(ins "GraphStructure":$structure), [{
      return $_get($_ctxt, structure, ::mlir::ShapedType::kDynamic,
                   ::mlir::ShapedType::kDynamic, ::mlir::ShapedType::kDynamic);
    }]>
  ];
  let extraClassDeclaration = [{
    /// True if source and destination nodes share one node space.
    bool isHomogeneous() const {
      return getStructure() == GraphStructure::Complete ||
             getStructure() == GraphStructure::Causal;
    }
    /// The number of rows a feature of `target` has (may be dynamic).
    int64_t getNumRows(Target target) const;
  }];
}

def GNN_TapeType : GNN_Type<"Tape", "tape"> {
  let summary = "a stack of values a loop's iterations keep for its backward";
  let description = [{
    The values the forward of a differentiated loop keeps from each
    iteration (its state and its body's residuals), for the backward to
    read in reverse order: `gnn.tape_push` copies a tensor onto it,
    `gnn.tape_pop` takes the last one off. Its size is known only at run
    time, so the program is the same for any number of iterations. At run
    time it is the runtime's `gnn_rt_tape` (gnnc/tape.h).

    ```mlir
    %tape = gnn.tape_create : !gnn.tape
    ```
  }];
  let extraClassDeclaration = [{
    /// Whether a tape keeps values of `type`: ranked tensors without an
    /// encoding, of rank at most kMaxRank, of float, integer or index
    /// elements.
    static bool canHold(::mlir::Type type);
    /// The runtime's GNN_TAPE_MAX_RANK.
    static constexpr int64_t kMaxRank = 8;
  }];
}

#endif // GNN_IR_GNNTYPES_TD
