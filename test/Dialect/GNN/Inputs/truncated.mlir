func.func @f(%g: !gnn.graph<complete>) {
  %0 = gnn.apply_edges %g, u_dot_v(