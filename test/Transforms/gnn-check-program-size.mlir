// RUN: gnn-opt %s -split-input-file -gnn-check-program-size=max-operations=4 -verify-diagnostics
// RUN: gnn-opt %s -split-input-file -gnn-check-program-size -o /dev/null

// Four operations (the module not counted) are within the bound.
func.func @f(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  %z = arith.mulf %y, %x : f32
  return %z : f32
}

// -----

// The fifth is an error, nested ones counted in program order; nothing
// after it is named.
func.func @g(%x: f32, %c: i1) -> f32 {
  %y = scf.if %c -> f32 {
    %a = arith.addf %x, %x : f32
    scf.yield %a : f32
  } else {
    // expected-error @+1 {{'scf.yield' op is operation 5 of the program; gnnc compiles programs of at most 4 operations (compile time grows with their length)}}
    scf.yield %x : f32
  }
  return %y : f32
}
