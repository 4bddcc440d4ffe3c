// A mask or sink that is a constant of the program (a buffer torch-mlir
// writes as a constant: a fixed mask pattern, a precomputed bias, a sink
// vector) stays a kernel argument; the bundle description carries its data
// (`value`, the constant as the argument's type), which attn-bundle writes
// to <name>.bin, so the caller does not pass it.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" -verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_80" -verify-diagnostics | FileCheck %s

// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: {dtype = "bool", map = #{{[a-z0-9]+}}, name = "mask", shape = array<i64: 4, 6>, value = dense<{{\[\[}}true, false, true, true, false, true], [true, true, false, true, true, true], [false, true, true, true, true, false], [true, true, true, false, true, true]]> : tensor<4x6xi1>}
// CHECK-SAME: {dtype = "float16", map = #{{[a-z0-9]+}}, name = "sink", shape = array<i64: 2>, value = dense<[5.000000e-01, -1.250000e+00]> : tensor<2xf16>}
func.func @constant_mask_and_sink(%q: tensor<2x4x8xf16>, %k: tensor<2x6x8xf16>, %v: tensor<2x6x8xf16>, %o: tensor<2x4x8xf16>) -> tensor<2x4x8xf16> {
  %s = arith.constant 0.5 : f32
  %m = arith.constant dense<[[true, false, true, true, false, true], [true, true, false, true, true, true], [false, true, true, true, true, false], [true, true, true, false, true, true]]> : tensor<4x6xi1>
  %sk = arith.constant dense<[0.5, -1.25]> : tensor<2xf16>
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x8xf16>, tensor<2x6x8xf16>, tensor<2x6x8xf16>) scale(%s) mask(%m : tensor<4x6xi1>)
      sink(%sk : tensor<2xf16>) outs(%o : tensor<2x4x8xf16>)
      indexing_maps = [affine_map<(h, m, n, d, e) -> (h, m, d)>, affine_map<(h, m, n, d, e) -> (h, n, d)>, affine_map<(h, m, n, d, e) -> (h, n, e)>, affine_map<(h, m, n, d, e) -> (h, m, e)>, affine_map<(h, m, n, d, e) -> (m, n)>, affine_map<(h, m, n, d, e) -> (h)>]
      -> tensor<2x4x8xf16>
  return %r : tensor<2x4x8xf16>
}

// -----

// Behind a reshape: the data as the argument's type (same row-major order).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: {dtype = "float16", map = #{{[a-z0-9]+}}, name = "mask", shape = array<i64: 2, 2, 3>, value = dense<{{\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]], {{\[\[}}7.000000e+00, 8.000000e+00, 9.000000e+00], [1.000000e+01, 1.100000e+01, 1.200000e+01]]]> : tensor<2x2x3xf16>}
func.func @reshaped_bias(%q: tensor<2x2x8xf16>, %k: tensor<2x3x8xf16>, %v: tensor<2x3x8xf16>, %o: tensor<2x2x8xf16>) -> tensor<2x2x8xf16> {
  %s = arith.constant 0.5 : f32
  %flat = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]> : tensor<12xf16>
  %m = tensor.expand_shape %flat [[0, 1, 2]] output_shape [2, 2, 3] : tensor<12xf16> into tensor<2x2x3xf16>
  %r = attn.attention ins(%q, %k, %v : tensor<2x2x8xf16>, tensor<2x3x8xf16>, tensor<2x3x8xf16>) scale(%s) mask(%m : tensor<2x2x3xf16>)
      outs(%o : tensor<2x2x8xf16>)
      indexing_maps = [affine_map<(h, m, n, d, e) -> (h, m, d)>, affine_map<(h, m, n, d, e) -> (h, n, d)>, affine_map<(h, m, n, d, e) -> (h, n, e)>, affine_map<(h, m, n, d, e) -> (h, m, e)>, affine_map<(h, m, n, d, e) -> (h, m, n)>]
      -> tensor<2x2x8xf16>
  return %r : tensor<2x2x8xf16>
}

// -----

// A constant score_mod table too large for the kernel (more than 1024
// elements: a precomputed per-key bias, as Bloom's ALiBi buffer) is a
// kernel argument mod<i> with its data, read at the score's indices.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: {dtype = "float32", map = #{{[a-z0-9]+}}, name = "mod0", shape = array<i64: 2, 1000>, value = dense<5.000000e-01> : tensor<2x1000xf32>}
func.func @large_table(%q: tensor<2x40x32xf16>, %k: tensor<2x1000x32xf16>, %v: tensor<2x1000x32xf16>, %o: tensor<2x40x32xf16>) -> tensor<2x40x32xf16> {
  %s = arith.constant 0.125 : f32
  %w = arith.constant dense<0.5> : tensor<2x1000xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<2x40x32xf16>, tensor<2x1000x32xf16>, tensor<2x1000x32xf16>) scale(%s)
      score_mod_operands(%w : tensor<2x1000xf32>)
      outs(%o : tensor<2x40x32xf16>) indexing_maps = [
        affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
        affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>,
        affine_map<(b, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %m: index, %n: index, %wn: f32):
        %y = arith.addf %x, %wn : f32
        attn.yield %y : f32
      } -> tensor<2x40x32xf16>
  return %r : tensor<2x40x32xf16>
}
