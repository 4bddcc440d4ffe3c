// Key warps on the mma.sync kernel: key_warps warps share each row tile's
// key tiles, warp w taking keys [(w / warps) * tile_kv / key_warps, ...) of
// every tile with its own (m, l, O); after the loop the states meet in
// shared memory (f32, [warps * key_warps, values, 32 lanes]) and every warp
// merges those of its rows. By default decode takes two where it splits
// the keys (blocks of four row warps with one wave of key ranges, a block
// per multiprocessor, while a range keeps at most 16384 keys); `key-warps`
// forces a count.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a splits=1" | FileCheck %s --check-prefix=NOSPLIT
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_80 key-warps=4 tile-kv=64" | FileCheck %s --check-prefix=FOUR
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a key-warps=5" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a key-warps=4 tile-kv=32" 2>&1 | FileCheck %s --check-prefix=TILE

// Speculative decode, 16 tokens x 4 query heads per kv head (64 packed
// rows: four row warps), one sequence of 32768 keys, 8 kv heads: split,
// two key warps, and 16 ranges instead of 25 (8 blocks x 16 <= 132
// multiprocessors), three stages.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: name = "o_part", shape = array<i64: 16, 8, 64, 128>
// CHECK-SAME: block = array<i64: 256, 1, 1>
// CHECK-SAME: grid = array<i64: 1, 8, 16>
// CHECK-SAME: 4 warps x 1 x 16 query rows, 64-key tiles, 3 stages, 2 key warps per row tile (32 keys of each tile each, merged at the end)
// CHECK-SAME: key_warps = 2
// CHECK-SAME: splits = 16
// CHECK-SAME: warps = 4
// CHECK: gpu.launch
// The block counts itself started: the sliced merge below waits only on
// blocks that started.
// CHECK: memref.atomic_rmw addi %c512_i32, %{{.*}} : (i32, memref<8x1xi32>)
// The loop, then the exchange: 8 warps x (4 + 128 / 2) values x 32 lanes.
// CHECK: scf.for
// CHECK: nvgpu.device_async_wait
// CHECK: gpu.barrier
// CHECK: memref.store {{.*}} : memref<8x68x32xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load {{.*}} : memref<8x68x32xf32, #gpu.address_space<workgroup>>
// Done; the last block waits for the 7 candidates' word (decided, 18-20),
// a candidate that takes its slice announces it (claim bit and decided) and
// waits for all 16 ranges done.
// CHECK: memref.atomic_rmw addi %c1_i32{{.*}}, %{{.*}} : (i32, memref<8x1xi32>)
// CHECK: scf.while
// CHECK: scf.condition
// CHECK: nanosleep.u32
// CHECK: memref.atomic_rmw addi %c0_i32
// CHECK: arith.addi {{.*}}, %c262144_i32
// CHECK: memref.atomic_rmw addi
// CHECK: scf.while
// CHECK: gpu.barrier
// The merge, in 8 slices of 8 rows (one round of the 256 threads each): a
// block runs the slices its flag names, each task folding the 16 partials
// in one online pass, every (m, l) and O load in flight.
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c8{{.*}} step %c1
// CHECK: scf.for {{.*}} to %c16{{.*}} step %c16
// CHECK-COUNT-32: ld.global.cg.v{{[24]}}.f32
// CHECK-NOT: ld.global.cg
// CHECK: scf.yield
// The slices merged are counted; the block that completes 8 resets the
// counter (one that ran all 8 resets it without counting).
// CHECK: llvm.intr.ctpop
// CHECK: memref.store %c0_i32{{.*}} : memref<8x1xi32>
// CHECK: } else {
// CHECK: memref.atomic_rmw addi
// CHECK: memref.store %c0_i32{{.*}} : memref<8x1xi32>

// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: block = array<i64: 128, 1, 1>
// NOSPLIT-SAME: key_warps = 1
// NOSPLIT-SAME: splits = 1
// NOSPLIT-NOT: 68x32xf32

// FOUR-LABEL: attn.bundle = {
// FOUR-SAME: block = array<i64: 512, 1, 1>
// FOUR-SAME: 4 key warps per row tile (16 keys of each tile each, merged at the end)
// FOUR-SAME: key_warps = 4
// FOUR: memref<16x68x32xf32, #gpu.address_space<workgroup>>

// RANGE: error: key-warps must be 0 (the kernel's default) or in [1, 4], got 5
// TILE: error: key-warps = 4 needs tile-kv a multiple of 64 (16 keys per warp), got 32
func.func @speculative(%q: tensor<1x8x4x16x128xf16>, %k: tensor<1x8x32768x128xf16>, %v: tensor<1x8x32768x128xf16>, %o: tensor<1x8x4x16x128xf16>) -> tensor<1x8x4x16x128xf16> {
  %s = arith.constant 0.08838834764831843 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x8x4x16x128xf16>, tensor<1x8x32768x128xf16>, tensor<1x8x32768x128xf16>) scale(%s) outs(%o : tensor<1x8x4x16x128xf16>)
      causal query_offset = 32752 indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>] -> tensor<1x8x4x16x128xf16>
  return %r : tensor<1x8x4x16x128xf16>
}

// -----

// The same at 524288 keys: 16 ranges would keep 32768 keys each, so one
// key warp and 25 ranges.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: block = array<i64: 128, 1, 1>
// CHECK-SAME: grid = array<i64: 1, 8, 25>
// CHECK-SAME: key_warps = 1
// CHECK-NOT: 68x32xf32
// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: key_warps = 1
// FOUR-LABEL: attn.bundle = {
// FOUR-SAME: key_warps = 4
func.func @speculative_long(%q: tensor<1x8x4x16x128xf16>, %k: tensor<1x8x524288x128xf16>, %v: tensor<1x8x524288x128xf16>, %o: tensor<1x8x4x16x128xf16>) -> tensor<1x8x4x16x128xf16> {
  %s = arith.constant 0.08838834764831843 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x8x4x16x128xf16>, tensor<1x8x524288x128xf16>, tensor<1x8x524288x128xf16>) scale(%s) outs(%o : tensor<1x8x4x16x128xf16>)
      causal query_offset = 524272 indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>] -> tensor<1x8x4x16x128xf16>
  return %r : tensor<1x8x4x16x128xf16>
}

// -----

// Sixteen sequences: two ranges per tile (fewer than 4 slices would pay),
// so the last block merges alone, staged: the 64 rows x 2 partials' (m, l)
// into shared memory, the weights per row by four threads (xor shuffles),
// then O alone, weighted from shared memory.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: grid = array<i64: 1, 128, 2>
// CHECK-SAME: splits = 2
// CHECK: gpu.launch
// CHECK-NOT: memref.atomic_rmw
// CHECK: scf.for
// CHECK: memref.atomic_rmw addi
// CHECK-NOT: scf.while
// CHECK: memref.view {{.*}}[%c16{{.*}}] : memref<?xi8, #gpu.address_space<workgroup>> to memref<{{[0-9]+}}xf32, #gpu.address_space<workgroup>>
// CHECK: ld.global.cg.v2.f32
// CHECK: gpu.barrier
// CHECK: gpu.shuffle xor
// CHECK: ex2.approx.ftz.f32
// CHECK: gpu.barrier
// CHECK: ld.global.cg.v4.f32
// CHECK-NOT: llvm.intr.ctpop
// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: splits = 1
// FOUR-LABEL: attn.bundle = {
// FOUR-SAME: key_warps = 4
func.func @speculative_batch(%q: tensor<16x8x4x16x128xf16>, %k: tensor<16x8x32768x128xf16>, %v: tensor<16x8x32768x128xf16>, %o: tensor<16x8x4x16x128xf16>) -> tensor<16x8x4x16x128xf16> {
  %s = arith.constant 0.08838834764831843 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<16x8x4x16x128xf16>, tensor<16x8x32768x128xf16>, tensor<16x8x32768x128xf16>) scale(%s) outs(%o : tensor<16x8x4x16x128xf16>)
      causal query_offset = 32752 indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>] -> tensor<16x8x4x16x128xf16>
  return %r : tensor<16x8x4x16x128xf16>
}

// -----

// A full grid (16 x 32 heads, one token): no split, one key warp.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: block = array<i64: 32, 1, 1>
// CHECK-SAME: key_warps = 1
// CHECK-SAME: splits = 1
// NOSPLIT-LABEL: attn.bundle = {
// NOSPLIT-SAME: key_warps = 1
// FOUR-LABEL: attn.bundle = {
// FOUR-SAME: block = array<i64: 128, 1, 1>
func.func @decode_full(%q: tensor<16x32x1x128xf16>, %k: tensor<16x32x8192x128xf16>, %v: tensor<16x32x8192x128xf16>, %o: tensor<16x32x1x128xf16>) -> tensor<16x32x1x128xf16> {
  %s = arith.constant 0.08838834764831843 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<16x32x1x128xf16>, tensor<16x32x8192x128xf16>, tensor<16x32x8192x128xf16>) scale(%s) outs(%o : tensor<16x32x1x128xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<16x32x1x128xf16>
  return %r : tensor<16x32x1x128xf16>
}

// -----

// A prefill tile: on sm_90a the wgmma kernel (no key warps); on sm_80's
// mma.sync kernel key warps when asked (4 row warps x 4).
// CHECK-LABEL: attn.bundle = {
// CHECK-NOT: key_warps = {{[0-9]+}} :
// CHECK-SAME: mma = "wgmma"
// FOUR-LABEL: attn.bundle = {
// FOUR-SAME: block = array<i64: 512, 1, 1>
// FOUR-SAME: key_warps = 4
// FOUR: memref<16x{{[0-9]+}}x32xf32, #gpu.address_space<workgroup>>
func.func @prefill(%q: tensor<2x4x256x64xf16>, %k: tensor<2x4x1000x64xf16>, %v: tensor<2x4x1000x64xf16>, %o: tensor<2x4x256x64xf16>) -> tensor<2x4x256x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x64xf16>, tensor<2x4x1000x64xf16>, tensor<2x4x1000x64xf16>) scale(%s) outs(%o : tensor<2x4x256x64xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x256x64xf16>
  return %r : tensor<2x4x256x64xf16>
}
