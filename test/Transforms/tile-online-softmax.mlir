// RUN: attn-opt %s --attn-tile="tile-q=32 tile-kv=16" --split-input-file --mlir-print-local-scope | FileCheck %s
// RUN: attn-opt %s --attn-tile="tile-q=0 tile-kv=64" --split-input-file --mlir-print-local-scope | FileCheck %s --check-prefix=NOQ
// RUN: not attn-opt %s --attn-tile="tile-kv=0" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// m' = max(m, rowmax(S)); ℓ' = α ℓ + rowsum(P); O' = α O + P V; O = O / ℓ.
// No tensor of size M x N (100 x 70) survives: scores are tiles of 32 x 16
// (dynamic where the last tile is ragged).
// CHECK-LABEL: func.func @tile_ragged
// CHECK-NOT: tensor<2x100x70xf32>
// CHECK: %[[R:.*]] = scf.forall (%[[I:.*]]) = (0) to (100) step (32) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<2x100x8xf32>)
// CHECK:   %[[TM:.*]] = arith.minsi
// CHECK:   %[[QT:.*]] = tensor.extract_slice %{{.*}}[0, %[[I]], 0] [2, %[[TM]], 16] [1, 1, 1]
// CHECK:   %[[M0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x?xf32>)
// CHECK:   %[[L:.*]]:3 = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[M:.*]] = %[[M0]], %[[S:.*]] = %{{.*}}, %[[A:.*]] = %{{.*}}) -> (tensor<2x?xf32>, tensor<2x?xf32>, tensor<2x?x8xf32>)
// CHECK:     %[[TN:.*]] = arith.minsi
// CHECK:     %[[KT:.*]] = tensor.extract_slice %{{.*}}[0, %[[J]], 0] [2, %[[TN]], 16]
// CHECK:     %[[VT:.*]] = tensor.extract_slice %{{.*}}[0, %[[J]], 0] [2, %[[TN]], 8]
// CHECK:     linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[QT]], %[[KT]] : tensor<2x?x16xf32>, tensor<2x?x16xf32>) outs(%{{.*}} : tensor<2x?x?xf32>)
// CHECK:     %[[SC:.*]] = linalg.generic
// CHECK:       arith.mulf
// CHECK:     attn.online_update %[[SC]], %[[VT]] into(%[[M]], %[[S]], %[[A]]) : tensor<2x?x?xf32>, tensor<2x?x8xf32>, tensor<2x?xf32>, tensor<2x?x8xf32>
// CHECK:     scf.yield
// CHECK:   %[[O:.*]] = attn.finalize %[[L]]#2, %[[L]]#1 : tensor<2x?x8xf32>, tensor<2x?xf32> -> tensor<2x?x8xf32>
// CHECK:   tensor.parallel_insert_slice %[[O]] into %[[OUT]][0, %[[I]], 0] [2, %[[TM]], 8]
// CHECK-NOT: attn.attention
// CHECK: return %[[R]]
// NOQ-LABEL: func.func @tile_ragged
// NOQ-NOT: scf.forall
// NOQ: scf.for {{.*}} -> (tensor<2x100xf32>, tensor<2x100xf32>, tensor<2x100x8xf32>)
// NOQ: attn.online_update {{.*}} : tensor<2x100x?xf32>
// NOQ: attn.finalize
// BAD: error: cannot tile attention: tile sizes must be positive
func.func @tile_ragged(%q: tensor<2x100x16xf32>, %k: tensor<2x70x16xf32>, %v: tensor<2x70x8xf32>, %o: tensor<2x100x8xf32>) -> tensor<2x100x8xf32> {
  %s = arith.constant 0.25 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x100x16xf32>, tensor<2x70x16xf32>, tensor<2x70x8xf32>)
      scale(%s) outs(%o : tensor<2x100x8xf32>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<2x100x8xf32>
  return %r : tensor<2x100x8xf32>
}

// -----

// Tile sizes that divide the sequence give static tiles; the causal loop
// stops at the diagonal (upper bound min(N, i + tm)) and masks n > m.
// CHECK-LABEL: func.func @causal_static_tiles
// CHECK: scf.forall (%[[I:.*]]) = (0) to (64) step (32)
// CHECK:   %[[END:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK:   %[[UB:.*]] = arith.minsi %{{.*}}, %[[END]] : index
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[UB]] step
// CHECK:     linalg.index 1
// CHECK:     linalg.index 2
// CHECK:     arith.cmpi ugt
// CHECK:     arith.select
// CHECK:     attn.online_update {{.*}} : tensor<4x32x?xf32>, tensor<4x?x64xf16>, tensor<4x32xf32>, tensor<4x32x64xf32>
// CHECK:   attn.finalize {{.*}} -> tensor<4x32x64xf16>
func.func @causal_static_tiles(%q: tensor<4x64x64xf16>, %k: tensor<4x64x64xf16>, %v: tensor<4x64x64xf16>, %o: tensor<4x64x64xf16>) -> tensor<4x64x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x64x64xf16>, tensor<4x64x64xf16>, tensor<4x64x64xf16>)
      scale(%s) outs(%o : tensor<4x64x64xf16>) causal
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<4x64x64xf16>
  return %r : tensor<4x64x64xf16>
}

// -----

// [B, S, H, D] operands are brought to (b, h, s, d) once (an O(N d) copy) and
// the result is written back through the output map; the mask (m, n) is
// sliced per tile and broadcast over b and h by its map.
// CHECK-LABEL: func.func @bshd_layout_with_mask
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x48x4x32xbf16>) outs(%{{.*}} : tensor<2x4x48x32xbf16>) permutation = [0, 2, 1, 3]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x40x4x32xbf16>) outs(%{{.*}} : tensor<2x4x40x32xbf16>) permutation = [0, 2, 1, 3]
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x40x4x16xbf16>) outs(%{{.*}} : tensor<2x4x40x16xbf16>) permutation = [0, 2, 1, 3]
// CHECK: scf.forall
// CHECK:   scf.for
// CHECK:     %[[MT:.*]] = tensor.extract_slice %{{.*}}[%{{.*}}, %{{.*}}] [%{{.*}}, %{{.*}}] [1, 1] : tensor<48x40xf32> to tensor<?x?xf32>
// CHECK:     linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-SAME: ins(%[[MT]] : tensor<?x?xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x4x48x16xbf16>) outs(%{{.*}} : tensor<2x48x4x16xbf16>) permutation = [0, 2, 1, 3]
func.func @bshd_layout_with_mask(%q: tensor<2x48x4x32xbf16>, %k: tensor<2x40x4x32xbf16>,
    %v: tensor<2x40x4x16xbf16>, %mask: tensor<48x40xf32>, %o: tensor<2x48x4x16xbf16>) -> tensor<2x48x4x16xbf16> {
  %s = arith.constant 0.17677669 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x48x4x32xbf16>, tensor<2x40x4x32xbf16>, tensor<2x40x4x16xbf16>)
      scale(%s) mask(%mask : tensor<48x40xf32>) outs(%o : tensor<2x48x4x16xbf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, m, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, m, h, e)>,
                       affine_map<(b, h, m, n, d, e) -> (m, n)>]
      -> tensor<2x48x4x16xbf16>
  return %r : tensor<2x48x4x16xbf16>
}

// -----

// Grouped-query attention: K/V are sliced and read at their own rank (no
// broadcast over the group dim); the update is told which batch dims V has.
// CHECK-LABEL: func.func @gqa_kv_without_group_dim
// CHECK-NOT: linalg.broadcast
// CHECK: scf.for
// CHECK:   tensor.extract_slice %{{.*}}[0, 0, %{{.*}}, 0] [2, 2, 16, 32] [1, 1, 1, 1] : tensor<2x2x64x32xf16> to tensor<2x2x16x32xf16>
// CHECK:   linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4)>]
// CHECK:   attn.online_update {{.*}} {value_batch_dims = array<i64: 0, 1>} : tensor<2x2x4x32x16xf32>, tensor<2x2x16x32xf16>
func.func @gqa_kv_without_group_dim(%q: tensor<2x2x4x64x32xf16>, %k: tensor<2x2x64x32xf16>,
    %v: tensor<2x2x64x32xf16>, %o: tensor<2x2x4x64x32xf16>) -> tensor<2x2x4x64x32xf16> {
  %s = arith.constant 0.17677669 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x2x4x64x32xf16>, tensor<2x2x64x32xf16>, tensor<2x2x64x32xf16>)
      scale(%s) outs(%o : tensor<2x2x4x64x32xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      -> tensor<2x2x4x64x32xf16>
  return %r : tensor<2x2x4x64x32xf16>
}

// -----

// A sliding window: the key loop starts at the first row's window
// (max(0, i - (W - 1))) and keys with m - n >= W are masked in the tile.
// CHECK-LABEL: func.func @sliding_window_bounds
// CHECK: scf.forall (%[[I:.*]]) =
// CHECK:   %[[W1:.*]] = arith.constant 15 : index
// CHECK:   %[[ST:.*]] = arith.subi %[[I]], %[[W1]] : index
// CHECK:   %[[IN:.*]] = arith.cmpi sgt, %[[I]], %[[W1]] : index
// CHECK:   %[[LB:.*]] = arith.select %[[IN]], %[[ST]], %{{.*}} : index
// CHECK:   scf.for %{{.*}} = %[[LB]] to
// CHECK:     arith.constant 16 : index
// CHECK:     arith.cmpi uge
// CHECK:     attn.online_update
func.func @sliding_window_bounds(%q: tensor<128x32xf16>, %k: tensor<128x32xf16>, %v: tensor<128x32xf16>, %o: tensor<128x32xf16>) -> tensor<128x32xf16> {
  %s = arith.constant 0.17677669 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<128x32xf16>, tensor<128x32xf16>, tensor<128x32xf16>)
      scale(%s) outs(%o : tensor<128x32xf16>) window = 16
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<128x32xf16>
  return %r : tensor<128x32xf16>
}

// -----

// The score_mod body is applied to each scaled score tile, with global
// indices (tile offsets added) and its operand sliced to the tile.
// CHECK-LABEL: func.func @score_mod_tile
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<?xf32>)
// CHECK: ^bb0(%[[W:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[X:.*]] = arith.mulf
// CHECK: linalg.index 0
// CHECK: arith.addi
// CHECK: linalg.index 1
// CHECK: arith.addi
// CHECK: %[[T:.*]] = math.tanh %[[X]]
// CHECK: arith.mulf %[[T]], %[[W]]
// CHECK: attn.online_update
func.func @score_mod_tile(%q: tensor<100x16xf32>, %k: tensor<70x16xf32>, %v: tensor<70x8xf32>, %o: tensor<100x8xf32>, %w: tensor<70xf32>) -> tensor<100x8xf32> {
  %s = arith.constant 0.25 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<100x16xf32>, tensor<70x16xf32>, tensor<70x8xf32>) scale(%s)
      score_mod_operands(%w : tensor<70xf32>) outs(%o : tensor<100x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>,
                       affine_map<(m, n, d, e) -> (n)>] score_mod {
      ^bb0(%x: f32, %m: index, %n: index, %wn: f32):
        %t = math.tanh %x : f32
        %y = arith.mulf %t, %wn : f32
        attn.yield %y : f32
      } -> tensor<100x8xf32>
  return %r : tensor<100x8xf32>
}
