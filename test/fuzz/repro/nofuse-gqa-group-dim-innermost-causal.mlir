// STATUS: fixed in 373d94a (fused as causal)
// Missed fusion: grouped-query attention through maps (K/V lack the group
// dim g) whose scores are laid out [b, m, g, n] (the group dim after the
// query dim), with a causal mask on (m, n). matchAttention takes "the
// innermost P-only dim" of P as the query axis, i.e. g, so the causal
// compare on m looks like a compare on a batch dim: "neither causal (n > m)
// nor a sliding window". Swapping the score layout to [b, g, m, n] fuses.
// (Without a mask the same pick of g as the query axis still gives the right
// numbers; only index masks expose it.) Expected: the query axis is the
// P-only dim the index mask / Q layout identifies, and this fuses.
// RUN: %exec-check %s
// EXEC: amp=1.0 pipeline=tile-q=4,tile-kv=4
func.func @gqa_group_innermost_causal(%q: tensor<2x3x9x8xf32>, %k: tensor<2x9x8xf32>, %v: tensor<2x9x4xf32>) -> tensor<2x3x9x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x9x3x9xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x9x3x9xf32>) -> tensor<2x9x3x9xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, g, m, n, d) -> (b, g, m, d)>,
                                        affine_map<(b, g, m, n, d) -> (b, n, d)>,
                                        affine_map<(b, g, m, n, d) -> (b, m, g, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x9x8xf32>, tensor<2x9x8xf32>) outs(%z : tensor<2x9x3x9xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x9x3x9xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, g, n) -> (b, m, g, n)>, affine_map<(b, m, g, n) -> (b, m, g, n)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x9x3x9xf32>) outs(%e : tensor<2x9x3x9xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 3 : index
    %fut = arith.cmpi sgt, %j, %i : index
    %y = arith.select %fut, %ninf, %x : f32
    linalg.yield %y : f32
  } -> tensor<2x9x3x9xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x9x3x9xf32>) outs(%e : tensor<2x9x3x9xf32>) -> tensor<2x9x3x9xf32>
  %eo = tensor.empty() : tensor<2x3x9x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x9x4xf32>) -> tensor<2x3x9x4xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, g, m, e, n) -> (b, m, g, n)>,
                                        affine_map<(b, g, m, e, n) -> (b, n, e)>,
                                        affine_map<(b, g, m, e, n) -> (b, g, m, e)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x9x3x9xf32>, tensor<2x9x4xf32>) outs(%zo : tensor<2x3x9x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x3x9x4xf32>
  return %o : tensor<2x3x9x4xf32>
}
