// One attention layer over a graph that reaches it through calls, returns,
// loops, branches and selects: every entry computes the tutorial's
// attention over %g (2 heads of 4 features, scale 1/sqrt(4), clamp 5).

// The layer, in its own function (fused unless gnn-run --no-fuse).
func.func private @attend(%g: !gnn.graph<general>, %q: tensor<?x2x4xf32>,
                          %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>)
    -> tensor<?x2x4xf32> {
  %s = gnn.apply_edges %g, u_dot_v(%k, %q)
      : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x1xf32>
  %e = gnn.apply_edges %g, copy_e(%s) then [scale(0.5), clamp(-5.0, 5.0), exp]
      : (!gnn.graph<general>, tensor<?x2x1xf32>) -> tensor<?x2x1xf32>
  %wv, %z = gnn.send_and_recv %g, [u_mul_e(%v, %e) -> sum, copy_e(%e) -> sum]
      : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>)
      -> (tensor<?x2x4xf32>, tensor<?x2x1xf32>)
  %out = gnn.apply_nodes(%wv, %z) {
  ^bb0(%a: f32, %b: f32):
    %d = arith.divf %a, %b : f32
    gnn.yield %d : f32
  } : (tensor<?x2x4xf32>, tensor<?x2x1xf32>) -> tensor<?x2x4xf32>
  return %out : tensor<?x2x4xf32>
}

// Returns its argument.
func.func private @through(%g: !gnn.graph<general>) -> !gnn.graph<general> {
  return %g : !gnn.graph<general>
}

// Returns a graph built inside the function: the same edges, same ids.
func.func private @rebuild(%g: !gnn.graph<general>) -> !gnn.graph<general> {
  %src, %dst = gnn.edge_endpoints %g
      : !gnn.graph<general> -> tensor<?xindex>, tensor<?xindex>
  %ns = gnn.num_src_nodes %g : !gnn.graph<general>
  %nd = gnn.num_dst_nodes %g : !gnn.graph<general>
  %r = gnn.graph_from_coo %src, %dst, %ns, %nd
      : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
  return %r : !gnn.graph<general>
}

// An empty graph on the same nodes: what the selects must not pick.
func.func private @empty(%g: !gnn.graph<general>) -> !gnn.graph<general> {
  %none = tensor.empty() : tensor<0xindex>
  %ids = tensor.cast %none : tensor<0xindex> to tensor<?xindex>
  %ns = gnn.num_src_nodes %g : !gnn.graph<general>
  %nd = gnn.num_dst_nodes %g : !gnn.graph<general>
  %r = gnn.graph_from_coo %ids, %ids, %ns, %nd
      : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
  return %r : !gnn.graph<general>
}

// Through a call, a rebuilt graph, a select and a loop that carries the
// graph and calls the layer in each of its three iterations.
func.func @loop(%g: !gnn.graph<general>, %q: tensor<?x2x4xf32>,
                %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>)
    -> tensor<?x2x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %g1 = func.call @through(%g) : (!gnn.graph<general>) -> !gnn.graph<general>
  %g2 = func.call @rebuild(%g1) : (!gnn.graph<general>) -> !gnn.graph<general>
  %none = func.call @empty(%g) : (!gnn.graph<general>) -> !gnn.graph<general>
  %n = gnn.num_edges %g : !gnn.graph<general>
  %some = arith.cmpi ugt, %n, %c0 : index
  %picked = arith.select %some, %g2, %none : !gnn.graph<general>
  %r:2 = scf.for %i = %c0 to %c3 step %c1
      iter_args(%gi = %picked, %acc = %q) -> (!gnn.graph<general>, tensor<?x2x4xf32>) {
    %a = func.call @attend(%gi, %q, %k, %v)
        : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>)
        -> tensor<?x2x4xf32>
    %next = func.call @through(%gi) : (!gnn.graph<general>) -> !gnn.graph<general>
    scf.yield %next, %a : !gnn.graph<general>, tensor<?x2x4xf32>
  }
  return %r#1 : tensor<?x2x4xf32>
}

// Through a while loop that swaps two graphs twice and an if that picks one.
func.func @branch(%g: !gnn.graph<general>, %q: tensor<?x2x4xf32>,
                  %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>)
    -> tensor<?x2x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %none = func.call @empty(%g) : (!gnn.graph<general>) -> !gnn.graph<general>
  %w:3 = scf.while (%i = %c0, %a = %g, %b = %none)
      : (index, !gnn.graph<general>, !gnn.graph<general>)
      -> (index, !gnn.graph<general>, !gnn.graph<general>) {
    %more = arith.cmpi ult, %i, %c2 : index
    scf.condition(%more) %i, %a, %b
        : index, !gnn.graph<general>, !gnn.graph<general>
  } do {
  ^bb0(%i: index, %a: !gnn.graph<general>, %b: !gnn.graph<general>):
    %next = arith.addi %i, %c1 : index
    scf.yield %next, %b, %a : index, !gnn.graph<general>, !gnn.graph<general>
  }
  %e = gnn.num_edges %w#2 : !gnn.graph<general>
  %empty = arith.cmpi eq, %e, %c0 : index
  %chosen = scf.if %empty -> !gnn.graph<general> {
    scf.yield %w#1 : !gnn.graph<general>
  } else {
    scf.yield %w#2 : !gnn.graph<general>
  }
  %out = func.call @attend(%chosen, %q, %k, %v)
      : (!gnn.graph<general>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>)
      -> tensor<?x2x4xf32>
  return %out : tensor<?x2x4xf32>
}
