// RUN: gnn-opt %s -convert-gnn-to-loops -split-input-file -verify-diagnostics

// A tape passed into a function has no runtime pointer in it to read.
func.func @tape_argument(%t: !gnn.tape, %h: tensor<?x128xf32>) {
  // expected-error @+1 {{needs a tape created in the same function by gnn.tape_create}}
  gnn.tape_push %t, %h : tensor<?x128xf32>
  return
}
