// STATUS: fixed in 373d94a (narrowing casts are no longer looked through: not fused)
// Wrong numbers: a causal mask computed on indices narrowed to i8
// (arith.index_cast index -> i8; trunci is treated the same). linearize()
// looks through every integer cast ("icast") as if it preserved the value,
// so the compare is taken for n > m; in i8 the indices wrap for S >= 128
// (m = 130 is -126, so every key n < 128 is masked for that row). The fused
// op computes plain causal attention: rel_err ~1.1 against the unfused
// program. Expected: only casts that cannot wrap (to a type wide enough for
// the static sizes, or index<->i64) are looked through; otherwise no fusion.
// RUN: %exec-check %s
// EXEC: nofuse
func.func @causal_i8_wrap(%q: tensor<2x200x4xf32>, %k: tensor<2x200x4xf32>, %v: tensor<2x200x4xf32>) -> tensor<2x200x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x200x200xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x200x200xf32>) -> tensor<2x200x200xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x200x4xf32>, tensor<2x200x4xf32>) outs(%z : tensor<2x200x200xf32>) -> tensor<2x200x200xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x200x200xf32>) outs(%e : tensor<2x200x200xf32>) {
  ^bb0(%y: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %i8 = arith.index_cast %i : index to i8
    %j8 = arith.index_cast %j : index to i8
    %fut = arith.cmpi sgt, %j8, %i8 : i8
    %r = arith.select %fut, %ninf, %y : f32
    linalg.yield %r : f32
  } -> tensor<2x200x200xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x200x200xf32>) outs(%e : tensor<2x200x200xf32>) -> tensor<2x200x200xf32>
  %eo = tensor.empty() : tensor<2x200x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x200x4xf32>) -> tensor<2x200x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x200x200xf32>, tensor<2x200x4xf32>) outs(%zo : tensor<2x200x4xf32>) -> tensor<2x200x4xf32>
  return %o : tensor<2x200x4xf32>
}
