// Persistent blocks on the warp-specialized Hopper kernel: one block per
// multiprocessor (at most one per query tile), each running the query tiles
// it takes from a counter in the workspace.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a persistent=0" | FileCheck %s --check-prefix=OFF
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a persistent=1 warp-specialize=0" 2>&1 | FileCheck %s --check-prefix=NOWS
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a persistent=1 wgmma=0" 2>&1 | FileCheck %s --check-prefix=NOWG
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a persistent=2" 2>&1 | FileCheck %s --check-prefix=BAD

// 288 causal query tiles (9 per head, 32 heads) on 132 blocks, by default
// (D = 128, N <= 8192, no mask tensor). The workspace tile_counter [2]
// (next tile, blocks done) follows the outputs; the launch is [132, 1, 1]
// (its rule: min(tiles, persistent) blocks); 24 more bytes of shared memory hold
// Q's empty barrier and the tile-number slots.
// Barriers: Q full counts 1 (thread 0's arrival after it wrote the
// tile's number, expecting Q's bytes from TMA; 129 with cp.async: its 128
// arrivals too), Q empty the 256 consumers. The producer warpgroup loops
// (scf.while) over its tiles: the first K/V tile, then Q once the
// consumers released it (parity wait; number to the slot; expect-tx
// arrival; Q's boxes), the other K/V tiles, then thread 0 takes
// the next number (atomic add; past the last tile it counts the block done,
// and the last block zeroes both counters), broadcast to the warpgroup
// through shared memory (bar.sync 8). The consumers loop on Q's full
// barrier and the slot until a number past the last tile, and store the
// output as 16-byte groups (no staging: the next tile is loading).
// CHECK-LABEL: module attributes
// CHECK-SAME: {dtype = "int32", map = "workspace", name = "tile_counter", shape = array<i64: 2>}
// CHECK-SAME: grid = array<i64: 132, 1, 1>
// CHECK-SAME: persistent: 132 blocks take the 288 query tiles from a counter
// CHECK-SAME: grid = "[min(ceil(m / tile_q) * b0 * b1, persistent), 1, 1]"
// CHECK-SAME: + 8 * (2 * stages + 1) * max(warp_specialize, tma) + 24"
// CHECK-SAME: persistent = 132 : i64
// CHECK-SAME: shared_bytes = 230480
// CHECK: func.func @attn_fwd({{.*}}, %[[CNT:.*]]: memref<2xi32>, %{{.*}}: memref<16xi64>, %{{.*}}: memref<16xi64>)
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c132, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK-COUNT-4: mbarrier.init.shared::cta.b64 [$0], $1;", "r,r" %{{.*}}, %c1_i32
// CHECK-COUNT-4: mbarrier.init.shared::cta.b64 [$0], $1;", "r,r" %{{.*}}, %c256_i32
// CHECK: "setmaxnreg.dec.sync.aligned.u32 40;"
// CHECK: scf.while
// CHECK: scf.for
// CHECK: cp.async.bulk.tensor.4d
// CHECK: mbarrier.try_wait.parity
// CHECK: "st.shared.u32 [$0], $1;"
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1;{{.*}}"r,r" %{{.*}}, %c32768_i32
// CHECK: cp.async.bulk.tensor.4d
// CHECK: scf.for
// CHECK: memref.atomic_rmw addi %{{.*}}, %[[CNT]][%c0{{.*}}]
// CHECK: memref.atomic_rmw addi %{{.*}}, %[[CNT]][%c1{{.*}}]
// CHECK: memref.atomic_rmw assign %{{.*}}, %[[CNT]]
// CHECK: memref.atomic_rmw assign %{{.*}}, %[[CNT]]
// CHECK: "st.shared.u32 [$0], $1;"
// CHECK: "bar.sync 8, 128;"
// CHECK: "ld.shared.u32 $0, [$1];"
// CHECK: "st.shared.u32 [$0], $1;"
// CHECK: mbarrier.arrive.shared::cta.b64
// CHECK-NOT: cp.async.mbarrier.arrive.noinc
// CHECK: "setmaxnreg.inc.sync.aligned.u32 232;"
// CHECK: scf.while
// CHECK: mbarrier.try_wait.parity
// CHECK: "fence.proxy.async.shared::cta;"
// CHECK: "ld.shared.u32 $0, [$1];"
// CHECK: scf.condition
// O starts undefined; a query tile's first P V overwrites it (scale-d 0).
// CHECK: llvm.mlir.poison : f32
// CHECK: wgmma.mma_async
// CHECK: %[[NOTFIRST:.*]] = arith.cmpi ne, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[ACC:.*]] = arith.extui %[[NOTFIRST]] : i1 to i32
// CHECK: setp.ne.b32 p, $69, 0;\0Awgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ACC]],
// CHECK: gpu.shuffle xor
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<4x8x1100x128xf16>, vector<8xf16>
// OFF-LABEL: module attributes
// OFF-NOT: tile_counter
// OFF-SAME: grid = array<i64: 9, 32, 1>
// OFF-SAME: a block per query tile (persistent=0)
// NOWS: error: persistent=1: it runs the warp-specialized, pipelined kernel (warp-specialize=1 pipeline=1)
// NOWG: error: persistent=1: persistent blocks are the Hopper warp-specialized kernel's; this attention gets the mma.sync kernel
// BAD: error: persistent must be -1 (default), 0 or 1, got 2
func.func @persistent(%q: tensor<4x8x1100x128xf16>, %k: tensor<4x8x1100x128xf16>, %v: tensor<4x8x1100x128xf16>, %o: tensor<4x8x1100x128xf16>) -> tensor<4x8x1100x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x8x1100x128xf16>, tensor<4x8x1100x128xf16>, tensor<4x8x1100x128xf16>)
      scale(%s) outs(%o : tensor<4x8x1100x128xf16>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<4x8x1100x128xf16>
  return %r : tensor<4x8x1100x128xf16>
}

// -----

// N = 512 without a mask: persistent blocks, which measured 1.10-1.27x the
// two-block kernel there; with persistent=0 the two-block kernel stays.
// CHECK-LABEL: module attributes
// CHECK-SAME: grid = array<i64: 132, 1, 1>
// CHECK-SAME: persistent: 132 blocks take the 256 query tiles from a counter
// OFF-LABEL: module attributes
// OFF-SAME: grid = array<i64: 4, 64, 1>
// OFF-SAME: min_blocks = 2
// OFF-SAME: warp_specialize = 0
func.func @short(%q: tensor<4x16x512x128xbf16>, %k: tensor<4x16x512x128xbf16>, %v: tensor<4x16x512x128xbf16>, %o: tensor<4x16x512x128xbf16>) -> tensor<4x16x512x128xbf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x16x512x128xbf16>, tensor<4x16x512x128xbf16>, tensor<4x16x512x128xbf16>)
      scale(%s) outs(%o : tensor<4x16x512x128xbf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<4x16x512x128xbf16>
  return %r : tensor<4x16x512x128xbf16>
}

// -----

// N = 16384 without a mask tensor or region: persistent too (log step 163).
// CHECK-LABEL: module attributes
// CHECK-SAME: grid = array<i64: 132, 1, 1>
// CHECK-SAME: persistent: 132 blocks take the 2048 query tiles from a counter
func.func @long(%q: tensor<1x16x16384x128xf16>, %k: tensor<1x16x16384x128xf16>, %v: tensor<1x16x16384x128xf16>, %o: tensor<1x16x16384x128xf16>) -> tensor<1x16x16384x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x16x16384x128xf16>, tensor<1x16x16384x128xf16>, tensor<1x16x16384x128xf16>)
      scale(%s) outs(%o : tensor<1x16x16384x128xf16>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<1x16x16384x128xf16>
  return %r : tensor<1x16x16384x128xf16>
}

// -----

// CHECK-LABEL: module attributes
// CHECK-NOT: tile_counter
// CHECK-SAME: min_blocks = 2
// CHECK-SAME: warp_specialize = 0
func.func @d64(%q: tensor<4x16x1024x64xf16>, %k: tensor<4x16x1024x64xf16>, %v: tensor<4x16x1024x64xf16>, %o: tensor<4x16x1024x64xf16>) -> tensor<4x16x1024x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x16x1024x64xf16>, tensor<4x16x1024x64xf16>, tensor<4x16x1024x64xf16>)
      scale(%s) outs(%o : tensor<4x16x1024x64xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<4x16x1024x64xf16>
  return %r : tensor<4x16x1024x64xf16>
}

// -----

// Dynamic sizes: the tile mapping's run-time divisors (query tiles per head,
// the causal head group, its heads) become multipliers made once, before the
// tile loop (clz, one 64-bit division each), and the producer divides each
// tile with a high multiply (the last head group, possibly smaller, with a
// plain division); the dynamic batch dim, the slowest, is what is left (no
// division). The producer publishes the tile's (query block, batch entry)
// with it (-1 past the last), so the consumers keep no multipliers. The
// first key tile takes its bounds only where it has masked keys (a uniform
// branch around the two softmax forms).
// CHECK-LABEL: module attributes
// CHECK-SAME: persistent: up to 132 blocks take the query tiles from a counter
// CHECK-COUNT-3: "clz.b32 $0, $1;"
// CHECK-NOT: "clz.b32 $0, $1;"
// CHECK: scf.while
// CHECK: arith.mului_extended
// CHECK: scf.if
// CHECK: arith.mului_extended
// CHECK: } else {
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: "st.shared.u32 [$0], $1;"
// CHECK: "st.shared.u32 [$0], $1;"
// CHECK: "st.shared.u32 [$0], $1;"
// CHECK: "setmaxnreg.inc.sync.aligned.u32 232;"
// CHECK: scf.while
// CHECK: %[[X:.*]] = llvm.inline_asm {{.*}}"ld.shared.u32 $0, [$1];"
// CHECK: %[[XI:.*]] = arith.index_cast %[[X]] : i32 to index
// CHECK: arith.cmpi ne, %[[XI]], %c-1 : index
// CHECK-NOT: arith.mului_extended
// CHECK: %[[FULL:.*]] = arith.cmpi ule
// CHECK: scf.if %[[FULL]] -> (
func.func @dynamic(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>, %o: tensor<?x16x?x128xf16>) -> tensor<?x16x?x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>)
      scale(%s) outs(%o : tensor<?x16x?x128xf16>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<?x16x?x128xf16>
  return %r : tensor<?x16x?x128xf16>
}

// -----

// Past D = 128 (Gemma's 256) without a mask tensor: 48-key tiles, three
// stages, the pipelined ping-pong loop (Q 64 KB + 3 x (K + V) 144 KB),
// persistent to N = 8192; with persistent=0 a block per query tile. The
// persistent kernel's wgmma descriptors are 32-bit start-address sums (one
// constant per k-step with the leading byte offset, a constant high word);
// a block per query tile keeps the 64-bit add, shift, mask and OR (log
// step 158).
// CHECK-LABEL: module attributes
// CHECK-SAME: 48-key tiles, 3 stages, Q/K/V by TMA, pipelined, ping-pong, persistent: 132 blocks take the 2048 query tiles from a counter
// CHECK-SAME: stages = 3
// CHECK-SAME: tile_kv = 48
// CHECK: gpu.launch
// CHECK: %[[BASE:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: %[[SUM:.*]] = arith.addi %[[BASE]], %{{.*}} : i32
// CHECK-NEXT: %[[LBO:.*]] = arith.constant 65536 : i32
// CHECK-NEXT: %[[F:.*]] = arith.addi %[[SUM]], %[[LBO]] : i32
// CHECK-NEXT: %[[W:.*]] = arith.extui %[[F]] : i32 to i64
// CHECK-NEXT: arith.constant 4611686293305294848 : i64
// CHECK-NEXT: arith.ori %[[W]], %{{.*}} : i64
// CHECK-NOT: arith.constant 16383 : i64
// CHECK: wgmma.mma_async
// OFF: 48-key tiles, 3 stages, Q/K/V by TMA, pipelined, ping-pong, a block per query tile
// OFF: %[[A:.*]] = arith.shrui %{{.*}}, %{{.*}} : i64
// OFF-NEXT: arith.constant 16383 : i64
// OFF-NEXT: arith.andi %[[A]], %{{.*}} : i64
// OFF-NEXT: arith.constant 4611686293305360384 : i64
func.func @d256(%q: tensor<4x16x4096x256xbf16>, %k: tensor<4x16x4096x256xbf16>, %v: tensor<4x16x4096x256xbf16>, %o: tensor<4x16x4096x256xbf16>) -> tensor<4x16x4096x256xbf16> {
  %s = arith.constant 0.0625 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x16x4096x256xbf16>, tensor<4x16x4096x256xbf16>, tensor<4x16x4096x256xbf16>)
      scale(%s) outs(%o : tensor<4x16x4096x256xbf16>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<4x16x4096x256xbf16>
  return %r : tensor<4x16x4096x256xbf16>
}

// -----

// ... and past N = 8192 too (log step 160).
// CHECK-LABEL: module attributes
// CHECK-SAME: 48-key tiles, 3 stages, Q/K/V by TMA, pipelined, ping-pong, persistent: 132 blocks take the 2048 query tiles from a counter
// OFF: 48-key tiles, 3 stages, Q/K/V by TMA, pipelined, ping-pong, a block per query tile
func.func @d256_long(%q: tensor<1x16x16384x256xf16>, %k: tensor<1x16x16384x256xf16>, %v: tensor<1x16x16384x256xf16>, %o: tensor<1x16x16384x256xf16>) -> tensor<1x16x16384x256xf16> {
  %s = arith.constant 0.0625 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x16x16384x256xf16>, tensor<1x16x16384x256xf16>, tensor<1x16x16384x256xf16>)
      scale(%s) outs(%o : tensor<1x16x16384x256xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<1x16x16384x256xf16>
  return %r : tensor<1x16x16384x256xf16>
}

// -----

// ... with a bias tensor (no room for its tile in three 48-key stages):
// 64-key tiles, 2 stages, a block per query tile.
// CHECK-LABEL: module attributes
// CHECK-SAME: 64-key tiles, 2 stages
// CHECK-NOT: persistent:
// CHECK-SAME: stages = 2
// CHECK-SAME: tile_kv = 64
func.func @d256_bias(%q: tensor<4x16x4096x256xbf16>, %k: tensor<4x16x4096x256xbf16>, %v: tensor<4x16x4096x256xbf16>, %m: tensor<16x4096x4096xbf16>, %o: tensor<4x16x4096x256xbf16>) -> tensor<4x16x4096x256xbf16> {
  %s = arith.constant 0.0625 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x16x4096x256xbf16>, tensor<4x16x4096x256xbf16>, tensor<4x16x4096x256xbf16>)
      scale(%s) mask(%m : tensor<16x4096x4096xbf16>) outs(%o : tensor<4x16x4096x256xbf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
                       affine_map<(b, h, m, n, d, e) -> (h, m, n)>]
      -> tensor<4x16x4096x256xbf16>
  return %r : tensor<4x16x4096x256xbf16>
}
