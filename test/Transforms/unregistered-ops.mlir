// Ops of unregistered dialects have no dialect to look at: the passes that
// ask an op for its dialect pass over them (four crashed on them) and the
// pipelines reject them as they do other ops they cannot lower.
// RUN: gnn-opt %s --allow-unregistered-dialect -gnn-check-self-contained | FileCheck %s
// RUN: gnn-opt %s --allow-unregistered-dialect -gnn-approximate-vector-math | FileCheck %s
// RUN: gnn-opt %s --allow-unregistered-dialect -convert-gnn-to-loops | FileCheck %s
// RUN: gnn-opt %s --allow-unregistered-dialect -gnn-scope-loop-allocas | FileCheck %s
// RUN: gnn-opt %s --allow-unregistered-dialect -gnn-parallel-loops-to-gpu | FileCheck %s
// RUN: not gnn-opt %s --allow-unregistered-dialect -gnn-lower-to-cpu 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not gnn-opt %s --allow-unregistered-dialect -gnn-lower-to-nvvm 2>&1 | FileCheck %s --check-prefix=PIPELINE

// CHECK-LABEL: func.func @f
// CHECK: "foo.bar"()
// PIPELINE: error: ops with unknown memory side effects are not supported
func.func @f(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    "foo.bar"() : () -> ()
  }
  return
}
