// gnn.scatter_rows without add, in both lowerings: rows of a static shape
// (row slices into the destination) and rows of a dynamic width (an
// element loop); and with add. The ids and the source come from the
// inputs (scatter-ids.test).
func.func @slices(%src: tensor<?x4xf32>, %dest: tensor<?x4xf32>, %ids: tensor<?xindex>) -> tensor<?x4xf32> {
  %r = gnn.scatter_rows %src into %dest[%ids] : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?xindex>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

func.func @elements(%src: tensor<?x?xf32>, %dest: tensor<?x?xf32>, %ids: tensor<?xindex>) -> tensor<?x?xf32> {
  %r = gnn.scatter_rows %src into %dest[%ids] : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xindex>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

func.func @add(%src: tensor<?x4xf32>, %dest: tensor<?x4xf32>, %ids: tensor<?xindex>) -> tensor<?x4xf32> {
  %r = gnn.scatter_rows %src into %dest[%ids] add : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?xindex>) -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}
