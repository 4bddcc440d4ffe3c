// Decode shapes (M <= 16 query rows) take the mma.sync kernel with 16-row
// warps, also on sm_90a; where the grid would be small, split-KV spreads
// each query tile's keys over grid z: every block writes its range's
// partial (O / l, and the row max and sum (m, l), not m + log l, which
// loses l near |m| = FLT_MAX) to the workspace arguments o_part / ml_part,
// counts itself on `locks` (atomic add after a fence), and the last block
// merges the partials through L2 (ld.global.cg) into out, with weights
// l_z 2^(m_z - max m): staged in shared memory for a static split count
// whose statistics fit and 16 rows or more, else in one online pass per
// task.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a splits=1" | FileCheck %s --check-prefix=NOSPLIT
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_80 splits=5" 2>&1 | FileCheck %s --check-prefix=FORCED
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a splits=300" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a splits=4 wgmma=1" 2>&1 | FileCheck %s --check-prefix=WGMMA

// One token, 16 (sequence, head) pairs, 8192 keys: 1.5 x 132 blocks
// wanted, 13 ranges of 640 keys; no GQA packing and 512 keys or more per
// range: 32-key tiles, 2 stages; split, so two key warps (64 threads).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: name = "o_part", shape = array<i64: 13, 16, 1, 128>
// CHECK-SAME: name = "ml_part", shape = array<i64: 13, 16, 1, 2>
// CHECK-SAME: dtype = "int32", map = "workspace", name = "locks", shape = array<i64: 16, 1>
// CHECK-SAME: block = array<i64: 64, 1, 1>
// CHECK-SAME: grid = array<i64: 1, 16, 13>
// CHECK-SAME: kernel_choice = "mma.sync m16n8k16, 1 warps x 1 x 16 query rows, 32-key tiles, 2 stages, 2 key warps per row tile (16 keys of each tile each, merged at the end), split-KV: 13 key ranges of 640 keys per query tile, merged by the last block; not wgmma: decode shape (M = 1 <= 16
// CHECK-SAME: key_warps = 2
// CHECK-SAME: split_chunk = 640
// CHECK-SAME: splits = 13
// CHECK: func.func @attn_fwd({{.*}}memref<2x8x1x128xf16>, {{.*}}memref<13x16x1x128xf32>, {{.*}}memref<13x16x1x2xf32>, {{.*}}memref<16x1xi32>)
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}, {{.*}} = %c16{{.*}}, {{.*}} = %c13{{.*}}) threads({{.*}}) in ({{.*}} = %c64
// CHECK: vector.store {{.*}} : memref<13x16x1x2xf32>, vector<2xf32>
// CHECK: "membar.gl;"
// CHECK: memref.atomic_rmw addi
// CHECK: "membar.gl;"
// The merge of one row: one online pass over the 13 partials, every (m, l)
// and O load of the chunk before the math (the chunk's max, one rescale,
// the weights); blocks of 16 rows or more stage the statistics
// (convert-attn-to-gpu-key-warps.mlir).
// CHECK-NOT: xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for {{.*}} to %c13{{.*}} step %c13
// CHECK-COUNT-26: ld.global.cg.v{{[24]}}.f32
// CHECK-NOT: ld.global.cg
// CHECK: arith.maximumf
// CHECK: ex2.approx.ftz.f32
// CHECK: scf.yield

// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-NOT: o_part
// NOSPLIT-SAME: grid = array<i64: 1, 16, 1>
// NOSPLIT-SAME: splits = 1
// NOSPLIT: func.func @attn_fwd(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}: memref<2x8x1x128xf16>) {
// NOSPLIT-NOT: atomic_rmw

// FORCED-LABEL: attn.bundle = {
// FORCED-SAME: grid = array<i64: 1, 16, 5>
// FORCED-SAME: split-KV: 5 key ranges of 1664 keys

// RANGE: error: splits must be -1 (from the shapes), 1 (none) or in [2, 256], got 300
// WGMMA: error: splits=4 runs on the mma.sync kernel; it cannot be combined with wgmma=1
func.func @decode(%q: tensor<2x8x1x128xf16>, %k: tensor<2x8x8192x128xf16>, %v: tensor<2x8x8192x128xf16>, %o: tensor<2x8x1x128xf16>) -> tensor<2x8x1x128xf16> {
  %s = arith.constant 0.088388 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x1x128xf16>, tensor<2x8x8192x128xf16>, tensor<2x8x8192x128xf16>) scale(%s)
      outs(%o : tensor<2x8x1x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x8x1x128xf16>
  return %r : tensor<2x8x1x128xf16>
}

// -----

// One token over 32 heads and 32768 keys: 32-key tiles, so about 2.25
// blocks per multiprocessor (10 ranges of 3296 keys, not 1.5's 7).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: grid = array<i64: 1, 32, 10>
// CHECK-SAME: 32-key tiles, 2 stages, 2 key warps per row tile (16 keys of each tile each, merged at the end), split-KV: 10 key ranges of 3296 keys
// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: grid = array<i64: 1, 32, 1>
// FORCED-LABEL: attn.bundle = {
// FORCED-SAME: grid = array<i64: 1, 32, 5>
func.func @decode_small_tiles(%q: tensor<1x32x1x128xf16>, %k: tensor<1x32x32768x128xf16>, %v: tensor<1x32x32768x128xf16>, %o: tensor<1x32x1x128xf16>) -> tensor<1x32x1x128xf16> {
  %s = arith.constant 0.088388 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x32x1x128xf16>, tensor<1x32x32768x128xf16>, tensor<1x32x32768x128xf16>) scale(%s)
      outs(%o : tensor<1x32x1x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<1x32x1x128xf16>
  return %r : tensor<1x32x1x128xf16>
}

// -----

// Many sequences fill the grid already (4096 (sequence, head) pairs): no
// split by default; bottom-right causal, 16 speculative tokens, a sink
// (split-KV counts it in the first range only) and the lse.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: grid = array<i64: 1, 4096, 1>
// CHECK-SAME: no split-KV (the grid is full or the keys few)
// CHECK-SAME: splits = 1
// CHECK-NOT: atomic_rmw

// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: grid = array<i64: 1, 4096, 1>

// FORCED-LABEL: attn.bundle = {
// FORCED-SAME: name = "o_part", shape = array<i64: 4, 4096, 16, 64>
// FORCED-SAME: grid = array<i64: 1, 4096, 4>
// FORCED: memref.atomic_rmw addi
func.func @speculative(%q: tensor<128x32x16x64xf16>, %k: tensor<128x32x1000x64xf16>, %v: tensor<128x32x1000x64xf16>, %sink: tensor<32xf16>, %o: tensor<128x32x16x64xf16>) -> tensor<128x32x16x64xf16> {
  %s = arith.constant 0.125 : f32
  %r, %l = attn.attention ins(%q, %k, %v : tensor<128x32x16x64xf16>, tensor<128x32x1000x64xf16>, tensor<128x32x1000x64xf16>) scale(%s)
      sink(%sink : tensor<32xf16>)
      outs(%o : tensor<128x32x16x64xf16>) causal query_offset = 984 indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (h)>] -> tensor<128x32x16x64xf16>, tensor<128x32x16xf32>
  return %r : tensor<128x32x16x64xf16>
}

// -----

// A finite fill under causal: the keys hidden from a whole block count
// once, which one range of several cannot do: no split by default, an
// error when forced.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: no split-KV (a finite fill with causal/window

// NOSPLIT-LABEL: attn.bundle = {

// FORCED: error: splits=5: split-KV cannot take this attention: a finite fill with causal/window
func.func @fill(%q: tensor<1x4x1x64xf16>, %k: tensor<1x4x3000x64xf16>, %v: tensor<1x4x3000x64xf16>, %o: tensor<1x4x1x64xf16>) -> tensor<1x4x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x1x64xf16>, tensor<1x4x3000x64xf16>, tensor<1x4x3000x64xf16>) scale(%s)
      outs(%o : tensor<1x4x1x64xf16>) causal query_offset = 2999 mask_value = -2.0 indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<1x4x1x64xf16>
  return %r : tensor<1x4x1x64xf16>
}

// -----

// GQA packing with a key-padding mask [b, n] (per-sequence lengths) and
// with a sink per query head (read per packed row); a score_mod region
// (its batch-only values computed once per block) keeps one block per
// query head.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: GQA packing: 4 query heads x 1 rows per kv head

// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: GQA packing: 4 query heads x 1 rows per kv head

// FORCED-LABEL: attn.bundle = {
// FORCED-SAME: GQA packing
func.func @gqa_key_padding(%q: tensor<4x2x4x1x128xf16>, %k: tensor<4x2x3000x128xf16>, %v: tensor<4x2x3000x128xf16>, %m: tensor<4x3000xi1>, %o: tensor<4x2x4x1x128xf16>) -> tensor<4x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x4x1x128xf16>, tensor<4x2x3000x128xf16>, tensor<4x2x3000x128xf16>) scale(%s)
      mask(%m : tensor<4x3000xi1>)
      outs(%o : tensor<4x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, n)>] -> tensor<4x2x4x1x128xf16>
  return %r : tensor<4x2x4x1x128xf16>
}

// -----

// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: GQA packing: 4 query heads x 1 rows per kv head

// NOSPLIT-LABEL: attn.bundle = {

// FORCED-LABEL: attn.bundle = {
func.func @gqa_sink(%q: tensor<4x2x4x1x128xf16>, %k: tensor<4x2x3000x128xf16>, %v: tensor<4x2x3000x128xf16>, %sink: tensor<2x4xf16>, %o: tensor<4x2x4x1x128xf16>) -> tensor<4x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x4x1x128xf16>, tensor<4x2x3000x128xf16>, tensor<4x2x3000x128xf16>) scale(%s)
      sink(%sink : tensor<2x4xf16>)
      outs(%o : tensor<4x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>,
        affine_map<(b, h, g, m, n, d, e) -> (h, g)>] -> tensor<4x2x4x1x128xf16>
  return %r : tensor<4x2x4x1x128xf16>
}

// -----

// A score_mod region that reads nothing of the group dim (soft-capping):
// packed like the plain kernel, the region applied per packed row.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: GQA packing: 4 query heads x 1 rows per kv head

// NOSPLIT-LABEL: attn.bundle = {

// FORCED-LABEL: attn.bundle = {
func.func @gqa_score_mod(%q: tensor<4x2x4x1x128xf16>, %k: tensor<4x2x3000x128xf16>, %v: tensor<4x2x3000x128xf16>, %o: tensor<4x2x4x1x128xf16>) -> tensor<4x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x4x1x128xf16>, tensor<4x2x3000x128xf16>, tensor<4x2x3000x128xf16>) scale(%s)
      outs(%o : tensor<4x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index):
        %c = arith.constant 30.0 : f32
        %y = arith.divf %x, %c : f32
        %t = math.tanh %y : f32
        %z = arith.mulf %t, %c : f32
        attn.yield %z : f32
      } -> tensor<4x2x4x1x128xf16>
  return %r : tensor<4x2x4x1x128xf16>
}

// -----

// A region that reads the group index (ALiBi by query head: slope from g)
// is packed too: its values of g are computed per row (g = row / M).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: GQA packing: 4 query heads x 1 rows per kv head

// NOSPLIT-LABEL: attn.bundle = {

// FORCED-LABEL: attn.bundle = {
func.func @gqa_score_mod_reads_group(%q: tensor<4x2x4x1x128xf16>, %k: tensor<4x2x3000x128xf16>, %v: tensor<4x2x3000x128xf16>, %o: tensor<4x2x4x1x128xf16>) -> tensor<4x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x4x1x128xf16>, tensor<4x2x3000x128xf16>, tensor<4x2x3000x128xf16>) scale(%s)
      outs(%o : tensor<4x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index):
        %g64 = arith.index_cast %b2 : index to i64
        %gf = arith.sitofp %g64 : i64 to f32
        %c = arith.constant -1.0 : f32
        %e = arith.mulf %gf, %c : f32
        %slope = math.exp2 %e : f32
        %d = arith.subi %n, %m : index
        %d64 = arith.index_cast %d : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %bias = arith.mulf %slope, %df : f32
        %y = arith.addf %x, %bias : f32
        attn.yield %y : f32
      } -> tensor<4x2x4x1x128xf16>
  return %r : tensor<4x2x4x1x128xf16>
}
