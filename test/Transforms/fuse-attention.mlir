// RUN: attn-opt %s --attn-fuse --split-input-file --mlir-print-local-scope | FileCheck %s
// RUN: attn-opt %s --attn-fuse --attn-explain --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: attn-opt %s --split-input-file --pass-pipeline='builtin.module(attn-fuse{explain=true})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: %exec-check %s

// Positive forms: each also runs through --attn-cpu-pipeline and is compared
// with the unfused program lowered by stock mlir-opt (EXEC lines).

// K transposed by the indexing maps of linalg.batch_matmul; scale as a
// linalg.mul by a splat constant; ragged M and N.
// EXEC: amp=1.0
// CHECK-LABEL: func.func @batch_matmul_kt_maps_mul_scale_f32
// CHECK-SAME: (%[[Q:.*]]: tensor<2x100x16xf32>, %[[K:.*]]: tensor<2x70x16xf32>, %[[V:.*]]: tensor<2x70x8xf32>)
// CHECK-DAG: %[[S:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: %[[O:.*]] = attn.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) scale(%[[S]]) outs(%{{.*}} : tensor<2x100x8xf32>)
// CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4)>]
// CHECK-NOT: linalg.softmax
// CHECK-NOT: linalg.batch_matmul
// CHECK: return %[[O]]
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=no, batch dims=1, dtype f32 -> f32
// EXPLAIN: remark: Q·K^T of a fused attention
func.func @batch_matmul_kt_maps_mul_scale_f32(%q: tensor<2x100x16xf32>, %k: tensor<2x70x16xf32>, %v: tensor<2x70x8xf32>) -> tensor<2x100x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x100x70xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<2x100x70xf32>) -> tensor<2x100x70xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x100x16xf32>, tensor<2x70x16xf32>) outs(%z : tensor<2x100x70xf32>) -> tensor<2x100x70xf32>
  %c = arith.constant dense<0.25> : tensor<2x100x70xf32>
  %e2 = tensor.empty() : tensor<2x100x70xf32>
  %sc = linalg.mul ins(%s, %c : tensor<2x100x70xf32>, tensor<2x100x70xf32>) outs(%e2 : tensor<2x100x70xf32>) -> tensor<2x100x70xf32>
  %e3 = tensor.empty() : tensor<2x100x70xf32>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<2x100x70xf32>) outs(%e3 : tensor<2x100x70xf32>) -> tensor<2x100x70xf32>
  %eo = tensor.empty() : tensor<2x100x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<2x100x8xf32>) -> tensor<2x100x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x100x70xf32>, tensor<2x70x8xf32>) outs(%zo : tensor<2x100x8xf32>) -> tensor<2x100x8xf32>
  return %o : tensor<2x100x8xf32>
}

// -----

// 2-D linalg.matmul with K transposed by linalg.transpose; scale as a divide
// by a constant in a linalg.generic. The transpose is folded into the key map.
// EXEC: amp=1.0
// CHECK-LABEL: func.func @matmul_transpose_op_div_scale_f32
// CHECK-NOT: linalg.transpose
// CHECK: attn.attention
// CHECK-SAME: affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// EXPLAIN: remark: attention fused: scale=0.125, mask=none, causal=no, batch dims=0, dtype f32 -> f32
func.func @matmul_transpose_op_div_scale_f32(%q: tensor<33x64xf32>, %k: tensor<47x64xf32>, %v: tensor<47x32xf32>) -> tensor<33x32xf32> {
  %cst = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<64x47xf32>
  %kt = linalg.transpose ins(%k : tensor<47x64xf32>) outs(%et : tensor<64x47xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<33x47xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<33x47xf32>) -> tensor<33x47xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<33x64xf32>, tensor<64x47xf32>) outs(%z : tensor<33x47xf32>) -> tensor<33x47xf32>
  %e2 = tensor.empty() : tensor<33x47xf32>
  %sc = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<33x47xf32>) outs(%e2 : tensor<33x47xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c8 = arith.constant 8.0 : f32
    %d = arith.divf %x, %c8 : f32
    linalg.yield %d : f32
  } -> tensor<33x47xf32>
  %e3 = tensor.empty() : tensor<33x47xf32>
  %p = linalg.softmax dimension(1) ins(%sc : tensor<33x47xf32>) outs(%e3 : tensor<33x47xf32>) -> tensor<33x47xf32>
  %eo = tensor.empty() : tensor<33x32xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<33x32xf32>) -> tensor<33x32xf32>
  %o = linalg.matmul ins(%p, %v : tensor<33x47xf32>, tensor<47x32xf32>) outs(%zo : tensor<33x32xf32>) -> tensor<33x32xf32>
  return %o : tensor<33x32xf32>
}

// -----

// Large logits (scores around +-1e3): the point of the running max.
// EXEC: amp=32.0
// CHECK-LABEL: func.func @large_logits_f32
// CHECK: attn.attention
func.func @large_logits_f32(%q: tensor<2x65x16xf32>, %k: tensor<2x130x16xf32>, %v: tensor<2x130x16xf32>) -> tensor<2x65x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x65x130xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<2x65x130xf32>) -> tensor<2x65x130xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x65x16xf32>, tensor<2x130x16xf32>) outs(%z : tensor<2x65x130xf32>) -> tensor<2x65x130xf32>
  %e2 = tensor.empty() : tensor<2x65x130xf32>
  %sc = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x65x130xf32>) outs(%e2 : tensor<2x65x130xf32>) {
  ^bb0(%x: f32, %o: f32):
    %c = arith.constant 0.25 : f32
    %d = arith.mulf %c, %x : f32
    linalg.yield %d : f32
  } -> tensor<2x65x130xf32>
  %e3 = tensor.empty() : tensor<2x65x130xf32>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<2x65x130xf32>) outs(%e3 : tensor<2x65x130xf32>) -> tensor<2x65x130xf32>
  %eo = tensor.empty() : tensor<2x65x16xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<2x65x16xf32>) -> tensor<2x65x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x65x130xf32>, tensor<2x130x16xf32>) outs(%zo : tensor<2x65x16xf32>) -> tensor<2x65x16xf32>
  return %o : tensor<2x65x16xf32>
}

// -----

// One key: the softmax is 1 and the output is V broadcast over queries.
// EXEC: amp=1.0
// CHECK-LABEL: func.func @one_key_f32
// CHECK: attn.attention
func.func @one_key_f32(%q: tensor<3x9x8xf32>, %k: tensor<3x1x8xf32>, %v: tensor<3x1x4xf32>) -> tensor<3x9x4xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x9x1xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<3x9x1xf32>) -> tensor<3x9x1xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<3x9x8xf32>, tensor<3x1x8xf32>) outs(%z : tensor<3x9x1xf32>) -> tensor<3x9x1xf32>
  %e3 = tensor.empty() : tensor<3x9x1xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<3x9x1xf32>) outs(%e3 : tensor<3x9x1xf32>) -> tensor<3x9x1xf32>
  %eo = tensor.empty() : tensor<3x9x4xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<3x9x4xf32>) -> tensor<3x9x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<3x9x1xf32>, tensor<3x1x4xf32>) outs(%zo : tensor<3x9x4xf32>) -> tensor<3x9x4xf32>
  return %o : tensor<3x9x4xf32>
}

// -----

// Batch and head dims ([B, H, S, D]) with 4-D linalg.generic einsums and an
// additive mask [B, 1->broadcast, M, N] given by a (b, h, m, n) -> (b, m, n)
// map; the mask holds -inf entries. N = 5 is smaller than a key tile.
// EXEC: amp=1.0 arg3=mask
// CHECK-LABEL: func.func @bhsd_generic_einsum_additive_mask_f32
// CHECK: attn.attention ins({{.*}}) scale(%{{.*}}) mask(%{{.*}} : tensor<2x7x5xf32>)
// CHECK-SAME: affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3)>
// EXPLAIN: remark: attention fused: scale=0.5, mask=additive over (b0,m,n), causal=no, batch dims=2
func.func @bhsd_generic_einsum_additive_mask_f32(%q: tensor<2x3x7x4xf32>, %k: tensor<2x3x5x4xf32>, %v: tensor<2x3x5x6xf32>, %mask: tensor<2x7x5xf32>) -> tensor<2x3x7x6xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x7x5xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<2x3x7x5xf32>) -> tensor<2x3x7x5xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>,
                                        affine_map<(b, h, m, n, d) -> (b, h, n, d)>,
                                        affine_map<(b, h, m, n, d) -> (b, h, m, n)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x3x7x4xf32>, tensor<2x3x5x4xf32>) outs(%z : tensor<2x3x7x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x3x7x5xf32>
  %e2 = tensor.empty() : tensor<2x3x7x5xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>,
                                         affine_map<(b, h, m, n) -> (b, m, n)>,
                                         affine_map<(b, h, m, n) -> (b, h, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x3x7x5xf32>, tensor<2x7x5xf32>) outs(%e2 : tensor<2x3x7x5xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %y = arith.mulf %x, %half : f32
    %w = arith.addf %y, %b : f32
    linalg.yield %w : f32
  } -> tensor<2x3x7x5xf32>
  %e3 = tensor.empty() : tensor<2x3x7x5xf32>
  %p = linalg.softmax dimension(3) ins(%sm : tensor<2x3x7x5xf32>) outs(%e3 : tensor<2x3x7x5xf32>) -> tensor<2x3x7x5xf32>
  %eo = tensor.empty() : tensor<2x3x7x6xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<2x3x7x6xf32>) -> tensor<2x3x7x6xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, e, n) -> (b, h, m, n)>,
                                        affine_map<(b, h, m, e, n) -> (b, h, n, e)>,
                                        affine_map<(b, h, m, e, n) -> (b, h, m, e)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x3x7x5xf32>, tensor<2x3x5x6xf32>) outs(%zo : tensor<2x3x7x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x3x7x6xf32>
  return %o : tensor<2x3x7x6xf32>
}

// -----

// [B, S, H, D] layout (heads after the sequence) with linalg.contract: the
// op's maps state the layout, the tiling brings it to (b, h, s, d).
// EXEC: amp=1.0 pipeline=tile-q=4,tile-kv=3
// CHECK-LABEL: func.func @bshd_contract_f32
// CHECK: attn.attention
// CHECK-SAME: affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d1, d4)>
func.func @bshd_contract_f32(%q: tensor<2x10x3x8xf32>, %k: tensor<2x11x3x8xf32>, %v: tensor<2x11x3x8xf32>) -> tensor<2x10x3x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x10x11xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<2x3x10x11xf32>) -> tensor<2x3x10x11xf32>
  %s = linalg.contract indexing_maps = [affine_map<(b, h, m, n, d) -> (b, m, h, d)>,
                                        affine_map<(b, h, m, n, d) -> (b, n, h, d)>,
                                        affine_map<(b, h, m, n, d) -> (b, h, m, n)>]
      ins(%q, %k : tensor<2x10x3x8xf32>, tensor<2x11x3x8xf32>) outs(%z : tensor<2x3x10x11xf32>) -> tensor<2x3x10x11xf32>
  %c = arith.constant dense<0.35355339> : tensor<2x3x10x11xf32>
  %e2 = tensor.empty() : tensor<2x3x10x11xf32>
  %sc = linalg.mul ins(%c, %s : tensor<2x3x10x11xf32>, tensor<2x3x10x11xf32>) outs(%e2 : tensor<2x3x10x11xf32>) -> tensor<2x3x10x11xf32>
  %e3 = tensor.empty() : tensor<2x3x10x11xf32>
  %p = linalg.softmax dimension(3) ins(%sc : tensor<2x3x10x11xf32>) outs(%e3 : tensor<2x3x10x11xf32>) -> tensor<2x3x10x11xf32>
  %eo = tensor.empty() : tensor<2x10x3x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<2x10x3x8xf32>) -> tensor<2x10x3x8xf32>
  %o = linalg.contract indexing_maps = [affine_map<(b, h, m, e, n) -> (b, h, m, n)>,
                                        affine_map<(b, h, m, e, n) -> (b, n, h, e)>,
                                        affine_map<(b, h, m, e, n) -> (b, m, h, e)>]
      ins(%p, %v : tensor<2x3x10x11xf32>, tensor<2x11x3x8xf32>) outs(%zo : tensor<2x10x3x8xf32>) -> tensor<2x10x3x8xf32>
  return %o : tensor<2x10x3x8xf32>
}

// -----

// f16 everywhere (scores and softmax in f16 in the unfused program; f32 state
// in the fused one). Scores reach about +-20, beyond exp's f16 range (~11).
// EXEC: amp=2.5
// CHECK-LABEL: func.func @all_f16
// CHECK: attn.attention {{.*}} -> tensor<2x37x16xf16>
// EXPLAIN: remark: attention fused: scale=0.25, mask=none, causal=no, batch dims=1, dtype f16 -> f16
func.func @all_f16(%q: tensor<2x37x16xf16>, %k: tensor<2x53x16xf16>, %v: tensor<2x53x16xf16>) -> tensor<2x37x16xf16> {
  %cst = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<2x37x53xf16>
  %z = linalg.fill ins(%cst : f16) outs(%e : tensor<2x37x53xf16>) -> tensor<2x37x53xf16>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x37x16xf16>, tensor<2x53x16xf16>) outs(%z : tensor<2x37x53xf16>) -> tensor<2x37x53xf16>
  %c = arith.constant dense<0.25> : tensor<2x37x53xf16>
  %e2 = tensor.empty() : tensor<2x37x53xf16>
  %sc = linalg.mul ins(%s, %c : tensor<2x37x53xf16>, tensor<2x37x53xf16>) outs(%e2 : tensor<2x37x53xf16>) -> tensor<2x37x53xf16>
  %e3 = tensor.empty() : tensor<2x37x53xf16>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<2x37x53xf16>) outs(%e3 : tensor<2x37x53xf16>) -> tensor<2x37x53xf16>
  %eo = tensor.empty() : tensor<2x37x16xf16>
  %zo = linalg.fill ins(%cst : f16) outs(%eo : tensor<2x37x16xf16>) -> tensor<2x37x16xf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x37x53xf16>, tensor<2x53x16xf16>) outs(%zo : tensor<2x37x16xf16>) -> tensor<2x37x16xf16>
  return %o : tensor<2x37x16xf16>
}

// -----

// f16 inputs with f32 scores, softmax and output: logits around +-1e3 would
// overflow exp in f16 without the running max.
// EXEC: amp=32.0
// CHECK-LABEL: func.func @f16_inputs_f32_softmax_large_logits
// CHECK: attn.attention ins({{.*}} : tensor<2x40x16xf16>, tensor<2x90x16xf16>, tensor<2x90x16xf16>)
func.func @f16_inputs_f32_softmax_large_logits(%q: tensor<2x40x16xf16>, %k: tensor<2x90x16xf16>, %v: tensor<2x90x16xf16>) -> tensor<2x40x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x40x90xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<2x40x90xf32>) -> tensor<2x40x90xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x40x16xf16>, tensor<2x90x16xf16>) outs(%z : tensor<2x40x90xf32>) -> tensor<2x40x90xf32>
  %c = arith.constant dense<0.25> : tensor<2x40x90xf32>
  %e2 = tensor.empty() : tensor<2x40x90xf32>
  %sc = linalg.mul ins(%s, %c : tensor<2x40x90xf32>, tensor<2x40x90xf32>) outs(%e2 : tensor<2x40x90xf32>) -> tensor<2x40x90xf32>
  %e3 = tensor.empty() : tensor<2x40x90xf32>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<2x40x90xf32>) outs(%e3 : tensor<2x40x90xf32>) -> tensor<2x40x90xf32>
  %eo = tensor.empty() : tensor<2x40x16xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<2x40x16xf32>) -> tensor<2x40x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x40x90xf32>, tensor<2x90x16xf16>) outs(%zo : tensor<2x40x16xf32>) -> tensor<2x40x16xf32>
  return %o : tensor<2x40x16xf32>
}

// -----

// Dynamic sequence lengths.
// EXEC: dims=2,19,2,67,2,67 amp=1.0
// CHECK-LABEL: func.func @dynamic_seq_f32
// CHECK: attn.attention {{.*}} -> tensor<?x?x16xf32>
func.func @dynamic_seq_f32(%q: tensor<?x?x16xf32>, %k: tensor<?x?x16xf32>, %v: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %cst = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x16xf32>
  %m = tensor.dim %q, %c1 : tensor<?x?x16xf32>
  %n = tensor.dim %k, %c1 : tensor<?x?x16xf32>
  %e = tensor.empty(%b, %m, %n) : tensor<?x?x?xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<?x?x16xf32>, tensor<?x?x16xf32>) outs(%z : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %e3 = tensor.empty(%b, %m, %n) : tensor<?x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<?x?x?xf32>) outs(%e3 : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %eo = tensor.empty(%b, %m) : tensor<?x?x16xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<?x?x?xf32>, tensor<?x?x16xf32>) outs(%zo : tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %o : tensor<?x?x16xf32>
}

// -----

// Dynamic lengths read back from the intermediates, as converters write
// them: the output's sizes from `tensor.dim` of P and of the scores. The
// queries become the sizes the intermediates were created with, so that
// no scores tensor stays alive for them.
// EXEC: dims=2,19,2,67,2,67 amp=1.0
// CHECK-LABEL: func.func @dynamic_dims_of_intermediates
// CHECK: %[[B:.+]] = tensor.dim %arg0, %c0 : tensor<?x?x16xf32>
// CHECK: %[[M:.+]] = tensor.dim %arg0, %c1 : tensor<?x?x16xf32>
// CHECK-NOT: tensor<?x?x?xf32>
// CHECK: tensor.empty(%[[B]], %[[M]]) : tensor<?x?x16xf32>
// CHECK-NOT: tensor<?x?x?xf32>
// CHECK: attn.attention
func.func @dynamic_dims_of_intermediates(%q: tensor<?x?x16xf32>, %k: tensor<?x?x16xf32>, %v: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %cst = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x16xf32>
  %m = tensor.dim %q, %c1 : tensor<?x?x16xf32>
  %n = tensor.dim %k, %c1 : tensor<?x?x16xf32>
  %e = tensor.empty(%b, %m, %n) : tensor<?x?x?xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<?x?x16xf32>, tensor<?x?x16xf32>) outs(%z : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %e3 = tensor.empty(%b, %m, %n) : tensor<?x?x?xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<?x?x?xf32>) outs(%e3 : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %bp = tensor.dim %s, %c0 : tensor<?x?x?xf32>
  %mp = tensor.dim %p, %c1 : tensor<?x?x?xf32>
  %eo = tensor.empty(%bp, %mp) : tensor<?x?x16xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<?x?x?xf32>, tensor<?x?x16xf32>) outs(%zo : tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %o : tensor<?x?x16xf32>
}

// -----

// Look-alikes: each is left exactly as it was, and still runs correctly.

// The softmax normalizes over the queries (dimension 1), not the keys.
// EXEC: nofuse
// CHECK-LABEL: func.func @softmax_over_queries_rejected
// CHECK-NOT: attn.attention
// CHECK: linalg.softmax dimension(1)
// EXPLAIN: remark: attention not fused: the softmax normalizes dimension 1 of the scores but P·V contracts dimension 2: the softmax is not over the key axis
func.func @softmax_over_queries_rejected(%q: tensor<2x12x8xf32>, %k: tensor<2x12x8xf32>, %v: tensor<2x12x8xf32>) -> tensor<2x12x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x12x12xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x12x8xf32>, tensor<2x12x8xf32>) outs(%z : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %e3 = tensor.empty() : tensor<2x12x12xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<2x12x12xf32>) outs(%e3 : tensor<2x12x12xf32>) -> tensor<2x12x12xf32>
  %eo = tensor.empty() : tensor<2x12x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x12x12xf32>, tensor<2x12x8xf32>) outs(%zo : tensor<2x12x8xf32>) -> tensor<2x12x8xf32>
  return %o : tensor<2x12x8xf32>
}

// -----

// P·V contracts the query axis of P (P^T V): the wrong axis.
// EXEC: nofuse
// CHECK-LABEL: func.func @pv_contracts_wrong_axis_rejected
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the softmax normalizes dimension 2 of the scores but P·V contracts dimension 1
func.func @pv_contracts_wrong_axis_rejected(%q: tensor<2x12x8xf32>, %k: tensor<2x10x8xf32>, %v: tensor<2x12x8xf32>) -> tensor<2x10x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x12x10xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<2x12x10xf32>) -> tensor<2x12x10xf32>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>,
      affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x12x8xf32>, tensor<2x10x8xf32>) outs(%z : tensor<2x12x10xf32>) -> tensor<2x12x10xf32>
  %e3 = tensor.empty() : tensor<2x12x10xf32>
  %p = linalg.softmax dimension(2) ins(%s : tensor<2x12x10xf32>) outs(%e3 : tensor<2x12x10xf32>) -> tensor<2x12x10xf32>
  %eo = tensor.empty() : tensor<2x10x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<2x10x8xf32>) -> tensor<2x10x8xf32>
  %o = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, k, m)>,
      affine_map<(b, m, n, k) -> (b, k, n)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%p, %v : tensor<2x12x10xf32>, tensor<2x12x8xf32>) outs(%zo : tensor<2x10x8xf32>) -> tensor<2x10x8xf32>
  return %o : tensor<2x10x8xf32>
}

// -----

// The probabilities are also returned: fusing would lose them.
// CHECK-LABEL: func.func @probabilities_returned_rejected
// CHECK-NOT: attn.attention
// CHECK: linalg.softmax
// EXPLAIN: remark: attention not fused: the probabilities (softmax result) have other uses besides P·V
func.func @probabilities_returned_rejected(%q: tensor<12x8xf32>, %k: tensor<12x8xf32>, %v: tensor<12x8xf32>) -> (tensor<12x8xf32>, tensor<12x12xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x12xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<12x12xf32>) -> tensor<12x12xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>,
      affine_map<(m, n, k) -> (n, k)>,
      affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<12x8xf32>, tensor<12x8xf32>) outs(%z : tensor<12x12xf32>) -> tensor<12x12xf32>
  %e3 = tensor.empty() : tensor<12x12xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<12x12xf32>) outs(%e3 : tensor<12x12xf32>) -> tensor<12x12xf32>
  %eo = tensor.empty() : tensor<12x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<12x8xf32>) -> tensor<12x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<12x12xf32>, tensor<12x8xf32>) outs(%zo : tensor<12x8xf32>) -> tensor<12x8xf32>
  return %o, %p : tensor<12x8xf32>, tensor<12x12xf32>
}

// -----

// The scores are also returned.
// CHECK-LABEL: func.func @scores_returned_rejected
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the scores (Q·K^T) have other uses besides the softmax
func.func @scores_returned_rejected(%q: tensor<12x8xf32>, %k: tensor<12x8xf32>, %v: tensor<12x8xf32>) -> (tensor<12x8xf32>, tensor<12x12xf32>) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x12xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<12x12xf32>) -> tensor<12x12xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>,
      affine_map<(m, n, k) -> (n, k)>,
      affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<12x8xf32>, tensor<12x8xf32>) outs(%z : tensor<12x12xf32>) -> tensor<12x12xf32>
  %e3 = tensor.empty() : tensor<12x12xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<12x12xf32>) outs(%e3 : tensor<12x12xf32>) -> tensor<12x12xf32>
  %eo = tensor.empty() : tensor<12x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<12x8xf32>) -> tensor<12x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<12x12xf32>, tensor<12x8xf32>) outs(%zo : tensor<12x8xf32>) -> tensor<12x8xf32>
  return %o, %s : tensor<12x8xf32>, tensor<12x12xf32>
}

// -----

// Q·K^T accumulates into a non-zero tensor (an implicit bias of 1).
// EXEC: nofuse
// CHECK-LABEL: func.func @qk_nonzero_accumulator_rejected
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the Q·K^T accumulator is not zero-initialized
func.func @qk_nonzero_accumulator_rejected(%q: tensor<12x8xf32>, %k: tensor<12x8xf32>, %v: tensor<12x8xf32>) -> tensor<12x8xf32> {
  %cst = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<12x12xf32>
  %z = linalg.fill ins(%one : f32) outs(%e : tensor<12x12xf32>) -> tensor<12x12xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>,
      affine_map<(m, n, k) -> (n, k)>,
      affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<12x8xf32>, tensor<12x8xf32>) outs(%z : tensor<12x12xf32>) -> tensor<12x12xf32>
  %e3 = tensor.empty() : tensor<12x12xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<12x12xf32>) outs(%e3 : tensor<12x12xf32>) -> tensor<12x12xf32>
  %eo = tensor.empty() : tensor<12x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<12x8xf32>) -> tensor<12x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<12x12xf32>, tensor<12x8xf32>) outs(%zo : tensor<12x8xf32>) -> tensor<12x8xf32>
  return %o : tensor<12x8xf32>
}

// -----

// The scores are multiplied by a runtime tensor: not the scale, a score
// modification that reads the tensor (a score_mod operand).
// EXEC: arg3=bias
// CHECK-LABEL: func.func @scale_by_runtime_tensor_is_score_mod
// CHECK: attn.attention
// CHECK-SAME: score_mod_operands(%{{.*}} : tensor<12x12xf32>)
// EXPLAIN: remark: attention fused: scale=1, mask=none, score_mod=mulf(s, x0), causal=no
func.func @scale_by_runtime_tensor_is_score_mod(%q: tensor<12x8xf32>, %k: tensor<12x8xf32>, %v: tensor<12x8xf32>, %w: tensor<12x12xf32>) -> tensor<12x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x12xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<12x12xf32>) -> tensor<12x12xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>,
      affine_map<(m, n, k) -> (n, k)>,
      affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<12x8xf32>, tensor<12x8xf32>) outs(%z : tensor<12x12xf32>) -> tensor<12x12xf32>
  %e2 = tensor.empty() : tensor<12x12xf32>
  %sc = linalg.mul ins(%s, %w : tensor<12x12xf32>, tensor<12x12xf32>) outs(%e2 : tensor<12x12xf32>) -> tensor<12x12xf32>
  %e3 = tensor.empty() : tensor<12x12xf32>
  %p = linalg.softmax dimension(1) ins(%sc : tensor<12x12xf32>) outs(%e3 : tensor<12x12xf32>) -> tensor<12x12xf32>
  %eo = tensor.empty() : tensor<12x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<12x8xf32>) -> tensor<12x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<12x12xf32>, tensor<12x8xf32>) outs(%zo : tensor<12x8xf32>) -> tensor<12x8xf32>
  return %o : tensor<12x8xf32>
}

// -----

// The mask is added before the scale: scale * (Q K^T + mask).
// EXEC: nofuse arg3=bias
// CHECK-LABEL: func.func @mask_before_scale_rejected
// CHECK-NOT: attn.attention
// EXPLAIN: remark: attention not fused: the mask is applied before the scale
func.func @mask_before_scale_rejected(%q: tensor<12x8xf32>, %k: tensor<12x8xf32>, %v: tensor<12x8xf32>, %bias: tensor<12x12xf32>) -> tensor<12x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x12xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<12x12xf32>) -> tensor<12x12xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>,
      affine_map<(m, n, k) -> (n, k)>,
      affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<12x8xf32>, tensor<12x8xf32>) outs(%z : tensor<12x12xf32>) -> tensor<12x12xf32>
  %e1 = tensor.empty() : tensor<12x12xf32>
  %sb = linalg.add ins(%s, %bias : tensor<12x12xf32>, tensor<12x12xf32>) outs(%e1 : tensor<12x12xf32>) -> tensor<12x12xf32>
  %c = arith.constant dense<0.5> : tensor<12x12xf32>
  %e2 = tensor.empty() : tensor<12x12xf32>
  %sc = linalg.mul ins(%sb, %c : tensor<12x12xf32>, tensor<12x12xf32>) outs(%e2 : tensor<12x12xf32>) -> tensor<12x12xf32>
  %e3 = tensor.empty() : tensor<12x12xf32>
  %p = linalg.softmax dimension(1) ins(%sc : tensor<12x12xf32>) outs(%e3 : tensor<12x12xf32>) -> tensor<12x12xf32>
  %eo = tensor.empty() : tensor<12x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<12x8xf32>) -> tensor<12x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<12x12xf32>, tensor<12x8xf32>) outs(%zo : tensor<12x8xf32>) -> tensor<12x8xf32>
  return %o : tensor<12x8xf32>
}

// -----

// exp without normalization is not a softmax: no candidate, nothing changes.
// EXEC: nofuse
// CHECK-LABEL: func.func @exp_without_normalization_untouched
// CHECK-NOT: attn.attention
// CHECK: linalg.exp
// EXPLAIN: remark: attention not fused: the exponentials are not normalized (no division by their sum)
func.func @exp_without_normalization_untouched(%q: tensor<12x8xf32>, %k: tensor<12x8xf32>, %v: tensor<12x8xf32>) -> tensor<12x8xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<12x12xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<12x12xf32>) -> tensor<12x12xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>,
      affine_map<(m, n, k) -> (n, k)>,
      affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<12x8xf32>, tensor<12x8xf32>) outs(%z : tensor<12x12xf32>) -> tensor<12x12xf32>
  %e3 = tensor.empty() : tensor<12x12xf32>
  %p = linalg.exp ins(%s : tensor<12x12xf32>) outs(%e3 : tensor<12x12xf32>) -> tensor<12x12xf32>
  %eo = tensor.empty() : tensor<12x8xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<12x8xf32>) -> tensor<12x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<12x12xf32>, tensor<12x8xf32>) outs(%zo : tensor<12x8xf32>) -> tensor<12x8xf32>
  return %o : tensor<12x8xf32>
}
