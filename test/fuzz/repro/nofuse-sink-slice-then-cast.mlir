// STATUS: found on build 08:34 (a regression of 8d49210); fixed in the build of 08:45 (uncommitted working tree then)
// Missed fusion (regression of 8d49210 "only P's slice is special"): an
// attention sink whose probabilities are sliced and then cast to f16 before
// P·V (f16 V, mixed-precision models). The sink's extract_slice is now only
// recognized when it is P·V's operand itself; here P·V reads
// truncf(slice(softmax(concat(S, sink)))), the tracer no longer looks
// through the slice, and the remark is "no softmax feeds this contraction".
// The same program with the truncf before the slice fuses. Found by
// gen_attention.py (sink + dtype f16in_f32qk_truncP / f16_upcast_softmax).
// Expected: fused.
// RUN: %exec-check %s
// EXEC: amp=1.0
func.func @sink_slice_then_truncf(%q: tensor<2x9x8xf16>, %k: tensor<2x11x8xf16>, %v: tensor<2x11x4xf16>, %sinks: tensor<2xf32>) -> tensor<2x9x4xf16> {
  %zero = arith.constant 0.0 : f32
  %zh = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<2x9x11xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x9x11xf32>) -> tensor<2x9x11xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x9x8xf16>, tensor<2x11x8xf16>) outs(%z : tensor<2x9x11xf32>) -> tensor<2x9x11xf32>
  %es = tensor.empty() : tensor<2x9x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sinks : tensor<2xf32>) outs(%es : tensor<2x9x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<2x9x1xf32>
  %cat = tensor.concat dim(2) %s, %sb : (tensor<2x9x11xf32>, tensor<2x9x1xf32>) -> tensor<2x9x12xf32>
  %e12 = tensor.empty() : tensor<2x9x12xf32>
  %p = linalg.softmax dimension(2) ins(%cat : tensor<2x9x12xf32>) outs(%e12 : tensor<2x9x12xf32>) -> tensor<2x9x12xf32>
  %pk = tensor.extract_slice %p[0, 0, 0] [2, 9, 11] [1, 1, 1] : tensor<2x9x12xf32> to tensor<2x9x11xf32>
  %eh = tensor.empty() : tensor<2x9x11xf16>
  %ph = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%pk : tensor<2x9x11xf32>) outs(%eh : tensor<2x9x11xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x9x11xf16>
  %eo = tensor.empty() : tensor<2x9x4xf16>
  %zo = linalg.fill ins(%zh : f16) outs(%eo : tensor<2x9x4xf16>) -> tensor<2x9x4xf16>
  %o = linalg.batch_matmul ins(%ph, %v : tensor<2x9x11xf16>, tensor<2x11x4xf16>) outs(%zo : tensor<2x9x4xf16>) -> tensor<2x9x4xf16>
  return %o : tensor<2x9x4xf16>
}
