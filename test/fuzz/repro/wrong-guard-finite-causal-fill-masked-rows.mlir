// STATUS: fixed (a finite fill applied before an additive mask is rejected: not fused)
// Wrong numbers: a causal mask selected with the finite lowest value
// (-3.4e38) and THEN an additive mask holding -inf, then the safe-softmax
// guard select(all_n(x == -inf), 0, softmax(x)). In the unfused program
// -3.4e38 + -inf = -inf, so a row whose additive mask is all -inf is all
// -inf and the guard makes it 0. The fused op keeps the causal fill as
// mask_value as if the select came after the bias: the future keys of such
// a row stay at -3.4e38, the row is not "fully masked" and gets the mean of
// V over its future keys (rel_err ~0.4). With the select after the add
// (the order attn-fuse assumes) the same program matches. Found by
// gen_attention.py (seed 6, case 391: causal then bias, finite fill,
// maskrows, guard). Rows 0, 3, 6 of the mask are fully -inf (maskrows).
// Expected: same numbers as the unfused program (apply the bias before the
// fill, or reject a finite-fill select followed by an additive mask).
// RUN: %exec-check %s
// EXEC: nofuse amp=1.0 arg3=maskrows
func.func @guard_finite_causal_fill(%q: tensor<8x4xf32>, %k: tensor<10x4xf32>, %v: tensor<10x3xf32>, %mask: tensor<8x10xf32>) -> tensor<8x3xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %true = arith.constant true
  %e = tensor.empty() : tensor<8x10xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x10xf32>) -> tensor<8x10xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<8x4xf32>, tensor<10x4xf32>) outs(%z : tensor<8x10xf32>) -> tensor<8x10xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mask : tensor<8x10xf32>, tensor<8x10xf32>) outs(%e : tensor<8x10xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %fut = arith.cmpi sgt, %j, %i : index
    %c = arith.select %fut, %lowest, %a : f32
    %r = arith.addf %c, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x10xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<8x10xf32>) outs(%e : tensor<8x10xf32>) -> tensor<8x10xf32>
  %ea = tensor.empty() : tensor<8xi1>
  %ta = linalg.fill ins(%true : i1) outs(%ea : tensor<8xi1>) -> tensor<8xi1>
  %all = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x10xf32>) outs(%ta : tensor<8xi1>) {
  ^bb0(%a: f32, %o: i1):
    %c = arith.cmpf oeq, %a, %ninf : f32
    %r = arith.andi %c, %o : i1
    linalg.yield %r : i1
  } -> tensor<8xi1>
  %pg = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%all, %p : tensor<8xi1>, tensor<8x10xf32>) outs(%e : tensor<8x10xf32>) {
  ^bb0(%g: i1, %a: f32, %o: f32):
    %r = arith.select %g, %zero, %a : f32
    linalg.yield %r : f32
  } -> tensor<8x10xf32>
  %eo = tensor.empty() : tensor<8x3xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x3xf32>) -> tensor<8x3xf32>
  %o = linalg.matmul ins(%pg, %v : tensor<8x10xf32>, tensor<10x3xf32>) outs(%zo : tensor<8x3xf32>) -> tensor<8x3xf32>
  return %o : tensor<8x3xf32>
}
