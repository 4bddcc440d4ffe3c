// STATUS: fixed in 373d94a (fused)
// Missed fusion: decomposed softmax whose row max/sum are brought to
// keep-dims shape [B, M, 1] with tensor.expand_shape, with batch B = 1 (any
// other size-1 dim of the row vector, e.g. M = 1, does the same). The same
// program with B = 2 fuses. ScoreTracer::traceReshape maps every unit dim of
// a reassociation group to the constant 0 even when it carries a score dim
// (here b), so the reduction's result looks like it lacks two score dims:
// "'linalg.reduce' reduces a tensor that is not a row vector of the scores".
// Batch 1 is the common inference case (torch exports keepdims this way).
// Expected: fused. gen_attention.py avoids this form unless --include-known.
// RUN: %exec-check %s
// EXEC: amp=1.0
func.func @keepdims_expand_batch1(%q: tensor<1x5x4xf32>, %k: tensor<1x7x4xf32>, %v: tensor<1x7x3xf32>) -> tensor<1x5x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x5x7xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x5x7xf32>) -> tensor<1x5x7xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, d) -> (b, m, d)>, affine_map<(b, m, n, d) -> (b, n, d)>, affine_map<(b, m, n, d) -> (b, m, n)>]
      ins(%q, %k : tensor<1x5x4xf32>, tensor<1x7x4xf32>) outs(%z : tensor<1x5x7xf32>) -> tensor<1x5x7xf32>
  %er = tensor.empty() : tensor<1x5xf32>
  %fr = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x5xf32>) -> tensor<1x5xf32>
  %mx = linalg.reduce ins(%s : tensor<1x5x7xf32>) outs(%fr : tensor<1x5xf32>) dimensions = [2]
    (%in: f32, %init: f32) {
      %0 = arith.maximumf %in, %init : f32
      linalg.yield %0 : f32
    }
  %mk = tensor.expand_shape %mx [[0], [1, 2]] output_shape [1, 5, 1] : tensor<1x5xf32> into tensor<1x5x1xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, 0)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mk : tensor<1x5x7xf32>, tensor<1x5x1xf32>) outs(%e : tensor<1x5x7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %1 = arith.subf %a, %b : f32
    %2 = math.exp %1 : f32
    linalg.yield %2 : f32
  } -> tensor<1x5x7xf32>
  %fz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x5xf32>) -> tensor<1x5xf32>
  %sm = linalg.reduce ins(%ex : tensor<1x5x7xf32>) outs(%fz : tensor<1x5xf32>) dimensions = [2]
    (%in: f32, %init: f32) {
      %0 = arith.addf %in, %init : f32
      linalg.yield %0 : f32
    }
  %sk = tensor.expand_shape %sm [[0], [1, 2]] output_shape [1, 5, 1] : tensor<1x5xf32> into tensor<1x5x1xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, 0)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sk : tensor<1x5x7xf32>, tensor<1x5x1xf32>) outs(%e : tensor<1x5x7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %1 = arith.divf %a, %b : f32
    linalg.yield %1 : f32
  } -> tensor<1x5x7xf32>
  %eo = tensor.empty() : tensor<1x5x3xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x5x3xf32>) -> tensor<1x5x3xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<1x5x7xf32>, tensor<1x7x3xf32>) outs(%zo : tensor<1x5x3xf32>) -> tensor<1x5x3xf32>
  return %o : tensor<1x5x3xf32>
}
