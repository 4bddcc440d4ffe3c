// RUN: attn-opt %s --attn-explicit-unit-drops --split-input-file | FileCheck %s

// Two unit dims, dynamic sizes: the dropped one (dim 2, not dim 0) is named
// by the collapse (gen_attention seed 6035 case 115: the bias of a GQA
// attention with a unit group dim; memref.subview dropped dim 0).
// CHECK-LABEL: func.func @ambiguous
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0, 0, 0] [1, 2, 1, %{{.*}}, %{{.*}}] [1, 1, 1, 1, 1] : tensor<1x2x1x?x?xf32> to tensor<1x2x1x?x?xf32>
// CHECK: tensor.collapse_shape %[[S]] {{\[}}[0], [1], [2, 3], [4]] : tensor<1x2x1x?x?xf32> into tensor<1x2x?x?xf32>
func.func @ambiguous(%m: tensor<1x2x1x?x?xf32>, %a: index, %b: index) -> tensor<1x2x?x?xf32> {
  %s = tensor.extract_slice %m[0, 0, 0, 0, 0] [1, 2, 1, %a, %b] [1, 1, 1, 1, 1] : tensor<1x2x1x?x?xf32> to tensor<1x2x?x?xf32>
  return %s : tensor<1x2x?x?xf32>
}

// -----

// Trailing unit dims join the last kept dim; a tile (offsets, sizes)
// keeps its parameters.
// CHECK-LABEL: func.func @trailing
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}, 0, 0] [4, 1, 1] [1, 1, 1] : tensor<8x1x1xf32> to tensor<4x1x1xf32>
// CHECK: tensor.collapse_shape %[[S]] {{\[}}[0, 1, 2]] : tensor<4x1x1xf32> into tensor<4xf32>
func.func @trailing(%m: tensor<8x1x1xf32>, %o: index) -> tensor<4xf32> {
  %s = tensor.extract_slice %m[%o, 0, 0] [4, 1, 1] [1, 1, 1] : tensor<8x1x1xf32> to tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// Every dim dropped: a rank-0 collapse.
// CHECK-LABEL: func.func @scalar
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1x1xf32> into tensor<f32>
func.func @scalar(%m: tensor<1x1xf32>) -> tensor<f32> {
  %s = tensor.extract_slice %m[0, 0] [1, 1] [1, 1] : tensor<1x1xf32> to tensor<f32>
  return %s : tensor<f32>
}

// -----

// A slice that keeps its rank is left alone.
// CHECK-LABEL: func.func @not_reducing
// CHECK: tensor.extract_slice
// CHECK-NOT: tensor.collapse_shape
func.func @not_reducing(%m: tensor<4x1xf32>) -> tensor<2x1xf32> {
  %s = tensor.extract_slice %m[0, 0] [2, 1] [1, 1] : tensor<4x1xf32> to tensor<2x1xf32>
  return %s : tensor<2x1xf32>
}
