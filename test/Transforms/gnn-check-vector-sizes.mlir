// RUN: gnn-opt %s -split-input-file -verify-diagnostics -gnn-check-vector-sizes | FileCheck %s
// RUN: not gnn-opt %s -split-input-file -gnn-check-vector-sizes=max-elements=1000000 2>/dev/null | FileCheck %s --check-prefix=RAISED
// RUN: not gnn-opt %s -split-input-file -gnn-check-vector-sizes=max-elements=1000000 2>&1 >/dev/null | FileCheck %s --check-prefix=RAISEDERR

// Vectors of up to 16384 elements pass, in any shape.
// CHECK-LABEL: func.func @small
// RAISED-LABEL: func.func @small
func.func @small(%x: tensor<16384xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %x[%c0], %pad : tensor<16384xf32>, vector<16384xf32>
  %m = vector.shape_cast %v : vector<16384xf32> to vector<128x128xf32>
  %r = vector.multi_reduction <add>, %m, %pad [0, 1] : vector<128x128xf32> to f32
  return %r : f32
}

// -----

// RAISED-LABEL: func.func @wide
func.func @wide(%x: tensor<100000xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  // expected-error @+1 {{'vector.transfer_read' op uses 'vector<100000xf32>', a vector of 100000 elements; at most 16384 compile in reasonable time}}
  %v = vector.transfer_read %x[%c0], %pad : tensor<100000xf32>, vector<100000xf32>
  // expected-error @+1 {{'vector.reduction' op uses 'vector<100000xf32>'}}
  %r = vector.reduction <add>, %v : vector<100000xf32> into f32
  return %r : f32
}

// -----

// In signatures, element types and attributes too; shapes whose product
// overflows count as the most elements.
// RAISED-LABEL: func.func @signature
// expected-error @+1 {{'func.func' op uses 'vector<2x65536xf32>', a vector of 131072 elements}}
func.func @signature(%v: vector<2x65536xf32>) {
  return
}

// RAISED-LABEL: func.func @nested
func.func @nested(%m: memref<?xvector<16xf32>>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.alloca' op uses 'vector<300x300xf32>'}}
  %a = memref.alloca() : memref<2xvector<300x300xf32>>
  return
}

// -----

// RAISEDERR: error: 'memref.global' op uses 'vector<4294967296x4294967296xf32>', a vector of 9223372036854775807 elements; at most 1000000
// expected-error @+1 {{'memref.global' op uses 'vector<4294967296x4294967296xf32>', a vector of 9223372036854775807 elements}}
memref.global "private" @table : memref<4xvector<4294967296x4294967296xf32>>
