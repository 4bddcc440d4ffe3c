// STATUS: fixed in 373d94a (no crash; not fused)
// attn-opt crash: the scores are selected against -inf by a runtime i1
// scalar (captured function argument). The condition is a scalar Leaf;
// analyzeScores does cast<ShapedType>(i1) on it to test for a boolean mask
// tensor: segfault in ShapedType::getElementType().
// Expected: no crash (leaving it unfused is fine).
// RUN: attn-opt %s --attn-fuse -o /dev/null
func.func @scalar_bool_select(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %flag: i1) -> tensor<4x8xf32> {
  %cst = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %sc = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%sc : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.select %flag, %x, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%b : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %eo = tensor.empty() : tensor<4x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%zo : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
