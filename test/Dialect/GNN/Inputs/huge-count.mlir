func.func @f(%g: !gnn.graph<general, src = 99999999999999999999>) { return }
