// STATUS: fixed in 373d94a (no crash; the scalar shift is dropped)
// Found by test/fuzz/gen_attention.py-style probing (attn-opt crash).
// A runtime scalar (function argument captured by a linalg.generic) is added
// to the scores. The ScoreTracer makes the scalar a Leaf, analyzeScores takes
// it for an additive mask tensor, and matchAttention then does
// cast<ShapedType>(f32) on it: segfault in ShapedType::getElementType().
// Expected: no crash (a uniform shift leaves the softmax unchanged, so
// fusing with no mask or leaving it alone are both fine).
// RUN: attn-opt %s --attn-fuse -o /dev/null
func.func @scalar_bias(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %s: f32) -> tensor<4x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %sc = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%sc : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.addf %x, %s : f32
    linalg.yield %y : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%b : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %eo = tensor.empty() : tensor<4x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%zo : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
