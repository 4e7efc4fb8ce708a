// RUN: gnn-opt %s -split-input-file -gnn-copy-strided-views | FileCheck %s

// A slice within rows: one row-major copy serves both buffers taken of it.
// CHECK-LABEL: func @within_rows
// CHECK: %[[Q:.*]] = tensor.extract_slice
// CHECK-NEXT: %[[C:.*]] = bufferization.alloc_tensor() copy(%[[Q]]) : tensor<?x2x8xf32>
// CHECK-NOT: alloc_tensor
// CHECK: bufferization.to_memref %[[C]] read_only
// CHECK: bufferization.to_memref %[[C]] read_only
func.func @within_rows(%x: tensor<?x2x25xf32>, %n: index) -> (memref<?x2x8xf32, strided<[?, 8, 1], offset: ?>>, memref<?x2x8xf32>) {
  %q = tensor.extract_slice %x[0, 0, 1] [%n, 2, 8] [1, 1, 1] : tensor<?x2x25xf32> to tensor<?x2x8xf32>
  %m = bufferization.to_memref %q read_only : memref<?x2x8xf32, strided<[?, 8, 1], offset: ?>>
  %i = bufferization.to_memref %q read_only : memref<?x2x8xf32>
  return %m, %i : memref<?x2x8xf32, strided<[?, 8, 1], offset: ?>>, memref<?x2x8xf32>
}

// -----

// Slices of rows (any first row and step), of one index of an outer item
// dim, and of every item of a head are read in place; so is any slice
// taken with fully dynamic strides.
// CHECK-LABEL: func @row_major_items
// CHECK-NOT: alloc_tensor
func.func @row_major_items(%x: tensor<?x3x2x8xf32>, %y: tensor<?x16xf32>, %n: index, %r: index)
    -> (memref<?x2x8xf32, strided<[?, 8, 1], offset: ?>>, memref<?x16xf32, strided<[?, 1], offset: ?>>, memref<?x1x8xf32, strided<[?, 8, 1], offset: ?>>, memref<?x8xf32, strided<[?, ?], offset: ?>>) {
  %k = tensor.extract_slice %x[0, 1, 0, 0] [%n, 1, 2, 8] [1, 1, 1, 1] : tensor<?x3x2x8xf32> to tensor<?x2x8xf32>
  %km = bufferization.to_memref %k read_only : memref<?x2x8xf32, strided<[?, 8, 1], offset: ?>>
  %rows = tensor.extract_slice %y[%r, 0] [%n, 16] [2, 1] : tensor<?x16xf32> to tensor<?x16xf32>
  %rm = bufferization.to_memref %rows read_only : memref<?x16xf32, strided<[?, 1], offset: ?>>
  %h = tensor.extract_slice %x[0, 2, 1, 0] [%n, 1, 1, 8] [1, 1, 1, 1] : tensor<?x3x2x8xf32> to tensor<?x1x8xf32>
  %hm = bufferization.to_memref %h read_only : memref<?x1x8xf32, strided<[?, 8, 1], offset: ?>>
  %w = tensor.extract_slice %y[0, 4] [%n, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
  %wm = bufferization.to_memref %w read_only : memref<?x8xf32, strided<[?, ?], offset: ?>>
  return %km, %rm, %hm, %wm : memref<?x2x8xf32, strided<[?, 8, 1], offset: ?>>, memref<?x16xf32, strided<[?, 1], offset: ?>>, memref<?x1x8xf32, strided<[?, 8, 1], offset: ?>>, memref<?x8xf32, strided<[?, ?], offset: ?>>
}

// -----

// A slice within rows seen through a reshape, a step along the items and
// a rank-reducing slice of an inner dim are copied.
// CHECK-LABEL: func @through_reshapes
// CHECK-COUNT-3: bufferization.alloc_tensor() copy
// CHECK-NOT: alloc_tensor
func.func @through_reshapes(%x: tensor<?x2x25xf32>, %y: tensor<?x16xf32>, %n: index)
    -> (memref<?x16xf32, strided<[?, 1], offset: ?>>, memref<?x4xf32, strided<[?, 1], offset: ?>>, memref<?x2xf32, strided<[?, 1], offset: ?>>) {
  %q = tensor.extract_slice %x[0, 0, 1] [%n, 2, 8] [1, 1, 1] : tensor<?x2x25xf32> to tensor<?x2x8xf32>
  %f = tensor.collapse_shape %q [[0], [1, 2]] : tensor<?x2x8xf32> into tensor<?x16xf32>
  %fm = bufferization.to_memref %f read_only : memref<?x16xf32, strided<[?, 1], offset: ?>>
  %s = tensor.extract_slice %y[0, 0] [%n, 4] [1, 4] : tensor<?x16xf32> to tensor<?x4xf32>
  %sm = bufferization.to_memref %s read_only : memref<?x4xf32, strided<[?, 1], offset: ?>>
  %c = tensor.extract_slice %x[0, 0, 3] [%n, 2, 1] [1, 1, 1] : tensor<?x2x25xf32> to tensor<?x2xf32>
  %cm = bufferization.to_memref %c read_only : memref<?x2xf32, strided<[?, 1], offset: ?>>
  return %fm, %sm, %cm : memref<?x16xf32, strided<[?, 1], offset: ?>>, memref<?x4xf32, strided<[?, 1], offset: ?>>, memref<?x2xf32, strided<[?, 1], offset: ?>>
}
