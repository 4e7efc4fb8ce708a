// A GPU op in a CPU program, which no step of the CPU pipeline lowers
// (upstream-ops.test).
func.func @thread_id(%x: tensor<?xf32>) -> tensor<?xf32> {
  %t = gpu.thread_id x
  %i = arith.index_cast %t : index to i32
  %f = arith.sitofp %i : i32 to f32
  %r = gnn.apply_nodes(%x) {
  ^bb0(%a: f32):
    %s = arith.addf %a, %f : f32
    gnn.yield %s : f32
  } : (tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
