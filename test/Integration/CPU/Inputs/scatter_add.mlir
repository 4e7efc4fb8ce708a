// The adjoint of an embedding lookup: rows of %d added into %table at
// %ids (ids repeat), and the plain scatter for comparison.
func.func @main(%d: tensor<?x3x2xf32>, %table: tensor<?x3x2xf32>, %ids: tensor<?xindex>)
    -> (tensor<?x3x2xf32>) {
  %g = gnn.scatter_rows %d into %table[%ids] add : (tensor<?x3x2xf32>, tensor<?x3x2xf32>, tensor<?xindex>) -> tensor<?x3x2xf32>
  return %g : tensor<?x3x2xf32>
}
