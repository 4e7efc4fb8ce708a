//===- GNNOps.td - gnn operations --------------------------*- tablegen -*-===//
//
// Part of gnnc. Message passing in the vocabulary of DGL.
//
//===----------------------------------------------------------------------===//

#ifndef GNN_IR_GNNOPS_TD
#define GNN_IR_GNNOPS_TD

include "GNN/IR/GNNDialect.td"
include "GNN/IR/GNNAttrs.td"
include "GNN/IR/GNNTypes.td"
include "GNN/IR/GNNInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Rows of static width beyond kMaxStaticRowElements are a verifier error.
def GNN_BoundedRowWidths : NativeOpTrait<"BoundedRowWidths"> {
  let cppNamespace = "::mlir::gnn";
}

class GNN_Op<string mnemonic, list<Trait> traits = []>
    : Op<GNN_Dialect, mnemonic, !listconcat(traits, [GNN_BoundedRowWidths])>;

def GNN_Feature : RankedTensorOf<[AnyType]>;
def GNN_IdList : 1DTensorOf<[Index]>;

//===----------------------------------------------------------------------===//
// Graph construction and queries
//===----------------------------------------------------------------------===//

def GNN_GraphFromCooOp : GNN_Op<"graph_from_coo", [Pure]> {
  let summary = "builds a graph from source and destination id arrays";
  let description = [{
    Builds a graph whose edge `i` goes from source node `src[i]` to
    destination node `dst[i]`. Edge ids are positions in these arrays. The
    graph has `num_src` source and `num_dst` destination nodes; ids outside
    `[0, num_src)` or `[0, num_dst)` make the program fail at run time with an
    error. The result type may promise a structure and static counts.

    ```mlir
    %g = gnn.graph_from_coo %src, %dst, %ns, %nd
        : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
    ```
  }];
  let arguments = (ins GNN_IdList:$src, GNN_IdList:$dst, Index:$num_src,
                       Index:$num_dst);
  let results = (outs GNN_GraphType:$graph);
  let assemblyFormat = [{
    $src `,` $dst `,` $num_src `,` $num_dst attr-dict `:` type($src) `,`
    type($dst) `->` qualified(type($graph))
  }];
  let hasVerifier = 1;
}

class GNN_CountOp<string mnemonic, string what> : GNN_Op<mnemonic, [Pure]> {
  let summary = "the number of " # what # " of a graph";
  let description = [{
    Returns the number of }] # what # [{ of a graph; folds to a constant when
    the graph type knows it.

    ```mlir
    %n = gnn.}] # mnemonic # [{ %g : !gnn.graph<complete>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph);
  let results = (outs Index:$result);
  let assemblyFormat = "$graph attr-dict `:` qualified(type($graph))";
  let hasFolder = 1;
}

def GNN_NumSrcNodesOp : GNN_CountOp<"num_src_nodes", "source nodes">;
def GNN_NumDstNodesOp : GNN_CountOp<"num_dst_nodes", "destination nodes">;
def GNN_NumEdgesOp : GNN_CountOp<"num_edges", "edges">;

def GNN_EdgeEndpointsOp : GNN_Op<"edge_endpoints", [Pure]> {
  let summary = "the source and destination node of every edge";
  let description = [{
    Returns two arrays indexed by edge id: the source and the destination
    node of each edge.

    ```mlir
    %src, %dst = gnn.edge_endpoints %g
        : !gnn.graph<general> -> tensor<?xindex>, tensor<?xindex>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph);
  let results = (outs GNN_IdList:$src, GNN_IdList:$dst);
  let assemblyFormat = [{
    $graph attr-dict `:` qualified(type($graph)) `->` type($src) `,` type($dst)
  }];
  let hasVerifier = 1;
}

def GNN_InSubgraphOp : GNN_Op<"in_subgraph", [Pure]> {
  let summary = "the in-edges of listed destination nodes, as a graph";
  let description = [{
    Like DGL's `dgl.in_subgraph(g, nodes)` with the destination space
    compacted (as `dgl.to_block` does): the result holds every edge of
    `graph` into a node of `nodes`; its destination `i` is parent node
    `nodes[i]`, its source space is the parent's. Edges are ordered by
    destination, then as in the parent's CSR; `eids[e]` is the parent id of
    edge `e`. Building it costs O(|nodes| + its edges), so per-step work of a
    shrinking active set stays proportional to the active edges. A node id
    outside the parent's destinations makes the program fail at run time
    with an error.

    ```mlir
    %sub, %eids = gnn.in_subgraph %g, %active
        : (!gnn.graph<complete>, tensor<?xindex>)
        -> (!gnn.graph<general>, tensor<?xindex>)
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_IdList:$nodes);
  let results = (outs GNN_GraphType:$result, GNN_IdList:$eids);
  let assemblyFormat = [{
    $graph `,` $nodes attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Message passing
//===----------------------------------------------------------------------===//

def GNN_ApplyEdgesOp : GNN_Op<"apply_edges", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<GNN_GraphFeatureOpInterface>,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "computes a value on every edge";
  let description = [{
    Computes an edge feature (one row per edge id) from features of the
    source nodes (`u`), destination nodes (`v`) and edges (`e`), like DGL's
    `g.apply_edges`.

    With a built-in message function the inputs are the function's operands;
    an optional chain of built-in elementwise functions (`then [...]`) is
    applied to the result. With a region, each input is tagged with its
    target and the body computes one element of the result from one element
    of each input; inputs are broadcast to the result's per-edge shape.

    With `edges(%eids)` only the listed edges are computed; the other rows
    of the result are zero.

    ```mlir
    // The tutorial's src_dot_dst and scaled_exp.
    %score = gnn.apply_edges %g, u_dot_v(%k, %q)
        : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>)
        -> tensor<?x8x1xf32>
    %e = gnn.apply_edges %g, copy_e(%score)
        then [scale(0.125), clamp(-5.0, 5.0), exp]
        : (!gnn.graph<complete>, tensor<?x8x1xf32>) -> tensor<?x8x1xf32>
    // A user-defined function.
    %d = gnn.apply_edges %g, (u %a, v %b) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.subf %x, %y : f32
      gnn.yield %s : f32
    } : (!gnn.graph<general>, tensor<?x4xf32>, tensor<?x4xf32>)
      -> tensor<?x4xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, Variadic<GNN_Feature>:$inputs,
                       Optional<GNN_IdList>:$edges,
                       OptionalAttr<GNN_MessageFnAttr>:$fn,
                       OptionalAttr<GNN_TargetArrayAttr>:$roles,
                       OptionalAttr<GNN_UnaryFnArrayAttr>:$post);
  let results = (outs GNN_Feature:$result);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    $graph `,` custom<EdgeFunction>($inputs, $fn, $roles, $post)
    (`edges` `(` $edges^ `)`)? ($body^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
  let builders = [
    OpBuilder<(ins "Type":$resultType, "Value":$graph, "MessageFnAttr":$fn,
                   "ValueRange":$inputs, "ArrayAttr":$post,
                   CArg<"Value", "{}">:$edges)>
  ];
  let extraClassDeclaration = [{
    /// The target (u, v or e) of input `i`.
    Target getInputTarget(unsigned i);
    bool hasBody() { return !getBody().empty(); }
  }];
}

def GNN_SendAndRecvOp : GNN_Op<"send_and_recv", [Pure,
    DeclareOpInterfaceMethods<GNN_GraphFeatureOpInterface>,
    AttrSizedOperandSegments]> {
  let summary = "sends messages along edges and reduces them per destination";
  let description = [{
    Like DGL's `g.send_and_recv(eids, [message...], [reduce...])`: for every
    pair, each edge computes a message with a built-in message function, and
    every destination node aggregates the messages of its in-edges with the
    pair's reduce function. One result per pair, one row per destination
    node. A node that receives no message gets 0 (for every reduce function).

    The inputs are the operands of the message functions, in order. With
    `edges(%eids)` only the listed edges send.

    ```mlir
    // The tutorial's weighted sum of values and sum of weights.
    %wv, %z = gnn.send_and_recv %g,
        [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum]
        : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x1xf32>,
           tensor<?x8x1xf32>) -> (tensor<?x8x64xf32>, tensor<?x8x1xf32>)
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, Variadic<GNN_Feature>:$inputs,
                       Optional<GNN_IdList>:$edges,
                       GNN_MessageFnArrayAttr:$messages,
                       GNN_ReduceKindArrayAttr:$reducers);
  let results = (outs Variadic<GNN_Feature>:$results);
  let assemblyFormat = [{
    $graph `,` custom<MessageList>($inputs, $messages, $reducers)
    (`edges` `(` $edges^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// The inputs of message `i`.
    OperandRange getMessageInputs(unsigned i);
    MessageFnAttr getMessage(unsigned i) {
      return ::llvm::cast<MessageFnAttr>(getMessages()[i]);
    }
    ReduceKind getReducer(unsigned i) {
      return ::llvm::cast<ReduceKindAttr>(getReducers()[i]).getValue();
    }
  }];
}

def GNN_ReduceOp : GNN_Op<"reduce", [Pure,
    DeclareOpInterfaceMethods<GNN_GraphFeatureOpInterface>]> {
  let summary = "aggregates an edge feature into the destination nodes";
  let description = [{
    Every destination node aggregates the rows of `input` (an edge feature)
    of its in-edges: `sum`, `max`, `min` or `mean`. A node without in-edges
    gets 0. With `edges(%eids)` only the listed edges are aggregated.

    ```mlir
    %z = gnn.reduce %g, sum(%e)
        : (!gnn.graph<complete>, tensor<?x8x1xf32>) -> tensor<?x8x1xf32>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_Feature:$input,
                       Optional<GNN_IdList>:$edges, GNN_ReduceKind:$kind);
  let results = (outs GNN_Feature:$result);
  let assemblyFormat = [{
    $graph `,` $kind `(` $input `)` (`edges` `(` $edges^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def GNN_ApplyNodesOp : GNN_Op<"apply_nodes", [Pure,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "computes a value on every node";
  let description = [{
    Like DGL's `g.apply_nodes`: the body computes one element of the result
    from one element of each input; all inputs have one row per node and
    are broadcast to the result's per-node shape.

    ```mlir
    // The tutorial's wv / z.
    %o = gnn.apply_nodes(%wv, %z) {
    ^bb0(%a: f32, %b: f32):
      %d = arith.divf %a, %b : f32
      gnn.yield %d : f32
    } : (tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x64xf32>
    ```

    With several results (all of one shape; element types may differ) the
    body yields one element of each, at the same position: values computed
    together from the same inputs, such as an optimizer's new moments and
    parameter, are one pass over the rows.

    ```mlir
    // A moment and the parameter it updates, from one read of each input.
    %m1, %p1 = gnn.apply_nodes(%m, %g, %p) {
    ^bb0(%mi: f32, %gi: f32, %pi: f32):
      %s = arith.addf %mi, %gi : f32
      %q = arith.subf %pi, %s : f32
      gnn.yield %s, %q : f32, f32
    } : (tensor<16x32xf32>, tensor<16x32xf32>, tensor<16x32xf32>)
        -> (tensor<16x32xf32>, tensor<16x32xf32>)
    ```
  }];
  let arguments = (ins Variadic<GNN_Feature>:$inputs);
  let results = (outs Variadic<GNN_Feature>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` $body attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasCanonicalizer = 1;
}

def GNN_FilterNodesOp : GNN_Op<"filter_nodes", [Pure, AttrSizedOperandSegments,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "the ids of the nodes that satisfy a predicate";
  let description = [{
    Like DGL's `g.filter_nodes(pred, nids)`: returns, in increasing order, the
    ids of the nodes (among `candidates`, or all rows of the inputs) whose
    body yields true. Inputs have one element per node (shape `[N]` or
    `[N, 1, ...]`); the body sees that element.

    ```mlir
    %active = gnn.filter_nodes(%mask) from %enc {
    ^bb0(%m: i1):
      gnn.yield %m : i1
    } : (tensor<?xi1>, tensor<?xindex>) -> tensor<?xindex>
    ```
  }];
  let arguments = (ins Variadic<GNN_Feature>:$inputs,
                       Optional<GNN_IdList>:$candidates);
  let results = (outs GNN_IdList:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` (`from` $candidates^)? $body attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def GNN_FilterEdgesOp : GNN_Op<"filter_edges", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<GNN_GraphFeatureOpInterface>,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "the ids of the edges that satisfy a predicate";
  let description = [{
    Like DGL's `g.filter_edges(pred, eids)`: returns, in increasing order, the
    ids of the edges (among `candidates`, or all edges) whose body yields
    true. Each input is tagged with its target (`u`, `v` or `e`) and has one
    element per node or edge.

    ```mlir
    // Edges whose destination is still active.
    %live = gnn.filter_edges %g, (v %mask) {
    ^bb0(%m: i1):
      gnn.yield %m : i1
    } : (!gnn.graph<complete>, tensor<?xi1>) -> tensor<?xindex>
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, Variadic<GNN_Feature>:$inputs,
                       Optional<GNN_IdList>:$candidates,
                       GNN_TargetArrayAttr:$roles);
  let results = (outs GNN_IdList:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $graph `,` custom<TaggedInputs>($inputs, $roles)
    (`from` $candidates^)? $body attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fused kernels
//===----------------------------------------------------------------------===//

def GNN_FusedAttentionOp : GNN_Op<"fused_attention", [Pure,
    DeclareOpInterfaceMethods<GNN_GraphFeatureOpInterface>]> {
  let summary = "attention over the edges of a graph in one pass";
  let description = [{
    For every destination node `v` and every edge `u -> v` (all edges, or
    those in `edges(%eids)`), with `s = scale * dot(key[u], query[v])` over
    the last dimension and `w = exp(clamp(s, lo, hi))`:
    - without `normalize`, the results are `wv[v] = sum_u w * value[u]` and
      `z[v] = sum_u w`: exactly what the unfused score, exp and sums compute;
    - with `normalize`, the result is `wv[v] / z[v]`, computed with a
      running maximum (online softmax), so that without `clamp` it is the
      exact softmax-weighted sum and finite for scores of any magnitude.
      An optional second result holds each destination's softmax statistic
      `lse[v] = log(z[v])` (log-sum-exp of the clamped scores, shape
      `[N, heads..., 1]`, -inf without in-edges): given it, the backward
      gnn-differentiate writes need not recompute the forward.
    Nodes without in-edges get 0. No per-edge value is materialized.

    `gnn-fuse-attention` produces this op from the DGL form of attention;
    a model builder may also emit it directly.

    ```mlir
    %out = gnn.fused_attention %g, %q, %k, %v scale(1.250000e-01)
        clamp(-5.000000e+00, 5.000000e+00) normalize
        : (!gnn.graph<complete>, tensor<?x8x64xf32>, tensor<?x8x64xf32>,
           tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
    %o, %lse = gnn.fused_attention %g, %q, %k, %v scale(0.25) normalize
        : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x16xf32>,
           tensor<?x2x16xf32>) -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>)
    %wv, %z = gnn.fused_attention %g, %q, %k, %v scale(1.0) edges(%live)
        : (!gnn.graph<causal>, tensor<?x2x16xf32>, tensor<?x2x16xf32>,
           tensor<?x2x16xf32>, tensor<?xindex>)
        -> (tensor<?x2x16xf32>, tensor<?x2x1xf32>)
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph, GNN_Feature:$query,
                       GNN_Feature:$key, GNN_Feature:$value,
                       Optional<GNN_IdList>:$edges,
                       F64Attr:$scale,
                       OptionalAttr<F64Attr>:$clamp_lo,
                       OptionalAttr<F64Attr>:$clamp_hi,
                       UnitAttr:$normalize);
  let results = (outs Variadic<GNN_Feature>:$results);
  let assemblyFormat = [{
    $graph `,` $query `,` $key `,` $value `scale` `(` $scale `)`
    (`clamp` `(` $clamp_lo^ `,` $clamp_hi `)`)? (`normalize` $normalize^)?
    (`edges` `(` $edges^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def GNN_FusedAttentionGradOp : GNN_Op<"fused_attention_grad", [Pure,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<GNN_GraphFeatureOpInterface>]> {
  let summary = "the gradient of gnn.fused_attention, without per-edge values";
  let description = [{
    Given the gradients of a `gnn.fused_attention`'s results (`wv` and `z`;
    or the normalized output, and the log-sum-exp's when that result is
    used), returns the gradients of its query, key and value. No per-edge
    value is stored: one pass over each destination's in-edges computes
    `dq`, recomputing the scores and (normalized) the destination's
    statistics first: a shift `m` (the forward's log-sum-exp when given as
    `saved(%lse)`, else the recomputed maximum), the weights
    `P_e = exp(s_e - m) / sum_e' exp(s_e' - m)`, normalized by their own
    sum, and `D = sum_e P_e (dout . v_e)` from the same weights as the
    score gradients `P (dout . v - D)`. Both keep the gradients' sum over a
    destination's edges, 0 in exact arithmetic, at rounding: a float32
    log-sum-exp of scores in the hundreds is off by up to 1.5e-5, and
    `exp(s - lse)` alone would leave that fraction of `D` in every score
    gradient; D formed from the forward's output instead differs from the
    weights by rounding, which `dout . v - D` amplifies where it nearly
    cancels. A second pass over each source's out-edges recomputes each
    edge's weight from those per-destination statistics and sums `dk` and
    `dv`. Both passes are
    parallel over nodes and free of races. The lowering turns the graph
    around for the second pass only where it takes one: a graph that splits
    into blocks (a batch of sequences, each block's sources feeding its own
    destinations alone) takes a single pass per block. The extra memory is
    O(nodes x heads), plus the reversed graph's index (O(edges), whatever
    the heads) where it is built. Where the clamp is active, the score
    passes no gradient.

    ```mlir
    %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %dout
        scale(1.250000e-01) normalize
        : (!gnn.graph<general>, tensor<?x8x16xf32>, tensor<?x8x16xf32>,
           tensor<?x8x16xf32>, tensor<?x8x16xf32>)
        -> (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>)
    %gq, %gk, %gv = gnn.fused_attention_grad %g, %q, %k, %v, %dout
        scale(1.250000e-01) normalize saved(%lse)
        : (!gnn.graph<general>, tensor<?x8x16xf32>, tensor<?x8x16xf32>,
           tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x1xf32>)
        -> (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?x8x16xf32>)
    ```
  }];
  let arguments = (ins GNN_GraphType:$graph,
                       GNN_Feature:$query, GNN_Feature:$key,
                       GNN_Feature:$value, Variadic<GNN_Feature>:$grads,
                       Optional<GNN_IdList>:$edges,
                       Optional<GNN_Feature>:$saved_lse,
                       F64Attr:$scale,
                       OptionalAttr<F64Attr>:$clamp_lo,
                       OptionalAttr<F64Attr>:$clamp_hi,
                       UnitAttr:$normalize);
  let results = (outs GNN_Feature:$dquery, GNN_Feature:$dkey,
                      GNN_Feature:$dvalue);
  let assemblyFormat = [{
    $graph `,` $query `,` $key `,` $value `,` $grads
    `scale` `(` $scale `)`
    (`clamp` `(` $clamp_lo^ `,` $clamp_hi `)`)? (`normalize` $normalize^)?
    (`saved` `(` $saved_lse^ `)`)?
    (`edges` `(` $edges^ `)`)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def GNN_SumToOp : GNN_Op<"sum_to", [Pure]> {
  let summary = "sums a feature down to a shape it broadcasts from";
  let description = [{
    Undoes broadcasting, like PyTorch's `sum_to_size`: the result's shape,
    aligned with the input's from the right, has in every dimension the
    input's size or a static 1; each result element is the sum of the input
    elements that broadcasting it would cover. Dimensions of size 1 and
    leading dimensions the result lacks are summed, the row dimension
    included. It is the adjoint of broadcasting: the gradient of a `[N, 8,
    1]` weight that multiplied `[N, 8, 64]` values is the product's gradient
    summed to `[N, 8, 1]`; a bias's is the output's summed over the rows.

    ```mlir
    %dw = gnn.sum_to %g : tensor<?x8x64xf32> -> tensor<?x8x1xf32>
    %db = gnn.sum_to %dy : tensor<?x128xf32> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins GNN_Feature:$input);
  let results = (outs GNN_Feature:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def GNN_BroadcastOp : GNN_Op<"broadcast", [Pure]> {
  let summary = "broadcasts a feature to the shape of another";
  let description = [{
    The transpose of `gnn.sum_to`: the result has the shape of `like` (whose
    values are not read) and the input's element type; the input's shape,
    aligned with it from the right, has in every dimension a static 1 or the
    result's size, and each result element is the input element it covers.
    A gradient of a sum flows back this way; `like` also gives constants the
    shape of a feature (zeros for a gradient nothing reaches).

    ```mlir
    %g = gnn.broadcast %dloss like %x : tensor<f32>, tensor<?x8x64xf32>
        -> tensor<?x8x64xf32>
    ```
  }];
  let arguments = (ins GNN_Feature:$input, GNN_Feature:$like);
  let results = (outs GNN_Feature:$result);
  let assemblyFormat = [{
    $input `like` $like attr-dict `:` type($input) `,` type($like) `->`
    type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def GNN_DropoutOp : GNN_Op<"dropout", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "inverted dropout with a counter-based random mask";
  let description = [{
    Zeroes each element of `input` with probability `rate` and scales the
    others by `1 / (1 - rate)`. Element `e` (its row-major index in the whole
    tensor) is kept iff `(x >> 8) >= ceil(rate * 2^24)`, where `x` is the
    32-bit word `e mod 4` of Philox-4x32-10 with key `(seed mod 2^32,
    seed >> 32)` and counter `(c mod 2^32, c >> 32, 0, 0)`, `c = offset +
    floor(e / 4)` (one evaluation gives the words of four elements). The
    mask depends on `seed`, `offset` and `e` alone, not on threads
    or on how the work is split, so a backward pass regenerates it instead of
    storing it: the gradient of dropout is dropout of the gradient with the
    same seed and offset. A program that drops out several tensors with one
    seed gives each its own range of offsets. `rate(0.0)` is the identity.

    ```mlir
    %y = gnn.dropout %x, %seed, %offset rate(1.000000e-01)
        : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins GNN_Feature:$input, I64:$seed, I64:$offset,
                       F64Attr:$rate);
  let results = (outs GNN_Feature:$result);
  let assemblyFormat = [{
    $input `,` $seed `,` $offset `rate` `(` $rate `)` attr-dict `:`
    type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def GNN_DropoutElementOp : GNN_Op<"dropout_element", [Pure,
    HasParent<"ApplyNodesOp">, AllTypesMatch<["input", "result"]>]> {
  let summary = "gnn.dropout of the element an apply_nodes body computes";
  let description = [{
    Inside a `gnn.apply_nodes` body: the element `gnn.dropout` with the same
    seed, offset and rate gives at this element's position (its row-major
    index in the apply_nodes result), applied to `input`. So dropout joins
    the element-wise chain around it in one kernel instead of a pass over
    memory of its own; `gnn-fuse-elementwise` makes it from `gnn.dropout`.
    The value depends on where the body runs, which is why the op lives
    only directly in such a body.

    ```mlir
    %y = gnn.apply_nodes(%x, %r) {
    ^bb0(%a: f32, %b: f32):
      %m = arith.maximumf %a, %zero : f32
      %d = gnn.dropout_element %m, %seed, %offset rate(1.000000e-01) : f32
      %s = arith.addf %d, %b : f32
      gnn.yield %s : f32
    } : (tensor<?x128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins AnyFloat:$input, I64:$seed, I64:$offset,
                       F64Attr:$rate);
  let results = (outs AnyFloat:$result);
  let assemblyFormat = [{
    $input `,` $seed `,` $offset `rate` `(` $rate `)` attr-dict `:`
    type($input)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Subsets of rows
//===----------------------------------------------------------------------===//

def GNN_GatherRowsOp : GNN_Op<"gather_rows", [Pure]> {
  let summary = "the rows of a feature listed by an id list";
  let description = [{
    Returns `result[i] = source[ids[i]]`: the features of a subset of nodes or
    edges, compacted. An id outside the rows of `source` is a run-time error.

    ```mlir
    %xa = gnn.gather_rows %x[%active]
        : (tensor<?x128xf32>, tensor<?xindex>) -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins GNN_Feature:$source, GNN_IdList:$ids);
  let results = (outs GNN_Feature:$result);
  let assemblyFormat = [{
    $source `[` $ids `]` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def GNN_ScatterRowsOp : GNN_Op<"scatter_rows", [Pure]> {
  let summary = "replaces the rows of a feature listed by an id list";
  let description = [{
    Returns a copy of `dest` in which row `ids[i]` is `source[i]`; the other
    rows keep their values (halted nodes keep their state this way). Ids
    must be distinct; an id outside the rows of `dest` is a run-time error
    (the entry is skipped), and so is a repeated id and a
    number of ids other than the rows of `source` (nothing is scattered).

    With `add`, row `r` of the result is `dest[r]` plus the sum of every
    `source[i]` with `ids[i] == r` (ids may repeat; sums in list order, so
    results do not depend on threads): the adjoint of `gnn.gather_rows`, as
    an embedding table's gradient is the scatter-add of its rows'.

    ```mlir
    %k2 = gnn.scatter_rows %ka into %k[%active]
        : (tensor<?x8x16xf32>, tensor<?x8x16xf32>, tensor<?xindex>)
        -> tensor<?x8x16xf32>
    %dlut = gnn.scatter_rows %dx into %zeros[%tokens] add
        : (tensor<?x128xf32>, tensor<29x128xf32>, tensor<?xindex>)
        -> tensor<29x128xf32>
    ```
  }];
  let arguments = (ins GNN_Feature:$source, GNN_Feature:$dest,
                       GNN_IdList:$ids, UnitAttr:$add);
  let results = (outs GNN_Feature:$result);
  let assemblyFormat = [{
    $source `into` $dest `[` $ids `]` (`add` $add^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dense node-wise layers
//===----------------------------------------------------------------------===//

def GNN_RowMatrix : TensorRankOf<[F32], [2]>;
def GNN_FloatRowMatrix : TensorRankOf<[F32, F64], [2]>;

def GNN_LinearOp : GNN_Op<"linear", [Pure, AttrSizedOperandSegments]> {
  let summary = "a dense layer applied to every row";
  let description = [{
    `result[n] = weight @ input[n] + bias` for every row `n`, with `weight`
    of shape [out, in] as PyTorch stores it. All rows go through one matrix
    product (a BLAS sgemm on the CPU), so a batch of sequences is one call.
    With `transpose_weight` (and no bias), `result[n] = transpose(weight) @
    input[n]`: the gradient of a layer's input from its output's. With
    `plus %a`, `a[n]` (of the result's shape) is added to every row: a
    residual connection, or the sum of a value's gradients; the CPU product
    then adds into a copy of `a` instead of writing rows that a separate
    kernel reads again (`gnn-fuse-addends` forms it).

    ```mlir
    %q = gnn.linear %x, %wq, %bq
        : (tensor<?x128xf32>, tensor<128x128xf32>, tensor<128xf32>)
        -> tensor<?x128xf32>
    %dx = gnn.linear %dy, %w1 transpose_weight
        : (tensor<?x512xf32>, tensor<512x128xf32>) -> tensor<?x128xf32>
    %r = gnn.linear %h, %wo plus %x
        : (tensor<?x128xf32>, tensor<128x128xf32>, tensor<?x128xf32>)
        -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins GNN_RowMatrix:$input, GNN_RowMatrix:$weight,
                       Optional<1DTensorOf<[F32]>>:$bias,
                       UnitAttr:$transpose_weight,
                       Optional<GNN_RowMatrix>:$addend);
  let results = (outs GNN_RowMatrix:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? (`transpose_weight` $transpose_weight^)?
    (`plus` $addend^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def GNN_OuterSumOp : GNN_Op<"outer_sum", [Pure]> {
  let summary = "the sum over rows of the outer products of two features";
  let description = [{
    `result = sum_n outer(lhs[n], rhs[n])`, i.e. `transpose(lhs) @ rhs`, of
    shape [P, Q] from rows of P and Q elements: the weight gradient of
    `gnn.linear` (the output's gradient against the input). One matrix
    product over all rows (a BLAS sgemm on the CPU); no rows give zeros.

    ```mlir
    %dw = gnn.outer_sum %dy, %x
        : (tensor<?x512xf32>, tensor<?x128xf32>) -> tensor<512x128xf32>
    ```
  }];
  let arguments = (ins GNN_RowMatrix:$lhs, GNN_RowMatrix:$rhs);
  let results = (outs GNN_RowMatrix:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def GNN_LayerNormOp : GNN_Op<"layer_norm", [Pure]> {
  let summary = "layer normalization of every row";
  let description = [{
    `result[n] = (x - mean) / sqrt(var + eps) * weight + bias` over the
    features `x = input[n]` of each row, with the biased variance, as
    `torch.nn.LayerNorm` computes it.

    ```mlir
    %n = gnn.layer_norm %x, %w, %b eps(1.0e-05)
        : (tensor<?x128xf32>, tensor<128xf32>, tensor<128xf32>)
        -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins GNN_RowMatrix:$input, 1DTensorOf<[F32]>:$weight,
                       1DTensorOf<[F32]>:$bias, F64Attr:$eps);
  let results = (outs GNN_RowMatrix:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias `eps` `(` $eps `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def GNN_LayerNormGradOp : GNN_Op<"layer_norm_grad", [Pure]> {
  let summary = "gradients of a layer normalization, one pass per row";
  let description = [{
    The backward of `gnn.layer_norm %input, %weight, %bias eps(eps)` for the
    gradient `grad` of its result, which gnn-differentiate writes for it: per
    row, with `xh = (x - mean) * r`, `r = 1 / sqrt(var + eps)` and
    `g = grad * weight`, `input_grad = r * (g - mean(g) - xh * mean(g * xh))`
    and `normalized_grad = grad * xh`, whose sum over rows is the weight's
    gradient (the bias's is that of `grad`). Each row is read once and its
    statistics recomputed, instead of each term being a tensor of its own.
    With `plus %a`, `a` (of the input's shape) is added to `input_grad`:
    the input's gradient from its other uses, a residual connection's
    (`gnn-fuse-addends` forms it).

    ```mlir
    %dx, %dxh = gnn.layer_norm_grad %x, %w, %dy eps(1.0e-05)
        : (tensor<?x128xf32>, tensor<128xf32>, tensor<?x128xf32>)
        -> (tensor<?x128xf32>, tensor<?x128xf32>)
    %dx2, %dxh2 = gnn.layer_norm_grad %x, %w, %dy plus %dr eps(1.0e-05)
        : (tensor<?x128xf32>, tensor<128xf32>, tensor<?x128xf32>,
           tensor<?x128xf32>) -> (tensor<?x128xf32>, tensor<?x128xf32>)
    ```
  }];
  let arguments = (ins GNN_RowMatrix:$input, 1DTensorOf<[F32]>:$weight,
                       GNN_RowMatrix:$grad, Optional<GNN_RowMatrix>:$addend,
                       F64Attr:$eps);
  let results = (outs GNN_RowMatrix:$input_grad,
                      GNN_RowMatrix:$normalized_grad);
  let assemblyFormat = [{
    $input `,` $weight `,` $grad (`plus` $addend^)? `eps` `(` $eps `)`
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def GNN_LogSoftmaxOp : GNN_Op<"log_softmax", [Pure]> {
  let summary = "log-softmax of every row";
  let description = [{
    `result[n, j] = input[n, j] - log(sum_i exp(input[n, i]))`, computed with
    the row's maximum subtracted first so that it is finite for any inputs.

    ```mlir
    %lp = gnn.log_softmax %logits : (tensor<?x29xf32>) -> tensor<?x29xf32>
    ```
  }];
  let arguments = (ins GNN_FloatRowMatrix:$input);
  let results = (outs GNN_FloatRowMatrix:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tapes of loop iterations
//===----------------------------------------------------------------------===//

def GNN_TapeCreateOp : GNN_Op<"tape_create"> {
  let summary = "an empty tape";
  let description = [{
    A new, empty tape for one run of a differentiated loop; `gnn.tape_free`
    releases it. The tape is freed at most once, by a `gnn.tape_free` in the
    same block after every other use of it.

    ```mlir
    %tape = gnn.tape_create : !gnn.tape
    ```
  }];
  let results = (outs Res<GNN_TapeType, "", [MemAlloc]>:$tape);
  let assemblyFormat = "attr-dict `:` qualified(type($tape))";
  let hasVerifier = 1;
}

def GNN_TapePushOp : GNN_Op<"tape_push"> {
  let summary = "keeps a copy of a tensor on a tape";
  let description = [{
    Pushes a copy of `value` onto `tape`; later changes to the buffer the
    value lives in do not reach the copy.

    ```mlir
    gnn.tape_push %tape, %h : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins Arg<GNN_TapeType, "", [MemRead, MemWrite]>:$tape,
                       AnyRankedTensor:$value);
  let assemblyFormat = "$tape `,` $value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def GNN_TapePopOp : GNN_Op<"tape_pop"> {
  let summary = "takes the tensor pushed last off a tape";
  let description = [{
    Removes the value pushed last from `tape` and returns it. Pops mirror
    pushes: the result type is the pushed value's (its dynamic sizes are
    those it was pushed with).

    ```mlir
    %h = gnn.tape_pop %tape : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins Arg<GNN_TapeType, "", [MemRead, MemWrite]>:$tape);
  let results = (outs AnyRankedTensor:$value);
  let assemblyFormat = "$tape attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def GNN_TapeRefusedOp : GNN_Op<"tape_refused"> {
  let summary = "whether a tape has refused a value";
  let description = [{
    True once a push could not keep its value (the run's tape budget
    passed, or no memory): the run fails, and the loop that fills the tape
    can stop.

    ```mlir
    %full = gnn.tape_refused %tape
    ```
  }];
  let arguments = (ins Arg<GNN_TapeType, "", [MemRead]>:$tape);
  let results = (outs I1:$refused);
  let assemblyFormat = "$tape attr-dict";
}

def GNN_TapeFreeOp : GNN_Op<"tape_free"> {
  let summary = "releases a tape and what is still on it";
  let description = [{
    ```mlir
    gnn.tape_free %tape
    ```
  }];
  let arguments = (ins Arg<GNN_TapeType, "", [MemFree]>:$tape);
  let assemblyFormat = "$tape attr-dict";
}

//===----------------------------------------------------------------------===//
// Results announced early
//===----------------------------------------------------------------------===//

def GNN_ResultReadyOp : GNN_Op<"result_ready", [MemoryEffects<[MemWrite]>]> {
  let summary = "hands a final result to the host before the function returns";
  let description = [{
    Tells the host that `value`, which the enclosing function returns as
    its result number `slot` (numbered as the host sees the function), is
    final: the host's hook on the run's
    context (gnnc/runtime.h) sees its bytes now, while the rest of the
    function still runs. A data-parallel trainer passes each layer's
    gradients on to the other ranks while the backward of the layers
    below is computed. Without a hook the op does nothing;
    `gnn-announce-results` places it.

    ```mlir
    gnn.result_ready %grad, 3 : tensor<128x128xf32>
    ```
  }];
  // It writes the host's state (through the hook), so that it is neither
  // removed nor moved across other effects.
  let arguments = (ins AnyRankedTensor:$value,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$slot);
  let assemblyFormat = "$value `,` $slot attr-dict `:` type($value)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Terminator
//===----------------------------------------------------------------------===//

def GNN_YieldOp : GNN_Op<"yield", [Pure, Terminator,
    ParentOneOf<["ApplyEdgesOp", "ApplyNodesOp", "FilterNodesOp",
                 "FilterEdgesOp"]>]> {
  let summary = "yields the element computed by a user-defined function";
  let description = [{
    Terminates the body of a user-defined function with the element it
    computed.

    ```mlir
    gnn.yield %x : f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{
    build($_builder, $_state, ::mlir::ValueRange());
  }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // GNN_IR_GNNOPS_TD
