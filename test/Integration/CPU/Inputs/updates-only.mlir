// Every result is the update of a writable argument: the compiled function
// returns nothing, and its results are views of the updated arguments.
func.func @main(%h: tensor<6xf32>, %p: tensor<4xf32> {bufferization.writable = true, gnn.name = "p"}, %m: tensor<4xf32> {bufferization.writable = true, gnn.name = "m"}, %v: tensor<4xf32> {bufferization.writable = true, gnn.name = "v"}, %g: tensor<4xf32>) -> (tensor<4xf32> {gnn.updates = "p"}, tensor<4xf32> {gnn.updates = "m"}, tensor<4xf32> {gnn.updates = "v"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e0 = tensor.extract %h[%c0] : tensor<6xf32>
  %e1 = tensor.extract %h[%c1] : tensor<6xf32>
  %0 = gnn.apply_nodes(%m, %g) {
  ^bb0(%a: f32, %b: f32):
    %x = arith.subf %b, %a : f32
    %y = arith.mulf %e0, %x : f32
    %z = arith.addf %a, %y : f32
    gnn.yield %z : f32
  } : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = gnn.apply_nodes(%p, %0) {
  ^bb0(%a: f32, %b: f32):
    %y = arith.mulf %e1, %b : f32
    %z = arith.addf %a, %y : f32
    gnn.yield %z : f32
  } : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = gnn.apply_nodes(%v, %g) {
  ^bb0(%a: f32, %b: f32):
    %z = arith.addf %a, %b : f32
    gnn.yield %z : f32
  } : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %0, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
