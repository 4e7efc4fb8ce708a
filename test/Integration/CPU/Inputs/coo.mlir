// A graph built in compiled code from edge lists and counts given at run
// time, then the in-degree of each destination (a sum over in-edges).
func.func @main(%src: tensor<?xindex>, %dst: tensor<?xindex>,
                %counts: tensor<2xindex>, %ones: tensor<?x1xf32>)
    -> tensor<?x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ns = tensor.extract %counts[%c0] : tensor<2xindex>
  %nd = tensor.extract %counts[%c1] : tensor<2xindex>
  %g = gnn.graph_from_coo %src, %dst, %ns, %nd : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
  %deg = gnn.send_and_recv %g, [copy_u(%ones) -> sum] : (!gnn.graph<general>, tensor<?x1xf32>) -> tensor<?x1xf32>
  return %deg : tensor<?x1xf32>
}
