// STATUS: fixed in this stop (a non-finite or large constant shift is no
// longer dropped as softmax-invariant)
// Found by test/fuzz/mutate.py --seed 91 (mutant 313 of
// fuse-attention-forms.mlir#18: arith.mulf -> arith.addf, 0.25 -> -inf).
// The scores get + (-inf) before a select with a finite fill: every kept
// score is -inf, so the softmax weighs the filled keys. Dropping the shift
// as "a constant shift leaves the softmax unchanged" changed the result.
// RUN: %exec-check %s
// RUN: attn-opt %s --attn-fuse --attn-explain -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: attention not fused: the scores are shifted by a constant (-INF) that is not finite or too large (|c| > 64) to drop exactly
// EXEC: nofuse
func.func @constant_mask_not_triangular(%q: tensor<2x9x16xf32>, %k: tensor<2x13x16xf32>, %v: tensor<2x13x8xf32>) -> tensor<2x9x8xf32> {
  %zero = arith.constant 0.0 : f32
  %fill = arith.constant -3.40282347E+38 : f32
  %mask = arith.constant dense<[[true, true, true, true, true, false, true, true, true, true, false, true, true], [true, false, true, true, true, true, false, true, true, true, true, false, true], [true, true, false, true, true, true, true, false, true, true, true, true, false], [true, true, true, false, true, true, true, true, false, true, true, true, true], [true, true, true, true, false, true, true, true, true, false, true, true, true], [true, true, true, true, true, false, true, true, true, true, false, true, true], [true, false, true, true, true, true, false, true, true, true, true, false, true], [true, true, false, true, true, true, true, false, true, true, true, true, false], [true, true, true, false, true, true, true, true, false, true, true, true, true]]> : tensor<9x13xi1>
  %e = tensor.empty() : tensor<2x9x13xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x9x13xf32>) -> tensor<2x9x13xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x9x16xf32>, tensor<2x13x16xf32>) outs(%z : tensor<2x9x13xf32>) -> tensor<2x9x13xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x9x13xf32>, tensor<9x13xi1>) outs(%e : tensor<2x9x13xf32>) {
  ^bb0(%x: f32, %c: i1, %o: f32):
    %sc = arith.constant 0xFF800000 : f32
    %y = arith.addf %x, %sc : f32
    %r = arith.select %c, %y, %fill : f32
    linalg.yield %r : f32
  } -> tensor<2x9x13xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x9x13xf32>) outs(%e : tensor<2x9x13xf32>) -> tensor<2x9x13xf32>
  %eo = tensor.empty() : tensor<2x9x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x9x8xf32>) -> tensor<2x9x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x9x13xf32>, tensor<2x13x8xf32>) outs(%zo : tensor<2x9x8xf32>) -> tensor<2x9x8xf32>
  return %o : tensor<2x9x8xf32>
}
