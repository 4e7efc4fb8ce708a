// Tapes used wrongly by a program: errors at run time, not crashes.

// Pops more than it pushed.
func.func @empty(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %t = gnn.tape_create : !gnn.tape
  %y = gnn.tape_pop %t : tensor<?x3xf32>
  gnn.tape_free %t
  return %y : tensor<?x3xf32>
}

// Pops a value of another shape than it pushed (a static one: the zeros it
// gets back are 2 x 3).
func.func @mismatch(%x: tensor<?x3xf32>) -> tensor<2x3xf32> {
  %t = gnn.tape_create : !gnn.tape
  gnn.tape_push %t, %x : tensor<?x3xf32>
  %y = gnn.tape_pop %t : tensor<2x3x1xf32>
  %z = tensor.collapse_shape %y [[0], [1, 2]] : tensor<2x3x1xf32> into tensor<2x3xf32>
  gnn.tape_free %t
  return %z : tensor<2x3xf32>
}

// Pops a static shape of another size than it pushed (4 rows): reading 2
// rows would be harmless, but the program is wrong.
func.func @size(%x: tensor<?x3xf32>) -> tensor<2x3xf32> {
  %t = gnn.tape_create : !gnn.tape
  gnn.tape_push %t, %x : tensor<?x3xf32>
  %y = gnn.tape_pop %t : tensor<2x3xf32>
  gnn.tape_free %t
  return %y : tensor<2x3xf32>
}

// Leaves a value on the tape, which its free releases.
func.func @leftover(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %t = gnn.tape_create : !gnn.tape
  gnn.tape_push %t, %x : tensor<?x3xf32>
  gnn.tape_push %t, %x : tensor<?x3xf32>
  %y = gnn.tape_pop %t : tensor<?x3xf32>
  gnn.tape_free %t
  return %y : tensor<?x3xf32>
}
