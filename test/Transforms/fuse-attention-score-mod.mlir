// RUN: attn-opt %s --attn-fuse --split-input-file --mlir-print-local-scope | FileCheck %s
// RUN: attn-opt %s --attn-fuse --attn-explain --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: attn-opt %s --attn-fuse --split-input-file | attn-opt --split-input-file | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: %exec-check %s

// Score modifications (attn.attention's score_mod region): elementwise
// functions of the scaled score and its indices that frontends write between
// Q·K^T and the softmax (Gemma-2 soft-capping, ALiBi, clamps), and the
// look-alikes that are not one: a modification after a -inf mask that does
// not commute with it, a reduction inside the score function.

// -----

// Gemma-2: cap * tanh(scale * s / cap), then causal with -inf.
// EXEC: amp=3.0
// CHECK-LABEL: func.func @gemma2_softcap_causal
// CHECK: attn.attention
// CHECK-SAME: causal
// CHECK-SAME: score_mod {
// CHECK: math.tanh
// CHECK: attn.yield
// ROUNDTRIP: attn.attention{{.*}}score_mod
// EXPLAIN: remark: attention fused: scale=0.05, mask=none, score_mod=mulf(tanh(s), 5), causal=yes
func.func @gemma2_softcap_causal(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %cap = arith.constant 5.0 : f32
    %y = arith.mulf %x, %sc : f32
    %t0 = arith.divf %y, %cap : f32
    %t1 = math.tanh %t0 : f32
    %t2 = arith.mulf %t1, %cap : f32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %fut = arith.cmpi ugt, %ni, %mi : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %fut, %ninf, %t2 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}
// -----

// ALiBi with the slopes computed from the head index (2^(-8 (h+1) / H),
// H = 4) and the bias slope * (n - m) from positions, then causal.
// EXEC: amp=3.0
// CHECK-LABEL: func.func @alibi_slopes_from_head_index
// CHECK: attn.attention
// CHECK-SAME: causal
// CHECK-SAME: score_mod {
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-DAG: math.exp2
// CHECK-DAG: arith.subi
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=addf(s, mulf(exp2(divf(mulf(sitofp(addi(b1, 1)), -8), 4)), sitofp(subi(n, m)))), causal=yes
func.func @alibi_slopes_from_head_index(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %hi = linalg.index 1 : index
    %hh = arith.index_cast %hi : index to i64
    %one = arith.constant 1 : i64
    %h1 = arith.addi %hh, %one : i64
    %hf = arith.sitofp %h1 : i64 to f32
    %m8 = arith.constant -8.0 : f32
    %e0 = arith.mulf %hf, %m8 : f32
    %nh = arith.constant 4.0 : f32
    %e1 = arith.divf %e0, %nh : f32
    %slope = math.exp2 %e1 : f32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %mm = arith.index_cast %mi : index to i64
    %nn = arith.index_cast %ni : index to i64
    %dist = arith.subi %nn, %mm : i64
    %df = arith.sitofp %dist : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %z1 = arith.addf %y, %bias : f32
    %fut = arith.cmpi ugt, %ni, %mi : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %fut, %ninf, %z1 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}
// -----

// ALiBi as torch exports it: the slopes a constant [H] tensor, read by the
// head index (a score_mod operand), the distance from positions.
// EXEC: amp=3.0
// CHECK-LABEL: func.func @alibi_constant_slopes
// CHECK: %[[SL:.*]] = arith.constant dense<[2.500000e-01, 6.250000e-02, 1.562500e-02, 3.906250e-03]> : tensor<4xf32>
// CHECK: attn.attention
// CHECK-SAME: score_mod_operands(%[[SL]] : tensor<4xf32>)
// CHECK-SAME: affine_map<(d0, d1, d2, d3, d4, d5) -> (d1)>]
// CHECK-SAME: score_mod {
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: f32):
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=addf(s, mulf(x0, sitofp(subi(n, m)))), causal=yes
func.func @alibi_constant_slopes(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %slopes = arith.constant dense<[0.25, 0.0625, 0.015625, 0.00390625]> : tensor<4xf32>
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (h)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<2x4x37x45xf32>, tensor<4xf32>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %sl: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %mm = arith.index_cast %mi : index to i64
    %nn = arith.index_cast %ni : index to i64
    %dist = arith.subi %nn, %mm : i64
    %df = arith.sitofp %dist : i64 to f32
    %bias = arith.mulf %sl, %df : f32
    %z1 = arith.addf %y, %bias : f32
    %fut = arith.cmpi ugt, %ni, %mi : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %fut, %ninf, %z1 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}
// -----

// Non-causal ALiBi as MPT writes it: the slopes times -|n - m|, the
// absolute value taken on the integer distance (math.absi).
// EXEC: amp=3.0
// CHECK-LABEL: func.func @alibi_abs_mpt
// CHECK: attn.attention
// CHECK-SAME: score_mod {
// CHECK: math.absi
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=addf(s, mulf(x0, negf(sitofp(absi(subi(n, m)))))), causal=no
func.func @alibi_abs_mpt(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %slopes = arith.constant dense<[0.25, 0.0625, 0.015625, 0.00390625]> : tensor<4xf32>
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (h)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<2x4x37x45xf32>, tensor<4xf32>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %sl: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %mm = arith.index_cast %mi : index to i64
    %nn = arith.index_cast %ni : index to i64
    %dist = arith.subi %nn, %mm : i64
    %ad = math.absi %dist : i64
    %df = arith.sitofp %ad : i64 to f32
    %nd = arith.negf %df : f32
    %bias = arith.mulf %sl, %nd : f32
    %r = arith.addf %y, %bias : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}
// -----

// Soft-capping, then an additive bias tensor per head: the bias stays the
// mask operand, applied after the region.
// EXEC: amp=3.0 arg3=bias
// CHECK-LABEL: func.func @softcap_then_bias
// CHECK: attn.attention
// CHECK-SAME: mask(
// CHECK-SAME: score_mod {
// EXPLAIN: remark: attention fused: scale=0.1, mask=additive over (b1,m,n), score_mod=mulf(tanh(s), 2.5), causal=no
func.func @softcap_then_bias(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>, %bias: tensor<4x37x45xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %bias : tensor<2x4x37x45xf32>, tensor<4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %bi: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %cap = arith.constant 2.5 : f32
    %y = arith.mulf %x, %sc : f32
    %t0 = arith.divf %y, %cap : f32
    %t1 = math.tanh %t0 : f32
    %t2 = arith.mulf %t1, %cap : f32
    %r = arith.addf %t2, %bi : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}
// -----

// s * sigmoid(s): the score read along two paths is still one function of
// it; the whole expression (scale included) becomes the region.
// EXEC: amp=3.0
// CHECK-LABEL: func.func @swish_score_two_paths
// CHECK: attn.attention
// CHECK-SAME: scale(%{{.*}})
// CHECK-SAME: score_mod {
// CHECK: math.exp
// EXPLAIN-NOT: does not reach
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=mulf(s, divf(1, addf(1, exp(negf(s))))), causal=no
func.func @swish_score_two_paths(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %ny = arith.negf %y : f32
    %ex = math.exp %ny : f32
    %one = arith.constant 1.0 : f32
    %den = arith.addf %one, %ex : f32
    %sig = arith.divf %one, %den : f32
    %r = arith.mulf %y, %sig : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}
// -----

// A clamp (maximumf) and a select on an index condition with a finite
// value: score modifications, not masks.
// EXEC: amp=3.0
// CHECK-LABEL: func.func @clamp_and_first_key_boost
// CHECK: attn.attention
// CHECK-SAME: score_mod {
// CHECK: arith.maximumf
// CHECK: arith.select
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=select(cmpi(n, 0), addf(maximumf(s, -1), 2), maximumf(s, -1)), causal=no
func.func @clamp_and_first_key_boost(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %lo = arith.constant -1.0 : f32
    %cl = arith.maximumf %y, %lo : f32
    %ni = linalg.index 3 : index
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %ni, %c0 : index
    %two = arith.constant 2.0 : f32
    %boost = arith.addf %cl, %two : f32
    %r = arith.select %first, %boost, %cl : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}
// -----

// Look-alike: soft-capping after the -inf mask turns masked scores into
// -cap (tanh(-inf) = -1): masked keys keep weight, not a score modification
// before the mask; left alone.
// EXEC: amp=3.0 nofuse
// CHECK-LABEL: func.func @softcap_after_causal_mask
// CHECK-NOT: attn.attention
// CHECK: linalg.softmax
// EXPLAIN: remark: attention not fused: the mask is applied before the scale
func.func @softcap_after_causal_mask(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %fut = arith.cmpi ugt, %ni, %mi : index
    %ninf = arith.constant 0xFF800000 : f32
    %mk = arith.select %fut, %ninf, %y : f32
    %cap = arith.constant 5.0 : f32
    %t0 = arith.divf %mk, %cap : f32
    %t1 = math.tanh %t0 : f32
    %r = arith.mulf %t1, %cap : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}
// -----

// Look-alike: an addition after a finite fill moves the fill (fill + bias
// is not the fill): left alone.
// EXEC: amp=3.0 nofuse
// CHECK-LABEL: func.func @alibi_after_finite_fill
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the scores are modified ('arith.addf') after they are masked
func.func @alibi_after_finite_fill(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %fut = arith.cmpi ugt, %ni, %mi : index
    %fill = arith.constant -1.0e+30 : f32
    %mk = arith.select %fut, %fill, %y : f32
    %mm = arith.index_cast %mi : index to i64
    %nn = arith.index_cast %ni : index to i64
    %dist = arith.subi %nn, %mm : i64
    %df = arith.sitofp %dist : i64 to f32
    %r = arith.addf %mk, %df : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}

// -----

// Soft-capping computed in f16 (torch's f16 Gemma-2: the scores, the
// division, tanh and the multiplication all f16): the region computes in f32,
// matching within f16 rounding.
// EXEC: amp=3.0
// CHECK-LABEL: func.func @gemma2_softcap_f16
// CHECK: attn.attention
// CHECK-SAME: score_mod {
// CHECK: math.tanh
// EXPLAIN: remark: attention fused: scale=0.05, mask=none, score_mod=mulf(tanh(s), 5), causal=yes, batch dims=2, dtype f16 -> f16
func.func @gemma2_softcap_f16(%q: tensor<2x4x37x16xf16>, %k: tensor<2x4x45x16xf16>, %v: tensor<2x4x45x8xf16>) -> tensor<2x4x37x8xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<2x4x37x45xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<2x4x37x45xf16>) -> tensor<2x4x37x45xf16>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf16>, tensor<2x4x45x16xf16>) outs(%z : tensor<2x4x37x45xf16>) {
  ^bb0(%a: f16, %b: f16, %c: f16):
    %p = arith.mulf %a, %b : f16
    %r = arith.addf %c, %p : f16
    linalg.yield %r : f16
  } -> tensor<2x4x37x45xf16>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x37x45xf16>) outs(%e : tensor<2x4x37x45xf16>) {
  ^bb0(%x: f16, %o: f16):
    %sc = arith.constant 0.25 : f16
    %cap = arith.constant 5.0 : f16
    %y = arith.mulf %x, %sc : f16
    %t0 = arith.divf %y, %cap : f16
    %t1 = math.tanh %t0 : f16
    %t2 = arith.mulf %t1, %cap : f16
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %fut = arith.cmpi ugt, %ni, %mi : index
    %ninf = arith.constant 0xFC00 : f16
    %r = arith.select %fut, %ninf, %t2 : f16
    linalg.yield %r : f16
  } -> tensor<2x4x37x45xf16>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf16>) outs(%e : tensor<2x4x37x45xf16>) -> tensor<2x4x37x45xf16>
  %eo = tensor.empty() : tensor<2x4x37x8xf16>
  %zo = linalg.fill ins(%zero : f16) outs(%eo : tensor<2x4x37x8xf16>) -> tensor<2x4x37x8xf16>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf16>, tensor<2x4x45x8xf16>) outs(%zo : tensor<2x4x37x8xf16>) {
  ^bb0(%a: f16, %b: f16, %c: f16):
    %pr = arith.mulf %a, %b : f16
    %r = arith.addf %c, %pr : f16
    linalg.yield %r : f16
  } -> tensor<2x4x37x8xf16>
  return %o : tensor<2x4x37x8xf16>
}
// -----

// ALiBi added to f16 scores (the distance converted to f16).
// EXEC: amp=3.0
// CHECK-LABEL: func.func @alibi_f16_scores
// CHECK: attn.attention
// CHECK-SAME: score_mod {
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=addf(s, mulf(x0, sitofp(subi(n, m)))), causal=yes, batch dims=2, dtype f16 -> f16
func.func @alibi_f16_scores(%q: tensor<2x4x37x16xf16>, %k: tensor<2x4x45x16xf16>, %v: tensor<2x4x45x8xf16>) -> tensor<2x4x37x8xf16> {
  %zero = arith.constant 0.0 : f16
  %slopes = arith.constant dense<[0.25, 0.0625, 0.015625, 0.00390625]> : tensor<4xf16>
  %e = tensor.empty() : tensor<2x4x37x45xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<2x4x37x45xf16>) -> tensor<2x4x37x45xf16>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf16>, tensor<2x4x45x16xf16>) outs(%z : tensor<2x4x37x45xf16>) {
  ^bb0(%a: f16, %b: f16, %c: f16):
    %p = arith.mulf %a, %b : f16
    %r = arith.addf %c, %p : f16
    linalg.yield %r : f16
  } -> tensor<2x4x37x45xf16>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (h)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %slopes : tensor<2x4x37x45xf16>, tensor<4xf16>) outs(%e : tensor<2x4x37x45xf16>) {
  ^bb0(%x: f16, %sl: f16, %o: f16):
    %sc = arith.constant 0.25 : f16
    %y = arith.mulf %x, %sc : f16
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %mm = arith.index_cast %mi : index to i64
    %nn = arith.index_cast %ni : index to i64
    %dist = arith.subi %nn, %mm : i64
    %df = arith.sitofp %dist : i64 to f16
    %bias = arith.mulf %sl, %df : f16
    %z1 = arith.addf %y, %bias : f16
    %fut = arith.cmpi ugt, %ni, %mi : index
    %ninf = arith.constant 0xFC00 : f16
    %r = arith.select %fut, %ninf, %z1 : f16
    linalg.yield %r : f16
  } -> tensor<2x4x37x45xf16>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf16>) outs(%e : tensor<2x4x37x45xf16>) -> tensor<2x4x37x45xf16>
  %eo = tensor.empty() : tensor<2x4x37x8xf16>
  %zo = linalg.fill ins(%zero : f16) outs(%eo : tensor<2x4x37x8xf16>) -> tensor<2x4x37x8xf16>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf16>, tensor<2x4x45x8xf16>) outs(%zo : tensor<2x4x37x8xf16>) {
  ^bb0(%a: f16, %b: f16, %c: f16):
    %pr = arith.mulf %a, %b : f16
    %r = arith.addf %c, %pr : f16
    linalg.yield %r : f16
  } -> tensor<2x4x37x8xf16>
  return %o : tensor<2x4x37x8xf16>
}

// -----

// GQA written with repeated K/V heads and ALiBi whose slope comes from the
// (query) head index: the op splits the head loop into (kv head, member of
// the group), and the region rebuilds h = kv * 3 + g for the slope.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @gqa_repeat_alibi_head_index
// CHECK: attn.attention
// CHECK-SAME: tensor<1x2x3x24x16xf32>, tensor<1x2x24x16xf32>, tensor<1x2x24x16xf32>
// CHECK: score_mod {
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: index, %[[KV:.*]]: index, %[[G:.*]]: index, %{{.*}}: index, %{{.*}}: index):
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[KV3:.*]] = arith.muli %[[KV]], %[[C3]] : index
// CHECK: arith.addi %[[KV3]], %[[G]] : index
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, kv heads 2 x group 3, score_mod=addf(s, mulf(exp2(mulf(sitofp(addi(b1, 1)), -0.5)), sitofp(subi(n, m)))), causal=no, batch dims=3, dtype f32 -> f32
func.func @gqa_repeat_alibi_head_index(%q: tensor<1x6x24x16xf32>, %k: tensor<1x2x24x16xf32>, %v: tensor<1x2x24x16xf32>) -> tensor<1x6x24x16xf32> {
  %zero = arith.constant 0.0 : f32
  %eb = tensor.empty() : tensor<1x2x3x24x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x24x16xf32>) outs(%eb : tensor<1x2x3x24x16xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x3x24x16xf32> into tensor<1x6x24x16xf32>
  %vb = linalg.broadcast ins(%v : tensor<1x2x24x16xf32>) outs(%eb : tensor<1x2x3x24x16xf32>) dimensions = [2]
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x3x24x16xf32> into tensor<1x6x24x16xf32>
  %e = tensor.empty() : tensor<1x6x24x24xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x6x24x24xf32>) -> tensor<1x6x24x24xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>,
                                        affine_map<(b, h, m, n, d) -> (b, h, n, d)>,
                                        affine_map<(b, h, m, n, d) -> (b, h, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x6x24x16xf32>, tensor<1x6x24x16xf32>) outs(%z : tensor<1x6x24x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x6x24x24xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x6x24x24xf32>) outs(%e : tensor<1x6x24x24xf32>) {
  ^bb0(%x: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %hi = linalg.index 1 : index
    %hh = arith.index_cast %hi : index to i64
    %one = arith.constant 1 : i64
    %h1 = arith.addi %hh, %one : i64
    %hf = arith.sitofp %h1 : i64 to f32
    %m8 = arith.constant -0.5 : f32
    %e0 = arith.mulf %hf, %m8 : f32
    %slope = math.exp2 %e0 : f32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %mm = arith.index_cast %mi : index to i64
    %nn = arith.index_cast %ni : index to i64
    %dist = arith.subi %nn, %mm : i64
    %df = arith.sitofp %dist : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %r = arith.addf %y, %bias : f32
    linalg.yield %r : f32
  } -> tensor<1x6x24x24xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<1x6x24x24xf32>) outs(%e : tensor<1x6x24x24xf32>) -> tensor<1x6x24x24xf32>
  %eo = tensor.empty() : tensor<1x6x24x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x6x24x16xf32>) -> tensor<1x6x24x16xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, e, n) -> (b, h, m, n)>,
                                        affine_map<(b, h, m, e, n) -> (b, h, n, e)>,
                                        affine_map<(b, h, m, e, n) -> (b, h, m, e)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x6x24x24xf32>, tensor<1x6x24x16xf32>) outs(%zo : tensor<1x6x24x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x6x24x16xf32>
  return %o : tensor<1x6x24x16xf32>
}
// -----

// A constant shift before a non-additive modification is not
// softmax-invariant: it becomes part of the region (found by the fuzzer:
// gen_attention.py --seed 777, case 80, dropped it).
// EXEC: amp=2.0
// CHECK-LABEL: func.func @shift_before_clamp
// CHECK: attn.attention
// CHECK-SAME: score_mod {
// CHECK: arith.addf
// CHECK: arith.maximumf
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=maximumf(addf(s, 0.5), -1), causal=no
func.func @shift_before_clamp(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %half = arith.constant 0.5 : f32
    %sh = arith.addf %y, %half : f32
    %lo = arith.constant -1.0 : f32
    %r = arith.maximumf %sh, %lo : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}
// -----

// Packed documents as JAX writes them (MaxText/Flax segment ids): the mask
// seg_q[:, :, None] == seg_kv[:, None, :] materialized by its own generic,
// then jnp.where(mask, s, -0.7 * finfo.max). It becomes a select in the
// region that reads both id vectors: no [B, M, N] mask tensor. M != N, so
// some query rows see no key of their segment and average V (finite fill).
// EXEC: arg3=seg:3 arg4=seg:3
// CHECK-LABEL: func.func @segment_ids_jax
// CHECK: attn.attention
// CHECK-SAME: score_mod_operands(%{{.*}}, %{{.*}} : tensor<2x45xi32>, tensor<2x37xi32>)
// CHECK-NOT: mask(
// CHECK-SAME: score_mod {
// CHECK: arith.cmpi eq
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: linalg.generic
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=select(cmpi(x1, x0), s, -2.38198e+38), causal=no
func.func @segment_ids_jax(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>, %sq: tensor<2x37xi32>, %sk: tensor<2x45xi32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %me = tensor.empty() : tensor<2x37x45xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m)>, affine_map<(b, m, n) -> (b, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sq, %sk : tensor<2x37xi32>, tensor<2x45xi32>) outs(%me : tensor<2x37x45xi1>) {
  ^bb0(%a: i32, %b: i32, %o: i1):
    %eq = arith.cmpi eq, %a, %b : i32
    linalg.yield %eq : i1
  } -> tensor<2x37x45xi1>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x37x45xf32>, tensor<2x37x45xi1>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %mk: i1, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %big = arith.constant -2.38197633E+38 : f32
    %r = arith.select %mk, %y, %big : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}
// -----

// A causal document mask written inline (FlexAttention's and_masks(causal,
// document) as a frontend lowers it): causal stays the op's attribute (its
// tiles are skipped), the id comparison goes into the region.
// EXEC: arg3=seg:4 arg4=seg:4
// CHECK-LABEL: func.func @document_causal_inline
// CHECK: attn.attention
// CHECK-SAME: causal
// CHECK-SAME: score_mod {
// CHECK: arith.cmpi eq
// CHECK-NOT: arith.cmpi
// CHECK: attn.yield
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=select(cmpi(x1, x0), s, -inf), causal=yes
func.func @document_causal_inline(%q: tensor<2x4x45x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>, %sq: tensor<2x45xi32>, %sk: tensor<2x45xi32>) -> tensor<2x4x45x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x45x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x45x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x45x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, m)>, affine_map<(b, h, m, n) -> (b, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %sq, %sk : tensor<2x4x45x45xf32>, tensor<2x45xi32>, tensor<2x45xi32>) outs(%e : tensor<2x4x45x45xf32>) {
  ^bb0(%x: f32, %a: i32, %b: i32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %eq = arith.cmpi eq, %a, %b : i32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %past = arith.cmpi ule, %ni, %mi : index
    %keep = arith.andi %eq, %past : i1
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x45x45xf32>) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %eo = tensor.empty() : tensor<2x4x45x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x45x8xf32>) -> tensor<2x4x45x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x45x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x45x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x8xf32>
  return %o : tensor<2x4x45x8xf32>
}
// -----

// Ids in any order, the mask as "masked where they differ"
// (select(ne, -inf, s)): the region keeps the program's polarity.
// EXEC: arg3=ids:5 arg4=ids:5
// CHECK-LABEL: func.func @segment_ids_unsorted
// CHECK: attn.attention
// CHECK-SAME: score_mod {
// CHECK: arith.cmpi ne
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=select(cmpi(x1, x0), -inf, s), causal=no
func.func @segment_ids_unsorted(%q: tensor<2x4x45x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>, %sq: tensor<2x45xi32>, %sk: tensor<2x45xi32>) -> tensor<2x4x45x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x45x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x45x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x45x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, m)>, affine_map<(b, h, m, n) -> (b, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %sq, %sk : tensor<2x4x45x45xf32>, tensor<2x45xi32>, tensor<2x45xi32>) outs(%e : tensor<2x4x45x45xf32>) {
  ^bb0(%x: f32, %a: i32, %b: i32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %ne = arith.cmpi ne, %a, %b : i32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %ne, %ninf, %y : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x45x45xf32>) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %eo = tensor.empty() : tensor<2x4x45x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x45x8xf32>) -> tensor<2x4x45x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x45x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x45x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x8xf32>
  return %o : tensor<2x4x45x8xf32>
}
// -----

// Look-alike: an additive bias tensor, then the id comparison with a finite
// fill. The op would add the bias after the region (fill + bias is not the
// fill in f16), so it is left alone, with the reason.
// EXEC: nofuse arg3=seg:3 arg4=seg:3 arg5=bias
// CHECK-LABEL: func.func @segment_ids_after_bias_finite
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the scores are masked by a comparison of per-query and per-key data in a form not fused here
func.func @segment_ids_after_bias_finite(%q: tensor<2x4x45x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>, %sq: tensor<2x45xi32>, %sk: tensor<2x45xi32>, %bias: tensor<2x45x45xf32>) -> tensor<2x4x45x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x45x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x45x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x45x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, m)>, affine_map<(b, h, m, n) -> (b, n)>, affine_map<(b, h, m, n) -> (b, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %sq, %sk, %bias : tensor<2x4x45x45xf32>, tensor<2x45xi32>, tensor<2x45xi32>, tensor<2x45x45xf32>) outs(%e : tensor<2x4x45x45xf32>) {
  ^bb0(%x: f32, %a: i32, %b: i32, %bi: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %yb = arith.addf %y, %bi : f32
    %eq = arith.cmpi eq, %a, %b : i32
    %big = arith.constant -3.40282347E+38 : f32
    %r = arith.select %eq, %yb, %big : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x45x45xf32>) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %eo = tensor.empty() : tensor<2x4x45x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x45x8xf32>) -> tensor<2x4x45x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x45x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x45x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x8xf32>
  return %o : tensor<2x4x45x8xf32>
}
// -----

// Not a comparison of ids: per-row and per-key padding flags anded (i1
// tensors over (b, m) and (b, n)) stay the program's materialized
// [B, M, N] mask, which every kernel reads (a region's runtime operands
// are numeric tensors).
// EXEC:
// CHECK-LABEL: func.func @row_and_key_flags
// CHECK: attn.attention
// CHECK-SAME: mask(%{{.*}} : tensor<2x37x45xi1>)
// CHECK-NOT: score_mod {
// EXPLAIN: remark: attention fused: scale=0.25, mask=boolean over (b0,m,n), causal=no
func.func @row_and_key_flags(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>, %sq: tensor<2x37xi1>, %sk: tensor<2x45xi1>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %me = tensor.empty() : tensor<2x37x45xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m)>, affine_map<(b, m, n) -> (b, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sq, %sk : tensor<2x37xi1>, tensor<2x45xi1>) outs(%me : tensor<2x37x45xi1>) {
  ^bb0(%a: i1, %b: i1, %o: i1):
    %eq = arith.andi %a, %b : i1
    linalg.yield %eq : i1
  } -> tensor<2x37x45xi1>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x37x45xf32>, tensor<2x37x45xi1>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %mk: i1, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %big = arith.constant -3.40282347E+38 : f32
    %r = arith.select %mk, %y, %big : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}

// -----

// Chunked attention (Llama 4's local layers: HF's chunked_overlay anded
// with causal): each query sees the keys of its own chunk of C = 8
// positions, kv_idx // C == q_idx // C. Causal stays the attribute; the
// chunk comparison goes into the region as position "segment ids"
// (convert-attn-to-gpu then limits each query tile's keys to its chunks).
// EXEC: amp=2.0
// CHECK-LABEL: func.func @chunked_causal_llama4
// CHECK: attn.attention
// CHECK-SAME: causal
// CHECK-SAME: score_mod {
// CHECK-COUNT-2: arith.floordivsi
// CHECK: arith.cmpi eq
// CHECK: attn.yield
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=select(cmpi(floordivsi(m, 8), floordivsi(n, 8)), s, -inf), causal=yes
func.func @chunked_causal_llama4(%q: tensor<2x4x45x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x45x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x45x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x45x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x45x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x45x45xf32>) outs(%e : tensor<2x4x45x45xf32>) {
  ^bb0(%x: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %c8 = arith.constant 8 : index
    %cm = arith.floordivsi %mi, %c8 : index
    %cn = arith.floordivsi %ni, %c8 : index
    %same = arith.cmpi eq, %cm, %cn : index
    %past = arith.cmpi ule, %ni, %mi : index
    %keep = arith.andi %same, %past : i1
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x45x45xf32>) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %eo = tensor.empty() : tensor<2x4x45x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x45x8xf32>) -> tensor<2x4x45x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x45x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x45x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x8xf32>
  return %o : tensor<2x4x45x8xf32>
}

// -----

// The same chunks as JAX's jnp.floor_divide writes them on int32 positions
// (lax.div, then one less where the remainder is nonzero and the signs
// differ), non-causal, 37 queries against 45 keys: the region keeps JAX's
// arithmetic as it is.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @chunked_jax_floor_divide
// CHECK: attn.attention
// CHECK-NOT: causal
// CHECK-SAME: score_mod {
// CHECK: arith.divsi
// CHECK: arith.remsi
// CHECK: attn.yield
func.func @chunked_jax_floor_divide(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x37x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) {
  ^bb0(%x: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %mq = arith.index_cast %mi : index to i32
    %nk = arith.index_cast %ni : index to i32
    %c6 = arith.constant 6 : i32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %dq = arith.divsi %mq, %c6 : i32
    %rq = arith.remsi %mq, %c6 : i32
    %nzq = arith.cmpi ne, %rq, %c0 : i32
    %negq = arith.cmpi slt, %mq, %c0 : i32
    %adjq = arith.andi %nzq, %negq : i1
    %dq1 = arith.subi %dq, %c1 : i32
    %fq = arith.select %adjq, %dq1, %dq : i32
    %dk = arith.divsi %nk, %c6 : i32
    %rk = arith.remsi %nk, %c6 : i32
    %nzk = arith.cmpi ne, %rk, %c0 : i32
    %negk = arith.cmpi slt, %nk, %c0 : i32
    %adjk = arith.andi %nzk, %negk : i1
    %dk1 = arith.subi %dk, %c1 : i32
    %fk = arith.select %adjk, %dk1, %dk : i32
    %keep = arith.cmpi eq, %fq, %fk : i32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x37x45xf32>) outs(%e : tensor<2x4x37x45xf32>) -> tensor<2x4x37x45xf32>
  %eo = tensor.empty() : tensor<2x4x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x37x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}

// -----

// Look-alike: chunks of a runtime width (a division by a value the program
// reads) are not fused: the kernels divide only by constants (no score may
// trap on a zero divisor).
// EXEC: amp=2.0 nofuse arg3=lens:5
// CHECK-LABEL: func.func @chunks_of_runtime_width
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the scores are masked by position chunks the region cannot take: 'arith.floordivsi' in the score modification takes a constant positive divisor (got a runtime value or an out-of-range one)
func.func @chunks_of_runtime_width(%q: tensor<2x4x45x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>, %w: tensor<2xi32>) -> tensor<2x4x45x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x45x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x45x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x45x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %w : tensor<2x4x45x45xf32>, tensor<2xi32>) outs(%e : tensor<2x4x45x45xf32>) {
  ^bb0(%x: f32, %wi: i32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %mi = linalg.index 2 : index
    %ni = linalg.index 3 : index
    %c = arith.index_cast %wi : i32 to index
    %cm = arith.floordivsi %mi, %c : index
    %cn = arith.floordivsi %ni, %c : index
    %keep = arith.cmpi eq, %cm, %cn : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x45x45xf32>) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %eo = tensor.empty() : tensor<2x4x45x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x45x8xf32>) -> tensor<2x4x45x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x45x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x45x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x8xf32>
  return %o : tensor<2x4x45x8xf32>
}

// -----

// The same chunks of a runtime width materialized by the program as an i1
// [B, M, N] tensor: that tensor is the op's boolean mask, as before chunks
// went into regions.
// EXEC: amp=2.0 arg3=lens:5
// CHECK-LABEL: func.func @materialized_chunks_of_runtime_width
// CHECK: attn.attention
// CHECK-SAME: mask(%{{.*}} : tensor<2x45x45xi1>)
// CHECK-NOT: score_mod {
// EXPLAIN: remark: attention fused: scale=0.25, mask=boolean over (b0,m,n), causal=no
func.func @materialized_chunks_of_runtime_width(%q: tensor<2x4x45x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>, %w: tensor<2xi32>) -> tensor<2x4x45x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x45x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x45x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x45x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %me = tensor.empty() : tensor<2x45x45xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<2xi32>) outs(%me : tensor<2x45x45xi1>) {
  ^bb0(%wi: i32, %o: i1):
    %mi = linalg.index 1 : index
    %ni = linalg.index 2 : index
    %c = arith.index_cast %wi : i32 to index
    %cm = arith.floordivsi %mi, %c : index
    %cn = arith.floordivsi %ni, %c : index
    %keep = arith.cmpi eq, %cm, %cn : index
    linalg.yield %keep : i1
  } -> tensor<2x45x45xi1>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x45x45xf32>, tensor<2x45x45xi1>) outs(%e : tensor<2x4x45x45xf32>) {
  ^bb0(%x: f32, %keep: i1, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x45x45xf32>) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %eo = tensor.empty() : tensor<2x4x45x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x45x8xf32>) -> tensor<2x4x45x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x45x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x45x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x8xf32>
  return %o : tensor<2x4x45x8xf32>
}

// -----

// Chunks with causal materialized by the program as an i1 [B, M, N] tensor
// (Hugging Face builds its chunked mask that way, on int64 positions, and
// torch-mlir keeps the tensor): traced through the producer, the causal
// part becomes the attribute and the chunk comparison the region (the
// kernels' key ranges), no mask tensor.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @materialized_chunks_hf
// CHECK: attn.attention
// CHECK-NOT: mask(
// CHECK-SAME: causal
// CHECK-SAME: score_mod {
// CHECK: arith.floordivsi
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=select(cmpi(floordivsi(m, 16), floordivsi(n, 16)), s, -inf), causal=yes
func.func @materialized_chunks_hf(%q: tensor<2x4x45x16xf32>, %k: tensor<2x4x45x16xf32>, %v: tensor<2x4x45x8xf32>) -> tensor<2x4x45x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x45x45xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x45x16xf32>, tensor<2x4x45x16xf32>) outs(%z : tensor<2x4x45x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %me = tensor.empty() : tensor<2x45x45xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%me : tensor<2x45x45xi1>) {
  ^bb0(%o: i1):
    %mi = linalg.index 1 : index
    %ni = linalg.index 2 : index
    %mq = arith.index_cast %mi : index to i64
    %nk = arith.index_cast %ni : index to i64
    %c = arith.constant 16 : i64
    %cm = arith.floordivsi %mq, %c : i64
    %cn = arith.floordivsi %nk, %c : i64
    %same = arith.cmpi eq, %cm, %cn : i64
    %past = arith.cmpi sle, %nk, %mq : i64
    %keep = arith.andi %same, %past : i1
    linalg.yield %keep : i1
  } -> tensor<2x45x45xi1>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x45x45xf32>, tensor<2x45x45xi1>) outs(%e : tensor<2x4x45x45xf32>) {
  ^bb0(%x: f32, %keep: i1, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x45xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x4x45x45xf32>) outs(%e : tensor<2x4x45x45xf32>) -> tensor<2x4x45x45xf32>
  %eo = tensor.empty() : tensor<2x4x45x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x45x8xf32>) -> tensor<2x4x45x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x4x45x45xf32>, tensor<2x4x45x8xf32>) outs(%zo : tensor<2x4x45x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x45x8xf32>
  return %o : tensor<2x4x45x8xf32>
}
