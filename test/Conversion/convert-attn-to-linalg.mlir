// RUN: attn-opt %s --convert-attn-to-linalg --split-input-file --mlir-print-local-scope | FileCheck %s

// m' = max(m, rowmax(S)); ms = m' == -inf ? 0 : m'; P = exp(S - ms);
// α = exp(m - ms); ℓ' = α ℓ + rowsum(P); O' = α O + P V.
// CHECK-LABEL: func.func @online_update
// CHECK-SAME: (%[[S:.*]]: tensor<4x16x32xf32>, %[[V:.*]]: tensor<4x32x64xf16>, %[[M:.*]]: tensor<4x16xf32>, %[[L:.*]]: tensor<4x16xf32>, %[[A:.*]]: tensor<4x16x64xf32>)
// CHECK: %[[MN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[S]] : tensor<4x16x32xf32>) outs(%[[M]] : tensor<4x16xf32>)
// CHECK:   arith.maximumf
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[MN]] : tensor<4x16x32xf32>, tensor<4x16xf32>)
// CHECK:   arith.cmpf oeq
// CHECK:   arith.select
// CHECK:   arith.subf
// CHECK:   math.exp
// CHECK: %[[AL:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[MN]] : tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK:   math.exp
// CHECK: %[[LS:.*]] = linalg.generic {{.*}} ins(%[[AL]] : tensor<4x16xf32>) outs(%[[L]] : tensor<4x16xf32>)
// CHECK:   arith.mulf
// CHECK: %[[LN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[P]] : tensor<4x16x32xf32>) outs(%[[LS]] : tensor<4x16xf32>)
// CHECK:   arith.addf
// CHECK: %[[AS:.*]] = linalg.generic {{.*}} ins(%[[AL]] : tensor<4x16xf32>) outs(%[[A]] : tensor<4x16x64xf32>)
// CHECK: %[[AN:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[P]], %[[V]] : tensor<4x16x32xf32>, tensor<4x32x64xf16>) outs(%[[AS]] : tensor<4x16x64xf32>)
// CHECK:   arith.extf
// CHECK: return %[[MN]], %[[LN]], %[[AN]]
func.func @online_update(%s: tensor<4x16x32xf32>, %v: tensor<4x32x64xf16>,
    %m: tensor<4x16xf32>, %l: tensor<4x16xf32>, %acc: tensor<4x16x64xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16x64xf32>) {
  %m2, %l2, %acc2 = attn.online_update %s, %v into(%m, %l, %acc)
      : tensor<4x16x32xf32>, tensor<4x32x64xf16>, tensor<4x16xf32>, tensor<4x16x64xf32>
  return %m2, %l2, %acc2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16x64xf32>
}

// -----

// The one divide, with 0 for a fully masked row (ℓ = 0), rounded once.
// CHECK-LABEL: func.func @finalize
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<?xf32>) outs(%{{.*}} : tensor<?x64xbf16>)
// CHECK:   arith.cmpf oeq
// CHECK:   arith.divf
// CHECK:   arith.select
// CHECK:   arith.truncf
func.func @finalize(%acc: tensor<?x64xf32>, %l: tensor<?xf32>) -> tensor<?x64xbf16> {
  %o = attn.finalize %acc, %l : tensor<?x64xf32>, tensor<?xf32> -> tensor<?x64xbf16>
  return %o : tensor<?x64xbf16>
}

// -----

// attn.attention left untiled is tiled with the default sizes first.
// CHECK-LABEL: func.func @untiled_attention
// CHECK-NOT: attn.
// CHECK: scf.for
// CHECK: math.exp
func.func @untiled_attention(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<8x16xf32>, %o: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s = arith.constant 0.25 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>)
      scale(%s) outs(%o : tensor<8x16xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// attn.merge: two elementwise generics from M = max_i lse_i, the weights
// exp(lse_i - M) and their sum: the result and the lse.
// CHECK-LABEL: func.func @merge
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4x8xf16>, tensor<4x8xf16>)
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.truncf
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK: math.log
// CHECK-NOT: attn.merge
func.func @merge(%o0: tensor<4x8xf16>, %o1: tensor<4x8xf16>, %l0: tensor<4xf32>, %l1: tensor<4xf32>) -> (tensor<4x8xf16>, tensor<4xf32>) {
  %r, %l = attn.merge (%o0, %o1 : tensor<4x8xf16>, tensor<4x8xf16>) lse(%l0, %l1 : tensor<4xf32>, tensor<4xf32>) -> tensor<4x8xf16>, tensor<4xf32>
  return %r, %l : tensor<4x8xf16>, tensor<4xf32>
}
