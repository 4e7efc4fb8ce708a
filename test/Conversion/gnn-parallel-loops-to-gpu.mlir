// RUN: gnn-opt %s --gnn-parallel-loops-to-gpu --split-input-file --verify-diagnostics | FileCheck %s
// RUN: gnn-opt %s --gnn-parallel-loops-to-gpu=block-size=256 --split-input-file | FileCheck %s --check-prefix=BLOCK
// RUN: not gnn-opt %s --gnn-parallel-loops-to-gpu=block-size=0 --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: block-size must be in [1, 1024]

// One thread per iteration of a strided range; nothing runs for an empty
// range.
// CHECK-LABEL: func.func @copy
// CHECK-SAME:    (%[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>, %[[LB:.*]]: index, %[[UB:.*]]: index)
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK:         %[[NONEMPTY:.*]] = arith.cmpi sgt, %[[UB]], %[[LB]]
// CHECK:         scf.if %[[NONEMPTY]] {
// CHECK:           %[[SPAN:.*]] = arith.subi %[[UB]], %[[LB]]
// CHECK:           %[[COUNT:.*]] = arith.ceildivui %[[SPAN]], %[[C2]]
// CHECK:           %[[BLOCKS:.*]] = arith.ceildivui %[[COUNT]], %[[C128:.*]] : index
// CHECK:           gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[BLOCKS]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C128]],
// CHECK:             %[[BASE:.*]] = arith.muli %[[BX]], %[[C128]]
// CHECK:             %[[I:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK:             %[[IN:.*]] = arith.cmpi ult, %[[I]], %[[COUNT]]
// CHECK:             scf.if %[[IN]] {
// CHECK:               %[[OFF:.*]] = arith.muli %[[I]], %[[C2]]
// CHECK:               %[[IV:.*]] = arith.addi %[[LB]], %[[OFF]]
// CHECK:               %[[X:.*]] = memref.load %[[A]][%[[IV]]]
// CHECK:               memref.store %[[X]], %[[B]][%[[IV]]]
// CHECK:             gpu.terminator
// CHECK-NOT:     scf.parallel
// BLOCK-LABEL: func.func @copy
// BLOCK:         arith.constant 256 : index
// BLOCK:         gpu.launch
func.func @copy(%a: memref<?xf32>, %b: memref<?xf32>, %lb: index, %ub: index) {
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%lb) to (%ub) step (%c2) {
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %b[%i] : memref<?xf32>
  }
  return
}

// -----

func.func private @report(i64)

// A loop that calls the runtime stays on the host; the device-safe loop
// inside it becomes a kernel. Inner loops of a kernel stay in it.
// CHECK-LABEL: func.func @host_only
// CHECK:         scf.parallel
// CHECK:           func.call @report
// CHECK:           gpu.launch
// CHECK:             scf.parallel
// CHECK:           gpu.terminator
func.func @host_only(%a: memref<?x?xf32>, %n: index, %m: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = arith.index_cast %i : index to i64
    func.call @report(%x) : (i64) -> ()
    scf.parallel (%j) = (%c0) to (%m) step (%c1) {
      scf.parallel (%l) = (%c0) to (%m) step (%c1) {
        memref.store %zero, %a[%j, %l] : memref<?x?xf32>
      }
    }
  }
  return
}

// -----

// Loops that allocate, reduce or span two dimensions stay on the host.
// CHECK-LABEL: func.func @stays
// CHECK-NOT:     gpu.launch
// CHECK-COUNT-3: scf.parallel
func.func @stays(%a: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.alloc() : memref<4xf32>
    memref.dealloc %t : memref<4xf32>
  }
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %x = memref.load %a[%i] : memref<?xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %s = arith.addf %l, %r : f32
      scf.reduce.return %s : f32
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    memref.store %zero, %a[%i] : memref<?xf32>
  }
  return %sum : f32
}
