// STATUS: fixed in 8d49210 (fused, the slice is the mask)
// Missed fusion (misleading remark): the additive bias is a zero-offset
// tensor.extract_slice of a larger buffer (torch `mask[:M, :N]` of a
// preallocated mask). ScoreTracer looks through zero-offset slices anywhere
// and records them in `slices`; with no sink concat the matcher then fails
// with "the probabilities are sliced between the softmax and P·V" although
// the slice is on the mask. Expected: fused with the slice as the mask (or
// the slice kept as an opaque mask leaf).
// RUN: %exec-check %s
// EXEC: amp=1.0 arg3=bias
func.func @sliced_bias(%q: tensor<2x9x8xf32>, %k: tensor<2x11x8xf32>, %v: tensor<2x11x4xf32>, %big: tensor<16x16xf32>) -> tensor<2x9x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x9x11xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x9x11xf32>) -> tensor<2x9x11xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x9x8xf32>, tensor<2x11x8xf32>) outs(%z : tensor<2x9x11xf32>) -> tensor<2x9x11xf32>
  %bias = tensor.extract_slice %big[0, 0] [9, 11] [1, 1] : tensor<16x16xf32> to tensor<9x11xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %bias : tensor<2x9x11xf32>, tensor<9x11xf32>) outs(%e : tensor<2x9x11xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %y = arith.addf %x, %b : f32
    linalg.yield %y : f32
  } -> tensor<2x9x11xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x9x11xf32>) outs(%e : tensor<2x9x11xf32>) -> tensor<2x9x11xf32>
  %eo = tensor.empty() : tensor<2x9x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x9x4xf32>) -> tensor<2x9x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x9x11xf32>, tensor<2x11x4xf32>) outs(%zo : tensor<2x9x4xf32>) -> tensor<2x9x4xf32>
  return %o : tensor<2x9x4xf32>
}
