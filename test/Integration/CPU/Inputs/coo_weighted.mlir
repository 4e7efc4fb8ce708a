// A graph built in compiled code from edge lists given at run time, then per
// destination the sum over its in-edges of the source's feature times the
// edge's own weight, and the largest source feature: every in-edge has to
// land on its destination with its own source and edge id.
func.func @main(%src: tensor<?xindex>, %dst: tensor<?xindex>,
                %counts: tensor<2xindex>, %x: tensor<?x1xf32>,
                %w: tensor<?x1xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ns = tensor.extract %counts[%c0] : tensor<2xindex>
  %nd = tensor.extract %counts[%c1] : tensor<2xindex>
  %g = gnn.graph_from_coo %src, %dst, %ns, %nd : tensor<?xindex>, tensor<?xindex> -> !gnn.graph<general>
  %sum, %max = gnn.send_and_recv %g, [u_mul_e(%x, %w) -> sum, copy_u(%x) -> max] : (!gnn.graph<general>, tensor<?x1xf32>, tensor<?x1xf32>,
                                  tensor<?x1xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>)
  return %sum, %max : tensor<?x1xf32>, tensor<?x1xf32>
}
