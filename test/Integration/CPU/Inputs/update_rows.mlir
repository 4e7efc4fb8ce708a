// An optimizer step over rows of several elements: both results update
// writable arguments in place. In the GPU form the two ops are one kernel,
// a parallel iteration per element that reads and then overwrites its
// elements of the arguments it updates (gnn-kernel-destinations), which
// must give the values of the CPU form.
func.func @main(%p: tensor<?x3x12xf32> {bufferization.writable = true, gnn.name = "p"},
                %m: tensor<?x3x12xf32> {bufferization.writable = true, gnn.name = "m"},
                %g: tensor<?x3x12xf32>)
    -> (tensor<?x3x12xf32> {gnn.updates = "p"},
        tensor<?x3x12xf32> {gnn.updates = "m"}) {
  %m2 = gnn.apply_nodes(%m, %g) {
  ^bb0(%a: f32, %b: f32):
    %c9 = arith.constant 0.9 : f32
    %c1 = arith.constant 0.1 : f32
    %x = arith.mulf %a, %c9 : f32
    %y = arith.mulf %b, %c1 : f32
    %z = arith.addf %x, %y : f32
    gnn.yield %z : f32
  } : (tensor<?x3x12xf32>, tensor<?x3x12xf32>) -> tensor<?x3x12xf32>
  %p2 = gnn.apply_nodes(%p, %m2) {
  ^bb0(%a: f32, %b: f32):
    %h = arith.constant 0.5 : f32
    %y = arith.mulf %b, %h : f32
    %z = arith.subf %a, %y : f32
    gnn.yield %z : f32
  } : (tensor<?x3x12xf32>, tensor<?x3x12xf32>) -> tensor<?x3x12xf32>
  return %p2, %m2 : tensor<?x3x12xf32>, tensor<?x3x12xf32>
}
