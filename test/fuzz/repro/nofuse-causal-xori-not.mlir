// STATUS: fixed in 373d94a (fused as causal)
// Missed fusion: causal written as keep = not(n > m) with arith.xori %c,
// %true. classifyIndexMask only flips on xori with a constant equal to 1.0,
// but getSplatFloat turns the i1 `true` IntegerAttr into getSExtValue() =
// -1.0, so the branch never fires ("neither causal nor a boolean mask").
// Expected: fused as causal (EXEC below requires fusion).
// RUN: %exec-check %s
// EXEC: amp=1.0 pipeline=tile-q=8,tile-kv=4
func.func @causal_xori_not(%q: tensor<2x17x4xf32>, %k: tensor<2x17x4xf32>, %v: tensor<2x17x4xf32>) -> tensor<2x17x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x17x17xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x17x17xf32>) -> tensor<2x17x17xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x17x4xf32>, tensor<2x17x4xf32>) outs(%z : tensor<2x17x17xf32>) -> tensor<2x17x17xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x17x17xf32>) outs(%e : tensor<2x17x17xf32>) {
  ^bb0(%y: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %t = arith.constant true
    %fut = arith.cmpi sgt, %j, %i : index
    %keep = arith.xori %fut, %t : i1
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x17x17xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x17x17xf32>) outs(%e : tensor<2x17x17xf32>) -> tensor<2x17x17xf32>
  %eo = tensor.empty() : tensor<2x17x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x17x4xf32>) -> tensor<2x17x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x17x17xf32>, tensor<2x17x4xf32>) outs(%zo : tensor<2x17x4xf32>) -> tensor<2x17x4xf32>
  return %o : tensor<2x17x4xf32>
}
