// scatter_add.mlir's adding scatter into a table of a static 7 rows (an
// embedding table's gradient over a small vocabulary), which the GPU form
// sums by a thread per table element scanning the whole list.
func.func @main(%d: tensor<?x3x2xf32>, %table: tensor<7x3x2xf32>, %ids: tensor<?xindex>)
    -> (tensor<7x3x2xf32>) {
  %g = gnn.scatter_rows %d into %table[%ids] add : (tensor<?x3x2xf32>, tensor<7x3x2xf32>, tensor<?xindex>) -> tensor<7x3x2xf32>
  return %g : tensor<7x3x2xf32>
}
