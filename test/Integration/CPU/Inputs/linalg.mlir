// Linalg ops written in a program (linalg.test): a fill, a matmul, a
// transpose, a generic (ReLU of a sum with a broadcast bias) and a
// reduction, on dynamic sizes.
func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %bias: tensor<?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty(%m, %n) : tensor<?x?xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x?xf32>) -> tensor<?x?xf32>
  %prod = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>)
                        outs(%init : tensor<?x?xf32>) -> tensor<?x?xf32>
  %relu = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%prod, %bias : tensor<?x?xf32>, tensor<?xf32>) outs(%empty : tensor<?x?xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %s = arith.addf %p, %q : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %tempty = tensor.empty(%n, %m) : tensor<?x?xf32>
  %t = linalg.transpose ins(%relu : tensor<?x?xf32>) outs(%tempty : tensor<?x?xf32>) permutation = [1, 0]
  %rempty = tensor.empty(%m) : tensor<?xf32>
  %rinit = linalg.fill ins(%zero : f32) outs(%rempty : tensor<?xf32>) -> tensor<?xf32>
  %rows = linalg.reduce ins(%prod : tensor<?x?xf32>) outs(%rinit : tensor<?xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %prod, %t, %rows : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xf32>
}
