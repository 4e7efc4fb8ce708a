// RUN: gnn-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{unknown message function 'u_pow_v'}}
func.func @f() attributes {a = #gnn.fn<u_pow_v>} { return }

// -----

// expected-error @+1 {{unknown message function 'u_add_u'}}
func.func @f() attributes {a = #gnn.fn<u_add_u>} { return }

// -----

// expected-error @+1 {{unknown elementwise function 'tanh'}}
func.func @f() attributes {a = #gnn.unary<tanh>} { return }

// -----

// expected-error @+1 {{clamp bounds are reversed: lower bound 5.000000e+00 exceeds upper bound -5.000000e+00}}
func.func @f() attributes {a = #gnn.unary<clamp(5.0, -5.0)>} { return }

// -----

// expected-error @+1 {{constants of 'scale' must be finite}}
func.func @f() attributes {a = #gnn.unary<scale(1.0e+400)>} { return }

// -----

// expected-error @+1 {{unknown graph structure 'dense'}}
func.func @f(%g: !gnn.graph<dense>) { return }

// -----

// expected-error @+1 {{expected 'src', 'dst' or 'edges' (in this order), got 'src'}}
func.func @f(%g: !gnn.graph<general, dst = 3, src = 2>) { return }

// -----

// expected-error @+1 {{graph 'edges' count must be non-negative, got -1}}
func.func @f(%g: !gnn.graph<general, edges = -1>) { return }

// -----

// expected-error @+1 {{a complete graph has one node space, but src = 3 and dst = 4}}
func.func @f(%g: !gnn.graph<complete, src = 3, dst = 4>) { return }

// -----

// expected-error @+1 {{a causal graph of 3 x 3 nodes cannot have 10 edges}}
func.func @f(%g: !gnn.graph<causal, src = 3, dst = 3, edges = 10>) { return }

// -----

func.func @f(%s: tensor<3xindex>, %d: tensor<4xindex>, %n: index) {
  // expected-error @+1 {{has 3 source ids but 4 destination ids}}
  %g = gnn.graph_from_coo %s, %d, %n, %n : tensor<3xindex>, tensor<4xindex> -> !gnn.graph<general>
  return
}

// -----

func.func @f(%s: tensor<3xindex>, %n: index) {
  // expected-error @+1 {{result type promises 4 edges, but 3 ids are given}}
  %g = gnn.graph_from_coo %s, %s, %n, %n : tensor<3xindex>, tensor<3xindex> -> !gnn.graph<general, edges = 4>
  return
}

// -----

func.func @f(%g: !gnn.graph<general, edges = 5>) {
  // expected-error @+1 {{result has 4 ids, but the graph has 5 edges}}
  %s, %d = gnn.edge_endpoints %g : !gnn.graph<general, edges = 5> -> tensor<4xindex>, tensor<?xindex>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x4xf32>) {
  // expected-error @+1 {{'u_dot_v' takes 2 operand(s), got 1}}
  %0 = gnn.apply_edges %g, u_dot_v(%a) : (!gnn.graph<general>, tensor<?x4xf32>) -> tensor<?x1xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x4xi32>) {
  // expected-error @+1 {{operand #0 of 'copy_u' must have a float element type, got 'tensor<?x4xi32>'}}
  %0 = gnn.apply_edges %g, copy_u(%a) : (!gnn.graph<general>, tensor<?x4xi32>) -> tensor<?x4xi32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x4xf32>, %b: tensor<?x4xf16>) {
  // expected-error @+1 {{operand #1 of 'u_add_v' has element type 'f16', but the result has 'f32'}}
  %0 = gnn.apply_edges %g, u_add_v(%a, %b) : (!gnn.graph<general>, tensor<?x4xf32>, tensor<?x4xf16>) -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general, src = 3>, %a: tensor<4x2xf32>) {
  // expected-error @+1 {{operand #0 of 'copy_u' has 4 rows, but the graph has 3 source nodes}}
  %0 = gnn.apply_edges %g, copy_u(%a) : (!gnn.graph<general, src = 3>, tensor<4x2xf32>) -> tensor<?x2xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %a: tensor<5x2xf32>, %b: tensor<6x2xf32>) {
  // expected-error @+1 {{result has 5 rows, but operand #1 of 'u_add_e' has 6 edges}}
  %0 = gnn.apply_edges %g, u_add_e(%a, %b) : (!gnn.graph<complete>, tensor<5x2xf32>, tensor<6x2xf32>) -> tensor<5x2xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x8x64xf32>, %b: tensor<?x4x64xf32>) {
  // expected-error @+1 {{operands of 'u_mul_v' have per-row shapes [8, 64] and [4, 64] that do not broadcast}}
  %0 = gnn.apply_edges %g, u_mul_v(%a, %b) : (!gnn.graph<general>, tensor<?x8x64xf32>, tensor<?x4x64xf32>) -> tensor<?x8x64xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?xf32>) {
  // expected-error @+1 {{'u_dot_v' needs features with a per-row dimension}}
  %0 = gnn.apply_edges %g, u_dot_v(%a, %a) : (!gnn.graph<general>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x8x64xf32>) {
  // expected-error @+1 {{result has per-row shape [8, 64], but its inputs give [8, 1]}}
  %0 = gnn.apply_edges %g, u_dot_v(%a, %a) : (!gnn.graph<general>, tensor<?x8x64xf32>, tensor<?x8x64xf32>) -> tensor<?x8x64xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general, edges = 7>, %a: tensor<?x1xf32>) {
  // expected-error @+1 {{result has 6 rows, but the graph has 7 edges}}
  %0 = gnn.apply_edges %g, copy_e(%a) then [exp] : (!gnn.graph<general, edges = 7>, tensor<?x1xf32>) -> tensor<6x1xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x1xf32>) {
  // expected-error @+1 {{has an empty elementwise chain}}
  %0 = gnn.apply_edges %g, copy_e(%a) then [] : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %h: !gnn.graph<general>, %m: tensor<?xi1>, %a: tensor<?x1xf32>) {
  %e = gnn.filter_edges %h, (v %m) {
  ^bb0(%x: i1):
    gnn.yield %x : i1
  } : (!gnn.graph<general>, tensor<?xi1>) -> tensor<?xindex>
  // expected-error @+1 {{edge subset was filtered from a different graph}}
  %0 = gnn.apply_edges %g, copy_e(%a) edges(%e) : (!gnn.graph<general>, tensor<?x1xf32>, tensor<?xindex>) -> tensor<?x1xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x1xf32>) {
  // expected-error @+1 {{needs a built-in message function or a body}}
  %0 = "gnn.apply_edges"(%g, %a) <{operandSegmentSizes = array<i32: 1, 1, 0>, roles = [2 : i32]}> ({
  }) : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x1xf32>) {
  // expected-error @+1 {{has both a built-in function and a body}}
  %0 = "gnn.apply_edges"(%g, %a) <{fn = #gnn.fn<copy_e>, operandSegmentSizes = array<i32: 1, 1, 0>}> ({
  ^bb0(%x: f32):
    gnn.yield %x : f32
  }) : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x1xf32>) {
  // expected-error @+1 {{built-in functions determine input targets}}
  %0 = "gnn.apply_edges"(%g, %a) <{fn = #gnn.fn<copy_e>, operandSegmentSizes = array<i32: 1, 1, 0>, roles = [2 : i32]}> ({
  }) : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x1xf32>) {
  // expected-error @+1 {{takes elementwise functions only after a built-in function}}
  %0 = "gnn.apply_edges"(%g, %a) <{operandSegmentSizes = array<i32: 1, 1, 0>, roles = [2 : i32], post = [#gnn.unary<exp>]}> ({
  ^bb0(%x: f32):
    gnn.yield %x : f32
  }) : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x1xf32>) {
  // expected-error @+1 {{needs one target per input}}
  %0 = "gnn.apply_edges"(%g, %a) <{operandSegmentSizes = array<i32: 1, 1, 0>, roles = [2 : i32, 0 : i32]}> ({
  ^bb0(%x: f32):
    gnn.yield %x : f32
  }) : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>) {
  // expected-error @+1 {{body needs at least one input}}
  %0 = gnn.apply_edges %g, () {
    %c = arith.constant 1.0 : f32
    gnn.yield %c : f32
  } : (!gnn.graph<general>) -> tensor<?xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x3xf32>, %b: tensor<?x4xf32>) {
  // expected-error @+1 {{input #1 has per-row shape [4], which does not broadcast with [3]}}
  %0 = gnn.apply_edges %g, (u %a, v %b) {
  ^bb0(%x: f32, %y: f32):
    gnn.yield %x : f32
  } : (!gnn.graph<general>, tensor<?x3xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x3xf32>) {
  // expected-error @+1 {{body takes 2 argument(s), but the op has 1 input(s)}}
  %0 = gnn.apply_edges %g, (u %a) {
  ^bb0(%x: f32, %y: f32):
    gnn.yield %x : f32
  } : (!gnn.graph<general>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x3xf32>) {
  // expected-error @+1 {{body argument #0 has type 'f16', but input #0 has element type 'f32'}}
  %0 = gnn.apply_edges %g, (u %a) {
  ^bb0(%x: f16):
    %c = arith.constant 1.0 : f32
    gnn.yield %c : f32
  } : (!gnn.graph<general>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x3xf32>) {
  // expected-error @+1 {{body must yield ('f32'), got ('f32', 'f32')}}
  %0 = gnn.apply_edges %g, (e %a) {
  ^bb0(%x: f32):
    gnn.yield %x, %x : f32, f32
  } : (!gnn.graph<general>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x3xf32>, %m: memref<f32>) {
  %0 = gnn.apply_edges %g, (e %a) {
  ^bb0(%x: f32):
    // expected-error @+1 {{has side effects, which the body of 'gnn.apply_edges' must not have}}
    memref.store %x, %m[] : memref<f32>
    gnn.yield %x : f32
  } : (!gnn.graph<general>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x3xf32>, %t: tensor<3xf32>) {
  %0 = gnn.apply_edges %g, (e %a) {
  ^bb0(%x: f32):
    // expected-error @+1 {{produces 'tensor<3xf32>', but the body of 'gnn.apply_edges' computes on single elements}}
    %y = arith.addf %t, %t : tensor<3xf32>
    gnn.yield %x : f32
  } : (!gnn.graph<general>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x3xf32>) {
  // expected-error @+1 {{unknown reduce function 'prod'; expected sum, max, min or mean}}
  %0 = gnn.send_and_recv %g, [copy_u(%a) -> prod] : (!gnn.graph<general>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x3xf32>) {
  // expected-error @+1 {{'u_mul_e' takes 2 operand(s), got 1}}
  %0 = gnn.send_and_recv %g, [u_mul_e(%a) -> sum] : (!gnn.graph<general>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>) {
  // expected-error @+1 {{needs at least one message/reduce pair}}
  gnn.send_and_recv %g, [] : (!gnn.graph<general>) -> ()
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x3xf32>) {
  // expected-error @+1 {{has 1 message/reduce pairs but 2 results}}
  %0:2 = gnn.send_and_recv %g, [copy_u(%a) -> sum] : (!gnn.graph<general>, tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>)
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x3xf32>) {
  // expected-error @+1 {{has 1 message functions but 2 reduce functions}}
  %0 = "gnn.send_and_recv"(%g, %a) <{messages = [#gnn.fn<copy_u>], reducers = [0 : i32, 0 : i32], operandSegmentSizes = array<i32: 1, 1, 0>}> : (!gnn.graph<general>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x3xf32>) {
  // expected-error @+1 {{message functions take 1 operands, got 2}}
  %0 = "gnn.send_and_recv"(%g, %a, %a) <{messages = [#gnn.fn<copy_u>], reducers = [0 : i32], operandSegmentSizes = array<i32: 1, 2, 0>}> : (!gnn.graph<general>, tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<bipartite, dst = 4>, %a: tensor<?x3xf32>) {
  // expected-error @+1 {{result #0 has 5 rows, but the graph has 4 destination nodes}}
  %0 = gnn.send_and_recv %g, [copy_u(%a) -> sum] : (!gnn.graph<bipartite, dst = 4>, tensor<?x3xf32>) -> tensor<5x3xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?x8x16xf32>, %e: tensor<?x8x1xf32>) {
  // expected-error @+1 {{result #1 has per-row shape [8, 16], but its inputs give [8, 1]}}
  %0:2 = gnn.send_and_recv %g, [u_mul_e(%a, %e) -> sum, copy_e(%e) -> sum] : (!gnn.graph<general>, tensor<?x8x16xf32>, tensor<?x8x1xf32>, tensor<?x8x1xf32>) -> (tensor<?x8x16xf32>, tensor<?x8x16xf32>)
  return
}

// -----

func.func @f(%g: !gnn.graph<general, edges = 3>, %e: tensor<4x1xf32>) {
  // expected-error @+1 {{input has 4 rows, but the graph has 3 edges}}
  %0 = gnn.reduce %g, sum(%e) : (!gnn.graph<general, edges = 3>, tensor<4x1xf32>) -> tensor<?x1xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %e: tensor<?x1xf32>) {
  // expected-error @+1 {{result element type differs from the input's}}
  %0 = gnn.reduce %g, max(%e) : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf64>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %e: tensor<?x1xf32>) {
  // expected-error @+1 {{result has per-row shape [2], but its inputs give [1]}}
  %0 = gnn.reduce %g, mean(%e) : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x2xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %e: tensor<?x1xi8>) {
  // expected-error @+1 {{input must have a float element type, got 'tensor<?x1xi8>'}}
  %0 = gnn.reduce %g, min(%e) : (!gnn.graph<general>, tensor<?x1xi8>) -> tensor<?x1xi8>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{needs at least one input}}
  %0 = gnn.apply_nodes() {
    %c = arith.constant 1.0 : f32
    gnn.yield %c : f32
  } : () -> tensor<?xf32>
  return
}

// -----

func.func @f(%a: tensor<?x2xf32>) {
  // expected-error @+1 {{needs at least one result}}
  gnn.apply_nodes(%a) {
  ^bb0(%x: f32):
    gnn.yield
  } : (tensor<?x2xf32>) -> ()
  return
}

// -----

func.func @f(%a: tensor<?x2xf32>) {
  // expected-error @+1 {{result #1 has shape [?, 1], but result #0 has [?, 2]}}
  %0:2 = gnn.apply_nodes(%a) {
  ^bb0(%x: f32):
    gnn.yield %x, %x : f32, f32
  } : (tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x1xf32>)
  return
}

// -----

func.func @f(%a: tensor<?x2xf32>) {
  // expected-error @+1 {{result #1 has shape [4, 2], but result #0 has [?, 2]}}
  %0:2 = gnn.apply_nodes(%a) {
  ^bb0(%x: f32):
    gnn.yield %x, %x : f32, f32
  } : (tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<4x2xf32>)
  return
}

// -----

func.func @f(%a: tensor<?x2xf32>) {
  // expected-error @+1 {{result #0 has per-row shape [3], but its inputs give [2]}}
  %0:2 = gnn.apply_nodes(%a) {
  ^bb0(%x: f32):
    gnn.yield %x, %x : f32, f32
  } : (tensor<?x2xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>)
  return
}

// -----

func.func @f(%a: tensor<?x2xf32>) {
  // expected-error @+1 {{body must yield ('f32', 'i1'), got ('f32', 'f32')}}
  %0:2 = gnn.apply_nodes(%a) {
  ^bb0(%x: f32):
    gnn.yield %x, %x : f32, f32
  } : (tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xi1>)
  return
}

// -----

func.func @f(%a: tensor<?x2xf32>) {
  // expected-error @+1 {{body must yield ('f32', 'f32'), got ('f32')}}
  %0:2 = gnn.apply_nodes(%a) {
  ^bb0(%x: f32):
    gnn.yield %x : f32
  } : (tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
  return
}

// -----

func.func @f(%a: tensor<3x2xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{input #1 has 4 rows, but input #0 has 3 destination nodes}}
  %0 = gnn.apply_nodes(%a, %b) {
  ^bb0(%x: f32, %y: f32):
    gnn.yield %x : f32
  } : (tensor<3x2xf32>, tensor<4x2xf32>) -> tensor<?x2xf32>
  return
}

// -----

func.func @f(%a: tensor<?x8x64xf32>, %b: tensor<?x8x1xf32>) {
  // expected-error @+1 {{result has per-row shape [8, 1], but its inputs give [8, 64]}}
  %0 = gnn.apply_nodes(%a, %b) {
  ^bb0(%x: f32, %y: f32):
    %d = arith.divf %x, %y : f32
    gnn.yield %d : f32
  } : (tensor<?x8x64xf32>, tensor<?x8x1xf32>) -> tensor<?x8x1xf32>
  return
}

// -----

func.func @f(%a: tensor<?x2xi1>) {
  // expected-error @+1 {{input #0 has per-row shape [2], but a predicate needs one element per row}}
  %0 = gnn.filter_nodes(%a) {
  ^bb0(%x: i1):
    gnn.yield %x : i1
  } : (tensor<?x2xi1>) -> tensor<?xindex>
  return
}

// -----

func.func @f(%a: tensor<?xf32>) {
  // expected-error @+1 {{body must yield ('i1'), got ('f32')}}
  %0 = gnn.filter_nodes(%a) {
  ^bb0(%x: f32):
    gnn.yield %x : f32
  } : (tensor<?xf32>) -> tensor<?xindex>
  return
}

// -----

func.func @f(%g: !gnn.graph<general, edges = 4>, %a: tensor<5xf32>) {
  // expected-error @+1 {{input #0 has 5 rows, but the graph has 4 edges}}
  %0 = gnn.filter_edges %g, (e %a) {
  ^bb0(%x: f32):
    %t = arith.constant true
    gnn.yield %t : i1
  } : (!gnn.graph<general, edges = 4>, tensor<5xf32>) -> tensor<?xindex>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %h: !gnn.graph<general>, %a: tensor<?xi1>) {
  %e = gnn.filter_edges %h, (e %a) {
  ^bb0(%x: i1):
    gnn.yield %x : i1
  } : (!gnn.graph<general>, tensor<?xi1>) -> tensor<?xindex>
  // expected-error @+1 {{edge subset was filtered from a different graph}}
  %f = gnn.filter_edges %g, (e %a) from %e {
  ^bb0(%x: i1):
    gnn.yield %x : i1
  } : (!gnn.graph<general>, tensor<?xi1>, tensor<?xindex>) -> tensor<?xindex>
  return
}

// -----

func.func @f(%g: !gnn.graph<general>, %a: tensor<?xi1>) {
  // expected-error @+1 {{expected input target 'u', 'v' or 'e', got 'w'}}
  %e = gnn.filter_edges %g, (w %a) {
  ^bb0(%x: i1):
    gnn.yield %x : i1
  } : (!gnn.graph<general>, tensor<?xi1>) -> tensor<?xindex>
  return
}

// -----

func.func @f(%x: tensor<?x4xf32>, %ids: tensor<3xindex>) {
  // expected-error @+1 {{result has 2 rows, but 3 ids are given}}
  %0 = gnn.gather_rows %x[%ids] : (tensor<?x4xf32>, tensor<3xindex>) -> tensor<2x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x4xf32>, %ids: tensor<?xindex>) {
  // expected-error @+1 {{result has per-row shape [5], but its inputs give [4]}}
  %0 = gnn.gather_rows %x[%ids] : (tensor<?x4xf32>, tensor<?xindex>) -> tensor<?x5xf32>
  return
}

// -----

// A 0-d result has no rows (its verifier crashed reading the per-row shape
// of one; found by gnn-mutate).
func.func @f(%x: tensor<?x4xf32>, %ids: tensor<?xindex>) {
  // expected-error @+1 {{result must have a leading row dimension}}
  %0 = gnn.gather_rows %x[%ids] : (tensor<?x4xf32>, tensor<?xindex>) -> tensor<f32>
  return
}

// -----

func.func @f(%x: tensor<f32>, %ids: tensor<?xindex>) {
  // expected-error @+1 {{source must have a leading row dimension}}
  %0 = gnn.gather_rows %x[%ids] : (tensor<f32>, tensor<?xindex>) -> tensor<?xf32>
  return
}

// -----

func.func @f(%s: tensor<f32>, %x: tensor<?xf32>, %ids: tensor<?xindex>) {
  // expected-error @+1 {{source must have a leading row dimension}}
  %0 = gnn.scatter_rows %s into %x[%ids] : (tensor<f32>, tensor<?xf32>, tensor<?xindex>) -> tensor<?xf32>
  return
}

// -----

func.func @f(%s: tensor<?xf32>, %x: tensor<f32>, %ids: tensor<?xindex>) {
  // expected-error @+1 {{destination must have a leading row dimension}}
  %0 = gnn.scatter_rows %s into %x[%ids] : (tensor<?xf32>, tensor<f32>, tensor<?xindex>) -> tensor<f32>
  return
}

// -----

func.func @f(%s: tensor<?x4xf16>, %x: tensor<?x4xf32>, %ids: tensor<?xindex>) {
  // expected-error @+1 {{source element type differs from the destination's}}
  %0 = gnn.scatter_rows %s into %x[%ids] : (tensor<?x4xf16>, tensor<?x4xf32>, tensor<?xindex>) -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%s: tensor<?x4xf32>, %x: tensor<?x4xf32>, %ids: tensor<?xindex>) {
  // expected-error @+1 {{result type 'tensor<?x5xf32>' differs from the destination type 'tensor<?x4xf32>'}}
  %0 = gnn.scatter_rows %s into %x[%ids] : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?xindex>) -> tensor<?x5xf32>
  return
}

// -----

func.func @f(%s: tensor<2x4xf32>, %x: tensor<?x4xf32>, %ids: tensor<3xindex>) {
  // expected-error @+1 {{source has 2 rows, but 3 ids are given}}
  %0 = gnn.scatter_rows %s into %x[%ids] : (tensor<2x4xf32>, tensor<?x4xf32>, tensor<3xindex>) -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%x: f32) {
  // expected-error @+1 {{expects parent op to be one of}}
  gnn.yield %x : f32
}

// -----

func.func @f(%g: !gnn.graph<complete>, %q: tensor<?x2x8xf32>) {
  // expected-error @+1 {{has 3 results, but a normalized attention has 1 (the output) or 2 (and its log-sum-exp)}}
  %0:3 = gnn.fused_attention %g, %q, %q, %q scale(1.0) normalize : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> (tensor<?x2x8xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>)
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %q: tensor<?x2x8xf32>) {
  // expected-error @+1 {{result #1 has per-row shape [2, 8], but its inputs give [2, 1]}}
  %0:2 = gnn.fused_attention %g, %q, %q, %q scale(1.0) normalize : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>)
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %q: tensor<?x2x8xf32>) {
  // expected-error @+1 {{has 1 results, but an unnormalized attention has 2}}
  %0 = gnn.fused_attention %g, %q, %q, %q scale(1.0) : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %q: tensor<?x2x8xf32>) {
  // expected-error @+1 {{clamp bounds are reversed}}
  %0 = gnn.fused_attention %g, %q, %q, %q scale(1.0) clamp(3.0, -3.0) normalize : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %q: tensor<?x2x8xf32>) {
  // expected-error @+1 {{needs both clamp bounds or neither}}
  %0 = "gnn.fused_attention"(%g, %q, %q, %q) <{scale = 1.0 : f64, clamp_lo = -1.0 : f64, normalize}> : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %q: tensor<?x2x8xf32>, %k: tensor<?x2x4xf32>) {
  // expected-error @+1 {{query per-row shape [2, 8] differs from the key's [2, 4]}}
  %0 = gnn.fused_attention %g, %q, %k, %q scale(1.0) normalize : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x4xf32>, tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %q: tensor<?x2x8xf32>, %v: tensor<?x3x8xf32>) {
  // expected-error @+1 {{value per-row shape [3, 8] does not have the query's heads [2]}}
  %0 = gnn.fused_attention %g, %q, %q, %v scale(1.0) normalize : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x3x8xf32>) -> tensor<?x3x8xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<bipartite, src = 3, dst = 4>, %q: tensor<4x2x8xf32>, %k: tensor<5x2x8xf32>) {
  // expected-error @+1 {{key has 5 rows, but the graph has 3 source nodes}}
  %0 = gnn.fused_attention %g, %q, %k, %k scale(1.0) normalize : (!gnn.graph<bipartite, src = 3, dst = 4>, tensor<4x2x8xf32>, tensor<5x2x8xf32>, tensor<5x2x8xf32>) -> tensor<4x2x8xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %q: tensor<?x2x8xf32>) {
  // expected-error @+1 {{result #1 has per-row shape [2, 8], but its inputs give [2, 1]}}
  %0:2 = gnn.fused_attention %g, %q, %q, %q scale(1.0) : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>) -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>)
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %q: tensor<?xf32>) {
  // expected-error @+1 {{query needs a per-row feature dimension}}
  %0 = gnn.fused_attention %g, %q, %q, %q scale(1.0) normalize : (!gnn.graph<complete>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<4x6xf32>) {
  // expected-error @+1 {{input width differs from the weight's columns (8 vs 6)}}
  %0 = gnn.linear %x, %w : (tensor<?x8xf32>, tensor<4x6xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{bias size differs from the weight's rows (5 vs 4)}}
  %0 = gnn.linear %x, %w, %b : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<5xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{result width differs from the layer's (3 vs 4)}}
  %0 = gnn.linear %x, %w : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @f(%x: tensor<3x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{result has 2 rows, but input #0 has 3}}
  %0 = gnn.linear %x, %w : (tensor<3x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %r: tensor<?x5xf32>) {
  // expected-error @+1 {{addend shape [?, 5] differs from the result's [?, 4]}}
  %0 = gnn.linear %x, %w plus %r : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<?x5xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @f(%x: tensor<3x8xf32>, %w: tensor<4x8xf32>, %r: tensor<2x4xf32>) {
  // expected-error @+1 {{addend shape [2, 4] differs from the result's [3, 4]}}
  %0 = gnn.linear %x, %w plus %r : (tensor<3x8xf32>, tensor<4x8xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf64>, %w: tensor<4x8xf64>) {
  // expected-error @+1 {{operand #0 must be 2D tensor of 32-bit float values}}
  %0 = gnn.linear %x, %w : (tensor<?x8xf64>, tensor<4x8xf64>) -> tensor<?x4xf64>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<7xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{weight size differs from the input width (7 vs 8)}}
  %0 = gnn.layer_norm %x, %w, %b eps(1.0e-05) : (tensor<?x8xf32>, tensor<7xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{needs a positive eps}}
  %0 = gnn.layer_norm %x, %w, %w eps(0.0) : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<7xf32>, %dy: tensor<?x8xf32>) {
  // expected-error @+1 {{weight size differs from the input width (7 vs 8)}}
  %0:2 = gnn.layer_norm_grad %x, %w, %dy eps(1.0e-05) : (tensor<?x8xf32>, tensor<7xf32>, tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<8xf32>, %dy: tensor<?x8xf32>) {
  // expected-error @+1 {{needs a positive eps}}
  %0:2 = gnn.layer_norm_grad %x, %w, %dy eps(-1.0) : (tensor<?x8xf32>, tensor<8xf32>, tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>, %w: tensor<8xf32>, %dy: tensor<?x4xf32>) {
  // expected-error @+1 {{gradient width differs from the input's (4 vs 8)}}
  %0:2 = gnn.layer_norm_grad %x, %w, %dy eps(1.0e-05) : (tensor<?x8xf32>, tensor<8xf32>, tensor<?x4xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<5x8xf32>, %w: tensor<8xf32>, %dy: tensor<5x8xf32>) {
  // expected-error @+1 {{result has 6 rows, but input #0 has 5 destination nodes}}
  %0:2 = gnn.layer_norm_grad %x, %w, %dy eps(1.0e-05) : (tensor<5x8xf32>, tensor<8xf32>, tensor<5x8xf32>) -> (tensor<5x8xf32>, tensor<6x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<5x8xf32>, %w: tensor<8xf32>, %dy: tensor<4x8xf32>) {
  // expected-error @+1 {{input #1 has 4 rows, but input #0 has 5 destination nodes}}
  %0:2 = gnn.layer_norm_grad %x, %w, %dy eps(1.0e-05) : (tensor<5x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> (tensor<5x8xf32>, tensor<5x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<5x8xf32>, %w: tensor<8xf32>, %dy: tensor<5x8xf32>, %r: tensor<5x7xf32>) {
  // expected-error @+1 {{addend shape [5, 7] differs from the result's [5, 8]}}
  %0:2 = gnn.layer_norm_grad %x, %w, %dy plus %r eps(1.0e-05) : (tensor<5x8xf32>, tensor<8xf32>, tensor<5x8xf32>, tensor<5x7xf32>) -> (tensor<5x8xf32>, tensor<5x8xf32>)
  return
}

// -----

func.func @f(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{result width differs from the layer's (9 vs 8)}}
  %0 = gnn.log_softmax %x : (tensor<?x8xf32>) -> tensor<?x9xf32>
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %n: tensor<?xindex>) {
  // expected-error @+1 {{result must be a general graph}}
  %s, %e = gnn.in_subgraph %g, %n : (!gnn.graph<complete>, tensor<?xindex>) -> (!gnn.graph<complete>, tensor<?xindex>)
  return
}

// -----

func.func @f(%g: !gnn.graph<complete, src = 4, dst = 4, edges = 16>, %n: tensor<?xindex>) {
  // expected-error @+1 {{result promises 5 source nodes, but sources are the parent's}}
  %s, %e = gnn.in_subgraph %g, %n : (!gnn.graph<complete, src = 4, dst = 4, edges = 16>, tensor<?xindex>) -> (!gnn.graph<general, src = 5>, tensor<?xindex>)
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %n: tensor<3xindex>) {
  // expected-error @+1 {{result promises 2 destination nodes, but 3 nodes are listed}}
  %s, %e = gnn.in_subgraph %g, %n : (!gnn.graph<complete>, tensor<3xindex>) -> (!gnn.graph<general, dst = 2>, tensor<?xindex>)
  return
}

// -----

func.func @f(%g: !gnn.graph<complete>, %n: tensor<?xindex>) {
  // expected-error @+1 {{result promises 6 edges, but has 5 edge ids}}
  %s, %e = gnn.in_subgraph %g, %n : (!gnn.graph<complete>, tensor<?xindex>) -> (!gnn.graph<general, edges = 6>, tensor<5xindex>)
  return
}

// -----

// expected-error @+1 {{'gnn.name' must be a non-empty string}}
func.func @name_not_a_string(%x: tensor<?xf32> {gnn.name = 3 : i64}) {
  return
}

// -----

// expected-error @+1 {{'gnn.name' must be a non-empty string}}
func.func @empty_name(%x: tensor<?xf32> {gnn.name = ""}) {
  return
}

// -----

// expected-error @+1 {{'gnn.updates' is not an argument attribute of the gnn dialect (gnn.name, gnn.differentiable, gnn.runtime_context, gnn.read_only)}}
func.func @updates_on_an_argument(%x: tensor<?xf32> {gnn.updates = "x"}) {
  return
}

// -----

// expected-error @+1 {{'gnn.runtime_context' must be a unit attribute}}
func.func @context_with_a_value(%x: tensor<?xf32> {gnn.runtime_context = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'gnn.updates' names 'cache', which is no argument's gnn.name}}
func.func @updates_unknown_argument(%x: tensor<?xf32> {gnn.name = "x"})
    -> (tensor<?xf32> {gnn.updates = "cache"}) {
  return %x : tensor<?xf32>
}

// -----

// expected-error @+1 {{'gnn.label' is not a result attribute of the gnn dialect (gnn.name, gnn.updates)}}
func.func @unknown_result_attribute(%x: tensor<?xf32>) -> (tensor<?xf32> {gnn.label = "y"}) {
  return %x : tensor<?xf32>
}

// -----

// Rows wider than 2^24 static elements are bad input, not a lowering to try.
func.func @row_width_int64_max(%x: tensor<?x9223372036854775807xf32>) -> tensor<?x9223372036854775807xf32> {
  // expected-error @+1 {{'gnn.log_softmax' op operand #0 has rows of more than 16777216 elements}}
  %y = gnn.log_softmax %x : (tensor<?x9223372036854775807xf32>) -> tensor<?x9223372036854775807xf32>
  return %y : tensor<?x9223372036854775807xf32>
}

// -----

// The product of the per-row sizes counts (and must not overflow).
func.func @row_width_product(%x: tensor<?x65536x65536xf32>) -> tensor<?x65536x65536xf32> {
  // expected-error @+1 {{'gnn.apply_nodes' op operand #0 has rows of more than 16777216 elements}}
  %y = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    gnn.yield %a : f32
  } : (tensor<?x65536x65536xf32>) -> tensor<?x65536x65536xf32>
  return %y : tensor<?x65536x65536xf32>
}

// -----

// gnn.kernel marks functions, as a unit attribute.
// expected-error @+1 {{'gnn.kernel' must be a unit attribute of a function}}
func.func private @kernel_mark() attributes {gnn.kernel = 1 : i32}

// -----

// gnn.aligned_rows marks vector loads of kernels, as a unit attribute.
func.func @aligned_rows_elsewhere(%x: memref<?x4xf32>, %i: index) -> f32 {
  // expected-error @+1 {{'gnn.aligned_rows' must be a unit attribute of a vector.load}}
  %v = memref.load %x[%i, %i] {gnn.aligned_rows} : memref<?x4xf32>
  return %v : f32
}

// -----

// gnn.max_trips is not an attribute of the dialect (loops need no bound to
// be differentiated).
func.func @bounded_loop(%n: index) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'gnn.max_trips' is not an operation attribute of the gnn dialect (gnn.kernel, gnn.aligned_rows)}}
  %r = scf.while (%i = %c0) : (index) -> index {
    %more = arith.cmpi ult, %i, %n : index
    scf.condition(%more) %i : index
  } do {
  ^bb0(%i: index):
    scf.yield %i : index
  } attributes {gnn.max_trips = 3 : i64}
  return
}

// -----

func.func @dropout_everything(%x: tensor<?x4xf32>, %s: i64) -> tensor<?x4xf32> {
  // expected-error @+1 {{rate must be in [0, 1), got 1.000000e+00}}
  %y = gnn.dropout %x, %s, %s rate(1.0) : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @dropout_negative(%x: tensor<?x4xf32>, %s: i64) -> tensor<?x4xf32> {
  // expected-error @+1 {{rate must be in [0, 1), got -5.000000e-01}}
  %y = gnn.dropout %x, %s, %s rate(-0.5) : tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @dropout_integers(%x: tensor<?x4xi32>, %s: i64) -> tensor<?x4xi32> {
  // expected-error @+1 {{input must have a float element type}}
  %y = gnn.dropout %x, %s, %s rate(0.5) : tensor<?x4xi32>
  return %y : tensor<?x4xi32>
}

// -----

func.func @dropout_element_rate(%x: tensor<?x4xf32>, %s: i64) -> tensor<?x4xf32> {
  %y = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    // expected-error @+1 {{rate must be in [0, 1), got 1.000000e+00}}
    %d = gnn.dropout_element %a, %s, %s rate(1.0) : f32
    gnn.yield %d : f32
  } : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// Its mask depends on the element an apply_nodes body computes: nowhere
// else does it have a position.
func.func @dropout_element_outside(%x: f32, %s: i64) -> f32 {
  // expected-error @+1 {{expects parent op 'gnn.apply_nodes'}}
  %d = gnn.dropout_element %x, %s, %s rate(0.5) : f32
  return %d : f32
}

// -----

func.func @dropout_element_in_edges(%g: !gnn.graph<general>, %x: tensor<?x4xf32>, %s: i64) -> tensor<?x4xf32> {
  %y = gnn.apply_edges %g, (u %x) {
  ^bb0(%a: f32):
    // expected-error @+1 {{expects parent op 'gnn.apply_nodes'}}
    %d = gnn.dropout_element %a, %s, %s rate(0.5) : f32
    gnn.yield %d : f32
  } : (!gnn.graph<general>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @dropout_element_integer(%x: tensor<?x4xi32>, %s: i64) -> tensor<?x4xi32> {
  %y = gnn.apply_nodes(%x) {
  ^bb0(%a: i32):
    // expected-error @+1 {{invalid kind of type specified}}
    %d = gnn.dropout_element %a, %s, %s rate(0.5) : i32
    gnn.yield %d : i32
  } : (tensor<?x4xi32>) -> tensor<?x4xi32>
  return %y : tensor<?x4xi32>
}

// -----

func.func @scatter_add_integers(%d: tensor<?x4xi32>, %t: tensor<7x4xi32>, %ids: tensor<?xindex>) -> tensor<7x4xi32> {
  // expected-error @+1 {{add needs a float element type, got 'i32'}}
  %g = gnn.scatter_rows %d into %t[%ids] add : (tensor<?x4xi32>, tensor<7x4xi32>, tensor<?xindex>) -> tensor<7x4xi32>
  return %g : tensor<7x4xi32>
}

// -----

func.func @sum_to_wider(%g: tensor<?x8xf32>) -> tensor<?x2x8xf32> {
  // expected-error @+1 {{result rank 3 exceeds the input's 2}}
  %a = gnn.sum_to %g : tensor<?x8xf32> -> tensor<?x2x8xf32>
  return %a : tensor<?x2x8xf32>
}

// -----

func.func @sum_to_mismatch(%g: tensor<?x8x4xf32>) -> tensor<?x2x4xf32> {
  // expected-error @+1 {{result dimension 1 is [2]: it must be 1 or the input's [8]}}
  %a = gnn.sum_to %g : tensor<?x8x4xf32> -> tensor<?x2x4xf32>
  return %a : tensor<?x2x4xf32>
}

// -----

func.func @sum_to_integers(%g: tensor<?x8xi32>) -> tensor<8xi32> {
  // expected-error @+1 {{input must have a float element type}}
  %a = gnn.sum_to %g : tensor<?x8xi32> -> tensor<8xi32>
  return %a : tensor<8xi32>
}

// -----

func.func @sum_to_element_type(%g: tensor<?x8xf32>) -> tensor<8xf64> {
  // expected-error @+1 {{result element type differs from the input's}}
  %a = gnn.sum_to %g : tensor<?x8xf32> -> tensor<8xf64>
  return %a : tensor<8xf64>
}

// -----

func.func @broadcast_not_like(%s: tensor<4xf32>, %x: tensor<?x4xf32>) -> tensor<?x5xf32> {
  // expected-error @+1 {{result shape [?, 5] differs from the shape of 'like' [?, 4]}}
  %a = gnn.broadcast %s like %x : tensor<4xf32>, tensor<?x4xf32> -> tensor<?x5xf32>
  return %a : tensor<?x5xf32>
}

// -----

func.func @broadcast_mismatch(%s: tensor<3xf32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{input dimension 0 is [3]: it must be 1 or the result's [4]}}
  %a = gnn.broadcast %s like %x : tensor<3xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  return %a : tensor<?x4xf32>
}

// -----

func.func @broadcast_rank(%s: tensor<2x?x4xf32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{input rank 3 exceeds the result's 2}}
  %a = gnn.broadcast %s like %x : tensor<2x?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  return %a : tensor<?x4xf32>
}

// -----

func.func @broadcast_element(%s: tensor<4xf32>, %x: tensor<?x4xf32>) -> tensor<?x4xf16> {
  // expected-error @+1 {{result element type differs from the input's}}
  %a = gnn.broadcast %s like %x : tensor<4xf32>, tensor<?x4xf32> -> tensor<?x4xf16>
  return %a : tensor<?x4xf16>
}

// -----

// expected-error @+1 {{'gnn.differentiable' marks argument #0 of type 'tensor<?xindex>', which is not a float tensor}}
func.func @differentiable_ids(%ids: tensor<?xindex> {gnn.differentiable}) {
  return
}

// -----

// expected-error @+1 {{'gnn.differentiable' must be a unit attribute}}
func.func @differentiable_value(%x: tensor<?xf32> {gnn.differentiable = 1 : i32}) {
  return
}

// -----

func.func @linear_transposed_bias(%x: tensor<?x6xf32>, %w: tensor<6x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{with transpose_weight takes no bias}}
  %y = gnn.linear %x, %w, %b transpose_weight : (tensor<?x6xf32>, tensor<6x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @linear_transposed_width(%x: tensor<?x4xf32>, %w: tensor<6x4xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{input width differs from the weight's rows}}
  %y = gnn.linear %x, %w transpose_weight : (tensor<?x4xf32>, tensor<6x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @outer_sum_rows(%a: tensor<3x6xf32>, %b: tensor<4x4xf32>) -> tensor<6x4xf32> {
  // expected-error @+1 {{operands have [3] and [4] rows}}
  %r = gnn.outer_sum %a, %b : (tensor<3x6xf32>, tensor<4x4xf32>) -> tensor<6x4xf32>
  return %r : tensor<6x4xf32>
}

// -----

func.func @outer_sum_shape(%a: tensor<?x6xf32>, %b: tensor<?x4xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{result shape [4, 6] differs from the operands' row widths [6, 4]}}
  %r = gnn.outer_sum %a, %b : (tensor<?x6xf32>, tensor<?x4xf32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// -----

func.func @attention_grad_count(%g: !gnn.graph<general>, %q: tensor<?x2x16xf32>, %d: tensor<?x2x16xf32>) -> tensor<?x2x16xf32> {
  // expected-error @+1 {{takes 2 result gradients (of wv and z), got 1}}
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %q, %q, %d scale(1.0)
      : (!gnn.graph<general>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
      -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  return %dq : tensor<?x2x16xf32>
}

// -----

func.func @attention_grad_rows(%g: !gnn.graph<bipartite, src = 3, dst = 5>, %q: tensor<5x2x16xf32>, %k: tensor<4x2x16xf32>, %d: tensor<5x2x16xf32>) -> tensor<5x2x16xf32> {
  // expected-error @+1 {{key has 4 rows, but the graph has 3 source nodes}}
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %k, %d scale(1.0) normalize
      : (!gnn.graph<bipartite, src = 3, dst = 5>, tensor<5x2x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<5x2x16xf32>)
      -> (tensor<5x2x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>)
  return %dq : tensor<5x2x16xf32>
}

// -----

func.func @attention_grad_type(%g: !gnn.graph<general>, %q: tensor<?x2x16xf32>, %d: tensor<?x2x16xf32>) -> tensor<?x2x8xf32> {
  // expected-error @+1 {{gradient type 'tensor<?x2x8xf32>' differs from its input's 'tensor<?x2x16xf32>'}}
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %q, %q, %d scale(1.0) normalize
      : (!gnn.graph<general>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
      -> (tensor<?x2x8xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  return %dq : tensor<?x2x8xf32>
}

// -----

func.func @attention_grad_saved_unnormalized(%g: !gnn.graph<general>, %q: tensor<?x2x16xf32>, %d: tensor<?x2x16xf32>, %z: tensor<?x2x1xf32>) -> tensor<?x2x16xf32> {
  // expected-error @+1 {{takes the forward's log-sum-exp only with `normalize`}}
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %q, %q, %d, %z scale(1.0) saved(%z)
      : (!gnn.graph<general>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x1xf32>, tensor<?x2x1xf32>)
      -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  return %dq : tensor<?x2x16xf32>
}

// -----

func.func @attention_grad_saved_shape(%g: !gnn.graph<general>, %q: tensor<?x2x16xf32>, %d: tensor<?x2x16xf32>) -> tensor<?x2x16xf32> {
  // expected-error @+1 {{saved log-sum-exp has per-row shape [2, 16], but its inputs give [2, 1]}}
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %q, %q, %d scale(1.0) normalize saved(%d)
      : (!gnn.graph<general>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
      -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  return %dq : tensor<?x2x16xf32>
}

// -----

func.func @tape_push_complex(%x: tensor<4xcomplex<f32>>) {
  %t = gnn.tape_create : !gnn.tape
  // expected-error @+1 {{cannot keep a 'tensor<4xcomplex<f32>>' on a tape (ranked tensors without an encoding, of rank at most 8, of float, integer or index elements)}}
  gnn.tape_push %t, %x : tensor<4xcomplex<f32>>
  return
}

// -----

func.func @tape_pop_rank(%t: !gnn.tape) -> tensor<1x1x1x1x1x1x1x1x1xf32> {
  // expected-error @+1 {{cannot keep a 'tensor<1x1x1x1x1x1x1x1x1xf32>' on a tape}}
  %x = gnn.tape_pop %t : tensor<1x1x1x1x1x1x1x1x1xf32>
  return %x : tensor<1x1x1x1x1x1x1x1x1xf32>
}

// -----

// A tape lives in a function's body (found by gnn-mutate: the lowering of
// a pop outside one crashed).
// expected-error @+1 {{'gnn.tape_create' op must be inside a function (a tape lives in the body of one)}}
%t = gnn.tape_create : !gnn.tape
%y = gnn.tape_pop %t : tensor<?x3xf32>
gnn.tape_free %t

// -----

func.func @tape_freed_twice() {
  // expected-error @+1 {{tape is freed twice}}
  %t = gnn.tape_create : !gnn.tape
  gnn.tape_free %t
  gnn.tape_free %t
  return
}

// -----

func.func @tape_used_after_free(%x: tensor<4xf32>) {
  // expected-error @+1 {{tape is used after it is freed}}
  %t = gnn.tape_create : !gnn.tape
  gnn.tape_free %t
  gnn.tape_push %t, %x : tensor<4xf32>
  return
}

// -----

func.func @tape_used_after_free_in_loop(%x: tensor<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{tape is used after it is freed}}
  %t = gnn.tape_create : !gnn.tape
  gnn.tape_free %t
  scf.for %i = %c0 to %n step %c1 {
    %y = gnn.tape_pop %t : tensor<4xf32>
  }
  return
}

// -----

func.func @tape_freed_in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{tape must be freed in the block that creates it}}
  %t = gnn.tape_create : !gnn.tape
  scf.for %i = %c0 to %n step %c1 {
    gnn.tape_free %t
  }
  return
}

// -----

func.func @result_ready_complex(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{cannot hand a 'tensor<4xcomplex<f32>>' to the host (ranked tensors without an encoding, of rank at most 8, of float, integer or index elements)}}
  gnn.result_ready %x, 0 : tensor<4xcomplex<f32>>
  return %x : tensor<4xcomplex<f32>>
}

// -----

func.func @result_ready_negative_slot(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'slot' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  "gnn.result_ready"(%x) {slot = -1 : i64} : (tensor<4xf32>) -> ()
  return %x : tensor<4xf32>
}
