// Fused attention and its backward on complete blocks (the GPU's tiles),
// with q, k and v read from one flat buffer x of 48 n + 1 floats: @offset
// takes them from x[1:], so that no row starts 16-byte aligned (the GPU
// copies them first); @aligned from x[0:] (rows aligned as they are).

func.func @offset(%g: !gnn.graph<complete>, %x: tensor<?xf32>,
                  %d: tensor<?x2x8xf32>)
    -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>,
        tensor<?x2x8xf32>) {
  %c1 = arith.constant 1 : index
  %o:4 = call @attention(%g, %x, %d, %c1)
      : (!gnn.graph<complete>, tensor<?xf32>, tensor<?x2x8xf32>, index)
      -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>,
          tensor<?x2x8xf32>)
  return %o#0, %o#1, %o#2, %o#3 : tensor<?x2x8xf32>, tensor<?x2x8xf32>,
                                  tensor<?x2x8xf32>, tensor<?x2x8xf32>
}

func.func @aligned(%g: !gnn.graph<complete>, %x: tensor<?xf32>,
                   %d: tensor<?x2x8xf32>)
    -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>,
        tensor<?x2x8xf32>) {
  %c0 = arith.constant 0 : index
  %o:4 = call @attention(%g, %x, %d, %c0)
      : (!gnn.graph<complete>, tensor<?xf32>, tensor<?x2x8xf32>, index)
      -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>,
          tensor<?x2x8xf32>)
  return %o#0, %o#1, %o#2, %o#3 : tensor<?x2x8xf32>, tensor<?x2x8xf32>,
                                  tensor<?x2x8xf32>, tensor<?x2x8xf32>
}

// q, k and v: n rows of 2 x 8 floats each, one after another in x from
// element `first`.
func.func private @attention(%g: !gnn.graph<complete>, %x: tensor<?xf32>,
                             %d: tensor<?x2x8xf32>, %first: index)
    -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>,
        tensor<?x2x8xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %n = tensor.dim %d, %c0 : tensor<?x2x8xf32>
  %size = arith.muli %n, %c16 : index
  %kFirst = arith.addi %first, %size : index
  %vFirst = arith.addi %kFirst, %size : index
  %qf = tensor.extract_slice %x[%first] [%size] [1]
      : tensor<?xf32> to tensor<?xf32>
  %kf = tensor.extract_slice %x[%kFirst] [%size] [1]
      : tensor<?xf32> to tensor<?xf32>
  %vf = tensor.extract_slice %x[%vFirst] [%size] [1]
      : tensor<?xf32> to tensor<?xf32>
  %q = tensor.expand_shape %qf [[0, 1, 2]] output_shape [%n, 2, 8]
      : tensor<?xf32> into tensor<?x2x8xf32>
  %k = tensor.expand_shape %kf [[0, 1, 2]] output_shape [%n, 2, 8]
      : tensor<?xf32> into tensor<?x2x8xf32>
  %v = tensor.expand_shape %vf [[0, 1, 2]] output_shape [%n, 2, 8]
      : tensor<?xf32> into tensor<?x2x8xf32>
  %o = gnn.fused_attention %g, %q, %k, %v scale(0.35) normalize
      : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>,
         tensor<?x2x8xf32>) -> tensor<?x2x8xf32>
  %dq, %dk, %dv = gnn.fused_attention_grad %g, %q, %k, %v, %d scale(0.35)
      normalize
      : (!gnn.graph<complete>, tensor<?x2x8xf32>, tensor<?x2x8xf32>,
         tensor<?x2x8xf32>, tensor<?x2x8xf32>)
      -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>)
  return %o, %dq, %dk, %dv : tensor<?x2x8xf32>, tensor<?x2x8xf32>,
                             tensor<?x2x8xf32>, tensor<?x2x8xf32>
}
