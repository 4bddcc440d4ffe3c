// STATUS: fixed (a term reference dangled while the sink was traced; fused and matching)
// attn-opt crash (SIGSEGV in AffineMap::isFunctionOfDim under
// matchWithQueryChoice), found by gen_attention.py (seed 9, case 426) and
// reduced: an attention sink (concat + slice) together with a JAX-style
// causal mask (iota tensors, compare, broadcast, select against a broadcast
// -inf splat), an additive bias and a decomposed softmax (keep-dims max,
// sum reduced to a row vector then tensor.expand_shape'd). Replacing the
// iota-style causal mask by one linalg.index compare avoids the crash, and
// so does (on an earlier reduction) linalg.softmax instead of the
// decomposed softmax, or the sum read without the expand_shape.
// Build 2026-11-23 08:45 (after 8d49210).
// Expected: no crash; fused (the EXEC line asks for it) and matching.
// RUN: attn-opt %s --attn-fuse -o /dev/null
// RUN: %exec-check %s
// EXEC: amp=1.0 arg3=mask pipeline=tile-q=2,tile-kv=8
func.func @sink_iota_causal_bias_decomposed(%q: tensor<3x3x3x16xf32>, %k: tensor<3x100x3x16xf32>, %v: tensor<3x100x3x16xf32>, %bias: tensor<3x3x3x100xf32>, %sinks: tensor<3xf32>) -> tensor<3x3x3x16xf32> {
  %c7 = arith.constant 0.0 : f32
  %e8 = tensor.empty() : tensor<3x3x3x100xf32>
  %zf = linalg.fill ins(%c7 : f32) outs(%e8 : tensor<3x3x3x100xf32>) -> tensor<3x3x3x100xf32>
  %qk10 = linalg.contract indexing_maps = [affine_map<(b0, b1, m, n, d) -> (b0, m, b1, d)>, affine_map<(b0, b1, m, n, d) -> (b0, n, b1, d)>, affine_map<(b0, b1, m, n, d) -> (b0, b1, m, n)>] ins(%q, %k : tensor<3x3x3x16xf32>, tensor<3x100x3x16xf32>) outs(%zf : tensor<3x3x3x100xf32>) -> tensor<3x3x3x100xf32>
  %e11 = tensor.empty() : tensor<3x3x3x100xf32>
  %ew12 = linalg.elementwise kind=#linalg.elementwise_kind<add> indexing_maps = [affine_map<(b0, b1, m, n) -> (b0, b1, m, n)>, affine_map<(b0, b1, m, n) -> (b0, b1, m, n)>, affine_map<(b0, b1, m, n) -> (b0, b1, m, n)>] ins(%qk10, %bias : tensor<3x3x3x100xf32>, tensor<3x3x3x100xf32>) outs(%e11 : tensor<3x3x3x100xf32>) -> tensor<3x3x3x100xf32>
  %e15 = tensor.empty() : tensor<3x100xi32>
  %g16 = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} outs(%e15 : tensor<3x100xi32>) {
  ^bb0(%o17: i32):
    %ix13 = linalg.index 0 : index
    %ic14 = arith.index_cast %ix13 : index to i32
    linalg.yield %ic14 : i32
  } -> tensor<3x100xi32>
  %e20 = tensor.empty() : tensor<3x100xi32>
  %g21 = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} outs(%e20 : tensor<3x100xi32>) {
  ^bb0(%o22: i32):
    %ix18 = linalg.index 1 : index
    %ic19 = arith.index_cast %ix18 : index to i32
    linalg.yield %ic19 : i32
  } -> tensor<3x100xi32>
  %e24 = tensor.empty() : tensor<3x100xi1>
  %g25 = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]} ins(%g16, %g21 : tensor<3x100xi32>, tensor<3x100xi32>) outs(%e24 : tensor<3x100xi1>) {
  ^bb0(%a26: i32, %a27: i32, %o28: i1):
    %cmp23 = arith.cmpi sle, %a27, %a26 : i32
    linalg.yield %cmp23 : i1
  } -> tensor<3x100xi1>
  %e29 = tensor.empty() : tensor<3x3x3x100xi1>
  %g30 = linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n) -> (m, n)>, affine_map<(b0, b1, m, n) -> (b0, b1, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%g25 : tensor<3x100xi1>) outs(%e29 : tensor<3x3x3x100xi1>) {
  ^bb0(%a31: i1, %o32: i1):
    linalg.yield %a31 : i1
  } -> tensor<3x3x3x100xi1>
  %k33 = arith.constant dense<0xFF800000> : tensor<f32>
  %e34 = tensor.empty() : tensor<3x3x3x100xf32>
  %g35 = linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n) -> ()>, affine_map<(b0, b1, m, n) -> (b0, b1, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k33 : tensor<f32>) outs(%e34 : tensor<3x3x3x100xf32>) {
  ^bb0(%a36: f32, %o37: f32):
    linalg.yield %a36 : f32
  } -> tensor<3x3x3x100xf32>
  %e39 = tensor.empty() : tensor<3x3x3x100xf32>
  %g40 = linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n) -> (b0, b1, m, n)>, affine_map<(b0, b1, m, n) -> (b0, b1, m, n)>, affine_map<(b0, b1, m, n) -> (b0, b1, m, n)>, affine_map<(b0, b1, m, n) -> (b0, b1, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%g30, %ew12, %g35 : tensor<3x3x3x100xi1>, tensor<3x3x3x100xf32>, tensor<3x3x3x100xf32>) outs(%e39 : tensor<3x3x3x100xf32>) {
  ^bb0(%a41: i1, %a42: f32, %a43: f32, %o44: f32):
    %sel38 = arith.select %a41, %a42, %a43 : f32
    linalg.yield %sel38 : f32
  } -> tensor<3x3x3x100xf32>
  %e45 = tensor.empty() : tensor<3x3x3x1xf32>
  %g46 = linalg.generic {indexing_maps = [affine_map<(b0, b1, m, u) -> (b0)>, affine_map<(b0, b1, m, u) -> (b0, b1, m, u)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sinks : tensor<3xf32>) outs(%e45 : tensor<3x3x3x1xf32>) {
  ^bb0(%a47: f32, %o48: f32):
    linalg.yield %a47 : f32
  } -> tensor<3x3x3x1xf32>
  %cat49 = tensor.concat dim(3) %g40, %g46 : (tensor<3x3x3x100xf32>, tensor<3x3x3x1xf32>) -> tensor<3x3x3x101xf32>
  %c51 = arith.constant -3.40282347E+38 : f32
  %e52 = tensor.empty() : tensor<3x3x3x1xf32>
  %f53 = linalg.fill ins(%c51 : f32) outs(%e52 : tensor<3x3x3x1xf32>) -> tensor<3x3x3x1xf32>
  %g54 = linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>, affine_map<(b0, b1, m, n1) -> (b0, b1, m, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%cat49 : tensor<3x3x3x101xf32>) outs(%f53 : tensor<3x3x3x1xf32>) {
  ^bb0(%a55: f32, %o56: f32):
    %red50 = arith.maxnumf %a55, %o56 : f32
    linalg.yield %red50 : f32
  } -> tensor<3x3x3x1xf32>
  %e57 = tensor.empty() : tensor<3x3x3x101xf32>
  %g58 = linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n1) -> (b0, b1, m, 0)>, affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%g54 : tensor<3x3x3x1xf32>) outs(%e57 : tensor<3x3x3x101xf32>) {
  ^bb0(%a59: f32, %o60: f32):
    linalg.yield %a59 : f32
  } -> tensor<3x3x3x101xf32>
  %e61 = tensor.empty() : tensor<3x3x3x101xf32>
  %ew62 = linalg.elementwise kind=#linalg.elementwise_kind<sub> indexing_maps = [affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>, affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>, affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>] ins(%cat49, %g58 : tensor<3x3x3x101xf32>, tensor<3x3x3x101xf32>) outs(%e61 : tensor<3x3x3x101xf32>) -> tensor<3x3x3x101xf32>
  %e63 = tensor.empty() : tensor<3x3x3x101xf32>
  %ew64 = linalg.elementwise kind=#linalg.elementwise_kind<exp> indexing_maps = [affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>, affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>] ins(%ew62 : tensor<3x3x3x101xf32>) outs(%e63 : tensor<3x3x3x101xf32>) -> tensor<3x3x3x101xf32>
  %ri66 = arith.constant dense<0.0> : tensor<3x3x3xf32>
  %g67 = linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>, affine_map<(b0, b1, m, n1) -> (b0, b1, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ew64 : tensor<3x3x3x101xf32>) outs(%ri66 : tensor<3x3x3xf32>) {
  ^bb0(%a68: f32, %o69: f32):
    %red65 = arith.addf %a68, %o69 : f32
    linalg.yield %red65 : f32
  } -> tensor<3x3x3xf32>
  %ks70 = tensor.expand_shape %g67 [[0], [1], [2, 3]] output_shape [3, 3, 3, 1] : tensor<3x3x3xf32> into tensor<3x3x3x1xf32>
  %e71 = tensor.empty() : tensor<3x3x3x101xf32>
  %g72 = linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n1) -> (b0, b1, m, 0)>, affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ks70 : tensor<3x3x3x1xf32>) outs(%e71 : tensor<3x3x3x101xf32>) {
  ^bb0(%a73: f32, %o74: f32):
    linalg.yield %a73 : f32
  } -> tensor<3x3x3x101xf32>
  %e75 = tensor.empty() : tensor<3x3x3x101xf32>
  %ew76 = linalg.elementwise kind=#linalg.elementwise_kind<div> indexing_maps = [affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>, affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>, affine_map<(b0, b1, m, n1) -> (b0, b1, m, n1)>] ins(%ew64, %g72 : tensor<3x3x3x101xf32>, tensor<3x3x3x101xf32>) outs(%e75 : tensor<3x3x3x101xf32>) -> tensor<3x3x3x101xf32>
  %pk77 = tensor.extract_slice %ew76[0, 0, 0, 0] [3, 3, 3, 100] [1, 1, 1, 1] : tensor<3x3x3x101xf32> to tensor<3x3x3x100xf32>
  %e78 = tensor.empty() : tensor<3x3x3x16xf32>
  %f79 = linalg.fill ins(%c7 : f32) outs(%e78 : tensor<3x3x3x16xf32>) -> tensor<3x3x3x16xf32>
  %out80 = linalg.contract indexing_maps = [affine_map<(b0, b1, m, e, n) -> (b0, b1, m, n)>, affine_map<(b0, b1, m, e, n) -> (b0, n, b1, e)>, affine_map<(b0, b1, m, e, n) -> (b0, m, b1, e)>] ins(%pk77, %v : tensor<3x3x3x100xf32>, tensor<3x100x3x16xf32>) outs(%f79 : tensor<3x3x3x16xf32>) -> tensor<3x3x3x16xf32>
  return %out80 : tensor<3x3x3x16xf32>
}
