// Shapes the kernels cannot index or CUDA cannot launch are errors at the
// attention, never IR that fails later or a manifest with a wrapped grid.
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu 2>&1 | FileCheck %s

// CHECK: convert-attn-to-gpu-shapes.mlir:[[# @LINE + 3]]:8: error: 'q' ('tensor<9223372036854775807x8xf32>') is too large to index with 64 bits
func.func @int64_max_rows(%q: tensor<9223372036854775807x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<9223372036854775807x8xf32>) -> tensor<9223372036854775807x8xf32> {
  %s = arith.constant 0.5 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<9223372036854775807x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<9223372036854775807x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<9223372036854775807x8xf32>
  return %r : tensor<9223372036854775807x8xf32>
}

// -----

// CHECK: convert-attn-to-gpu-shapes.mlir:[[# @LINE + 3]]:8: error: M = 1099511627776 needs 8589934592 query blocks; CUDA's grid limit in x is 2^31 - 1
func.func @grid_x(%q: tensor<1x1099511627776x64xf16>, %k: tensor<1x128x64xf16>, %v: tensor<1x128x64xf16>, %o: tensor<1x1099511627776x64xf16>) -> tensor<1x1099511627776x64xf16> {
  %s = arith.constant 0.5 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x1099511627776x64xf16>, tensor<1x128x64xf16>, tensor<1x128x64xf16>) scale(%s)
      outs(%o : tensor<1x1099511627776x64xf16>)
      indexing_maps = [affine_map<(b0, m, n, d, e) -> (b0, m, d)>, affine_map<(b0, m, n, d, e) -> (b0, n, d)>, affine_map<(b0, m, n, d, e) -> (b0, n, e)>, affine_map<(b0, m, n, d, e) -> (b0, m, e)>]
      -> tensor<1x1099511627776x64xf16>
  return %r : tensor<1x1099511627776x64xf16>
}

// -----

// CHECK: convert-attn-to-gpu-shapes.mlir:[[# @LINE + 3]]:8: error: the batch dims (product over 65535) exceed CUDA's grid limit of 65535 blocks in y
func.func @grid_y(%q: tensor<300x300x4x8xf32>, %k: tensor<300x300x6x8xf32>, %v: tensor<300x300x6x8xf32>, %o: tensor<300x300x4x8xf32>) -> tensor<300x300x4x8xf32> {
  %s = arith.constant 0.5 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<300x300x4x8xf32>, tensor<300x300x6x8xf32>, tensor<300x300x6x8xf32>) scale(%s)
      outs(%o : tensor<300x300x4x8xf32>)
      indexing_maps = [affine_map<(b0, b1, m, n, d, e) -> (b0, b1, m, d)>, affine_map<(b0, b1, m, n, d, e) -> (b0, b1, n, d)>, affine_map<(b0, b1, m, n, d, e) -> (b0, b1, n, e)>, affine_map<(b0, b1, m, n, d, e) -> (b0, b1, m, e)>]
      -> tensor<300x300x4x8xf32>
  return %r : tensor<300x300x4x8xf32>
}

// -----

// CHECK: convert-attn-to-gpu-shapes.mlir:[[# @LINE + 3]]:8: error: the GPU kernel needs a finite f32 scale, got nan
func.func @nan_scale(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 0x7FC00000 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// An infinite scale.
// CHECK: convert-attn-to-gpu-shapes.mlir:[[# @LINE + 3]]:8: error: the GPU kernel needs a finite f32 scale
func.func @f32_overflow_scale(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 0x7F800000 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A constant mask whose data the module does not hold (an elided
// resource, as printed with --mlir-elide-resource-strings-if-larger): the
// bundle could not carry it.
// CHECK: convert-attn-to-gpu-shapes.mlir:[[# @LINE + 4]]:8: error: the mask is a constant of the program that a bundle cannot carry: its data is elided (dense_resource without a blob)
func.func @elided_mask(%q: tensor<4x8xf16>, %k: tensor<6x8xf16>, %v: tensor<6x8xf16>, %o: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %s = arith.constant 0.5 : f32
  %m = arith.constant dense_resource<__elided__> : tensor<4x6xf16>
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf16>, tensor<6x8xf16>, tensor<6x8xf16>) scale(%s) mask(%m : tensor<4x6xf16>)
      outs(%o : tensor<4x8xf16>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>, affine_map<(m, n, d, e) -> (m, n)>]
      -> tensor<4x8xf16>
  return %r : tensor<4x8xf16>
}

// -----

// A slice of a constant: the bundle carries whole constants only.
// CHECK: convert-attn-to-gpu-shapes.mlir:[[# @LINE + 5]]:8: error: the mask is a slice of a constant of the program; fold it into a constant first
func.func @sliced_mask(%q: tensor<4x8xf16>, %k: tensor<6x8xf16>, %v: tensor<6x8xf16>, %o: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %s = arith.constant 0.5 : f32
  %big = arith.constant dense<[[true, false, true, true, false, true, true], [true, true, false, true, true, true, true], [false, true, true, true, true, false, true], [true, true, true, false, true, true, true], [true, true, true, true, true, true, true]]> : tensor<5x7xi1>
  %m = tensor.extract_slice %big[1, 1] [4, 6] [1, 1] : tensor<5x7xi1> to tensor<4x6xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf16>, tensor<6x8xf16>, tensor<6x8xf16>) scale(%s) mask(%m : tensor<4x6xi1>)
      outs(%o : tensor<4x8xf16>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>, affine_map<(m, n, d, e) -> (m, n)>]
      -> tensor<4x8xf16>
  return %r : tensor<4x8xf16>
}
