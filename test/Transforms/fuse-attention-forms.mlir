// RUN: attn-opt %s --attn-fuse --split-input-file --mlir-print-local-scope | FileCheck %s
// RUN: attn-opt %s --attn-fuse --attn-explain --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: %exec-check %s

// The spellings frontends use besides linalg.softmax: decomposed softmaxes,
// casts around them, scales on Q/K, masks computed in place, the safe-softmax
// guard. Every positive case is also executed against stock MLIR.

// Decomposed softmax as linalg.generic: max (init -inf) into a reduced row
// vector broadcast back by maps, sub + exp in one generic, sum, divide.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @decomposed_generic_rowvector_f32
// CHECK-NOT: math.exp
// CHECK: attn.attention
// EXPLAIN: remark: attention fused: scale=0.5, mask=none, causal=no, batch dims=1, dtype f32 -> f32
func.func @decomposed_generic_rowvector_f32(%q: tensor<2x19x8xf32>, %k: tensor<2x23x8xf32>, %v: tensor<2x23x8xf32>) -> tensor<2x19x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x19x23xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x19x23xf32>) -> tensor<2x19x23xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x19x8xf32>, tensor<2x23x8xf32>) outs(%z : tensor<2x19x23xf32>) -> tensor<2x19x23xf32>
  %er = tensor.empty() : tensor<2x19xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x19xf32>) -> tensor<2x19xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x19x23xf32>) outs(%mi : tensor<2x19xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %h = arith.constant 0.5 : f32
    %y = arith.mulf %x, %h : f32
    %r = arith.maximumf %acc, %y : f32
    linalg.yield %r : f32
  } -> tensor<2x19xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mx : tensor<2x19x23xf32>, tensor<2x19xf32>) outs(%e : tensor<2x19x23xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %h = arith.constant 0.5 : f32
    %y = arith.mulf %x, %h : f32
    %d = arith.subf %y, %m : f32
    %p = math.exp %d : f32
    linalg.yield %p : f32
  } -> tensor<2x19x23xf32>
  %si = linalg.fill ins(%zero : f32) outs(%er : tensor<2x19xf32>) -> tensor<2x19xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x19x23xf32>) outs(%si : tensor<2x19xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x19xf32>
  %pr = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x19x23xf32>, tensor<2x19xf32>) outs(%e : tensor<2x19x23xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x19x23xf32>
  %eo = tensor.empty() : tensor<2x19x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x19x8xf32>) -> tensor<2x19x8xf32>
  %o = linalg.batch_matmul ins(%pr, %v : tensor<2x19x23xf32>, tensor<2x23x8xf32>) outs(%zo : tensor<2x19x8xf32>) -> tensor<2x19x8xf32>
  return %o : tensor<2x19x8xf32>
}

// -----

// linalg.reduce with keep-dims through tensor.expand_shape ([M, 1]),
// arith.maxnumf, the lowest finite value as the max's init, and the division
// written as reciprocal then multiply. Scale 1/sqrt(d) on Q.
// EXEC: amp=1.5
// CHECK-LABEL: func.func @reduce_keepdims_reciprocal_scale_on_q_f32
// CHECK: attn.attention ins(%arg0, %arg1, %arg2
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=no, batch dims=0, dtype f32 -> f32
func.func @reduce_keepdims_reciprocal_scale_on_q_f32(%q: tensor<37x16xf32>, %k: tensor<29x16xf32>, %v: tensor<29x4xf32>) -> tensor<37x4xf32> {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %eq = tensor.empty() : tensor<37x16xf32>
  %c4 = arith.constant dense<4.0> : tensor<37x16xf32>
  %qs = linalg.div ins(%q, %c4 : tensor<37x16xf32>, tensor<37x16xf32>) outs(%eq : tensor<37x16xf32>) -> tensor<37x16xf32>
  %e = tensor.empty() : tensor<37x29xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<37x29xf32>) -> tensor<37x29xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%qs, %k : tensor<37x16xf32>, tensor<29x16xf32>) outs(%z : tensor<37x29xf32>) -> tensor<37x29xf32>
  %er = tensor.empty() : tensor<37xf32>
  %mi = linalg.fill ins(%lowest : f32) outs(%er : tensor<37xf32>) -> tensor<37xf32>
  %mx = linalg.reduce ins(%s : tensor<37x29xf32>) outs(%mi : tensor<37xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %r = arith.maxnumf %x, %acc : f32
      linalg.yield %r : f32
    }
  %mk = tensor.expand_shape %mx [[0, 1]] output_shape [37, 1] : tensor<37xf32> into tensor<37x1xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, 0)>, affine_map<(m, n) -> (m, n)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%s, %mk : tensor<37x29xf32>, tensor<37x1xf32>) outs(%e : tensor<37x29xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %p = math.exp %d : f32
    linalg.yield %p : f32
  } -> tensor<37x29xf32>
  %si = linalg.fill ins(%zero : f32) outs(%er : tensor<37xf32>) -> tensor<37xf32>
  %sum = linalg.reduce ins(%ex : tensor<37x29xf32>) outs(%si : tensor<37xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %rc = linalg.generic {indexing_maps = [affine_map<(m) -> (m)>, affine_map<(m) -> (m)>], iterator_types = ["parallel"]}
      ins(%sum : tensor<37xf32>) outs(%er : tensor<37xf32>) {
  ^bb0(%x: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %r = arith.divf %one, %x : f32
    linalg.yield %r : f32
  } -> tensor<37xf32>
  %pr = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%ex, %rc : tensor<37x29xf32>, tensor<37xf32>) outs(%e : tensor<37x29xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.mulf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<37x29xf32>
  %eo = tensor.empty() : tensor<37x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<37x4xf32>) -> tensor<37x4xf32>
  %o = linalg.matmul ins(%pr, %v : tensor<37x29xf32>, tensor<29x4xf32>) outs(%zo : tensor<37x4xf32>) -> tensor<37x4xf32>
  return %o : tensor<37x4xf32>
}

// -----

// f16 scores upcast to f32 for the softmax and cast back before P·V; causal
// mask computed in place from linalg.index and selected with -inf; the scale
// is split as sqrt(scale) on both Q and K.
// EXEC: amp=2.0 pipeline=tile-q=8,tile-kv=16
// CHECK-LABEL: func.func @f16_upcast_softmax_causal_split_scale
// CHECK: attn.attention {{.*}} causal
// EXPLAIN: remark: attention fused: scale=0.124973, mask=none, causal=yes, batch dims=1, dtype f16 -> f16
func.func @f16_upcast_softmax_causal_split_scale(%q: tensor<2x40x64xf16>, %k: tensor<2x40x64xf16>, %v: tensor<2x40x16xf16>) -> tensor<2x40x16xf16> {
  %zero = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e16 = tensor.empty() : tensor<2x40x64xf16>
  %rs = arith.constant dense<0.35355339> : tensor<2x40x64xf16>
  %qs = linalg.mul ins(%q, %rs : tensor<2x40x64xf16>, tensor<2x40x64xf16>) outs(%e16 : tensor<2x40x64xf16>) -> tensor<2x40x64xf16>
  %ks = linalg.mul ins(%k, %rs : tensor<2x40x64xf16>, tensor<2x40x64xf16>) outs(%e16 : tensor<2x40x64xf16>) -> tensor<2x40x64xf16>
  %e = tensor.empty() : tensor<2x40x40xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<2x40x40xf16>) -> tensor<2x40x40xf16>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%qs, %ks : tensor<2x40x64xf16>, tensor<2x40x64xf16>) outs(%z : tensor<2x40x40xf16>) -> tensor<2x40x40xf16>
  %ef = tensor.empty() : tensor<2x40x40xf32>
  %sf = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x40x40xf16>) outs(%ef : tensor<2x40x40xf32>) {
  ^bb0(%x: f16, %o: f32):
    %w = arith.extf %x : f16 to f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %keep = arith.cmpi ule, %j, %i : index
    %r = arith.select %keep, %w, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x40x40xf32>
  %p = linalg.softmax dimension(2) ins(%sf : tensor<2x40x40xf32>) outs(%ef : tensor<2x40x40xf32>) -> tensor<2x40x40xf32>
  %p16 = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                         iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<2x40x40xf32>) outs(%e : tensor<2x40x40xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x40x40xf16>
  %eo = tensor.empty() : tensor<2x40x16xf16>
  %zo = linalg.fill ins(%zero : f16) outs(%eo : tensor<2x40x16xf16>) -> tensor<2x40x16xf16>
  %o = linalg.batch_matmul ins(%p16, %v : tensor<2x40x40xf16>, tensor<2x40x16xf16>) outs(%zo : tensor<2x40x16xf16>) -> tensor<2x40x16xf16>
  return %o : tensor<2x40x16xf16>
}

// -----

// A boolean mask applied by select (true keeps), scale and mask in one
// generic, bf16 inputs.
// EXEC: amp=1.0
// CHECK-LABEL: func.func @bool_mask_select_bf16
// CHECK: attn.attention {{.*}} mask(%{{.*}} : tensor<2x13x31xi1>)
// EXPLAIN: remark: attention fused: scale=0.25, mask=boolean over (b0,m,n), causal=no, batch dims=1, dtype bf16 -> f32
func.func @bool_mask_select_bf16(%q: tensor<2x13x16xbf16>, %k: tensor<2x31x16xbf16>, %v: tensor<2x31x8xbf16>, %mask: tensor<2x13x31xi1>) -> tensor<2x13x8xf32> {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<2x13x31xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x13x31xf32>) -> tensor<2x13x31xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x13x16xbf16>, tensor<2x31x16xbf16>) outs(%z : tensor<2x13x31xf32>) -> tensor<2x13x31xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x13x31xf32>, tensor<2x13x31xi1>) outs(%e : tensor<2x13x31xf32>) {
  ^bb0(%x: f32, %keep: i1, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %r = arith.select %keep, %y, %lowest : f32
    linalg.yield %r : f32
  } -> tensor<2x13x31xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x13x31xf32>) outs(%e : tensor<2x13x31xf32>) -> tensor<2x13x31xf32>
  %eo = tensor.empty() : tensor<2x13x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x13x8xf32>) -> tensor<2x13x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x13x31xf32>, tensor<2x31x8xbf16>) outs(%zo : tensor<2x13x8xf32>) -> tensor<2x13x8xf32>
  return %o : tensor<2x13x8xf32>
}

// -----

// The safe-softmax guard torch exports add: rows whose scores are all -inf
// become 0. Fused as the kernel's fully-masked-row rule; the mask below masks
// every third row completely.
// EXEC: amp=1.0 arg3=maskrows
// CHECK-LABEL: func.func @safe_softmax_guard_fully_masked_rows
// CHECK-NOT: arith.andi
// CHECK: attn.attention
// EXPLAIN: remark: attention fused: scale=1, mask=additive over (b0,m,n), causal=no, guarded rows, batch dims=1, dtype f32 -> f32
func.func @safe_softmax_guard_fully_masked_rows(%q: tensor<2x12x8xf32>, %k: tensor<2x20x8xf32>, %v: tensor<2x20x8xf32>, %mask: tensor<2x12x20xf32>) -> tensor<2x12x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %true = arith.constant true
  %e = tensor.empty() : tensor<2x12x20xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x12x20xf32>) -> tensor<2x12x20xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x12x8xf32>, tensor<2x20x8xf32>) outs(%z : tensor<2x12x20xf32>) -> tensor<2x12x20xf32>
  %sm = linalg.add ins(%s, %mask : tensor<2x12x20xf32>, tensor<2x12x20xf32>) outs(%e : tensor<2x12x20xf32>) -> tensor<2x12x20xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x12x20xf32>) outs(%e : tensor<2x12x20xf32>) -> tensor<2x12x20xf32>
  %eb = tensor.empty() : tensor<2x12xi1>
  %ti = linalg.fill ins(%true : i1) outs(%eb : tensor<2x12xi1>) -> tensor<2x12xi1>
  %all = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m)>],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%sm : tensor<2x12x20xf32>) outs(%ti : tensor<2x12xi1>) {
  ^bb0(%x: f32, %acc: i1):
    %isninf = arith.cmpf oeq, %x, %ninf : f32
    %r = arith.andi %acc, %isninf : i1
    linalg.yield %r : i1
  } -> tensor<2x12xi1>
  %g = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m)>, affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%all, %p : tensor<2x12xi1>, tensor<2x12x20xf32>) outs(%e : tensor<2x12x20xf32>) {
  ^bb0(%c: i1, %x: f32, %o: f32):
    %r = arith.select %c, %zero, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x12x20xf32>
  %eo = tensor.empty() : tensor<2x12x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  %o = linalg.batch_matmul ins(%g, %v : tensor<2x12x20xf32>, tensor<2x20x8xf32>) outs(%zo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  return %o : tensor<2x12x8xf32>
}

// -----

// Look-alikes.

// Thresholding the probabilities (p < 0.05 -> 0) before P·V changes them.
// EXEC: nofuse
// CHECK-LABEL: func.func @thresholded_probabilities_rejected
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the probabilities are changed by a select between the softmax and P·V that is not the fully-masked-row guard
func.func @thresholded_probabilities_rejected(%q: tensor<12x8xf32>, %k: tensor<12x8xf32>, %v: tensor<12x8xf32>) -> tensor<12x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12x12xf32>) -> tensor<12x12xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<12x8xf32>, tensor<12x8xf32>) outs(%z : tensor<12x12xf32>) -> tensor<12x12xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<12x12xf32>) outs(%e : tensor<12x12xf32>) -> tensor<12x12xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<12x12xf32>) outs(%e : tensor<12x12xf32>) {
  ^bb0(%x: f32, %o: f32):
    %th = arith.constant 0.05 : f32
    %small = arith.cmpf olt, %x, %th : f32
    %r = arith.select %small, %zero, %x : f32
    linalg.yield %r : f32
  } -> tensor<12x12xf32>
  %eo = tensor.empty() : tensor<12x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<12x8xf32>) -> tensor<12x8xf32>
  %o = linalg.matmul ins(%t, %v : tensor<12x12xf32>, tensor<12x8xf32>) outs(%zo : tensor<12x8xf32>) -> tensor<12x8xf32>
  return %o : tensor<12x8xf32>
}

// -----

// Dropout-like: the probabilities are multiplied by a keep tensor.
// EXEC: nofuse
// CHECK-LABEL: func.func @dropout_on_probabilities_rejected
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the probabilities are changed by 'arith.mulf' between the softmax and P·V
func.func @dropout_on_probabilities_rejected(%q: tensor<12x8xf32>, %k: tensor<12x8xf32>, %v: tensor<12x8xf32>, %keep: tensor<12x12xf32>) -> tensor<12x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12x12xf32>) -> tensor<12x12xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<12x8xf32>, tensor<12x8xf32>) outs(%z : tensor<12x12xf32>) -> tensor<12x12xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<12x12xf32>) outs(%e : tensor<12x12xf32>) -> tensor<12x12xf32>
  %t = linalg.mul ins(%p, %keep : tensor<12x12xf32>, tensor<12x12xf32>) outs(%e : tensor<12x12xf32>) -> tensor<12x12xf32>
  %eo = tensor.empty() : tensor<12x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<12x8xf32>) -> tensor<12x8xf32>
  %o = linalg.matmul ins(%t, %v : tensor<12x12xf32>, tensor<12x8xf32>) outs(%zo : tensor<12x8xf32>) -> tensor<12x8xf32>
  return %o : tensor<12x8xf32>
}

// -----

// Decomposed softmax whose max runs over the queries and whose sum runs over
// the keys.
// EXEC: nofuse
// CHECK-LABEL: func.func @max_and_sum_over_different_axes_rejected
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the softmax takes its max and its sum over different axes
func.func @max_and_sum_over_different_axes_rejected(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %er = tensor.empty() : tensor<16xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %mx = linalg.reduce ins(%s : tensor<16x16xf32>) outs(%mi : tensor<16xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %r = arith.maximumf %x, %acc : f32
      linalg.yield %r : f32
    }
  %ex = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%s, %mx : tensor<16x16xf32>, tensor<16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %p = math.exp %d : f32
    linalg.yield %p : f32
  } -> tensor<16x16xf32>
  %si = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.reduce ins(%ex : tensor<16x16xf32>) outs(%si : tensor<16xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %pr = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  %eo = tensor.empty() : tensor<16x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%pr, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%zo : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// -----

// Masks n >= m (the diagonal too): not the causal rule; left alone.
// EXEC: nofuse
// CHECK-LABEL: func.func @strictly_past_mask_rejected
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the scores are masked by an index comparison that is neither causal (n > m + K, K >= 0) nor a sliding window (m - n >= W)
func.func @strictly_past_mask_rejected(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -1.0e+30 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<16x8xf32>, tensor<16x8xf32>) outs(%z : tensor<16x16xf32>) -> tensor<16x16xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %masked = arith.cmpi sge, %j, %i : index
    %r = arith.select %masked, %ninf, %x : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  %p = linalg.softmax dimension(1) ins(%sm : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %eo = tensor.empty() : tensor<16x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<16x8xf32>) -> tensor<16x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<16x16xf32>, tensor<16x8xf32>) outs(%zo : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %o : tensor<16x8xf32>
}

// -----

// Grouped-query attention through the maps: 2 K/V heads each serve a group
// of 3 query heads; K and V never index the group dim g, so nothing is
// broadcast. The op keeps K/V at their own rank.
// EXEC: amp=1.0 pipeline=tile-q=8,tile-kv=8
// CHECK-LABEL: func.func @gqa_group_dim_through_maps_f32
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<2x2x3x20x8xf32>, tensor<2x2x27x8xf32>, tensor<2x2x27x8xf32>)
// CHECK-SAME: affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d4, d5)>
// EXPLAIN: remark: attention fused: scale=0.353553, mask=none, causal=no, batch dims=3, dtype f32 -> f32
func.func @gqa_group_dim_through_maps_f32(%q: tensor<2x2x3x20x8xf32>, %k: tensor<2x2x27x8xf32>, %v: tensor<2x2x27x8xf32>) -> tensor<2x2x3x20x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2x3x20x27xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2x3x20x27xf32>) -> tensor<2x2x3x20x27xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, d) -> (b, h, g, m, d)>,
                                        affine_map<(b, h, g, m, n, d) -> (b, h, n, d)>,
                                        affine_map<(b, h, g, m, n, d) -> (b, h, g, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x2x3x20x8xf32>, tensor<2x2x27x8xf32>) outs(%z : tensor<2x2x3x20x27xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x2x3x20x27xf32>
  %c = arith.constant dense<0.35355339> : tensor<2x2x3x20x27xf32>
  %sc = linalg.mul ins(%s, %c : tensor<2x2x3x20x27xf32>, tensor<2x2x3x20x27xf32>) outs(%e : tensor<2x2x3x20x27xf32>) -> tensor<2x2x3x20x27xf32>
  %p = linalg.softmax dimension(4) ins(%sc : tensor<2x2x3x20x27xf32>) outs(%e : tensor<2x2x3x20x27xf32>) -> tensor<2x2x3x20x27xf32>
  %eo = tensor.empty() : tensor<2x2x3x20x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x2x3x20x8xf32>) -> tensor<2x2x3x20x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, e, n) -> (b, h, g, m, n)>,
                                        affine_map<(b, h, g, m, e, n) -> (b, h, n, e)>,
                                        affine_map<(b, h, g, m, e, n) -> (b, h, g, m, e)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x2x3x20x27xf32>, tensor<2x2x27x8xf32>) outs(%zo : tensor<2x2x3x20x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x2x3x20x8xf32>
  return %o : tensor<2x2x3x20x8xf32>
}

// -----

// Causal sliding window (each query sees itself and the 6 keys before it),
// written as one keep condition: n <= m && m - n < 7. The tiled loop starts
// at the window of the tile's first row and stops at the diagonal.
// EXEC: amp=1.0 pipeline=tile-q=8,tile-kv=4
// CHECK-LABEL: func.func @causal_sliding_window_f32
// CHECK: attn.attention {{.*}} causal window = 7
// EXPLAIN: remark: attention fused: scale=0.5, mask=none, causal=yes, window=7, batch dims=1, dtype f32 -> f32
func.func @causal_sliding_window_f32(%q: tensor<2x33x4xf32>, %k: tensor<2x33x4xf32>, %v: tensor<2x33x4xf32>) -> tensor<2x33x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x33x33xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x33x33xf32>) -> tensor<2x33x33xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x33x4xf32>, tensor<2x33x4xf32>) outs(%z : tensor<2x33x33xf32>) -> tensor<2x33x33xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x33x33xf32>) outs(%e : tensor<2x33x33xf32>) {
  ^bb0(%x: f32, %o: f32):
    %h = arith.constant 0.5 : f32
    %y = arith.mulf %x, %h : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c7 = arith.constant 7 : index
    %past = arith.cmpi ule, %j, %i : index
    %d = arith.subi %i, %j : index
    %near = arith.cmpi slt, %d, %c7 : index
    %keep = arith.andi %past, %near : i1
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x33x33xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x33x33xf32>) outs(%e : tensor<2x33x33xf32>) -> tensor<2x33x33xf32>
  %eo = tensor.empty() : tensor<2x33x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x33x4xf32>) -> tensor<2x33x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x33x33xf32>, tensor<2x33x4xf32>) outs(%zo : tensor<2x33x4xf32>) -> tensor<2x33x4xf32>
  return %o : tensor<2x33x4xf32>
}

// -----

// Bottom-right causal with a sliding window from iotas, as a chunked prefill
// writes it (query m at key m + (N - M)): keep n <= m + 12 && m + 12 - n < 5,
// spelled with the offset on the key side. The tiled loop's bounds follow
// the shifted diagonal.
// EXEC: amp=1.0 pipeline=tile-q=8,tile-kv=4
// CHECK-LABEL: func.func @bottom_right_causal_window_iota
// CHECK: attn.attention {{.*}} causal window = 5 query_offset = 12
// EXPLAIN: remark: attention fused: scale=0.5, mask=none, causal=yes (bottom right: query m at key m + 12), window=5, batch dims=1, dtype f32 -> f32
func.func @bottom_right_causal_window_iota(%q: tensor<2x21x4xf32>, %k: tensor<2x33x4xf32>, %v: tensor<2x33x4xf32>) -> tensor<2x21x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x21x33xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x21x33xf32>) -> tensor<2x21x33xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x21x4xf32>, tensor<2x33x4xf32>) outs(%z : tensor<2x21x33xf32>) -> tensor<2x21x33xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x21x33xf32>) outs(%e : tensor<2x21x33xf32>) {
  ^bb0(%x: f32, %o: f32):
    %h = arith.constant 0.5 : f32
    %y = arith.mulf %x, %h : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c12 = arith.constant 12 : index
    %c5 = arith.constant 5 : index
    %qpos = arith.addi %i, %c12 : index
    %past = arith.cmpi ule, %j, %qpos : index
    %d = arith.subi %qpos, %j : index
    %near = arith.cmpi slt, %d, %c5 : index
    %keep = arith.andi %past, %near : i1
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x21x33xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x21x33xf32>) outs(%e : tensor<2x21x33xf32>) -> tensor<2x21x33xf32>
  %eo = tensor.empty() : tensor<2x21x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x21x4xf32>) -> tensor<2x21x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x21x33xf32>, tensor<2x33x4xf32>) outs(%zo : tensor<2x21x4xf32>) -> tensor<2x21x4xf32>
  return %o : tensor<2x21x4xf32>
}

// -----

// Look-alike: a causal rule whose diagonal is above the top-left one
// (n > m - 3: the first 3 queries see no key) is not a query offset (K >= 0):
// it stays unfused, and --attn-explain says why.
// CHECK-LABEL: func.func @causal_negative_offset
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the scores are masked by an index comparison that is neither causal (n > m + K, K >= 0)
func.func @causal_negative_offset(%q: tensor<2x9x4xf32>, %k: tensor<2x9x4xf32>, %v: tensor<2x9x4xf32>) -> tensor<2x9x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x9x9xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x9x9xf32>) -> tensor<2x9x9xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x9x4xf32>, tensor<2x9x4xf32>) outs(%z : tensor<2x9x9xf32>) -> tensor<2x9x9xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x9x9xf32>) outs(%e : tensor<2x9x9xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c3 = arith.constant 3 : index
    %jp = arith.addi %j, %c3 : index
    %after = arith.cmpi sgt, %jp, %i : index
    %r = arith.select %after, %ninf, %x : f32
    linalg.yield %r : f32
  } -> tensor<2x9x9xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x9x9xf32>) outs(%e : tensor<2x9x9xf32>) -> tensor<2x9x9xf32>
  %eo = tensor.empty() : tensor<2x9x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x9x4xf32>) -> tensor<2x9x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x9x9xf32>, tensor<2x9x4xf32>) outs(%zo : tensor<2x9x4xf32>) -> tensor<2x9x4xf32>
  return %o : tensor<2x9x4xf32>
}

// -----

// Attention sinks as gpt-oss writes them: a per-head sink logit broadcast to
// one extra score column, softmax over keys + sink, the column sliced off
// before P·V. Fused as the initial state m = sink, ℓ = 1 of the online
// softmax: the extra column never exists. Causal as well.
// EXEC: amp=1.5 pipeline=tile-q=8,tile-kv=8
// CHECK-LABEL: func.func @attention_sink_gpt_oss
// CHECK-NOT: tensor.concat
// CHECK: attn.attention {{.*}} sink(%arg3 : tensor<4xf32>) {{.*}} causal
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, sink, causal=yes, batch dims=1, dtype f32 -> f32
func.func @attention_sink_gpt_oss(%q: tensor<4x21x16xf32>, %k: tensor<4x21x16xf32>, %v: tensor<4x21x8xf32>, %sinks: tensor<4xf32>) -> tensor<4x21x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x21x21xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x21x21xf32>) -> tensor<4x21x21xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<4x21x16xf32>, tensor<4x21x16xf32>) outs(%z : tensor<4x21x21xf32>) -> tensor<4x21x21xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x21x21xf32>) outs(%e : tensor<4x21x21xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %future = arith.cmpi ugt, %j, %i : index
    %r = arith.select %future, %ninf, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x21x21xf32>
  %es = tensor.empty() : tensor<4x21x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sinks : tensor<4xf32>) outs(%es : tensor<4x21x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x21x1xf32>
  %cat = tensor.concat dim(2) %sm, %sb : (tensor<4x21x21xf32>, tensor<4x21x1xf32>) -> tensor<4x21x22xf32>
  %e22 = tensor.empty() : tensor<4x21x22xf32>
  %p = linalg.softmax dimension(2) ins(%cat : tensor<4x21x22xf32>) outs(%e22 : tensor<4x21x22xf32>) -> tensor<4x21x22xf32>
  %pk = tensor.extract_slice %p[0, 0, 0] [4, 21, 21] [1, 1, 1] : tensor<4x21x22xf32> to tensor<4x21x21xf32>
  %eo = tensor.empty() : tensor<4x21x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x21x8xf32>) -> tensor<4x21x8xf32>
  %o = linalg.batch_matmul ins(%pk, %v : tensor<4x21x21xf32>, tensor<4x21x8xf32>) outs(%zo : tensor<4x21x8xf32>) -> tensor<4x21x8xf32>
  return %o : tensor<4x21x8xf32>
}

// -----

// The same sink with dynamic lengths: the slice back to the scores' sizes
// is proven by value bounds (dim(P) - 1 = N through the softmax's init).
// EXEC: dims=13,21,21 amp=1.5 pipeline=tile-q=8,tile-kv=8
// CHECK-LABEL: func.func @attention_sink_dynamic
// CHECK-NOT: tensor.concat
// CHECK: attn.attention {{.*}} sink(%arg3 : tensor<4xf32>) {{.*}} causal
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, sink, causal=yes, batch dims=1, dtype f32 -> f32
func.func @attention_sink_dynamic(%q: tensor<4x?x16xf32>, %k: tensor<4x?x16xf32>, %v: tensor<4x?x8xf32>, %sinks: tensor<4xf32>) -> tensor<4x?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c1 = arith.constant 1 : index
  %m = tensor.dim %q, %c1 : tensor<4x?x16xf32>
  %n = tensor.dim %k, %c1 : tensor<4x?x16xf32>
  %e = tensor.empty(%m, %n) : tensor<4x?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<4x?x16xf32>, tensor<4x?x16xf32>) outs(%z : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x?x?xf32>) outs(%e : tensor<4x?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %future = arith.cmpi ugt, %j, %i : index
    %r = arith.select %future, %ninf, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x?x?xf32>
  %es = tensor.empty(%m) : tensor<4x?x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sinks : tensor<4xf32>) outs(%es : tensor<4x?x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x?x1xf32>
  %cat = tensor.concat dim(2) %sm, %sb : (tensor<4x?x?xf32>, tensor<4x?x1xf32>) -> tensor<4x?x?xf32>
  %n1 = arith.addi %n, %c1 : index
  %e22 = tensor.empty(%m, %n1) : tensor<4x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%cat : tensor<4x?x?xf32>) outs(%e22 : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %c2 = arith.constant 2 : index
  %np = tensor.dim %p, %c2 : tensor<4x?x?xf32>
  %nk = arith.subi %np, %c1 : index
  %pk = tensor.extract_slice %p[0, 0, 0] [4, %m, %nk] [1, 1, 1] : tensor<4x?x?xf32> to tensor<4x?x?xf32>
  %eo = tensor.empty(%m) : tensor<4x?x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  %o = linalg.batch_matmul ins(%pk, %v : tensor<4x?x?xf32>, tensor<4x?x8xf32>) outs(%zo : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  return %o : tensor<4x?x8xf32>
}

// -----

// Look-alike: the slice's length is a runtime value that need not be the
// number of keys, so the sliced-off columns need not be just the sink.
// CHECK-LABEL: func.func @attention_sink_dynamic_unknown_slice
// CHECK: tensor.concat
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the scores get an extra column that is not an attention sink sliced off before P·V
func.func @attention_sink_dynamic_unknown_slice(%q: tensor<4x?x16xf32>, %k: tensor<4x?x16xf32>, %v: tensor<4x?x8xf32>, %sinks: tensor<4xf32>, %len: index) -> tensor<4x?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c1 = arith.constant 1 : index
  %m = tensor.dim %q, %c1 : tensor<4x?x16xf32>
  %n = tensor.dim %k, %c1 : tensor<4x?x16xf32>
  %e = tensor.empty(%m, %n) : tensor<4x?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<4x?x16xf32>, tensor<4x?x16xf32>) outs(%z : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x?x?xf32>) outs(%e : tensor<4x?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %future = arith.cmpi ugt, %j, %i : index
    %r = arith.select %future, %ninf, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x?x?xf32>
  %es = tensor.empty(%m) : tensor<4x?x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sinks : tensor<4xf32>) outs(%es : tensor<4x?x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x?x1xf32>
  %cat = tensor.concat dim(2) %sm, %sb : (tensor<4x?x?xf32>, tensor<4x?x1xf32>) -> tensor<4x?x?xf32>
  %n1 = arith.addi %n, %c1 : index
  %e22 = tensor.empty(%m, %n1) : tensor<4x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%cat : tensor<4x?x?xf32>) outs(%e22 : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %pk = tensor.extract_slice %p[0, 0, 0] [4, %m, %len] [1, 1, 1] : tensor<4x?x?xf32> to tensor<4x?x?xf32>
  %eo = tensor.empty(%m) : tensor<4x?x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  %o = linalg.batch_matmul ins(%pk, %v : tensor<4x?x?xf32>, tensor<4x?x8xf32>) outs(%zo : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  return %o : tensor<4x?x8xf32>
}

// -----

// A model's causal buffer cut to the run-time lengths (GPT-2's
// `bias[:, :, :S, :S]` with dynamic axes): every top-left corner of a
// causal buffer is causal, and key 0 keeps every row visible.
// EXEC: dims=7,7,7 amp=2.0
// CHECK-LABEL: func.func @dynamic_corner_of_causal_buffer
// CHECK: attn.attention
// CHECK-NOT: mask(
// CHECK-SAME: causal
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=yes, batch dims=1, dtype f32 -> f32
func.func @dynamic_corner_of_causal_buffer(%q: tensor<2x?x16xf32>, %k: tensor<2x?x16xf32>, %v: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c1 = arith.constant 1 : index
  %m = tensor.dim %q, %c1 : tensor<2x?x16xf32>
  %n = tensor.dim %k, %c1 : tensor<2x?x16xf32>
  %buf = arith.constant dense<[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]> : tensor<8x8xi1>
  %cut = tensor.extract_slice %buf[0, 0] [%m, %n] [1, 1] : tensor<8x8xi1> to tensor<?x?xi1>
  %e = tensor.empty(%m, %n) : tensor<2x?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x?x16xf32>, tensor<2x?x16xf32>) outs(%z : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %cut : tensor<2x?x?xf32>, tensor<?x?xi1>) outs(%e : tensor<2x?x?xf32>) {
  ^bb0(%x: f32, %keep: i1, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x?x?xf32>) outs(%e : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %eo = tensor.empty(%m) : tensor<2x?x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x?x?xf32>, tensor<2x?x8xf32>) outs(%zo : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  return %o : tensor<2x?x8xf32>
}

// -----

// Look-alike: a band buffer (causal, 3 keys wide) cut the same way. A
// corner narrower than the band leaves rows with no visible key, where -inf
// and the op's fully masked rows differ: it stays a mask tensor.
// EXEC: dims=7,5,5 amp=2.0
// CHECK-LABEL: func.func @dynamic_corner_of_band_buffer
// CHECK: attn.attention
// CHECK-SAME: mask(
// EXPLAIN: remark: attention fused: scale=0.25, mask=boolean over (m,n), causal=no
func.func @dynamic_corner_of_band_buffer(%q: tensor<2x?x16xf32>, %k: tensor<2x?x16xf32>, %v: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c1 = arith.constant 1 : index
  %m = tensor.dim %q, %c1 : tensor<2x?x16xf32>
  %n = tensor.dim %k, %c1 : tensor<2x?x16xf32>
  %buf = arith.constant dense<[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [false, true, true, true, false, false, false, false], [false, false, true, true, true, false, false, false], [false, false, false, true, true, true, false, false], [false, false, false, false, true, true, true, false], [false, false, false, false, false, true, true, true]]> : tensor<8x8xi1>
  %cut = tensor.extract_slice %buf[0, 0] [%m, %n] [1, 1] : tensor<8x8xi1> to tensor<?x?xi1>
  %e = tensor.empty(%m, %n) : tensor<2x?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x?x16xf32>, tensor<2x?x16xf32>) outs(%z : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %cut : tensor<2x?x?xf32>, tensor<?x?xi1>) outs(%e : tensor<2x?x?xf32>) {
  ^bb0(%x: f32, %keep: i1, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %r = arith.select %keep, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x?x?xf32>) outs(%e : tensor<2x?x?xf32>) -> tensor<2x?x?xf32>
  %eo = tensor.empty(%m) : tensor<2x?x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x?x?xf32>, tensor<2x?x8xf32>) outs(%zo : tensor<2x?x8xf32>) -> tensor<2x?x8xf32>
  return %o : tensor<2x?x8xf32>
}

// -----

// Look-alike: the slice starts at column min(N, 1), which is 1 for every
// real length: it drops key 0 and keeps the sink column, so it is not the
// sink form (an offset counts as 0 only when it is 0 for every size).
// CHECK-LABEL: func.func @attention_sink_dynamic_drops_first_key
// CHECK: tensor.concat
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused
func.func @attention_sink_dynamic_drops_first_key(%q: tensor<4x?x16xf32>, %k: tensor<4x?x16xf32>, %v: tensor<4x?x8xf32>, %sinks: tensor<4xf32>) -> tensor<4x?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c1 = arith.constant 1 : index
  %m = tensor.dim %q, %c1 : tensor<4x?x16xf32>
  %n = tensor.dim %k, %c1 : tensor<4x?x16xf32>
  %e = tensor.empty(%m, %n) : tensor<4x?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<4x?x16xf32>, tensor<4x?x16xf32>) outs(%z : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x?x?xf32>) outs(%e : tensor<4x?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %future = arith.cmpi ugt, %j, %i : index
    %r = arith.select %future, %ninf, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x?x?xf32>
  %es = tensor.empty(%m) : tensor<4x?x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sinks : tensor<4xf32>) outs(%es : tensor<4x?x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x?x1xf32>
  %cat = tensor.concat dim(2) %sm, %sb : (tensor<4x?x?xf32>, tensor<4x?x1xf32>) -> tensor<4x?x?xf32>
  %n1 = arith.addi %n, %c1 : index
  %e22 = tensor.empty(%m, %n1) : tensor<4x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%cat : tensor<4x?x?xf32>) outs(%e22 : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %off = arith.minsi %n, %c1 : index
  %pk = tensor.extract_slice %p[0, 0, %off] [4, %m, %n] [1, 1, 1] : tensor<4x?x?xf32> to tensor<4x?x?xf32>
  %eo = tensor.empty(%m) : tensor<4x?x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  %o = linalg.batch_matmul ins(%pk, %v : tensor<4x?x?xf32>, tensor<4x?x8xf32>) outs(%zo : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  return %o : tensor<4x?x8xf32>
}

// -----

// A bool mask tensor anded with the causal condition (JAX's
// dot_product_attention with mask= and is_causal=True): the parts mask
// keys on their own, so it is the mask operand and `causal`.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @mask_and_causal
// CHECK: attn.attention
// CHECK-SAME: mask(
// CHECK-SAME: causal
// EXPLAIN: remark: attention fused: scale=0.25, mask=boolean over (b0,m,n), causal=yes
func.func @mask_and_causal(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x8xf32>, %keep: tensor<2x8x8xi1>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %keep : tensor<2x8x8xf32>, tensor<2x8x8xi1>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %kp: i1, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %past = arith.cmpi ule, %j, %i : index
    %both = arith.andi %kp, %past : i1
    %r = arith.select %both, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%zo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}

// -----

// Look-alike for the op, not for attention: two mask tensors anded. The op
// takes one; it stays as written.
// EXEC: nofuse
// CHECK-LABEL: func.func @two_masks_anded
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the scores are masked by a condition that is neither causal nor a boolean mask tensor
func.func @two_masks_anded(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x8xf32>, %a: tensor<2x8x8xi1>, %bm: tensor<2x8x8xi1>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %a, %bm : tensor<2x8x8xf32>, tensor<2x8x8xi1>, tensor<2x8x8xi1>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %ka: i1, %kb: i1, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %both = arith.andi %ka, %kb : i1
    %r = arith.select %both, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%zo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}

// -----

// Positions as an arange constant (jnp.arange folded by XLA) read at m and
// at n: indices, so `n <= m` is causal.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @arange_constant_causal
// CHECK: attn.attention
// CHECK-NOT: mask(
// CHECK-SAME: causal
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=yes
func.func @arange_constant_causal(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ar = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi32>
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m)>, affine_map<(b, m, n) -> (n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %ar, %ar : tensor<2x8x8xf32>, tensor<8xi32>, tensor<8xi32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %qi: i32, %ki: i32, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %past = arith.cmpi sle, %ki, %qi : i32
    %r = arith.select %past, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%zo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}

// -----

// Look-alike: the same constant with two positions swapped is not an
// arange: the comparison is not the causal rule. It compares a value read
// per query with one read per key, so it is fused as that comparison in the
// score_mod region (as segment ids are), not as causal.
// EXEC:
// CHECK-LABEL: func.func @permuted_positions_not_causal
// CHECK: attn.attention
// CHECK-NOT: causal
// CHECK-SAME: score_mod {
// CHECK: arith.cmpi sle
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=select(cmpi(x1, x0), s, -inf), causal=no
func.func @permuted_positions_not_causal(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ar = arith.constant dense<[0, 1, 2, 3, 5, 4, 6, 7]> : tensor<8xi32>
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m)>, affine_map<(b, m, n) -> (n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %ar, %ar : tensor<2x8x8xf32>, tensor<8xi32>, tensor<8xi32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %qi: i32, %ki: i32, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %past = arith.cmpi sle, %ki, %qi : i32
    %r = arith.select %past, %y, %ninf : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%zo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}

// -----

// torch.onnx's SDPA spelling: the mask is added, `s + Where(c, -inf, 0)`,
// which is `select(c, -inf, s)`; the condition is ONNX's Trilu flag compared
// with 0 (cmpf(select(n <= m, 1, 0), 0) is n > m): causal.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @additive_where_trilu_causal
// CHECK: attn.attention
// CHECK-NOT: score_mod
// CHECK-SAME: causal
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=yes
func.func @additive_where_trilu_causal(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %fz = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %y = arith.mulf %x, %c : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %keep = arith.cmpi ule, %j, %i : index
    %flag = arith.select %keep, %one, %fz : f32
    %isz = arith.cmpf oeq, %flag, %fz : f32
    %add = arith.select %isz, %ninf, %fz : f32
    %r = arith.addf %y, %add : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%zo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}

// -----

// Look-alike: a finite "minus infinity" added (s - 65504 is not -65504),
// so the addition stays a score modification, not a mask.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @additive_where_finite_is_a_modification
// CHECK: attn.attention
// CHECK-NOT: causal
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=
func.func @additive_where_finite_is_a_modification(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %ninf = arith.constant 0xFF800000 : f32
    %fz = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %y = arith.mulf %x, %c : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %big = arith.constant -6.550400e+04 : f32
    %keep = arith.cmpi ule, %j, %i : index
    %add = arith.select %keep, %fz, %big : f32
    %r = arith.addf %y, %add : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%zo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}

// -----

// Look-alike for the lse: the scores shifted by a constant. The softmax
// does not see it, but the program's log-sum-exp does: not fused.
// CHECK-LABEL: func.func @lse_of_shifted_scores
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the scores are shifted by a constant or a runtime scalar, which the program's log-sum-exp keeps and the op's drops
func.func @lse_of_shifted_scores(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>) -> tensor<2x3x37xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<2x3x37x45xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x37x45xf32>) -> tensor<2x3x37x45xf32>
  %s0 = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x37x16xf32>, tensor<2x3x45x16xf32>) outs(%zs : tensor<2x3x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s0 : tensor<2x3x37x45xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %out: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.addf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x3x37x45xf32>
  %mx0 = tensor.empty() : tensor<2x3x37xf32>
  %mxi = linalg.fill ins(%ninf : f32) outs(%mx0 : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x3x37x45xf32>) outs(%mxi : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mx : tensor<2x3x37x45xf32>, tensor<2x3x37xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x3x37x45xf32>
  %l0 = tensor.empty() : tensor<2x3x37xf32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p : tensor<2x3x37x45xf32>) outs(%li : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %pn = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %l : tensor<2x3x37x45xf32>, tensor<2x3x37xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %d: f32, %out: f32):
    %r = arith.divf %x, %d : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %eo = tensor.empty() : tensor<2x3x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%pn, %v : tensor<2x3x37x45xf32>, tensor<2x3x45x8xf32>) outs(%zo : tensor<2x3x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x8xf32>
  %lsee = tensor.empty() : tensor<2x3x37xf32>
  %lse = linalg.generic {indexing_maps = [affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%l, %mx : tensor<2x3x37xf32>, tensor<2x3x37xf32>) outs(%lsee : tensor<2x3x37xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %lg = math.log %a : f32
    %r = arith.addf %b, %lg : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  return %lse : tensor<2x3x37xf32>
}

// -----

// Valid IR that is undefined at run time: `tensor.dim` at index -1 sizes the
// slice. The size proofs refuse to reason about it (upstream value bounds
// would crash on it); nothing is fused.
// CHECK-LABEL: func.func @attention_sink_dim_out_of_range
// CHECK-NOT: attn.attention
func.func @attention_sink_dim_out_of_range(%q: tensor<4x?x16xf32>, %k: tensor<4x?x16xf32>, %v: tensor<4x?x8xf32>, %sinks: tensor<4xf32>) -> tensor<4x?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c1 = arith.constant 1 : index
  %cm1 = arith.constant -1 : index
  %m = tensor.dim %q, %cm1 : tensor<4x?x16xf32>
  %n = tensor.dim %k, %cm1 : tensor<4x?x16xf32>
  %e = tensor.empty(%m, %n) : tensor<4x?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<4x?x16xf32>, tensor<4x?x16xf32>) outs(%z : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x?x?xf32>) outs(%e : tensor<4x?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %future = arith.cmpi ugt, %j, %i : index
    %r = arith.select %future, %ninf, %y : f32
    linalg.yield %r : f32
  } -> tensor<4x?x?xf32>
  %es = tensor.empty(%m) : tensor<4x?x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sinks : tensor<4xf32>) outs(%es : tensor<4x?x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x?x1xf32>
  %cat = tensor.concat dim(2) %sm, %sb : (tensor<4x?x?xf32>, tensor<4x?x1xf32>) -> tensor<4x?x?xf32>
  %n1 = arith.addi %n, %c1 : index
  %e22 = tensor.empty(%m, %n1) : tensor<4x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%cat : tensor<4x?x?xf32>) outs(%e22 : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %pk = tensor.extract_slice %p[0, 0, 0] [4, %m, %n] [1, 1, 1] : tensor<4x?x?xf32> to tensor<4x?x?xf32>
  %eo = tensor.empty(%m) : tensor<4x?x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  %o = linalg.batch_matmul ins(%pk, %v : tensor<4x?x?xf32>, tensor<4x?x8xf32>) outs(%zo : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  return %o : tensor<4x?x8xf32>
}

// -----

// A look-alike undefined at run time: the sink's softmax writes into an
// init one column short (N instead of N + 1), so its output is not its
// input's shape; not fused (the stock lowering would read past the init).
// CHECK-LABEL: func.func @attention_sink_init_short
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the softmax's output is not its input's shape
func.func @attention_sink_init_short(%q: tensor<4x?x16xf32>, %k: tensor<4x?x16xf32>, %v: tensor<4x?x8xf32>, %sinks: tensor<4xf32>) -> tensor<4x?x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c1 = arith.constant 1 : index
  %m = tensor.dim %q, %c1 : tensor<4x?x16xf32>
  %n = tensor.dim %k, %c1 : tensor<4x?x16xf32>
  %e = tensor.empty(%m, %n) : tensor<4x?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<4x?x16xf32>, tensor<4x?x16xf32>) outs(%z : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %es = tensor.empty(%m) : tensor<4x?x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sinks : tensor<4xf32>) outs(%es : tensor<4x?x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x?x1xf32>
  %cat = tensor.concat dim(2) %s, %sb : (tensor<4x?x?xf32>, tensor<4x?x1xf32>) -> tensor<4x?x?xf32>
  %n1 = arith.muli %n, %c1 : index
  %e22 = tensor.empty(%m, %n1) : tensor<4x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%cat : tensor<4x?x?xf32>) outs(%e22 : tensor<4x?x?xf32>) -> tensor<4x?x?xf32>
  %c2 = arith.constant 2 : index
  %np = tensor.dim %p, %c2 : tensor<4x?x?xf32>
  %pk = tensor.extract_slice %p[0, 0, 0] [4, %m, %np] [1, 1, 1] : tensor<4x?x?xf32> to tensor<4x?x?xf32>
  %eo = tensor.empty(%m) : tensor<4x?x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  %o = linalg.batch_matmul ins(%pk, %v : tensor<4x?x?xf32>, tensor<4x?x8xf32>) outs(%zo : tensor<4x?x8xf32>) -> tensor<4x?x8xf32>
  return %o : tensor<4x?x8xf32>
}

// -----

// A look-alike: the slice's size is computed in i16 (32767 + 32767 wraps
// to -2, + 3: one column), so it is not N = 65537 columns; sums in fewer
// than 64 bits are not evaluated as sizes. Not fused.
// CHECK-LABEL: func.func @attention_sink_slice_i16_wrap
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the scores get an extra column that is not an attention sink sliced off before P·V
func.func @attention_sink_slice_i16_wrap(%q: tensor<1x1x16xf32>, %k: tensor<1x65537x16xf32>, %v: tensor<1x65537x8xf32>, %sinks: tensor<1xf32>) -> tensor<1x1x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x65537xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1x65537xf32>) -> tensor<1x1x65537xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<1x1x16xf32>, tensor<1x65537x16xf32>) outs(%z : tensor<1x1x65537xf32>) -> tensor<1x1x65537xf32>
  %es = tensor.empty() : tensor<1x1x1xf32>
  %sb = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sinks : tensor<1xf32>) outs(%es : tensor<1x1x1xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<1x1x1xf32>
  %cat = tensor.concat dim(2) %s, %sb : (tensor<1x1x65537xf32>, tensor<1x1x1xf32>) -> tensor<1x1x65538xf32>
  %e22 = tensor.empty() : tensor<1x1x65538xf32>
  %p = linalg.softmax dimension(2) ins(%cat : tensor<1x1x65538xf32>) outs(%e22 : tensor<1x1x65538xf32>) -> tensor<1x1x65538xf32>
  %a = arith.constant 32767 : i16
  %w0 = arith.addi %a, %a : i16
  %w1 = arith.extsi %w0 : i16 to i64
  %one = arith.constant 3 : i64
  %w2 = arith.addi %w1, %one : i64
  %sz = arith.index_cast %w2 : i64 to index
  %pk = tensor.extract_slice %p[0, 0, 0] [1, 1, %sz] [1, 1, 1] : tensor<1x1x65538xf32> to tensor<1x1x?xf32>
  %vk = tensor.extract_slice %v[0, 0, 0] [1, %sz, 8] [1, 1, 1] : tensor<1x65537x8xf32> to tensor<1x?x8xf32>
  %eo = tensor.empty() : tensor<1x1x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x1x8xf32>) -> tensor<1x1x8xf32>
  %o = linalg.batch_matmul ins(%pk, %vk : tensor<1x1x?xf32>, tensor<1x?x8xf32>) outs(%zo : tensor<1x1x8xf32>) -> tensor<1x1x8xf32>
  return %o : tensor<1x1x8xf32>
}

// -----

// Look-alike for reading repeated K/V unrepeated: repeat_kv's reshape by a
// shape of constants. The constants fit only one batch and length, so the
// reshape is not proven to be the collapse of the two head dims: K and V
// stay the repeated tensors (the attention still fuses).
// EXEC: dims=2,8,2,8,2,8 amp=2.0
// CHECK-LABEL: func.func @repeat_kv_reshape_by_constants
// CHECK: attn.attention
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=no, batch dims=2, dtype f32 -> f32
func.func @repeat_kv_reshape_by_constants(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x4x?x16xf32>
  %m = tensor.dim %q, %c2 : tensor<?x4x?x16xf32>
  %n = tensor.dim %k, %c2 : tensor<?x2x?x16xf32>
  %b2 = arith.constant 2 : i64
  %four = arith.constant 4 : i64
  %n8 = arith.constant 8 : i64
  %sixteen = arith.constant 16 : i64
  %shp = tensor.from_elements %b2, %four, %n8, %sixteen : tensor<4xi64>
  %er = tensor.empty(%b, %n) : tensor<?x2x2x?x16xf32>
  %kr = linalg.generic {indexing_maps = [affine_map<(b, h, g, n, d) -> (b, h, n, d)>, affine_map<(b, h, g, n, d) -> (b, h, g, n, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<?x2x?x16xf32>) outs(%er : tensor<?x2x2x?x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<?x2x2x?x16xf32>
  %vr = linalg.generic {indexing_maps = [affine_map<(b, h, g, n, d) -> (b, h, n, d)>, affine_map<(b, h, g, n, d) -> (b, h, g, n, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<?x2x?x16xf32>) outs(%er : tensor<?x2x2x?x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<?x2x2x?x16xf32>
  %k4 = tensor.reshape %kr(%shp) : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
  %v4 = tensor.reshape %vr(%shp) : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
  %e = tensor.empty(%b, %m, %n) : tensor<?x4x?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k4 : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) outs(%z : tensor<?x4x?x?xf32>) {
  ^bb0(%a: f32, %bb: f32, %c: f32):
    %p = arith.mulf %a, %bb : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<?x4x?x?xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<?x4x?x?xf32>) outs(%e : tensor<?x4x?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<?x4x?x?xf32>
  %p = linalg.softmax dimension(3) ins(%ss : tensor<?x4x?x?xf32>) outs(%e : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %eo = tensor.empty(%b, %m) : tensor<?x4x?x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v4 : tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) outs(%zo : tensor<?x4x?x16xf32>) {
  ^bb0(%a: f32, %bb: f32, %c: f32):
    %pr = arith.mulf %a, %bb : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}

// -----

// repeat_kv with dynamic axes as torch-mlir writes it: the broadcast heads
// merged by a tensor.reshape whose shape is computed from the sizes. The
// sizes are proven the source's, so it is the collapse of the two head
// dims and K/V are read unrepeated.
// EXEC: dims=2,8,2,11,2,11 amp=2.0
// CHECK-LABEL: func.func @repeat_kv_reshape_by_sizes
// CHECK: attn.attention
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, kv heads 2 x group 2, causal=no, batch dims=3, dtype f32 -> f32
func.func @repeat_kv_reshape_by_sizes(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x4x?x16xf32>
  %m = tensor.dim %q, %c2 : tensor<?x4x?x16xf32>
  %n = tensor.dim %k, %c2 : tensor<?x2x?x16xf32>
  %b2 = arith.index_cast %b : index to i64
  %four = arith.constant 4 : i64
  %n8 = arith.index_cast %n : index to i64
  %sixteen = arith.constant 16 : i64
  %shp = tensor.from_elements %b2, %four, %n8, %sixteen : tensor<4xi64>
  %er = tensor.empty(%b, %n) : tensor<?x2x2x?x16xf32>
  %kr = linalg.generic {indexing_maps = [affine_map<(b, h, g, n, d) -> (b, h, n, d)>, affine_map<(b, h, g, n, d) -> (b, h, g, n, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<?x2x?x16xf32>) outs(%er : tensor<?x2x2x?x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<?x2x2x?x16xf32>
  %vr = linalg.generic {indexing_maps = [affine_map<(b, h, g, n, d) -> (b, h, n, d)>, affine_map<(b, h, g, n, d) -> (b, h, g, n, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<?x2x?x16xf32>) outs(%er : tensor<?x2x2x?x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<?x2x2x?x16xf32>
  %k4 = tensor.reshape %kr(%shp) : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
  %v4 = tensor.reshape %vr(%shp) : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
  %e = tensor.empty(%b, %m, %n) : tensor<?x4x?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k4 : tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) outs(%z : tensor<?x4x?x?xf32>) {
  ^bb0(%a: f32, %bb: f32, %c: f32):
    %p = arith.mulf %a, %bb : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<?x4x?x?xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<?x4x?x?xf32>) outs(%e : tensor<?x4x?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<?x4x?x?xf32>
  %p = linalg.softmax dimension(3) ins(%ss : tensor<?x4x?x?xf32>) outs(%e : tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %eo = tensor.empty(%b, %m) : tensor<?x4x?x16xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v4 : tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) outs(%zo : tensor<?x4x?x16xf32>) {
  ^bb0(%a: f32, %bb: f32, %c: f32):
    %pr = arith.mulf %a, %bb : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}


// -----

// The last column of a softmax is dropped but it is a score column like any
// other (not a separate sink): slicing the probabilities is not attention.
// EXEC: nofuse
// CHECK-LABEL: func.func @sliced_probabilities_rejected
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the probabilities are sliced between the softmax and P·V
func.func @sliced_probabilities_rejected(%q: tensor<12x8xf32>, %k: tensor<13x8xf32>, %v: tensor<12x8xf32>) -> tensor<12x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x13xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<12x13xf32>) -> tensor<12x13xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<12x8xf32>, tensor<13x8xf32>) outs(%z : tensor<12x13xf32>) -> tensor<12x13xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<12x13xf32>) outs(%e : tensor<12x13xf32>) -> tensor<12x13xf32>
  %pk = tensor.extract_slice %p[0, 0] [12, 12] [1, 1] : tensor<12x13xf32> to tensor<12x12xf32>
  %eo = tensor.empty() : tensor<12x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<12x8xf32>) -> tensor<12x8xf32>
  %o = linalg.matmul ins(%pk, %v : tensor<12x12xf32>, tensor<12x8xf32>) outs(%zo : tensor<12x8xf32>) -> tensor<12x8xf32>
  return %o : tensor<12x8xf32>
}

// -----

// GQA written as torch exports it: K/V heads repeated by linalg.broadcast to
// [B, Hkv, G, S, D] and tensor.collapse_shape to [B, H, S, D]. Fused without
// the repeat: Q and the output are viewed as [B, Hkv, G, S, D] (reshapes),
// K and V are read at their 2 heads.
// EXEC: amp=1.0
// CHECK-LABEL: func.func @gqa_repeat_broadcast_collapse_f16
// CHECK-NOT: linalg.broadcast
// CHECK: %[[QX:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 3, 24, 16]
// CHECK: %[[O:.*]] = attn.attention ins(%[[QX]], %arg1, %arg2 : tensor<1x2x3x24x16xf16>, tensor<1x2x24x16xf16>, tensor<1x2x24x16xf16>)
// CHECK: tensor.collapse_shape %[[O]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x3x24x16xf16> into tensor<1x6x24x16xf16>
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, kv heads 2 x group 3, causal=no, batch dims=3, dtype f16 -> f16
func.func @gqa_repeat_broadcast_collapse_f16(%q: tensor<1x6x24x16xf16>, %k: tensor<1x2x24x16xf16>, %v: tensor<1x2x24x16xf16>) -> tensor<1x6x24x16xf16> {
  %zero = arith.constant 0.0 : f16
  %eb = tensor.empty() : tensor<1x2x3x24x16xf16>
  %kb = linalg.broadcast ins(%k : tensor<1x2x24x16xf16>) outs(%eb : tensor<1x2x3x24x16xf16>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x3x24x16xf16> into tensor<1x6x24x16xf16>
  %vb = linalg.broadcast ins(%v : tensor<1x2x24x16xf16>) outs(%eb : tensor<1x2x3x24x16xf16>) dimensions = [2]
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x3x24x16xf16> into tensor<1x6x24x16xf16>
  %e = tensor.empty() : tensor<1x6x24x24xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<1x6x24x24xf16>) -> tensor<1x6x24x24xf16>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>,
                                        affine_map<(b, h, m, n, d) -> (b, h, n, d)>,
                                        affine_map<(b, h, m, n, d) -> (b, h, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kr : tensor<1x6x24x16xf16>, tensor<1x6x24x16xf16>) outs(%z : tensor<1x6x24x24xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %m = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %m : f16
    linalg.yield %r : f16
  } -> tensor<1x6x24x24xf16>
  %c = arith.constant dense<0.25> : tensor<1x6x24x24xf16>
  %sc = linalg.mul ins(%s, %c : tensor<1x6x24x24xf16>, tensor<1x6x24x24xf16>) outs(%e : tensor<1x6x24x24xf16>) -> tensor<1x6x24x24xf16>
  %p = linalg.softmax dimension(3) ins(%sc : tensor<1x6x24x24xf16>) outs(%e : tensor<1x6x24x24xf16>) -> tensor<1x6x24x24xf16>
  %eo = tensor.empty() : tensor<1x6x24x16xf16>
  %zo = linalg.fill ins(%zero : f16) outs(%eo : tensor<1x6x24x16xf16>) -> tensor<1x6x24x16xf16>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, e, n) -> (b, h, m, n)>,
                                        affine_map<(b, h, m, e, n) -> (b, h, n, e)>,
                                        affine_map<(b, h, m, e, n) -> (b, h, m, e)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %vr : tensor<1x6x24x24xf16>, tensor<1x6x24x16xf16>) outs(%zo : tensor<1x6x24x16xf16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %m = arith.mulf %a, %b : f16
    %r = arith.addf %acc, %m : f16
    linalg.yield %r : f16
  } -> tensor<1x6x24x16xf16>
  return %o : tensor<1x6x24x16xf16>
}

// -----

// K transposed by a transposing linalg.generic (as some exporters write
// linalg.transpose), then a plain matmul; V transposed the same way.
// EXEC: amp=1.0
// CHECK-LABEL: func.func @k_v_transposed_by_generic_f32
// CHECK-NOT: linalg.generic
// CHECK: attn.attention ins(%arg0, %arg1, %arg2 : tensor<9x16xf32>, tensor<16x11xf32>, tensor<4x11xf32>)
// CHECK-SAME: affine_map<(d0, d1, d2, d3) -> (d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d3, d1)>
func.func @k_v_transposed_by_generic_f32(%q: tensor<9x16xf32>, %kt: tensor<16x11xf32>, %vt: tensor<4x11xf32>) -> tensor<9x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ek = tensor.empty() : tensor<11x16xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%kt : tensor<16x11xf32>) outs(%ek : tensor<11x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<11x16xf32>
  %ev = tensor.empty() : tensor<11x4xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%vt : tensor<4x11xf32>) outs(%ev : tensor<11x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<11x4xf32>
  %e = tensor.empty() : tensor<9x11xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<9x11xf32>) -> tensor<9x11xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<9x16xf32>, tensor<11x16xf32>) outs(%z : tensor<9x11xf32>) -> tensor<9x11xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<9x11xf32>) outs(%e : tensor<9x11xf32>) -> tensor<9x11xf32>
  %eo = tensor.empty() : tensor<9x4xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<9x4xf32>) -> tensor<9x4xf32>
  %o = linalg.matmul ins(%p, %v : tensor<9x11xf32>, tensor<11x4xf32>) outs(%zo : tensor<9x4xf32>) -> tensor<9x4xf32>
  return %o : tensor<9x4xf32>
}

// -----

// Causal written as data, as torch-mlir does: a constant lower-triangular i1
// tensor (true keeps) with a finite fill becomes `causal`, so kernels skip tiles.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @constant_tril_mask_is_causal
// CHECK: attn.attention
// CHECK-NOT: mask(
// CHECK-SAME: causal
// CHECK-SAME: mask_value = -3.40282347E+38
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=yes, batch dims=1, dtype f32 -> f32
func.func @constant_tril_mask_is_causal(%q: tensor<2x12x16xf32>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x8xf32>) -> tensor<2x12x8xf32> {
  %zero = arith.constant 0.0 : f32
  %fill = arith.constant -3.40282347E+38 : f32
  %mask = arith.constant dense<[[true, false, false, false, false, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false, false, false, false, false], [true, true, true, false, false, false, false, false, false, false, false, false], [true, true, true, true, false, false, false, false, false, false, false, false], [true, true, true, true, true, false, false, false, false, false, false, false], [true, true, true, true, true, true, false, false, false, false, false, false], [true, true, true, true, true, true, true, false, false, false, false, false], [true, true, true, true, true, true, true, true, false, false, false, false], [true, true, true, true, true, true, true, true, true, false, false, false], [true, true, true, true, true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true, true, true, true, true]]> : tensor<12x12xi1>
  %e = tensor.empty() : tensor<2x12x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x12x16xf32>, tensor<2x12x16xf32>) outs(%z : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x12x12xf32>, tensor<12x12xi1>) outs(%e : tensor<2x12x12xf32>) {
  ^bb0(%x: f32, %c: i1, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %r = arith.select %c, %y, %fill : f32
    linalg.yield %r : f32
  } -> tensor<2x12x12xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x12x12xf32>) outs(%e : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %eo = tensor.empty() : tensor<2x12x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x12x12xf32>, tensor<2x12x8xf32>) outs(%zo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  return %o : tensor<2x12x8xf32>
}
// -----

// GPT-2 keeps a [1, 1, max, max] lower-triangular buffer and slices the
// [S, S] corner; the mask is true where masked here (select(mask, fill, s)).
// EXEC: amp=2.0
// CHECK-LABEL: func.func @constant_tril_sliced_gpt2
// CHECK: attn.attention
// CHECK-NOT: mask(
// CHECK-SAME: causal
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=yes
func.func @constant_tril_sliced_gpt2(%q: tensor<2x10x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x8xf32>) -> tensor<2x10x8xf32> {
  %zero = arith.constant 0.0 : f32
  %fill = arith.constant 0xFF800000 : f32
  %big = arith.constant dense<[[[[false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, true, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, true, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, true, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, true, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, true, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, true, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, true, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, true, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, true, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, true, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, true, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false]]]]> : tensor<1x1x16x16xi1>
  %mask = tensor.extract_slice %big[0, 0, 0, 0] [1, 1, 10, 10] [1, 1, 1, 1] : tensor<1x1x16x16xi1> to tensor<1x1x10x10xi1>
  %e = tensor.empty() : tensor<2x10x10xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x10x10xf32>) -> tensor<2x10x10xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x10x16xf32>, tensor<2x10x16xf32>) outs(%z : tensor<2x10x10xf32>) -> tensor<2x10x10xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (0, 0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x10x10xf32>, tensor<1x1x10x10xi1>) outs(%e : tensor<2x10x10xf32>) {
  ^bb0(%x: f32, %c: i1, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %r = arith.select %c, %fill, %y : f32
    linalg.yield %r : f32
  } -> tensor<2x10x10xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x10x10xf32>) outs(%e : tensor<2x10x10xf32>) -> tensor<2x10x10xf32>
  %eo = tensor.empty() : tensor<2x10x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x10x8xf32>) -> tensor<2x10x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x10x10xf32>, tensor<2x10x8xf32>) outs(%zo : tensor<2x10x8xf32>) -> tensor<2x10x8xf32>
  return %o : tensor<2x10x8xf32>
}
// -----

// A constant band (causal and at most 3 keys back) becomes causal + window.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @constant_band_mask_is_window
// CHECK: attn.attention
// CHECK-NOT: mask(
// CHECK-SAME: causal window = 3
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=yes, window=3
func.func @constant_band_mask_is_window(%q: tensor<2x11x16xf32>, %k: tensor<2x11x16xf32>, %v: tensor<2x11x8xf32>) -> tensor<2x11x8xf32> {
  %zero = arith.constant 0.0 : f32
  %fill = arith.constant -3.40282347E+38 : f32
  %mask = arith.constant dense<[[true, false, false, false, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false, false, false, false], [true, true, true, false, false, false, false, false, false, false, false], [false, true, true, true, false, false, false, false, false, false, false], [false, false, true, true, true, false, false, false, false, false, false], [false, false, false, true, true, true, false, false, false, false, false], [false, false, false, false, true, true, true, false, false, false, false], [false, false, false, false, false, true, true, true, false, false, false], [false, false, false, false, false, false, true, true, true, false, false], [false, false, false, false, false, false, false, true, true, true, false], [false, false, false, false, false, false, false, false, true, true, true]]> : tensor<11x11xi1>
  %e = tensor.empty() : tensor<2x11x11xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x11x11xf32>) -> tensor<2x11x11xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x11x16xf32>, tensor<2x11x16xf32>) outs(%z : tensor<2x11x11xf32>) -> tensor<2x11x11xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x11x11xf32>, tensor<11x11xi1>) outs(%e : tensor<2x11x11xf32>) {
  ^bb0(%x: f32, %c: i1, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %r = arith.select %c, %y, %fill : f32
    linalg.yield %r : f32
  } -> tensor<2x11x11xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x11x11xf32>) outs(%e : tensor<2x11x11xf32>) -> tensor<2x11x11xf32>
  %eo = tensor.empty() : tensor<2x11x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x11x8xf32>) -> tensor<2x11x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x11x11xf32>, tensor<2x11x8xf32>) outs(%zo : tensor<2x11x8xf32>) -> tensor<2x11x8xf32>
  return %o : tensor<2x11x8xf32>
}
// -----

// Look-alike: a constant mask that is neither causal nor a band stays a mask
// operand (read from the constant), exactly as written.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @constant_mask_not_triangular
// CHECK: attn.attention {{.*}} mask(%{{.*}} : tensor<9x13xi1>)
// CHECK-NOT: causal
// EXPLAIN: remark: attention fused: scale=0.25, mask=boolean over (m,n), causal=no
func.func @constant_mask_not_triangular(%q: tensor<2x9x16xf32>, %k: tensor<2x13x16xf32>, %v: tensor<2x13x8xf32>) -> tensor<2x9x8xf32> {
  %zero = arith.constant 0.0 : f32
  %fill = arith.constant -3.40282347E+38 : f32
  %mask = arith.constant dense<[[true, true, true, true, true, false, true, true, true, true, false, true, true], [true, false, true, true, true, true, false, true, true, true, true, false, true], [true, true, false, true, true, true, true, false, true, true, true, true, false], [true, true, true, false, true, true, true, true, false, true, true, true, true], [true, true, true, true, false, true, true, true, true, false, true, true, true], [true, true, true, true, true, false, true, true, true, true, false, true, true], [true, false, true, true, true, true, false, true, true, true, true, false, true], [true, true, false, true, true, true, true, false, true, true, true, true, false], [true, true, true, false, true, true, true, true, false, true, true, true, true]]> : tensor<9x13xi1>
  %e = tensor.empty() : tensor<2x9x13xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x9x13xf32>) -> tensor<2x9x13xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x9x16xf32>, tensor<2x13x16xf32>) outs(%z : tensor<2x9x13xf32>) -> tensor<2x9x13xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x9x13xf32>, tensor<9x13xi1>) outs(%e : tensor<2x9x13xf32>) {
  ^bb0(%x: f32, %c: i1, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %r = arith.select %c, %y, %fill : f32
    linalg.yield %r : f32
  } -> tensor<2x9x13xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x9x13xf32>) outs(%e : tensor<2x9x13xf32>) -> tensor<2x9x13xf32>
  %eo = tensor.empty() : tensor<2x9x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x9x8xf32>) -> tensor<2x9x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x9x13xf32>, tensor<2x13x8xf32>) outs(%zo : tensor<2x9x8xf32>) -> tensor<2x9x8xf32>
  return %o : tensor<2x9x8xf32>
}
// -----

// Causal aligned at the bottom right as a constant (M < N, n > m + N - M:
// the 6 new queries after a KV cache of 4), torch-mlir's chunked prefill:
// `causal query_offset = 4`, no mask operand.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @constant_mask_bottom_right_causal
// CHECK: attn.attention
// CHECK-NOT: mask(
// CHECK-SAME: causal query_offset = 4 mask_value = -3.40282347E+38
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=yes (bottom right: query m at key m + 4)
func.func @constant_mask_bottom_right_causal(%q: tensor<2x6x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x8xf32>) -> tensor<2x6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %fill = arith.constant -3.40282347E+38 : f32
  %mask = arith.constant dense<[[true, true, true, true, true, false, false, false, false, false], [true, true, true, true, true, true, false, false, false, false], [true, true, true, true, true, true, true, false, false, false], [true, true, true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true, true, true]]> : tensor<6x10xi1>
  %e = tensor.empty() : tensor<2x6x10xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x10xf32>) -> tensor<2x6x10xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x6x16xf32>, tensor<2x10x16xf32>) outs(%z : tensor<2x6x10xf32>) -> tensor<2x6x10xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x6x10xf32>, tensor<6x10xi1>) outs(%e : tensor<2x6x10xf32>) {
  ^bb0(%x: f32, %c: i1, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %r = arith.select %c, %y, %fill : f32
    linalg.yield %r : f32
  } -> tensor<2x6x10xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x6x10xf32>) outs(%e : tensor<2x6x10xf32>) -> tensor<2x6x10xf32>
  %eo = tensor.empty() : tensor<2x6x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x6x10xf32>, tensor<2x10x8xf32>) outs(%zo : tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  return %o : tensor<2x6x8xf32>
}

// -----

// Llama as torch-mlir writes it: causal as an additive constant, 0 where
// visible and finfo.min where masked. Every row keeps a key and every masked
// exp underflows to 0, so it is `causal` (-inf): no mask operand.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @additive_constant_causal_mask
// CHECK: attn.attention
// CHECK-NOT: mask(
// CHECK-SAME: causal
// CHECK-NOT: mask_value
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=yes (from a constant additive 0 / finfo.min mask)
func.func @additive_constant_causal_mask(%q: tensor<2x12x16xf32>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x8xf32>) -> tensor<2x12x8xf32> {
  %zero = arith.constant 0.0 : f32
  %mask = arith.constant dense<[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x12x12xf32>
  %e = tensor.empty() : tensor<2x12x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x12x16xf32>, tensor<2x12x16xf32>) outs(%z : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x12x12xf32>, tensor<1x12x12xf32>) outs(%e : tensor<2x12x12xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %r = arith.addf %y, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x12x12xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x12x12xf32>) outs(%e : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %eo = tensor.empty() : tensor<2x12x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x12x12xf32>, tensor<2x12x8xf32>) outs(%zo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  return %o : tensor<2x12x8xf32>
}

// -----

// Hugging Face's 4D mask built in the graph: Where(attention_mask == 0,
// finfo.min, causal_table) added to the scores (f32). s + finfo.min is
// finfo.min for every score below 1e31, so this is the padding mask over
// the causal one with the fill kept: a row whose every key is padding
// (left padding, the first rows) averages V over all 12 keys, as the
// program's equal scores do. The padding condition is its own i1 tensor,
// as torch-mlir lowers ONNX's Equal; its negation (true keeps) becomes the
// mask operand.
// EXEC: amp=2.0 arg3=leftpad
// CHECK-LABEL: func.func @padding_over_additive_causal
// CHECK: arith.cmpf oeq
// CHECK: %[[KEEP:.*]] = linalg.generic
// CHECK: arith.xori
// CHECK: attn.attention {{.*}} mask(%[[KEEP]] : tensor<2x12xi1>)
// CHECK-SAME: causal mask_value = -3.40282347E+38
// EXPLAIN: remark: attention fused: scale=0.25, mask=boolean over (b0,n), causal=yes (from a constant additive 0 / finfo.min mask), batch dims=1, dtype f32 -> f32
func.func @padding_over_additive_causal(%q: tensor<2x12x16xf32>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x8xf32>, %am: tensor<2x12xf32>) -> tensor<2x12x8xf32> {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %table = arith.constant dense<[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x12x12xf32>
  %e = tensor.empty() : tensor<2x12x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x12x16xf32>, tensor<2x12x16xf32>) outs(%z : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %eb = tensor.empty() : tensor<2x12xi1>
  %pad = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%am : tensor<2x12xf32>) outs(%eb : tensor<2x12xi1>) {
  ^bb0(%a: f32, %o: i1):
    %t = arith.cmpf oeq, %a, %zero : f32
    linalg.yield %t : i1
  } -> tensor<2x12xi1>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, n)>, affine_map<(b, m, n) -> (0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %pad, %table : tensor<2x12x12xf32>, tensor<2x12xi1>, tensor<1x12x12xf32>) outs(%e : tensor<2x12x12xf32>) {
  ^bb0(%x: f32, %pd: i1, %c: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %mk = arith.select %pd, %lowest, %c : f32
    %r = arith.addf %y, %mk : f32
    linalg.yield %r : f32
  } -> tensor<2x12x12xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x12x12xf32>) outs(%e : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %eo = tensor.empty() : tensor<2x12x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x12x12xf32>, tensor<2x12x8xf32>) outs(%zo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  return %o : tensor<2x12x8xf32>
}

// -----

// Look-alikes of the above (found by test/fuzz/mutate.py, seed 5702): the
// padding fills -inf while the causal table fills finfo.min, so a row whose
// visible keys are all padding averages V over its later, unpadded keys in
// the program; one fill for both would not. The whole mask stays in the
// score_mod region.
// EXEC: amp=2.0 arg3=leftpad
// CHECK-LABEL: func.func @padding_neginf_over_finfo_causal
// CHECK: attn.attention
// CHECK-NOT: causal
// CHECK-SAME: score_mod
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=addf(s, select(cmpf(x1, 0), -inf, x0)), causal=no, batch dims=1, dtype f32 -> f32
func.func @padding_neginf_over_finfo_causal(%q: tensor<2x12x16xf32>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x8xf32>, %am: tensor<2x12xf32>) -> tensor<2x12x8xf32> {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant 0xFF800000 : f32
  %table = arith.constant dense<[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x12x12xf32>
  %e = tensor.empty() : tensor<2x12x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x12x16xf32>, tensor<2x12x16xf32>) outs(%z : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %eb = tensor.empty() : tensor<2x12xi1>
  %pad = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%am : tensor<2x12xf32>) outs(%eb : tensor<2x12xi1>) {
  ^bb0(%a: f32, %o: i1):
    %t = arith.cmpf oeq, %a, %zero : f32
    linalg.yield %t : i1
  } -> tensor<2x12xi1>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, n)>, affine_map<(b, m, n) -> (0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %pad, %table : tensor<2x12x12xf32>, tensor<2x12xi1>, tensor<1x12x12xf32>) outs(%e : tensor<2x12x12xf32>) {
  ^bb0(%x: f32, %pd: i1, %c: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %mk = arith.select %pd, %lowest, %c : f32
    %r = arith.addf %y, %mk : f32
    linalg.yield %r : f32
  } -> tensor<2x12x12xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x12x12xf32>) outs(%e : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %eo = tensor.empty() : tensor<2x12x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x12x12xf32>, tensor<2x12x8xf32>) outs(%zo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  return %o : tensor<2x12x8xf32>
}

// -----

// A scale of -1e30 puts ordinary scores at 1e31, where finfo.min no longer
// absorbs them (s + finfo.min moves with s): the region again.
// EXEC: amp=2.0 arg3=leftpad
// CHECK-LABEL: func.func @padding_over_additive_causal_huge_scale
// CHECK: attn.attention
// CHECK-NOT: causal
// CHECK-SAME: score_mod
// EXPLAIN: remark: attention fused: scale=-1e+30, mask=none, score_mod=addf(s, select(cmpf(x1, 0), -3.40282e+38, x0)), causal=no, batch dims=1, dtype f32 -> f32
func.func @padding_over_additive_causal_huge_scale(%q: tensor<2x12x16xf32>, %k: tensor<2x12x16xf32>, %v: tensor<2x12x8xf32>, %am: tensor<2x12xf32>) -> tensor<2x12x8xf32> {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %table = arith.constant dense<[[[0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x12x12xf32>
  %e = tensor.empty() : tensor<2x12x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x12x16xf32>, tensor<2x12x16xf32>) outs(%z : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %eb = tensor.empty() : tensor<2x12xi1>
  %pad = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%am : tensor<2x12xf32>) outs(%eb : tensor<2x12xi1>) {
  ^bb0(%a: f32, %o: i1):
    %t = arith.cmpf oeq, %a, %zero : f32
    linalg.yield %t : i1
  } -> tensor<2x12xi1>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, n)>, affine_map<(b, m, n) -> (0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %pad, %table : tensor<2x12x12xf32>, tensor<2x12xi1>, tensor<1x12x12xf32>) outs(%e : tensor<2x12x12xf32>) {
  ^bb0(%x: f32, %pd: i1, %c: f32, %o: f32):
    %sc = arith.constant -1.0e+30 : f32
    %y = arith.mulf %x, %sc : f32
    %mk = arith.select %pd, %lowest, %c : f32
    %r = arith.addf %y, %mk : f32
    linalg.yield %r : f32
  } -> tensor<2x12x12xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x12x12xf32>) outs(%e : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %eo = tensor.empty() : tensor<2x12x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x12x12xf32>, tensor<2x12x8xf32>) outs(%zo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  return %o : tensor<2x12x8xf32>
}

// -----

// The same in f16: -65504 + s moves with s past |s| = 16, so a row whose
// every key is padding does not average V evenly; the mask stays in a
// score_mod region. (Executed with the first key kept: on a row that sees
// no key the program's f16 rounding of s - 65504 decides the weights, and
// the region keeps s in f32.)
// EXEC: amp=2.0 arg3=keep01 tol=1e-2
// CHECK-LABEL: func.func @padding_over_additive_causal_f16
// CHECK: attn.attention
// CHECK-NOT: causal
// CHECK-SAME: score_mod
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, score_mod=addf(s, select(cmpf(x1, 0), -65504, x0)), causal=no, batch dims=1, dtype f16 -> f32
func.func @padding_over_additive_causal_f16(%q: tensor<2x12x16xf16>, %k: tensor<2x12x16xf16>, %v: tensor<2x12x8xf16>, %am: tensor<2x12xf16>) -> tensor<2x12x8xf32> {
  %zero = arith.constant 0.0 : f16
  %zero32 = arith.constant 0.0 : f32
  %lowest = arith.constant -65504.0 : f16
  %table = arith.constant dense<[[[0.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0], [0.0, 0.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0], [0.0, 0.0, 0.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0], [0.0, 0.0, 0.0, 0.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0], [0.0, 0.0, 0.0, 0.0, 0.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -65504.0, -65504.0, -65504.0, -65504.0, -65504.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -65504.0, -65504.0, -65504.0, -65504.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -65504.0, -65504.0, -65504.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -65504.0, -65504.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -65504.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x12x12xf16>
  %e = tensor.empty() : tensor<2x12x12xf16>
  %e32 = tensor.empty() : tensor<2x12x12xf32>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<2x12x12xf16>) -> tensor<2x12x12xf16>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x12x16xf16>, tensor<2x12x16xf16>) outs(%z : tensor<2x12x12xf16>) -> tensor<2x12x12xf16>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, n)>, affine_map<(b, m, n) -> (0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %am, %table : tensor<2x12x12xf16>, tensor<2x12xf16>, tensor<1x12x12xf16>) outs(%e32 : tensor<2x12x12xf32>) {
  ^bb0(%x: f16, %a: f16, %c: f16, %o: f32):
    %sc = arith.constant 0.25 : f16
    %y = arith.mulf %x, %sc : f16
    %pad = arith.cmpf oeq, %a, %zero : f16
    %mk = arith.select %pad, %lowest, %c : f16
    %r = arith.addf %y, %mk : f16
    %r32 = arith.extf %r : f16 to f32
    linalg.yield %r32 : f32
  } -> tensor<2x12x12xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x12x12xf32>) outs(%e32 : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %eo = tensor.empty() : tensor<2x12x8xf32>
  %zo = linalg.fill ins(%zero32 : f32) outs(%eo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x12x12xf32>, tensor<2x12x8xf16>) outs(%zo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  return %o : tensor<2x12x8xf32>
}

// -----

// Bottom-right causal with a band (4 new queries after 6 cached keys, each
// sees 5 keys), written as -inf and f32's finfo.min: causal, query_offset, window.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @additive_constant_mask_bottom_right_window
// CHECK: attn.attention
// CHECK-NOT: mask(
// CHECK-SAME: causal window = 5 query_offset = 6
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=yes (bottom right: query m at key m + 6), window=5 (from a constant additive
func.func @additive_constant_mask_bottom_right_window(%q: tensor<2x4x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %mask = arith.constant dense<[[[-3.40282347E+38, 0xFF800000, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, -3.40282347E+38, 0xFF800000], [-3.40282347E+38, 0xFF800000, -3.40282347E+38, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, 0xFF800000], [-3.40282347E+38, 0xFF800000, -3.40282347E+38, 0xFF800000, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000], [-3.40282347E+38, 0xFF800000, -3.40282347E+38, 0xFF800000, -3.40282347E+38, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x4x10xf32>
  %e = tensor.empty() : tensor<2x4x10xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x10xf32>) -> tensor<2x4x10xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x4x16xf32>, tensor<2x10x16xf32>) outs(%z : tensor<2x4x10xf32>) -> tensor<2x4x10xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x10xf32>, tensor<1x4x10xf32>) outs(%e : tensor<2x4x10xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %r = arith.addf %y, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x4x10xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x4x10xf32>) outs(%e : tensor<2x4x10xf32>) -> tensor<2x4x10xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x10xf32>, tensor<2x10x8xf32>) outs(%zo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Look-alike: the same pattern with -65504 (f16's finfo.min) in an f32 add.
// f32 scores can lie more than 65504 apart (scale 1e4 here), so masked keys
// do not underflow: it stays an additive mask.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @additive_f16_min_in_f32_is_bias
// CHECK: attn.attention
// CHECK-SAME: mask(
// EXPLAIN: remark: attention fused: scale=10000, mask=additive over (m,n), causal=no
func.func @additive_f16_min_in_f32_is_bias(%q: tensor<2x4x16xf32>, %k: tensor<2x10x16xf32>, %v: tensor<2x10x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %mask = arith.constant dense<[[[-65504.0, 0xFF800000, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000, -65504.0, 0xFF800000], [-65504.0, 0xFF800000, -65504.0, 0.0, 0.0, 0.0, 0.0, 0.0, -65504.0, 0xFF800000], [-65504.0, 0xFF800000, -65504.0, 0xFF800000, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFF800000], [-65504.0, 0xFF800000, -65504.0, 0xFF800000, -65504.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x4x10xf32>
  %e = tensor.empty() : tensor<2x4x10xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x10xf32>) -> tensor<2x4x10xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x4x16xf32>, tensor<2x10x16xf32>) outs(%z : tensor<2x4x10xf32>) -> tensor<2x4x10xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x10xf32>, tensor<1x4x10xf32>) outs(%e : tensor<2x4x10xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %sc = arith.constant 1.0e+04 : f32
    %y = arith.mulf %x, %sc : f32
    %r = arith.addf %y, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x4x10xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x4x10xf32>) outs(%e : tensor<2x4x10xf32>) -> tensor<2x4x10xf32>
  %eo = tensor.empty() : tensor<2x4x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x10xf32>, tensor<2x10x8xf32>) outs(%zo : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// The same -65504 mask in an f16 add is the rule: an f16 s + c saturates at
// -65504, and f16 scores cannot be further apart without overflowing.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @additive_f16_min_in_f16_is_causal
// CHECK: attn.attention
// CHECK-NOT: mask(
// CHECK-SAME: causal window = 5 query_offset = 6
func.func @additive_f16_min_in_f16_is_causal(%q: tensor<2x4x16xf16>, %k: tensor<2x10x16xf16>, %v: tensor<2x10x8xf16>) -> tensor<2x4x8xf16> {
  %zero = arith.constant 0.0 : f16
  %mask = arith.constant dense<[[[-65504.0, 0xFC00, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFC00, -65504.0, 0xFC00], [-65504.0, 0xFC00, -65504.0, 0.0, 0.0, 0.0, 0.0, 0.0, -65504.0, 0xFC00], [-65504.0, 0xFC00, -65504.0, 0xFC00, 0.0, 0.0, 0.0, 0.0, 0.0, 0xFC00], [-65504.0, 0xFC00, -65504.0, 0xFC00, -65504.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x4x10xf16>
  %e = tensor.empty() : tensor<2x4x10xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<2x4x10xf16>) -> tensor<2x4x10xf16>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x4x16xf16>, tensor<2x10x16xf16>) outs(%z : tensor<2x4x10xf16>) -> tensor<2x4x10xf16>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x10xf16>, tensor<1x4x10xf16>) outs(%e : tensor<2x4x10xf16>) {
  ^bb0(%x: f16, %c: f16, %o: f16):
    %sc = arith.constant 0.25 : f16
    %y = arith.mulf %x, %sc : f16
    %r = arith.addf %y, %c : f16
    linalg.yield %r : f16
  } -> tensor<2x4x10xf16>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x4x10xf16>) outs(%e : tensor<2x4x10xf16>) -> tensor<2x4x10xf16>
  %eo = tensor.empty() : tensor<2x4x8xf16>
  %zo = linalg.fill ins(%zero : f16) outs(%eo : tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x10xf16>, tensor<2x10x8xf16>) outs(%zo : tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %o : tensor<2x4x8xf16>
}

// -----

// Look-alike: a causal pattern whose first row is masked whole. The unfused
// softmax averages V there (all scores equal finfo.min): it stays a mask.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @additive_constant_mask_fully_masked_row
// CHECK: attn.attention
// CHECK-SAME: mask(
// EXPLAIN: remark: attention fused: scale=0.25, mask=additive over (m,n), causal=no
func.func @additive_constant_mask_fully_masked_row(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %mask = arith.constant dense<[[[-3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x8x8xf32>
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x8x8xf32>, tensor<1x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %r = arith.addf %y, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%zo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}

// -----

// Look-alike: -1e4 (BERT's old fill) does not underflow for every score
// range: it stays a mask tensor.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @additive_constant_mask_small_fill
// CHECK: attn.attention
// CHECK-SAME: mask(
// EXPLAIN: remark: attention fused: scale=0.25, mask=additive over (m,n), causal=no
func.func @additive_constant_mask_small_fill(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %mask = arith.constant dense<[[[0.0, -1.0E+4, -1.0E+4, -1.0E+4, -1.0E+4, -1.0E+4, -1.0E+4, -1.0E+4], [0.0, 0.0, -1.0E+4, -1.0E+4, -1.0E+4, -1.0E+4, -1.0E+4, -1.0E+4], [0.0, 0.0, 0.0, -1.0E+4, -1.0E+4, -1.0E+4, -1.0E+4, -1.0E+4], [0.0, 0.0, 0.0, 0.0, -1.0E+4, -1.0E+4, -1.0E+4, -1.0E+4], [0.0, 0.0, 0.0, 0.0, 0.0, -1.0E+4, -1.0E+4, -1.0E+4], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0E+4, -1.0E+4], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0E+4], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x8x8xf32>
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x8x8xf32>, tensor<1x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %r = arith.addf %y, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%zo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}

// -----

// Look-alike: a causal pattern with a small bias on the visible keys.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @additive_constant_bias_stays_mask
// CHECK: attn.attention
// CHECK-SAME: mask(
// EXPLAIN: remark: attention fused: scale=0.25, mask=additive over (m,n), causal=no
func.func @additive_constant_bias_stays_mask(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %mask = arith.constant dense<[[[0.5, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.5, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.5, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.5, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.5, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38, -3.40282347E+38], [0.5, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38, -3.40282347E+38], [0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.40282347E+38], [0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]> : tensor<1x8x8xf32>
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x8x16xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (0, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x8x8xf32>, tensor<1x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %sc = arith.constant 0.25 : f32
    %y = arith.mulf %x, %sc : f32
    %r = arith.addf %y, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %eo = tensor.empty() : tensor<2x8x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%zo : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %o : tensor<2x8x8xf32>
}

// -----

// torch-mlir's row max is max(dim): a two-result reduction that also tracks
// the argmax, the max written as select(x > acc, x, acc); the sum is reduced
// into a keep-dims [.., 1] tensor. Fused when the index result is dead.
// EXEC: amp=2.0
// CHECK-LABEL: func.func @torch_max_dim_with_argmax
// CHECK: attn.attention
// CHECK-NOT: linalg.generic
// CHECK: return
// EXPLAIN: remark: attention fused: scale=1, mask=none, causal=no, batch dims=1, dtype f32 -> f32
func.func @torch_max_dim_with_argmax(%q: tensor<2x9x16xf32>, %k: tensor<2x13x16xf32>, %v: tensor<2x13x8xf32>) -> (tensor<2x9x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2x9x13xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x9x13xf32>) -> tensor<2x9x13xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x9x16xf32>, tensor<2x13x16xf32>) outs(%z : tensor<2x9x13xf32>) -> tensor<2x9x13xf32>
  %er = tensor.empty() : tensor<2x9xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x9xf32>) -> tensor<2x9xf32>
  %ei = tensor.empty() : tensor<2x9xi64>
  %ii = linalg.fill ins(%c0 : i64) outs(%ei : tensor<2x9xi64>) -> tensor<2x9xi64>
  %mx:2 = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m)>, affine_map<(b, m, n) -> (b, m)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x9x13xf32>) outs(%mi, %ii : tensor<2x9xf32>, tensor<2x9xi64>) {
  ^bb0(%x: f32, %acc: f32, %idx: i64):
    %n = linalg.index 2 : index
    %ni = arith.index_cast %n : index to i64
    %gt = arith.cmpf ogt, %x, %acc : f32
    %m = arith.select %gt, %x, %acc : f32
    %i = arith.select %gt, %ni, %idx : i64
    linalg.yield %m, %i : f32, i64
  } -> (tensor<2x9xf32>, tensor<2x9xi64>)
  %mk = tensor.expand_shape %mx#0 [[0], [1, 2]] output_shape [2, 9, 1] : tensor<2x9xf32> into tensor<2x9x1xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, 0)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mk : tensor<2x9x13xf32>, tensor<2x9x1xf32>) outs(%e : tensor<2x9x13xf32>) {
  ^bb0(%x: f32, %mm: f32, %o: f32):
    %d = arith.subf %x, %mm : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x9x13xf32>
  %es = tensor.empty() : tensor<2x9x1xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x9x1xf32>) -> tensor<2x9x1xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, 0)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x9x13xf32>) outs(%zs : tensor<2x9x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %a = arith.addf %x, %acc : f32
    linalg.yield %a : f32
  } -> tensor<2x9x1xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, 0)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x9x13xf32>, tensor<2x9x1xf32>) outs(%e : tensor<2x9x13xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x9x13xf32>
  %eo = tensor.empty() : tensor<2x9x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x9x8xf32>) -> tensor<2x9x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x9x13xf32>, tensor<2x13x8xf32>) outs(%zo : tensor<2x9x8xf32>) -> tensor<2x9x8xf32>
  return %o : tensor<2x9x8xf32>
}
// -----

// Look-alike: the argmax is used too (added to the output), so the max stays.
// EXEC: amp=2.0 nofuse
// CHECK-LABEL: func.func @torch_max_dim_argmax_used
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: a row reduction ('linalg.generic') also yields a result that is used elsewhere (as torch's max(dim) yields the argmax); fused only when that result is dead
func.func @torch_max_dim_argmax_used(%q: tensor<2x9x16xf32>, %k: tensor<2x13x16xf32>, %v: tensor<2x13x8xf32>) -> tensor<2x9x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2x9x13xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x9x13xf32>) -> tensor<2x9x13xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x9x16xf32>, tensor<2x13x16xf32>) outs(%z : tensor<2x9x13xf32>) -> tensor<2x9x13xf32>
  %er = tensor.empty() : tensor<2x9xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<2x9xf32>) -> tensor<2x9xf32>
  %ei = tensor.empty() : tensor<2x9xi64>
  %ii = linalg.fill ins(%c0 : i64) outs(%ei : tensor<2x9xi64>) -> tensor<2x9xi64>
  %mx:2 = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m)>, affine_map<(b, m, n) -> (b, m)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x9x13xf32>) outs(%mi, %ii : tensor<2x9xf32>, tensor<2x9xi64>) {
  ^bb0(%x: f32, %acc: f32, %idx: i64):
    %n = linalg.index 2 : index
    %ni = arith.index_cast %n : index to i64
    %gt = arith.cmpf ogt, %x, %acc : f32
    %m = arith.select %gt, %x, %acc : f32
    %i = arith.select %gt, %ni, %idx : i64
    linalg.yield %m, %i : f32, i64
  } -> (tensor<2x9xf32>, tensor<2x9xi64>)
  %mk = tensor.expand_shape %mx#0 [[0], [1, 2]] output_shape [2, 9, 1] : tensor<2x9xf32> into tensor<2x9x1xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, 0)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mk : tensor<2x9x13xf32>, tensor<2x9x1xf32>) outs(%e : tensor<2x9x13xf32>) {
  ^bb0(%x: f32, %mm: f32, %o: f32):
    %d = arith.subf %x, %mm : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x9x13xf32>
  %es = tensor.empty() : tensor<2x9x1xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x9x1xf32>) -> tensor<2x9x1xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, 0)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x9x13xf32>) outs(%zs : tensor<2x9x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %a = arith.addf %x, %acc : f32
    linalg.yield %a : f32
  } -> tensor<2x9x1xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, 0)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<2x9x13xf32>, tensor<2x9x1xf32>) outs(%e : tensor<2x9x13xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %r = arith.divf %x, %t : f32
    linalg.yield %r : f32
  } -> tensor<2x9x13xf32>
  %eo = tensor.empty() : tensor<2x9x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x9x8xf32>) -> tensor<2x9x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x9x13xf32>, tensor<2x13x8xf32>) outs(%zo : tensor<2x9x8xf32>) -> tensor<2x9x8xf32>
  %o2 = linalg.generic {indexing_maps = [affine_map<(b, m, e) -> (b, m, e)>, affine_map<(b, m, e) -> (b, m)>, affine_map<(b, m, e) -> (b, m, e)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%o, %mx#1 : tensor<2x9x8xf32>, tensor<2x9xi64>) outs(%eo : tensor<2x9x8xf32>) {
  ^bb0(%x: f32, %i: i64, %out: f32):
    %f = arith.sitofp %i : i64 to f32
    %r = arith.addf %x, %f : f32
    linalg.yield %r : f32
  } -> tensor<2x9x8xf32>
  return %o2 : tensor<2x9x8xf32>
}

// -----

// torch-mlir (BERT through ONNX): batch and heads collapsed into one dim
// around each batch_matmul (collapse_shape on Q, Kᵀ, P, V; expand_shape on the
// scores and the output), K transposed by linalg.transpose, an additive
// [B, 1, 1, N] mask, the output transposed back to [B, S, H·D]. Fused in a
// clone where upstream reshape propagation made the contractions 4-d.
// EXEC: amp=2.0 arg3=mask
// CHECK-LABEL: func.func @torch_bert_collapsed_heads
// CHECK-NOT: linalg.batch_matmul
// CHECK: attn.attention
// CHECK-NOT: linalg.batch_matmul
// EXPLAIN: remark: attention fused: scale=0.25, mask=additive over (b0,n), causal=no, batch dims=2, dtype f32 -> f32
func.func @torch_bert_collapsed_heads(%q: tensor<2x4x12x16xf32>, %k: tensor<2x4x12x16xf32>, %v: tensor<2x4x12x16xf32>, %mask: tensor<2x1x1x12xf32>) -> tensor<2x12x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x4x16x12xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x12x16xf32>) outs(%ekt : tensor<2x4x16x12xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x12x16xf32> into tensor<8x12x16xf32>
  %kt3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x16x12xf32> into tensor<8x16x12xf32>
  %es3 = tensor.empty() : tensor<8x12x12xf32>
  %zs3 = linalg.fill ins(%zero : f32) outs(%es3 : tensor<8x12x12xf32>) -> tensor<8x12x12xf32>
  %s3 = linalg.batch_matmul ins(%q3, %kt3 : tensor<8x12x16xf32>, tensor<8x16x12xf32>) outs(%zs3 : tensor<8x12x12xf32>) -> tensor<8x12x12xf32>
  %s4 = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 12, 12] : tensor<8x12x12xf32> into tensor<2x4x12x12xf32>
  %e4 = tensor.empty() : tensor<2x4x12x12xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, 0, 0, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s4, %mask : tensor<2x4x12x12xf32>, tensor<2x1x1x12xf32>) outs(%e4 : tensor<2x4x12x12xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %c = arith.constant 4.0 : f32
    %y = arith.divf %x, %c : f32
    %r = arith.addf %y, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4x12x12xf32>
  %p4 = linalg.softmax dimension(3) ins(%sm : tensor<2x4x12x12xf32>) outs(%e4 : tensor<2x4x12x12xf32>) -> tensor<2x4x12x12xf32>
  %p3 = tensor.collapse_shape %p4 [[0, 1], [2], [3]] : tensor<2x4x12x12xf32> into tensor<8x12x12xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x12x16xf32> into tensor<8x12x16xf32>
  %eo3 = tensor.empty() : tensor<8x12x16xf32>
  %zo3 = linalg.fill ins(%zero : f32) outs(%eo3 : tensor<8x12x16xf32>) -> tensor<8x12x16xf32>
  %o3 = linalg.batch_matmul ins(%p3, %v3 : tensor<8x12x12xf32>, tensor<8x12x16xf32>) outs(%zo3 : tensor<8x12x16xf32>) -> tensor<8x12x16xf32>
  %o4 = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 12, 16] : tensor<8x12x16xf32> into tensor<2x4x12x16xf32>
  %eot = tensor.empty() : tensor<2x12x4x16xf32>
  %ot = linalg.transpose ins(%o4 : tensor<2x4x12x16xf32>) outs(%eot : tensor<2x12x4x16xf32>) permutation = [0, 2, 1, 3]
  %out = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<2x12x4x16xf32> into tensor<2x12x64xf32>
  return %out : tensor<2x12x64xf32>
}

// -----

// V's heads are swapped with the batch before the collapse: batch·head i of
// P still meets row i of the collapsed V (a batch_matmul pairs equal batch
// indices), so it is an attention whose V is read through the reshapes that
// do not fold (executed: the same result as the unfused program).
// EXEC: amp=2.0 arg3=mask
// CHECK-LABEL: func.func @torch_collapsed_heads_mismatched
// CHECK: tensor.collapse_shape
// CHECK: attn.attention
// EXPLAIN: remark: attention fused: scale=0.25, mask=additive over (b0,n), causal=no, batch dims=2, dtype f32 -> f32
func.func @torch_collapsed_heads_mismatched(%q: tensor<2x4x12x16xf32>, %k: tensor<2x4x12x16xf32>, %v: tensor<2x4x12x16xf32>, %mask: tensor<2x1x1x12xf32>) -> tensor<2x12x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x4x16x12xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x12x16xf32>) outs(%ekt : tensor<2x4x16x12xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x12x16xf32> into tensor<8x12x16xf32>
  %kt3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x16x12xf32> into tensor<8x16x12xf32>
  %es3 = tensor.empty() : tensor<8x12x12xf32>
  %zs3 = linalg.fill ins(%zero : f32) outs(%es3 : tensor<8x12x12xf32>) -> tensor<8x12x12xf32>
  %s3 = linalg.batch_matmul ins(%q3, %kt3 : tensor<8x12x16xf32>, tensor<8x16x12xf32>) outs(%zs3 : tensor<8x12x12xf32>) -> tensor<8x12x12xf32>
  %s4 = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 12, 12] : tensor<8x12x12xf32> into tensor<2x4x12x12xf32>
  %e4 = tensor.empty() : tensor<2x4x12x12xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, 0, 0, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s4, %mask : tensor<2x4x12x12xf32>, tensor<2x1x1x12xf32>) outs(%e4 : tensor<2x4x12x12xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %c = arith.constant 4.0 : f32
    %y = arith.divf %x, %c : f32
    %r = arith.addf %y, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4x12x12xf32>
  %p4 = linalg.softmax dimension(3) ins(%sm : tensor<2x4x12x12xf32>) outs(%e4 : tensor<2x4x12x12xf32>) -> tensor<2x4x12x12xf32>
  %p3 = tensor.collapse_shape %p4 [[0, 1], [2], [3]] : tensor<2x4x12x12xf32> into tensor<8x12x12xf32>
  %evt = tensor.empty() : tensor<4x2x12x16xf32>
  %vt = linalg.transpose ins(%v : tensor<2x4x12x16xf32>) outs(%evt : tensor<4x2x12x16xf32>) permutation = [1, 0, 2, 3]
  %v3 = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<4x2x12x16xf32> into tensor<8x12x16xf32>
  %eo3 = tensor.empty() : tensor<8x12x16xf32>
  %zo3 = linalg.fill ins(%zero : f32) outs(%eo3 : tensor<8x12x16xf32>) -> tensor<8x12x16xf32>
  %o3 = linalg.batch_matmul ins(%p3, %v3 : tensor<8x12x12xf32>, tensor<8x12x16xf32>) outs(%zo3 : tensor<8x12x16xf32>) -> tensor<8x12x16xf32>
  %o4 = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 12, 16] : tensor<8x12x16xf32> into tensor<2x4x12x16xf32>
  %eot = tensor.empty() : tensor<2x12x4x16xf32>
  %ot = linalg.transpose ins(%o4 : tensor<2x4x12x16xf32>) outs(%eot : tensor<2x12x4x16xf32>) permutation = [0, 2, 1, 3]
  %out = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<2x12x4x16xf32> into tensor<2x12x64xf32>
  return %out : tensor<2x12x64xf32>
}

// -----

// Look-alike in torch-mlir's shape: the softmax runs over the queries. The
// remark gives the reason seen through the reshapes.
// EXEC: amp=2.0 nofuse
// CHECK-LABEL: func.func @torch_collapsed_softmax_over_queries
// CHECK-NOT: attn.attention
// CHECK: linalg.batch_matmul
// EXPLAIN: remark: attention not fused: the softmax normalizes dimension 2 of the scores but P·V contracts dimension 3: the softmax is not over the key axis (seen through the batch·head collapse_shape / expand_shape around batch_matmul that torch-mlir writes)
func.func @torch_collapsed_softmax_over_queries(%q: tensor<2x4x12x16xf32>, %k: tensor<2x4x12x16xf32>, %v: tensor<2x4x12x16xf32>, %mask: tensor<2x1x1x12xf32>) -> tensor<2x12x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x4x16x12xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x12x16xf32>) outs(%ekt : tensor<2x4x16x12xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x12x16xf32> into tensor<8x12x16xf32>
  %kt3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x16x12xf32> into tensor<8x16x12xf32>
  %es3 = tensor.empty() : tensor<8x12x12xf32>
  %zs3 = linalg.fill ins(%zero : f32) outs(%es3 : tensor<8x12x12xf32>) -> tensor<8x12x12xf32>
  %s3 = linalg.batch_matmul ins(%q3, %kt3 : tensor<8x12x16xf32>, tensor<8x16x12xf32>) outs(%zs3 : tensor<8x12x12xf32>) -> tensor<8x12x12xf32>
  %s4 = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 12, 12] : tensor<8x12x12xf32> into tensor<2x4x12x12xf32>
  %e4 = tensor.empty() : tensor<2x4x12x12xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, 0, 0, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s4, %mask : tensor<2x4x12x12xf32>, tensor<2x1x1x12xf32>) outs(%e4 : tensor<2x4x12x12xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %c = arith.constant 4.0 : f32
    %y = arith.divf %x, %c : f32
    %r = arith.addf %y, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4x12x12xf32>
  %p4 = linalg.softmax dimension(2) ins(%sm : tensor<2x4x12x12xf32>) outs(%e4 : tensor<2x4x12x12xf32>) -> tensor<2x4x12x12xf32>
  %p3 = tensor.collapse_shape %p4 [[0, 1], [2], [3]] : tensor<2x4x12x12xf32> into tensor<8x12x12xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x12x16xf32> into tensor<8x12x16xf32>
  %eo3 = tensor.empty() : tensor<8x12x16xf32>
  %zo3 = linalg.fill ins(%zero : f32) outs(%eo3 : tensor<8x12x16xf32>) -> tensor<8x12x16xf32>
  %o3 = linalg.batch_matmul ins(%p3, %v3 : tensor<8x12x12xf32>, tensor<8x12x16xf32>) outs(%zo3 : tensor<8x12x16xf32>) -> tensor<8x12x16xf32>
  %o4 = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 12, 16] : tensor<8x12x16xf32> into tensor<2x4x12x16xf32>
  %eot = tensor.empty() : tensor<2x12x4x16xf32>
  %ot = linalg.transpose ins(%o4 : tensor<2x4x12x16xf32>) outs(%eot : tensor<2x12x4x16xf32>) permutation = [0, 2, 1, 3]
  %out = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<2x12x4x16xf32> into tensor<2x12x64xf32>
  return %out : tensor<2x12x64xf32>
}

// -----

// Look-alike: P is transposed before its collapse, so the batch_matmul
// contracts the query axis of the probabilities, not the keys.
// EXEC: amp=2.0 nofuse
// CHECK-LABEL: func.func @torch_collapsed_pv_contracts_queries
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused:
func.func @torch_collapsed_pv_contracts_queries(%q: tensor<2x4x12x16xf32>, %k: tensor<2x4x12x16xf32>, %v: tensor<2x4x12x16xf32>, %mask: tensor<2x1x1x12xf32>) -> tensor<2x12x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ekt = tensor.empty() : tensor<2x4x16x12xf32>
  %kt = linalg.transpose ins(%k : tensor<2x4x12x16xf32>) outs(%ekt : tensor<2x4x16x12xf32>) permutation = [0, 1, 3, 2]
  %q3 = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<2x4x12x16xf32> into tensor<8x12x16xf32>
  %kt3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<2x4x16x12xf32> into tensor<8x16x12xf32>
  %es3 = tensor.empty() : tensor<8x12x12xf32>
  %zs3 = linalg.fill ins(%zero : f32) outs(%es3 : tensor<8x12x12xf32>) -> tensor<8x12x12xf32>
  %s3 = linalg.batch_matmul ins(%q3, %kt3 : tensor<8x12x16xf32>, tensor<8x16x12xf32>) outs(%zs3 : tensor<8x12x12xf32>) -> tensor<8x12x12xf32>
  %s4 = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [2, 4, 12, 12] : tensor<8x12x12xf32> into tensor<2x4x12x12xf32>
  %e4 = tensor.empty() : tensor<2x4x12x12xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, 0, 0, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s4, %mask : tensor<2x4x12x12xf32>, tensor<2x1x1x12xf32>) outs(%e4 : tensor<2x4x12x12xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %c = arith.constant 4.0 : f32
    %y = arith.divf %x, %c : f32
    %r = arith.addf %y, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4x12x12xf32>
  %p4 = linalg.softmax dimension(3) ins(%sm : tensor<2x4x12x12xf32>) outs(%e4 : tensor<2x4x12x12xf32>) -> tensor<2x4x12x12xf32>
  %ept = tensor.empty() : tensor<2x4x12x12xf32>
  %pt = linalg.transpose ins(%p4 : tensor<2x4x12x12xf32>) outs(%ept : tensor<2x4x12x12xf32>) permutation = [0, 1, 3, 2]
  %p3 = tensor.collapse_shape %pt [[0, 1], [2], [3]] : tensor<2x4x12x12xf32> into tensor<8x12x12xf32>
  %v3 = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<2x4x12x16xf32> into tensor<8x12x16xf32>
  %eo3 = tensor.empty() : tensor<8x12x16xf32>
  %zo3 = linalg.fill ins(%zero : f32) outs(%eo3 : tensor<8x12x16xf32>) -> tensor<8x12x16xf32>
  %o3 = linalg.batch_matmul ins(%p3, %v3 : tensor<8x12x12xf32>, tensor<8x12x16xf32>) outs(%zo3 : tensor<8x12x16xf32>) -> tensor<8x12x16xf32>
  %o4 = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 4, 12, 16] : tensor<8x12x16xf32> into tensor<2x4x12x16xf32>
  %eot = tensor.empty() : tensor<2x12x4x16xf32>
  %ot = linalg.transpose ins(%o4 : tensor<2x4x12x16xf32>) outs(%eot : tensor<2x12x4x16xf32>) permutation = [0, 2, 1, 3]
  %out = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<2x12x4x16xf32> into tensor<2x12x64xf32>
  return %out : tensor<2x12x64xf32>
}

// -----

// m = max s, p = exp(s - m), l = sum p, O = (p / l) V and lse = m + log l:
// the reductions are shared; the lse comes out of the op.
// EXEC: amp=3.0
// CHECK-LABEL: func.func @lse_shared_reductions
// CHECK: %[[A:.*]]:2 = attn.attention
// CHECK-SAME: -> tensor<2x3x37x8xf32>, tensor<2x3x37xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[A]]#1
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=no, batch dims=2, dtype f32 -> f32, lse
func.func @lse_shared_reductions(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>) -> tensor<2x3x37xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<2x3x37x45xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x37x45xf32>) -> tensor<2x3x37x45xf32>
  %s0 = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x37x16xf32>, tensor<2x3x45x16xf32>) outs(%zs : tensor<2x3x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s0 : tensor<2x3x37x45xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %out: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x3x37x45xf32>
  %mx0 = tensor.empty() : tensor<2x3x37xf32>
  %mxi = linalg.fill ins(%ninf : f32) outs(%mx0 : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x3x37x45xf32>) outs(%mxi : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mx : tensor<2x3x37x45xf32>, tensor<2x3x37xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x3x37x45xf32>
  %l0 = tensor.empty() : tensor<2x3x37xf32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p : tensor<2x3x37x45xf32>) outs(%li : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %pn = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %l : tensor<2x3x37x45xf32>, tensor<2x3x37xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %d: f32, %out: f32):
    %r = arith.divf %x, %d : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %eo = tensor.empty() : tensor<2x3x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%pn, %v : tensor<2x3x37x45xf32>, tensor<2x3x45x8xf32>) outs(%zo : tensor<2x3x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x8xf32>
  %lsee = tensor.empty() : tensor<2x3x37xf32>
  %lse = linalg.generic {indexing_maps = [affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%l, %mx : tensor<2x3x37xf32>, tensor<2x3x37xf32>) outs(%lsee : tensor<2x3x37xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %lg = math.log %a : f32
    %r = arith.addf %b, %lg : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  return %lse : tensor<2x3x37xf32>
}
// -----

// The same program returning O: the lse is fused too (then unused).
// EXEC: amp=3.0
// CHECK-LABEL: func.func @lse_shared_reductions_output
// CHECK: attn.attention
// CHECK-SAME: tensor<2x3x37xf32>
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=no, batch dims=2, dtype f32 -> f32, lse
func.func @lse_shared_reductions_output(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>) -> tensor<2x3x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<2x3x37x45xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x37x45xf32>) -> tensor<2x3x37x45xf32>
  %s0 = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x37x16xf32>, tensor<2x3x45x16xf32>) outs(%zs : tensor<2x3x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s0 : tensor<2x3x37x45xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %out: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x3x37x45xf32>
  %mx0 = tensor.empty() : tensor<2x3x37xf32>
  %mxi = linalg.fill ins(%ninf : f32) outs(%mx0 : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x3x37x45xf32>) outs(%mxi : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mx : tensor<2x3x37x45xf32>, tensor<2x3x37xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x3x37x45xf32>
  %l0 = tensor.empty() : tensor<2x3x37xf32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p : tensor<2x3x37x45xf32>) outs(%li : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %pn = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %l : tensor<2x3x37x45xf32>, tensor<2x3x37xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %d: f32, %out: f32):
    %r = arith.divf %x, %d : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %eo = tensor.empty() : tensor<2x3x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%pn, %v : tensor<2x3x37x45xf32>, tensor<2x3x45x8xf32>) outs(%zo : tensor<2x3x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x8xf32>
  %lsee = tensor.empty() : tensor<2x3x37xf32>
  %lse = linalg.generic {indexing_maps = [affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%l, %mx : tensor<2x3x37xf32>, tensor<2x3x37xf32>) outs(%lsee : tensor<2x3x37xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %lg = math.log %a : f32
    %r = arith.addf %b, %lg : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  return %o : tensor<2x3x37x8xf32>
}
// -----

// torch.logsumexp beside a linalg.softmax: the lse recomputes max and sum
// over the same scores.
// EXEC: amp=3.0
// CHECK-LABEL: func.func @lse_recomputed_torch_style
// CHECK: %[[A:.*]]:2 = attn.attention
// CHECK: return %[[A]]#1
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=no, batch dims=2, dtype f32 -> f32, lse
func.func @lse_recomputed_torch_style(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>) -> tensor<2x3x37xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<2x3x37x45xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x37x45xf32>) -> tensor<2x3x37x45xf32>
  %s0 = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x37x16xf32>, tensor<2x3x45x16xf32>) outs(%zs : tensor<2x3x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s0 : tensor<2x3x37x45xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %out: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x3x37x45xf32>
  %pn = linalg.softmax dimension(3) ins(%s : tensor<2x3x37x45xf32>) outs(%es : tensor<2x3x37x45xf32>) -> tensor<2x3x37x45xf32>
  %eo = tensor.empty() : tensor<2x3x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%pn, %v : tensor<2x3x37x45xf32>, tensor<2x3x45x8xf32>) outs(%zo : tensor<2x3x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x8xf32>
  %mx0 = tensor.empty() : tensor<2x3x37xf32>
  %mxi = linalg.fill ins(%ninf : f32) outs(%mx0 : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x3x37x45xf32>) outs(%mxi : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mx : tensor<2x3x37x45xf32>, tensor<2x3x37xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x3x37x45xf32>
  %l0 = tensor.empty() : tensor<2x3x37xf32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p : tensor<2x3x37x45xf32>) outs(%li : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %lsee = tensor.empty() : tensor<2x3x37xf32>
  %lse = linalg.generic {indexing_maps = [affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%l, %mx : tensor<2x3x37xf32>, tensor<2x3x37xf32>) outs(%lsee : tensor<2x3x37xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %lg = math.log %a : f32
    %r = arith.addf %b, %lg : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  return %lse : tensor<2x3x37xf32>
}
// -----

// Keep-dims reductions ([B, H, M, 1], JAX's keepdims=True): the lse comes
// back with the unit dim.
// EXEC: amp=3.0
// CHECK-LABEL: func.func @lse_keep_dims
// CHECK: %[[A:.*]]:2 = attn.attention
// CHECK: tensor.expand_shape %[[A]]#1
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=no, batch dims=2, dtype f32 -> f32, lse
func.func @lse_keep_dims(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>) -> tensor<2x3x37x1xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<2x3x37x45xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x37x45xf32>) -> tensor<2x3x37x45xf32>
  %s0 = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x37x16xf32>, tensor<2x3x45x16xf32>) outs(%zs : tensor<2x3x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s0 : tensor<2x3x37x45xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %out: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x3x37x45xf32>
  %mx0 = tensor.empty() : tensor<2x3x37x1xf32>
  %mxi = linalg.fill ins(%ninf : f32) outs(%mx0 : tensor<2x3x37x1xf32>) -> tensor<2x3x37x1xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x3x37x45xf32>) outs(%mxi : tensor<2x3x37x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x1xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, 0)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mx : tensor<2x3x37x45xf32>, tensor<2x3x37x1xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x3x37x45xf32>
  %l0 = tensor.empty() : tensor<2x3x37x1xf32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<2x3x37x1xf32>) -> tensor<2x3x37x1xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, 0)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p : tensor<2x3x37x45xf32>) outs(%li : tensor<2x3x37x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x1xf32>
  %pn = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, 0)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %l : tensor<2x3x37x45xf32>, tensor<2x3x37x1xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %d: f32, %out: f32):
    %r = arith.divf %x, %d : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %eo = tensor.empty() : tensor<2x3x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%pn, %v : tensor<2x3x37x45xf32>, tensor<2x3x45x8xf32>) outs(%zo : tensor<2x3x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x8xf32>
  %lsee = tensor.empty() : tensor<2x3x37x1xf32>
  %lse = linalg.generic {indexing_maps = [affine_map<(b, h, m, u) -> (b, h, m, u)>, affine_map<(b, h, m, u) -> (b, h, m, u)>, affine_map<(b, h, m, u) -> (b, h, m, u)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%l, %mx : tensor<2x3x37x1xf32>, tensor<2x3x37x1xf32>) outs(%lsee : tensor<2x3x37x1xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %lg = math.log %a : f32
    %r = arith.addf %b, %lg : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x1xf32>
  return %lse : tensor<2x3x37x1xf32>
}
// -----

// Look-alike: log(l) + 2 max is not the log-sum-exp: the reductions have
// another use, so the attention is left alone.
// EXEC: amp=3.0 nofuse
// CHECK-LABEL: func.func @lse_lookalike_not_logsumexp
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: an intermediate result ('linalg.generic') has other uses besides the attention
func.func @lse_lookalike_not_logsumexp(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x45x16xf32>, %v: tensor<2x3x45x8xf32>) -> tensor<2x3x37xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %es = tensor.empty() : tensor<2x3x37x45xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x3x37x45xf32>) -> tensor<2x3x37x45xf32>
  %s0 = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x37x16xf32>, tensor<2x3x45x16xf32>) outs(%zs : tensor<2x3x37x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s0 : tensor<2x3x37x45xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %out: f32):
    %c = arith.constant 0.25 : f32
    %y = arith.mulf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x3x37x45xf32>
  %mx0 = tensor.empty() : tensor<2x3x37xf32>
  %mxi = linalg.fill ins(%ninf : f32) outs(%mx0 : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x3x37x45xf32>) outs(%mxi : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mx : tensor<2x3x37x45xf32>, tensor<2x3x37xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<2x3x37x45xf32>
  %l0 = tensor.empty() : tensor<2x3x37xf32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<2x3x37xf32>) -> tensor<2x3x37xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p : tensor<2x3x37x45xf32>) outs(%li : tensor<2x3x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  %pn = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %l : tensor<2x3x37x45xf32>, tensor<2x3x37xf32>) outs(%es : tensor<2x3x37x45xf32>) {
  ^bb0(%x: f32, %d: f32, %out: f32):
    %r = arith.divf %x, %d : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x45xf32>
  %eo = tensor.empty() : tensor<2x3x37x8xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3x37x8xf32>) -> tensor<2x3x37x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%pn, %v : tensor<2x3x37x45xf32>, tensor<2x3x45x8xf32>) outs(%zo : tensor<2x3x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %c, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37x8xf32>
  %lg0 = tensor.empty() : tensor<2x3x37xf32>
  %lse = linalg.generic {indexing_maps = [affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>, affine_map<(b, h, m) -> (b, h, m)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%l, %mx : tensor<2x3x37xf32>, tensor<2x3x37xf32>) outs(%lg0 : tensor<2x3x37xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %lg = math.log %a : f32
    %two = arith.constant 2.0 : f32
    %b2 = arith.mulf %b, %two : f32
    %r = arith.addf %b2, %lg : f32
    linalg.yield %r : f32
  } -> tensor<2x3x37xf32>
  return %lse : tensor<2x3x37xf32>
}
