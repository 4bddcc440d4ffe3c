// STATUS: fixed in 373d94a (finite fills kept as mask_value: fused and matching)
// Wrong numbers: masks filled with the lowest finite value instead of -inf
// (flax/JAX `jnp.where(mask, s, finfo.min)`, torch `masked_fill(..., -1e9)`
// style; isNegInf() accepts anything <= -65504) are fused as "masked", which
// is only equivalent while every row keeps at least one key. For a fully
// masked row (a padding query) the unfused program computes a softmax over
// equal scores, i.e. the mean of V over all keys; the fused op gives 0 for
// that row (its fully-masked-row rule, meant for -inf). Here row 2 of the
// boolean mask (a non-splat constant) is all false. Same with a causal
// sliding window (m - n >= W masked) when M > N + W - 1, and with finite
// additive masks. Expected: either keep finite fills out of the
// "masked" rule (treat them as an additive bias / leave unfused) or prove
// no row is fully masked.
// RUN: %exec-check %s
// EXEC: amp=1.0
func.func @finite_fill_fully_masked_row(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %cst = arith.constant 0.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %mask = arith.constant dense<[[true, true, false, true, true, true],
                                [true, false, true, true, false, true],
                                [false, false, false, false, false, false],
                                [true, true, true, true, true, false]]> : tensor<4x6xi1>
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %sc = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%mask, %sc : tensor<4x6xi1>, tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%keep: i1, %x: f32, %o: f32):
    %y = arith.select %keep, %x, %lowest : f32
    linalg.yield %y : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%b : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %eo = tensor.empty() : tensor<4x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%zo : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
