// The lse result of attn.attention and attn.merge, executed on the CPU:
// the lse against a logsumexp written in linalg; split-KV (partials over
// key ranges, each with its lse) merged by attn.merge against the unsplit
// op, on uneven splits, with an additive mask holding -inf, large logits,
// and a partial whose keys are all masked (lse -inf: it takes no part).
// RUN: %exec-check %s
// Property test: random splits (2-4 partials at random cut points, random
// shapes, masks with -inf), merged, against the unsplit op.
// RUN: %python %S/../../lib/gen_split_merge.py --seed 7 --count 12 > %t.mlir
// RUN: %exec-check %t.mlir

// The op's lse (causal, large logits) against log(sum(exp(s - max))) + max
// over the same scaled, masked scores in linalg.
// EXEC: @lse_of_op ref=fn:lse_in_linalg amp=4.0
func.func @lse_of_op(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>) -> tensor<2x3x37xf32> {
  %s = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x37x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %r, %r_lse = attn.attention ins(%q, %k, %v : tensor<2x3x37x16xf32>, tensor<2x3x45x16xf32>, tensor<2x3x45x8xf32>) scale(%s)
      outs(%init : tensor<2x3x37x8xf32>) causal indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  return %r_lse : tensor<2x3x37xf32>
}
func.func @lse_in_linalg(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>) -> tensor<2x3x37xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<2x3x37x45xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x37x45xf32>) -> tensor<2x3x37x45xf32>
  %sc = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x37x16xf32>, tensor<2x3x45x16xf32>) outs(%zs : tensor<2x3x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %el = tensor.empty() : tensor<2x3x37xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%el : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sc : tensor<2x3x37x45xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c25 = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c25 : f32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %fut = arith.cmpi ugt, %ni, %mi : index
    %z = arith.select %fut, %ninf, %y : f32
    linalg.yield %z : f32
  } -> tensor<2x3x37x45xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%sm : tensor<2x3x37x45xf32>) outs(%mx0 : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %sum0 = linalg.fill ins(%zero : f32) outs(%el : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%sm, %mx : tensor<2x3x37x45xf32>, tensor<2x3x37xf32>) outs(%sum0 : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %m: f32, %acc: f32):
    %d = arith.subf %x, %m : f32
    %ex = math.exp %d : f32
    %r = arith.addf %acc, %ex : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %lse = linalg.generic {indexing_maps = [affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum, %mx : tensor<2x3x37xf32>, tensor<2x3x37xf32>) outs(%el : tensor<2x3x37xf32>) {
  ^bb0(%s: f32, %m: f32, %o: f32):
    %lg = math.log %s : f32
    %r = arith.addf %lg, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  return %lse : tensor<2x3x37xf32>
}

// -----

// Two uneven partials (19 + 26 keys) with a mask holding -inf, merged:
// the output of the unsplit op.
// EXEC: @split2 ref=fn:full2 amp=3.0 arg3=mask
func.func @split2(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>, %mask: tensor<3x37x45xf32>) -> tensor<2x3x37x8xf32> {
  %s = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x37x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %k0 = tensor.extract_slice %k[0, 0, 0, 0] [2, 3, 19, 16] [1, 1, 1, 1] : tensor<2x3x45x16xf32> to tensor<2x3x19x16xf32>
  %v0 = tensor.extract_slice %v[0, 0, 0, 0] [2, 3, 19, 8] [1, 1, 1, 1] : tensor<2x3x45x8xf32> to tensor<2x3x19x8xf32>
  %m0 = tensor.extract_slice %mask[0, 0, 0] [3, 37, 19] [1, 1, 1] : tensor<3x37x45xf32> to tensor<3x37x19xf32>
  %o0, %o0_lse = attn.attention ins(%q, %k0, %v0 : tensor<2x3x37x16xf32>, tensor<2x3x19x16xf32>, tensor<2x3x19x8xf32>) scale(%s) mask(%m0 : tensor<3x37x19xf32>)
      outs(%init : tensor<2x3x37x8xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>, affine_map<(b, h, m, n, d, e) -> (h, m, n)>] -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  %k19 = tensor.extract_slice %k[0, 0, 19, 0] [2, 3, 26, 16] [1, 1, 1, 1] : tensor<2x3x45x16xf32> to tensor<2x3x26x16xf32>
  %v19 = tensor.extract_slice %v[0, 0, 19, 0] [2, 3, 26, 8] [1, 1, 1, 1] : tensor<2x3x45x8xf32> to tensor<2x3x26x8xf32>
  %m19 = tensor.extract_slice %mask[0, 0, 19] [3, 37, 26] [1, 1, 1] : tensor<3x37x45xf32> to tensor<3x37x26xf32>
  %o19, %o19_lse = attn.attention ins(%q, %k19, %v19 : tensor<2x3x37x16xf32>, tensor<2x3x26x16xf32>, tensor<2x3x26x8xf32>) scale(%s) mask(%m19 : tensor<3x37x26xf32>)
      outs(%init : tensor<2x3x37x8xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>, affine_map<(b, h, m, n, d, e) -> (h, m, n)>] -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  %r, %r_lse = attn.merge (%o0, %o19 : tensor<2x3x37x8xf32>, tensor<2x3x37x8xf32>)
      lse(%o0_lse, %o19_lse : tensor<2x3x37xf32>, tensor<2x3x37xf32>) -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  return %r : tensor<2x3x37x8xf32>
}
func.func @full2(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>, %mask: tensor<3x37x45xf32>) -> tensor<2x3x37x8xf32> {
  %s = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x37x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %r, %r_lse = attn.attention ins(%q, %k, %v : tensor<2x3x37x16xf32>, tensor<2x3x45x16xf32>, tensor<2x3x45x8xf32>) scale(%s) mask(%mask : tensor<3x37x45xf32>)
      outs(%init : tensor<2x3x37x8xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>, affine_map<(b, h, m, n, d, e) -> (h, m, n)>] -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  return %r : tensor<2x3x37x8xf32>
}

// -----

// Three partials (7 + 19 + 19 keys), merged: the unsplit op's lse.
// EXEC: @split3_lse ref=fn:full3_lse amp=6.0 arg3=mask
func.func @split3_lse(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>, %mask: tensor<3x37x45xf32>) -> tensor<2x3x37xf32> {
  %s = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x37x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %k0 = tensor.extract_slice %k[0, 0, 0, 0] [2, 3, 7, 16] [1, 1, 1, 1] : tensor<2x3x45x16xf32> to tensor<2x3x7x16xf32>
  %v0 = tensor.extract_slice %v[0, 0, 0, 0] [2, 3, 7, 8] [1, 1, 1, 1] : tensor<2x3x45x8xf32> to tensor<2x3x7x8xf32>
  %m0 = tensor.extract_slice %mask[0, 0, 0] [3, 37, 7] [1, 1, 1] : tensor<3x37x45xf32> to tensor<3x37x7xf32>
  %o0, %o0_lse = attn.attention ins(%q, %k0, %v0 : tensor<2x3x37x16xf32>, tensor<2x3x7x16xf32>, tensor<2x3x7x8xf32>) scale(%s) mask(%m0 : tensor<3x37x7xf32>)
      outs(%init : tensor<2x3x37x8xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>, affine_map<(b, h, m, n, d, e) -> (h, m, n)>] -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  %k7 = tensor.extract_slice %k[0, 0, 7, 0] [2, 3, 19, 16] [1, 1, 1, 1] : tensor<2x3x45x16xf32> to tensor<2x3x19x16xf32>
  %v7 = tensor.extract_slice %v[0, 0, 7, 0] [2, 3, 19, 8] [1, 1, 1, 1] : tensor<2x3x45x8xf32> to tensor<2x3x19x8xf32>
  %m7 = tensor.extract_slice %mask[0, 0, 7] [3, 37, 19] [1, 1, 1] : tensor<3x37x45xf32> to tensor<3x37x19xf32>
  %o7, %o7_lse = attn.attention ins(%q, %k7, %v7 : tensor<2x3x37x16xf32>, tensor<2x3x19x16xf32>, tensor<2x3x19x8xf32>) scale(%s) mask(%m7 : tensor<3x37x19xf32>)
      outs(%init : tensor<2x3x37x8xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>, affine_map<(b, h, m, n, d, e) -> (h, m, n)>] -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  %k26 = tensor.extract_slice %k[0, 0, 26, 0] [2, 3, 19, 16] [1, 1, 1, 1] : tensor<2x3x45x16xf32> to tensor<2x3x19x16xf32>
  %v26 = tensor.extract_slice %v[0, 0, 26, 0] [2, 3, 19, 8] [1, 1, 1, 1] : tensor<2x3x45x8xf32> to tensor<2x3x19x8xf32>
  %m26 = tensor.extract_slice %mask[0, 0, 26] [3, 37, 19] [1, 1, 1] : tensor<3x37x45xf32> to tensor<3x37x19xf32>
  %o26, %o26_lse = attn.attention ins(%q, %k26, %v26 : tensor<2x3x37x16xf32>, tensor<2x3x19x16xf32>, tensor<2x3x19x8xf32>) scale(%s) mask(%m26 : tensor<3x37x19xf32>)
      outs(%init : tensor<2x3x37x8xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>, affine_map<(b, h, m, n, d, e) -> (h, m, n)>] -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  %r, %r_lse = attn.merge (%o0, %o7, %o26 : tensor<2x3x37x8xf32>, tensor<2x3x37x8xf32>, tensor<2x3x37x8xf32>)
      lse(%o0_lse, %o7_lse, %o26_lse : tensor<2x3x37xf32>, tensor<2x3x37xf32>, tensor<2x3x37xf32>) -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  return %r_lse : tensor<2x3x37xf32>
}
func.func @full3_lse(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>, %mask: tensor<3x37x45xf32>) -> tensor<2x3x37xf32> {
  %s = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x37x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %r, %r_lse = attn.attention ins(%q, %k, %v : tensor<2x3x37x16xf32>, tensor<2x3x45x16xf32>, tensor<2x3x45x8xf32>) scale(%s) mask(%mask : tensor<3x37x45xf32>)
      outs(%init : tensor<2x3x37x8xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>, affine_map<(b, h, m, n, d, e) -> (h, m, n)>] -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  return %r_lse : tensor<2x3x37xf32>
}

// -----

// A partial whose keys are all masked (an all -inf additive mask): lse -inf,
// O 0, and the merge equals the first partial alone.
// EXEC: @with_empty_partial ref=fn:first_partial amp=3.0
func.func @with_empty_partial(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>) -> tensor<2x3x37x8xf32> {
  %s = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x37x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %em = tensor.empty() : tensor<3x37x25xf32>
  %allmasked = linalg.fill ins(%ninf : f32) outs(%em : tensor<3x37x25xf32>) -> tensor<3x37x25xf32>
  %k0 = tensor.extract_slice %k[0, 0, 0, 0] [2, 3, 20, 16] [1, 1, 1, 1] : tensor<2x3x45x16xf32> to tensor<2x3x20x16xf32>
  %v0 = tensor.extract_slice %v[0, 0, 0, 0] [2, 3, 20, 8] [1, 1, 1, 1] : tensor<2x3x45x8xf32> to tensor<2x3x20x8xf32>
  %k20 = tensor.extract_slice %k[0, 0, 20, 0] [2, 3, 25, 16] [1, 1, 1, 1] : tensor<2x3x45x16xf32> to tensor<2x3x25x16xf32>
  %v20 = tensor.extract_slice %v[0, 0, 20, 0] [2, 3, 25, 8] [1, 1, 1, 1] : tensor<2x3x45x8xf32> to tensor<2x3x25x8xf32>
  %o0, %o0_lse = attn.attention ins(%q, %k0, %v0 : tensor<2x3x37x16xf32>, tensor<2x3x20x16xf32>, tensor<2x3x20x8xf32>) scale(%s)
      outs(%init : tensor<2x3x37x8xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  %o1, %o1_lse = attn.attention ins(%q, %k20, %v20 : tensor<2x3x37x16xf32>, tensor<2x3x25x16xf32>, tensor<2x3x25x8xf32>) scale(%s) mask(%allmasked : tensor<3x37x25xf32>)
      outs(%init : tensor<2x3x37x8xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>, affine_map<(b, h, m, n, d, e) -> (h, m, n)>] -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  %r, %r_lse = attn.merge (%o0, %o1 : tensor<2x3x37x8xf32>, tensor<2x3x37x8xf32>) lse(%o0_lse, %o1_lse : tensor<2x3x37xf32>, tensor<2x3x37xf32>) -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  return %r : tensor<2x3x37x8xf32>
}
func.func @first_partial(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>) -> tensor<2x3x37x8xf32> {
  %s = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x37x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %k0 = tensor.extract_slice %k[0, 0, 0, 0] [2, 3, 20, 16] [1, 1, 1, 1] : tensor<2x3x45x16xf32> to tensor<2x3x20x16xf32>
  %v0 = tensor.extract_slice %v[0, 0, 0, 0] [2, 3, 20, 8] [1, 1, 1, 1] : tensor<2x3x45x8xf32> to tensor<2x3x20x8xf32>
  %r = attn.attention ins(%q, %k0, %v0 : tensor<2x3x37x16xf32>, tensor<2x3x20x16xf32>, tensor<2x3x20x8xf32>) scale(%s)
      outs(%init : tensor<2x3x37x8xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                         affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x3x37x8xf32>
  return %r : tensor<2x3x37x8xf32>
}

// -----

// [B, S, H, D] layout with a sink: the lse comes in the output's order
// without e ([B, M, H]) and counts the sink; against the [B, H, S, D] op on
// transposed inputs.
// EXEC: @lse_bshd_sink ref=fn:lse_bhsd_sink amp=3.0
func.func @lse_bshd_sink(%q: tensor<2x37x3x16xf32>, %k: tensor<2x45x3x16xf32>, %v: tensor<2x45x3x8xf32>, %sink: tensor<3xf32>) -> tensor<2x37x3xf32> {
  %s = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x37x3x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x37x3x8xf32>) -> tensor<2x37x3x8xf32>
  %r, %l = attn.attention ins(%q, %k, %v : tensor<2x37x3x16xf32>, tensor<2x45x3x16xf32>, tensor<2x45x3x8xf32>) scale(%s)
      sink(%sink : tensor<3xf32>) outs(%init : tensor<2x37x3x8xf32>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, m, h, d)>, affine_map<(b, h, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, m, n, d, e) -> (b, m, h, e)>,
                       affine_map<(b, h, m, n, d, e) -> (h)>]
      -> tensor<2x37x3x8xf32>, tensor<2x37x3xf32>
  return %l : tensor<2x37x3xf32>
}
func.func @lse_bhsd_sink(%q: tensor<2x37x3x16xf32>, %k: tensor<2x45x3x16xf32>, %v: tensor<2x45x3x8xf32>, %sink: tensor<3xf32>) -> tensor<2x37x3xf32> {
  %s = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %eq = tensor.empty() : tensor<2x3x37x16xf32>
  %qt = linalg.transpose ins(%q : tensor<2x37x3x16xf32>) outs(%eq : tensor<2x3x37x16xf32>) permutation = [0, 2, 1, 3]
  %ek = tensor.empty() : tensor<2x3x45x16xf32>
  %kt = linalg.transpose ins(%k : tensor<2x45x3x16xf32>) outs(%ek : tensor<2x3x45x16xf32>) permutation = [0, 2, 1, 3]
  %ev = tensor.empty() : tensor<2x3x45x8xf32>
  %vt = linalg.transpose ins(%v : tensor<2x45x3x8xf32>) outs(%ev : tensor<2x3x45x8xf32>) permutation = [0, 2, 1, 3]
  %e = tensor.empty() : tensor<2x3x37x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %r, %l = attn.attention ins(%qt, %kt, %vt : tensor<2x3x37x16xf32>, tensor<2x3x45x16xf32>, tensor<2x3x45x8xf32>) scale(%s)
      sink(%sink : tensor<3xf32>) outs(%init : tensor<2x3x37x8xf32>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
                       affine_map<(b, h, m, n, d, e) -> (h)>]
      -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
  %el = tensor.empty() : tensor<2x37x3xf32>
  %lt = linalg.transpose ins(%l : tensor<2x3x37xf32>) outs(%el : tensor<2x37x3xf32>) permutation = [0, 2, 1]
  return %lt : tensor<2x37x3xf32>
}
