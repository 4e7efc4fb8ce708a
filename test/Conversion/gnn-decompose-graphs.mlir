// RUN: gnn-opt %s -gnn-decompose-graphs -split-input-file -verify-diagnostics | FileCheck %s

// A graph argument becomes its six parts (each keeps the graph's argument
// attributes); gnn ops find the graph as a cast of them; calls pass parts.
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: (%[[N:.*]]: index, %[[S:.*]]: tensor<?xindex>, %[[D:.*]]: tensor<?xindex>, %[[P:.*]]: tensor<?xindex>, %[[IS:.*]]: tensor<?xindex>, %[[IE:.*]]: tensor<?xindex>, %[[X:.*]]: tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: %[[G:.*]] = builtin.unrealized_conversion_cast %[[N]], %[[S]], %[[D]], %[[P]], %[[IS]], %[[IE]] : index, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex> to !gnn.graph<complete>
// CHECK: gnn.send_and_recv %[[G]], [copy_u(%[[X]]) -> sum]
func.func private @layer(%g: !gnn.graph<complete>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = gnn.send_and_recv %g, [copy_u(%x) -> sum] : (!gnn.graph<complete>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// Results: a returned graph is returned as its parts, without a cast.
// CHECK-LABEL: func.func private @pass
// CHECK-SAME: (%[[A0:.*]]: index, %[[A1:.*]]: tensor<?xindex>, %[[A2:.*]]: tensor<?xindex>, %[[A3:.*]]: tensor<?xindex>, %[[A4:.*]]: tensor<?xindex>, %[[A5:.*]]: tensor<?xindex>) -> (index, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>)
// CHECK-NEXT: return %[[A0]], %[[A1]], %[[A2]], %[[A3]], %[[A4]], %[[A5]]
func.func private @pass(%g: !gnn.graph<complete>) -> !gnn.graph<complete> {
  return %g : !gnn.graph<complete>
}

// Attributes stay aligned with the arguments after a graph.
// CHECK-LABEL: func.func @f
// CHECK-SAME: %[[G0:[^:]*]]: index {gnn.name = "g"}
// CHECK-SAME: %[[G5:[^:]*]]: tensor<?xindex> {gnn.name = "g"}, %[[H0:[^:]*]]: index,
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x4xf32> {gnn.name = "x"}, %[[C:[^:]*]]: i1, %[[STEPS:[^:]*]]: index)
// CHECK: %[[P:.*]]:6 = call @pass(%[[G0]], {{.*}}, %[[G5]])
// A select picks each part.
// CHECK: %[[S0:.*]] = arith.select %[[C]], %[[P]]#0, %[[H0]] : index
// CHECK-COUNT-5: arith.select %[[C]], {{.*}} : tensor<?xindex>
// A loop carries the parts.
// CHECK: %[[R:.*]]:7 = scf.for {{.*}} iter_args(%[[I0:.*]] = %[[S0]], {{.*}}) -> (index, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?x4xf32>)
// CHECK: func.call @layer(%[[I0]],
// CHECK: scf.yield %[[I0]],
// CHECK: %[[K:.*]]:6 = scf.if %[[C]] -> (index, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>)
// CHECK: scf.yield %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3, %[[R]]#4, %[[R]]#5
// CHECK: scf.yield %[[H0]],
// CHECK: call @layer(%[[K]]#0, %[[K]]#1, %[[K]]#2, %[[K]]#3, %[[K]]#4, %[[K]]#5, %[[R]]#6)
// CHECK-NOT: unrealized_conversion_cast
func.func @f(%g: !gnn.graph<complete> {gnn.name = "g"}, %h: !gnn.graph<complete>,
             %x: tensor<?x4xf32> {gnn.name = "x"}, %c: i1, %n: index) -> tensor<?x4xf32> {
  %p = func.call @pass(%g) : (!gnn.graph<complete>) -> !gnn.graph<complete>
  %s = arith.select %c, %p, %h : !gnn.graph<complete>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%gg = %s, %xx = %x)
      -> (!gnn.graph<complete>, tensor<?x4xf32>) {
    %y = func.call @layer(%gg, %xx) : (!gnn.graph<complete>, tensor<?x4xf32>) -> tensor<?x4xf32>
    scf.yield %gg, %y : !gnn.graph<complete>, tensor<?x4xf32>
  }
  %k = scf.if %c -> !gnn.graph<complete> {
    scf.yield %r#0 : !gnn.graph<complete>
  } else {
    scf.yield %h : !gnn.graph<complete>
  }
  %z = func.call @layer(%k, %r#1) : (!gnn.graph<complete>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %z : tensor<?x4xf32>
}

// -----

// A graph that a gnn op builds leaves through a cast to its parts; a while
// loop carries graphs in both of its regions.
// CHECK-LABEL: func.func private @build
// CHECK: %[[B:.*]] = gnn.graph_from_coo
// CHECK: %[[BP:.*]]:6 = builtin.unrealized_conversion_cast %[[B]] : !gnn.graph<general> to index, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>
// CHECK: return %[[BP]]#0, %[[BP]]#1, %[[BP]]#2, %[[BP]]#3, %[[BP]]#4, %[[BP]]#5
func.func private @build(%s: tensor<?xindex>, %d: tensor<?xindex>, %n: index) -> !gnn.graph<general> {
  %g = gnn.graph_from_coo %s, %d, %n, %n : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
  return %g : !gnn.graph<general>
}

// CHECK-LABEL: func.func @swap
// CHECK: scf.while (%{{.*}} = %{{.*}}, %[[W0:.*]] = %{{.*}}, %{{.*}}) : (index, index, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, index, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>, tensor<?xindex>) -> (index, index, tensor<?xindex>
// CHECK: scf.condition
// CHECK: ^bb0(
// CHECK: scf.yield
// CHECK: gnn.num_edges
func.func @swap(%a: !gnn.graph<general>, %b: !gnn.graph<general>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %w:3 = scf.while (%i = %c0, %x = %a, %y = %b)
      : (index, !gnn.graph<general>, !gnn.graph<general>)
      -> (index, !gnn.graph<general>, !gnn.graph<general>) {
    %more = arith.cmpi ult, %i, %c2 : index
    scf.condition(%more) %i, %x, %y : index, !gnn.graph<general>, !gnn.graph<general>
  } do {
  ^bb0(%i: index, %x: !gnn.graph<general>, %y: !gnn.graph<general>):
    %next = arith.addi %i, %c1 : index
    scf.yield %next, %y, %x : index, !gnn.graph<general>, !gnn.graph<general>
  }
  %e = gnn.num_edges %w#1 : !gnn.graph<general>
  return %e : index
}

// -----

// An op that the decomposition does not know cannot carry a graph.
func.func @switch(%g: !gnn.graph<general>, %h: !gnn.graph<general>, %i: index) -> index {
  // expected-error @+1 {{'scf.index_switch' op yields a !gnn.graph, which cannot be split into its parts here}}
  %r = scf.index_switch %i -> !gnn.graph<general>
  case 0 {
    scf.yield %h : !gnn.graph<general>
  }
  default {
    scf.yield %g : !gnn.graph<general>
  }
  %e = gnn.num_edges %r : !gnn.graph<general>
  return %e : index
}
