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

// -----

// Chunked decode (Llama 4's local layers): the new token at position
// m + 19999 sees the keys of its chunk of 8192. The key chunk never
// decreases along the keys, so each block finds the tile's keys by binary
// search (scf.while, no scan) and splits those into its key ranges: the
// range length comes from the keys found, not from N. The split count is
// chosen for the 3616 keys the chunk leaves (16384..19999), evaluated here
// from the region: 12 ranges, where N's 20000 keys would take 25.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: GQA packing: 4 query heads x 1 rows per kv head, split-KV: 12 key ranges of 320 keys per query tile
// CHECK-SAME: each block's keys limited to those its segment ids match (the key ids, computed from the positions, never decrease: found by binary search, before the split into key ranges; one query position: exactly those keys, no region per score)
// CHECK: gpu.launch
// CHECK: nvvm.redux.sync  min
// CHECK: scf.while
// CHECK: arith.floordivsi %{{.*}}, %c8192{{.*}} : index
// CHECK: arith.cmpi sle
// CHECK: scf.while
// CHECK: arith.cmpi slt
// CHECK-NOT: nvvm.redux.sync
// CHECK: arith.subi
// CHECK: arith.ceildivui

// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: found by binary search; one query position: exactly those keys, no region per score)

// FORCED-LABEL: attn.bundle = {
func.func @gqa_chunked(%q: tensor<4x2x4x1x128xf16>, %k: tensor<4x2x20000x128xf16>, %v: tensor<4x2x20000x128xf16>, %o: tensor<4x2x4x1x128xf16>) -> tensor<4x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x4x1x128xf16>, tensor<4x2x20000x128xf16>, tensor<4x2x20000x128xf16>) scale(%s)
      outs(%o : tensor<4x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index):
        %off = arith.constant 19999 : index
        %p = arith.addi %m, %off : index
        %c = arith.constant 8192 : index
        %pc = arith.floordivsi %p, %c : index
        %nc = arith.floordivsi %n, %c : index
        %eq = arith.cmpi eq, %pc, %nc : index
        %f = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      } -> tensor<4x2x4x1x128xf16>
  return %r : tensor<4x2x4x1x128xf16>
}

// -----

// Look-alikes of the chunked decode, split but not ranged: JAX's finite
// fill (a key range would have to count the keys the others leave out),
// and strided ids (n % 4: not sorted along the keys, no binary search).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: segment ids compared per score over every key (split-KV with a finite fill: a key range would not count the keys the others leave out)
// CHECK-NOT: scf.while

// NOSPLIT-LABEL: attn.bundle = {

// FORCED-LABEL: attn.bundle = {
func.func @gqa_chunked_finite_fill(%q: tensor<4x2x4x1x128xf16>, %k: tensor<4x2x20000x128xf16>, %v: tensor<4x2x20000x128xf16>, %o: tensor<4x2x4x1x128xf16>) -> tensor<4x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x4x1x128xf16>, tensor<4x2x20000x128xf16>, tensor<4x2x20000x128xf16>) scale(%s)
      outs(%o : tensor<4x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index):
        %off = arith.constant 19999 : index
        %p = arith.addi %m, %off : index
        %c = arith.constant 8192 : index
        %pc = arith.floordivsi %p, %c : index
        %nc = arith.floordivsi %n, %c : index
        %eq = arith.cmpi eq, %pc, %nc : index
        %f = arith.constant -2.38197633E+38 : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      } -> tensor<4x2x4x1x128xf16>
  return %r : tensor<4x2x4x1x128xf16>
}

// -----

// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: segment ids compared per score over every key (split-KV spreads the keys over blocks, and the key ids are not sorted by position)
// CHECK-NOT: scf.while

// NOSPLIT-LABEL: attn.bundle = {

// FORCED-LABEL: attn.bundle = {
func.func @gqa_strided_ids(%q: tensor<4x2x4x1x128xf16>, %k: tensor<4x2x20000x128xf16>, %v: tensor<4x2x20000x128xf16>, %o: tensor<4x2x4x1x128xf16>) -> tensor<4x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x4x1x128xf16>, tensor<4x2x20000x128xf16>, tensor<4x2x20000x128xf16>) scale(%s)
      outs(%o : tensor<4x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index):
        %off = arith.constant 19999 : index
        %p = arith.addi %m, %off : index
        %c = arith.constant 4 : index
        %pc = arith.remsi %p, %c : index
        %nc = arith.remsi %n, %c : index
        %eq = arith.cmpi eq, %pc, %nc : index
        %f = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      } -> tensor<4x2x4x1x128xf16>
  return %r : tensor<4x2x4x1x128xf16>
}

// -----

// A dynamic batch (one bundle for every B, the split count chosen at
// launch): the manifest carries the keys the chunk leaves as key_span, the
// launch rule's span instead of N.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: key_span = 3616
// CHECK-SAME: with attention.key_span, the keys chunked ids leave: min(n, key_span)

// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-NOT: key_span = 
func.func @gqa_chunked_dynamic_batch(%q: tensor<?x2x4x1x128xf16>, %k: tensor<?x2x20000x128xf16>, %v: tensor<?x2x20000x128xf16>, %o: tensor<?x2x4x1x128xf16>) -> tensor<?x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x2x4x1x128xf16>, tensor<?x2x20000x128xf16>, tensor<?x2x20000x128xf16>) scale(%s)
      outs(%o : tensor<?x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index):
        %off = arith.constant 19999 : index
        %p = arith.addi %m, %off : index
        %c = arith.constant 8192 : index
        %pc = arith.floordivsi %p, %c : index
        %nc = arith.floordivsi %n, %c : index
        %eq = arith.cmpi eq, %pc, %nc : index
        %f = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      } -> tensor<?x2x4x1x128xf16>
  return %r : tensor<?x2x4x1x128xf16>
}

// -----

// Ids past 32 bits: the kernels compare ids saturated to i32, so where a
// row's id could reach the bound (chunks offset by 2^31) a key's saturated
// id could match it without being its own. The keys are still searched
// (saturation keeps the order), but the region stays on every score.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: found by binary search, before the split into key ranges)

// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: found by binary search)

// FORCED-LABEL: attn.bundle = {
func.func @gqa_chunked_ids_past_32_bits(%q: tensor<4x2x4x1x128xf16>, %k: tensor<4x2x20000x128xf16>, %v: tensor<4x2x20000x128xf16>, %o: tensor<4x2x4x1x128xf16>) -> tensor<4x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x4x1x128xf16>, tensor<4x2x20000x128xf16>, tensor<4x2x20000x128xf16>) scale(%s)
      outs(%o : tensor<4x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index):
        %off = arith.constant 19999 : index
        %p = arith.addi %m, %off : index
        %c = arith.constant 128 : index
        %big = arith.constant 2147483648 : index
        %pc = arith.floordivsi %p, %c : index
        %pb = arith.addi %pc, %big : index
        %nc = arith.floordivsi %n, %c : index
        %nb = arith.addi %nc, %big : index
        %eq = arith.cmpi eq, %pb, %nb : index
        %f = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      } -> tensor<4x2x4x1x128xf16>
  return %r : tensor<4x2x4x1x128xf16>
}

// -----

// Chunked decode with per-sequence lengths (decode_attention's kv_lens):
// the token of sequence b at position kv_len[b] - 1, the lengths read by
// the region as a batch-indexed operand. The length mask bounds each
// block's keys, and the chunk's range is searched within them.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: found by binary search, before the split into key ranges; one query position: exactly those keys, no region per score)

// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: found by binary search; one query position

// FORCED-LABEL: attn.bundle = {
func.func @gqa_chunked_kv_lens(%q: tensor<4x2x4x1x128xf16>, %k: tensor<4x2x20000x128xf16>, %v: tensor<4x2x20000x128xf16>, %lens: tensor<4xi32>, %o: tensor<4x2x4x1x128xf16>) -> tensor<4x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %mask = attn.length_mask %lens : tensor<4xi32> -> tensor<4x20000xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x4x1x128xf16>, tensor<4x2x20000x128xf16>, tensor<4x2x20000x128xf16>) scale(%s)
      mask(%mask : tensor<4x20000xi1>) score_mod_operands(%lens : tensor<4xi32>)
      outs(%o : tensor<4x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, n)>, affine_map<(b, h, g, m, n, d, e) -> (b)>]
      score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index, %len: i32):
        %l = arith.index_cast %len : i32 to index
        %one = arith.constant 1 : index
        %p0 = arith.addi %m, %l : index
        %p = arith.subi %p0, %one : index
        %c = arith.constant 8192 : index
        %pc = arith.floordivsi %p, %c : index
        %nc = arith.floordivsi %n, %c : index
        %eq = arith.cmpi eq, %pc, %nc : index
        %f = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      } -> tensor<4x2x4x1x128xf16>
  return %r : tensor<4x2x4x1x128xf16>
}

// -----

// The same with a finite fill: the keys left out of the ranges would be
// folded in up to N, past each sequence's length, so no ranges beside the
// length mask.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: segment ids compared per score over every key (per-sequence lengths bound the keys)

// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: segment ids compared per score over every key (per-sequence lengths bound the keys)

// FORCED-LABEL: attn.bundle = {
func.func @gqa_chunked_kv_lens_finite_fill(%q: tensor<4x2x4x1x128xf16>, %k: tensor<4x2x20000x128xf16>, %v: tensor<4x2x20000x128xf16>, %lens: tensor<4xi32>, %o: tensor<4x2x4x1x128xf16>) -> tensor<4x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %mask = attn.length_mask %lens : tensor<4xi32> -> tensor<4x20000xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x4x1x128xf16>, tensor<4x2x20000x128xf16>, tensor<4x2x20000x128xf16>) scale(%s)
      mask(%mask : tensor<4x20000xi1>) score_mod_operands(%lens : tensor<4xi32>)
      outs(%o : tensor<4x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, n)>, affine_map<(b, h, g, m, n, d, e) -> (b)>]
      score_mod {
      ^bb0(%x: f32, %b0: index, %b1: index, %b2: index, %m: index, %n: index, %len: i32):
        %l = arith.index_cast %len : i32 to index
        %one = arith.constant 1 : index
        %p0 = arith.addi %m, %l : index
        %p = arith.subi %p0, %one : index
        %c = arith.constant 8192 : index
        %pc = arith.floordivsi %p, %c : index
        %nc = arith.floordivsi %n, %c : index
        %eq = arith.cmpi eq, %pc, %nc : index
        %f = arith.constant -1.0e+04 : f32
        %y = arith.select %eq, %x, %f : f32
        attn.yield %y : f32
      } -> tensor<4x2x4x1x128xf16>
  return %r : tensor<4x2x4x1x128xf16>
}

// -----

// GQA packing over a full grid (512 one-warp blocks) of few keys: 32-key
// tiles and three stages (four blocks per multiprocessor); with a launch
// option given (splits=1) the default shape.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: 1 warps x 1 x 16 query rows, 32-key tiles, 3 stages, GQA packing: 4 query heads x 1 rows per kv head, no split-KV
// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: 1 warps x 1 x 16 query rows, 64-key tiles, 3 stages, GQA packing
func.func @gqa_full_grid_short(%q: tensor<64x8x4x1x128xf16>, %k: tensor<64x8x1024x128xf16>, %v: tensor<64x8x1024x128xf16>, %o: tensor<64x8x4x1x128xf16>) -> tensor<64x8x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<64x8x4x1x128xf16>, tensor<64x8x1024x128xf16>, tensor<64x8x1024x128xf16>) scale(%s)
      outs(%o : tensor<64x8x4x1x128xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      -> tensor<64x8x4x1x128xf16>
  return %r : tensor<64x8x4x1x128xf16>
}

// -----

// Four row warps (64 packed rows) over a full grid: 32-key tiles, four
// stages.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: 4 warps x 1 x 16 query rows, 32-key tiles, 4 stages, GQA packing: 4 query heads x 16 rows per kv head, no split-KV
// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: 4 warps x 1 x 16 query rows, 64-key tiles, 2 stages, GQA packing
func.func @gqa_full_grid_m16(%q: tensor<64x8x4x16x128xf16>, %k: tensor<64x8x1024x128xf16>, %v: tensor<64x8x1024x128xf16>, %o: tensor<64x8x4x16x128xf16>) -> tensor<64x8x4x16x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<64x8x4x16x128xf16>, tensor<64x8x1024x128xf16>, tensor<64x8x1024x128xf16>) scale(%s)
      outs(%o : tensor<64x8x4x16x128xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      -> tensor<64x8x4x16x128xf16>
  return %r : tensor<64x8x4x16x128xf16>
}

// -----

// One-warp blocks past 4096 keys keep 64-key tiles.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: 1 warps x 1 x 16 query rows, 64-key tiles, 3 stages, GQA packing
// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: 1 warps x 1 x 16 query rows, 64-key tiles, 3 stages, GQA packing
func.func @gqa_full_grid_long(%q: tensor<64x8x4x1x128xf16>, %k: tensor<64x8x8192x128xf16>, %v: tensor<64x8x8192x128xf16>, %o: tensor<64x8x4x1x128xf16>) -> tensor<64x8x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<64x8x4x1x128xf16>, tensor<64x8x8192x128xf16>, tensor<64x8x8192x128xf16>) scale(%s)
      outs(%o : tensor<64x8x4x1x128xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      -> tensor<64x8x4x1x128xf16>
  return %r : tensor<64x8x4x1x128xf16>
}

// -----

// Past D = 128 (Gemma's 256) packed one-warp blocks over a full grid take
// two key warps without split-KV (a forced splits=1 keeps one).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: 1 warps x 1 x 16 query rows, 32-key tiles, 3 stages, 2 key warps per row tile (16 keys of each tile each, merged at the end), GQA packing: 4 query heads x 1 rows per kv head, no split-KV
// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: 1 warps x 1 x 16 query rows, 32-key tiles, 3 stages, GQA packing
func.func @gqa_full_grid_d256(%q: tensor<64x8x4x1x256xf16>, %k: tensor<64x8x4096x256xf16>, %v: tensor<64x8x4096x256xf16>, %o: tensor<64x8x4x1x256xf16>) -> tensor<64x8x4x1x256xf16> {
  %s = arith.constant 0.0625 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<64x8x4x1x256xf16>, tensor<64x8x4096x256xf16>, tensor<64x8x4096x256xf16>) scale(%s)
      outs(%o : tensor<64x8x4x1x256xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      -> tensor<64x8x4x1x256xf16>
  return %r : tensor<64x8x4x1x256xf16>
}
