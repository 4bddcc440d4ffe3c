// The Hopper kernel of --convert-attn-to-gpu (chip=sm_90a): which
// attentions get it, its launch shape, and the errors of its options.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a wgmma=0" | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warps=4 tile-kv=64 stages=3" | FileCheck %s --check-prefix=W4
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a pipeline=1 tile-kv=64" | FileCheck %s --check-prefix=PIPE
// RUN: attn-opt %s --split-input-file --attn-gpu-pipeline="chip=sm_90a" | FileCheck %s --check-prefix=PTX
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warps=6" 2>&1 | FileCheck %s --check-prefix=BADW
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a tile-q=64" 2>&1 | FileCheck %s --check-prefix=BADQ
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a tile-kv=256 stages=4" 2>&1 | FileCheck %s --check-prefix=BADSMEM
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a wgmma=1" 2>&1 | FileCheck %s --check-prefix=REQ
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_70" 2>&1 | FileCheck %s --check-prefix=BADCHIP
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warp-specialize=1 tma=0" | FileCheck %s --check-prefix=WS
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warp-specialize=1" | FileCheck %s --check-prefix=TMA
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a tma=0" | FileCheck %s --check-prefix=CPA
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a tma=1 pipeline=1 tile-kv=64" 2>&1 | FileCheck %s --check-prefix=TMAREQ
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a tma=1 wgmma=0" 2>&1 | FileCheck %s --check-prefix=TMAMMA
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a tma=2" 2>&1 | FileCheck %s --check-prefix=TMABAD
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warp-specialize=1 pipeline=1 tile-kv=64" | FileCheck %s --check-prefix=WSPIPE
// RUN: attn-opt %s --split-input-file --attn-gpu-pipeline="chip=sm_90a warp-specialize=1" | FileCheck %s --check-prefix=WSPTX
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a wgmma=0 warp-specialize=1" | FileCheck %s --check-prefix=WSOFF
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warp-specialize=2" 2>&1 | FileCheck %s --check-prefix=WSBAD
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a pingpong=1" 2>&1 | FileCheck %s --check-prefix=PPBAD
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warp-specialize=1 pipeline=1 pingpong=0" | FileCheck %s --check-prefix=PPOFF

// f16, D = E = 64 on sm_90a: two warpgroups of 64 query rows (256
// threads), 128-key tiles, 2 stages. Shared memory is aligned to the
// 1024-byte swizzle pattern; Q and the K/V stages are 64-column panels in
// the 128-byte swizzle, written by TMA (thread 0: a box per panel from the
// tensor maps, completing on mbarriers with their byte counts: Q's
// 128 x 64 x 2, a stage's 2 x 128 x 64 x 2), or with tma=0 (CPA) by every
// thread's cp.async at swizzled chunks. Per key tile: a barrier (the stage
// of the tile before is free), thread 0 issues the tile a stage ahead
// where it is within the loop, every thread waits for this tile's full
// barrier (cp.async: waits for its own copies, fences them to the async
// proxy, then the barrier); then S = Q K^T as
// D/16 = 4 wgmma m64n128k16 from two descriptors (128-byte swizzle, 1024-byte
// atoms), the first without accumulating; commit, and a wait that passes the
// accumulators through; the online softmax; O += P V as 128/16 = 8 wgmma
// m64n64k16 with P from registers and V read transposed.
// CHECK: module attributes {attn.bundle = {{.*}}block = array<i64: 256, 1, 1>
// CHECK-SAME: grid = array<i64: 1, 8, 1>
// CHECK-SAME: mma = "wgmma"
// CHECK-SAME: shared_bytes = 82984
// CHECK-SAME: stages = 2
// CHECK-SAME: tensor_cores = true, tile_kv = 128 : i64, tile_q = 128 : i64, tma = 1 : i64, warp_specialize = 0 : i64, warps = 8
// CHECK-LABEL: func.func @attn_fwd
// Static sizes: no alignment request (the pad is a constant ptxas keeps
// without spilling; see convert-attn-to-gpu-dynamic.mlir).
// CHECK:   %[[SM:.*]] = gpu.dynamic_shared_memory :
// CHECK:   memref.extract_aligned_pointer_as_index %[[SM]]
// CHECK-COUNT-3: mbarrier.init.shared::cta.b64 [$0], $1;", "r,r" %{{.*}}, %c1_i32
// CHECK:   gpu.barrier
// CHECK:   scf.if
// CHECK:     mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1;{{.*}}"r,r" %{{.*}}, %c16384_i32
// CHECK:     cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK:   scf.if
// CHECK:     mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1;{{.*}}"r,r" %{{.*}}, %c32768_i32
// CHECK-COUNT-2: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK:   mbarrier.try_wait.parity
// CHECK:   scf.for
// CHECK:     gpu.barrier
// CHECK:     scf.if
// CHECK-COUNT-2: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK:     mbarrier.try_wait.parity
// CHECK-NOT: fence.proxy.async
// CHECK:     arith.constant 4611686293305360384 : i64
// CHECK:     "wgmma.fence.sync.aligned;"
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}} p, 1, 1, 0, 0;
// CHECK:     "wgmma.commit_group.sync.aligned;"
// CHECK:     "wgmma.wait_group.sync.aligned 0;", "=f,{{.*}},0,1,
// CHECK:     gpu.shuffle xor
// CHECK:     nvvm.vote.sync any
// CHECK:     "wgmma.fence.sync.aligned;"
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
// CHECK:     "wgmma.commit_group.sync.aligned;"
// CHECK:     "wgmma.wait_group.sync.aligned 0;"
// CHECK:     scf.yield
// CHECK:   arith.divf
// CHECK:   vector.store %{{.*}} {alignment = 16 : i64} : memref<2x4x100x64xf16>, vector<8xf16>

// CPA-LABEL: module attributes
// CPA-SAME: shared_bytes = 82944
// CPA-LABEL: func.func @attn_fwd
// CPA:   %[[QT:.*]] = memref.view %{{.*}}[%{{.*}}][] : {{.*}} to memref<1x128x64xf16, #gpu.address_space<workgroup>>
// CPA:   %[[KT:.*]] = memref.view %{{.*}}[%{{.*}}][] : {{.*}} to memref<2x1x128x64xf16, #gpu.address_space<workgroup>>
// CPA:   %[[VT:.*]] = memref.view %{{.*}}[%{{.*}}][] : {{.*}} to memref<2x1x128x64xf16, #gpu.address_space<workgroup>>
// CPA:   arith.xori
// CPA:   memref.extract_aligned_pointer_as_index %[[QT]]
// CPA:   llvm.inline_asm has_side_effects {{.*}}"cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// CPA:   memref.extract_aligned_pointer_as_index %[[KT]]
// CPA:   llvm.inline_asm has_side_effects {{.*}}"cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// CPA:   memref.extract_aligned_pointer_as_index %[[VT]]
// CPA:   llvm.inline_asm has_side_effects {{.*}}"cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// CPA:   nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CPA:   llvm.inline_asm has_side_effects {{.*}} "fence.proxy.async.shared::cta;"
// CPA:   gpu.barrier
// CPA:   scf.for
// CPA:     nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CPA:     "fence.proxy.async.shared::cta;"
// CPA:     gpu.barrier
// CPA:     nvgpu.device_async_create_group

// sm_80 (the pass's default chip) and wgmma=0 keep the mma.sync kernel.
// SM80: mma = "mma.sync"
// SM80-NOT: wgmma.{{(mma_async|fence|commit|wait)}}
// OFF: mma = "mma.sync"
// OFF-NOT: wgmma.{{(mma_async|fence|commit|wait)}}

// One warpgroup (tile-q = 64), 64-key tiles, 3 stages.
// W4: block = array<i64: 128, 1, 1>
// W4-SAME: grid = array<i64: 2, 8, 1>
// W4-SAME: shared_bytes = 58424
// W4-SAME: stages = 3
// W4-SAME: tile_kv = 64 : i64, tile_q = 64 : i64, tma = 1 : i64, warp_specialize = 0 : i64, warps = 4
// W4: wgmma.mma_async.sync.aligned.m64n64k16

// pipeline=1 (3 stages): the first tile's S and softmax before the loop;
// each iteration issues S of tile t and P V of tile t - 1 as two groups,
// waits for the older one (S), votes and forms P while P V runs, then waits
// for O; the last tile's P V after the loop.
// PIPE: pipeline = true
// PIPE-SAME: stages = 3
// PIPE: scf.if
// PIPE:   nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// PIPE-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}} p, 1, 1, 0, 0;
// PIPE:   "wgmma.wait_group.sync.aligned 0;"
// PIPE: scf.for
// PIPE:   nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// PIPE:   "wgmma.fence.sync.aligned;"
// PIPE-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}} p, 1, 1, 0, 0;
// PIPE:   "wgmma.commit_group.sync.aligned;"
// PIPE-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}} p, 1, 1, 1;
// PIPE:   "wgmma.commit_group.sync.aligned;"
// PIPE:   "wgmma.wait_group.sync.aligned 1;"
// PIPE:   nvvm.vote.sync any
// PIPE:   "wgmma.wait_group.sync.aligned 0;"
// PIPE:   scf.yield
// PIPE: scf.for
// PIPE: scf.if
// PIPE:   "wgmma.fence.sync.aligned;"
// PIPE-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}} p, 1, 1, 1;
// PIPE:   "wgmma.wait_group.sync.aligned 0;"
// PIPE: arith.divf

// PTX: .target sm_90a
// PTX-SAME: .minnctapersm 2
// The dynamic shared memory keeps convert-gpu-to-nvvm's 16-byte global.
// PTX-SAME: .shared .align 16 .b8 __dynamic_shmem__0
// PTX-SAME: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-SAME: wgmma.fence.sync.aligned
// PTX-SAME: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// PTX-SAME: wgmma.commit_group.sync.aligned
// PTX-SAME: wgmma.wait_group.sync.aligned 0

// warp-specialize=1 tma=0: a third warpgroup (threads 256-383) only copies; one
// block per multiprocessor (min_blocks 1: the register cap at entry that
// setmaxnreg needs). Thread 0 initializes the mbarriers (Q full; full and
// empty per stage) before a block barrier; the producer gives registers
// back (168 -> 88), loads Q and then every key tile into stage t % 2 after
// waiting for it to be empty, each thread's copies arriving on the stage's
// full barrier as they land; the consumers take the registers (-> 208),
// wait for Q, and per tile wait for full, fence the async proxy, run the
// same S / softmax / P V, and arrive on empty. The output is staged after
// a named barrier over the 256 consumer threads only.
// WS-LABEL: module attributes
// WS-SAME: block = array<i64: 384, 1, 1>
// WS-SAME: K/V by cp.async (tma=0)
// WS-SAME: min_blocks = 1
// WS-SAME: shared_bytes = 82984
// WS-SAME: tile_kv = 128 : i64, tile_q = 128 : i64, tma = 0 : i64, warp_specialize = 1 : i64, warps = 8
// WS: gpu.launch
// WS-SAME: threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c384
// WS: scf.if
// WS-COUNT-5: mbarrier.init.shared::cta.b64
// WS: gpu.barrier
// WS: scf.if
// WS: "setmaxnreg.dec.sync.aligned.u32 88;"
// WS: llvm.inline_asm has_side_effects {{.*}}"cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// WS: cp.async.mbarrier.arrive.noinc.shared::cta.b64
// WS: scf.for
// WS:   scf.while
// WS:     mbarrier.try_wait.parity.shared::cta.b64
// WS:   llvm.inline_asm has_side_effects {{.*}}"cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// WS:   cp.async.mbarrier.arrive.noinc.shared::cta.b64
// WS: "cp.async.wait_all;"
// WS: } else {
// WS: "setmaxnreg.inc.sync.aligned.u32 208;"
// WS: mbarrier.try_wait.parity
// WS: "fence.proxy.async.shared::cta;"
// WS: scf.for
// WS:   mbarrier.try_wait.parity
// WS:   "fence.proxy.async.shared::cta;"
// WS-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}} p, 1, 1, 0, 0;
// WS:   "wgmma.wait_group.sync.aligned 0;"
// WS:   wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}} p, 1, 1, 1;
// WS:   "wgmma.wait_group.sync.aligned 0;"
// WS:   mbarrier.arrive.shared::cta.b64
// WS:   scf.yield
// WS: "bar.sync 1, 256;"
// WS-NOT: gpu.barrier
// WS: arith.divf
// WS: "bar.sync 1, 256;"
// WS: gpu.terminator

// warp-specialize=1 with TMA (the default where it applies): Q, K and V
// come with the tensor memory accelerator. Three more kernel arguments,
// the tensor maps of Q, K and V (int64[16], encoded by the launcher, box:
// one block's 128 rows or one key tile, of 64 columns, per (b, h)); Q's
// full barrier and the stages' count one arrival (the TMA thread's, which
// expects Q's 128 x 64 x 2 bytes or the stage's 2 x 128 x 64 x 2), the
// empty ones the consumers'. Producer thread 0 prefetches Q's first row
// into L2 (Q stays the kernel's first parameter), expects Q's bytes and
// issues one 4-d box per 64-column panel of Q (one here), prefetches the K/V maps
// (and their first rows), then per tile waits for empty, expects the bytes
// and issues one 4-d box copy per 64-column panel of K and V onto the full
// barrier. Consumers wait for full without a proxy fence (TMA writes
// through the async proxy).
// TMA-LABEL: module attributes
// TMA-SAME: {box = array<i64: 1, 1, 128, 64>, dtype = "int64", map = "tensormap", name = "tmap_q", shape = array<i64: 16>, tensor = "q"}
// TMA-SAME: {box = array<i64: 1, 1, 128, 64>, dtype = "int64", map = "tensormap", name = "tmap_k", shape = array<i64: 16>, tensor = "k"}
// TMA-SAME: {box = array<i64: 1, 1, 128, 64>, dtype = "int64", map = "tensormap", name = "tmap_v", shape = array<i64: 16>, tensor = "v"}
// TMA-SAME: Q/K/V by TMA
// TMA: func.func @attn_fwd(%{{.*}}, %[[TQ:.*]]: memref<16xi64>, %[[TK:.*]]: memref<16xi64>, %[[TV:.*]]: memref<16xi64>)
// TMA-COUNT-3: mbarrier.init.shared::cta.b64 [$0], $1;", "r,r" %{{.*}}, %c1_i32
// TMA: mbarrier.init.shared::cta.b64 [$0], $1;", "r,r" %{{.*}}, %c256_i32
// TMA: "setmaxnreg.dec.sync.aligned.u32 40;"
// TMA: scf.if
// TMA:   "prefetch.global.L2 [$0];"
// TMA:   mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1;{{.*}}"r,r" %{{.*}}, %c16384_i32
// TMA:   cp.async.bulk.tensor.4d
// TMA-NOT: cp.async.bulk.tensor
// TMA: scf.if
// TMA:   "prefetch.tensormap [$0];"
// TMA:   "prefetch.global.L2 [$0];"
// TMA:   "prefetch.tensormap [$0];"
// TMA:   "prefetch.global.L2 [$0];"
// TMA: scf.for
// TMA:   mbarrier.try_wait.parity.shared::cta.b64
// TMA:   scf.if
// TMA:     mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1;{{.*}}"r,r" %{{.*}}, %c32768_i32
// TMA:     cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4, $5}], [$6];"
// TMA-NOT: cp.async.bulk.tensor
// TMA:   cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// TMA-NOT: cp.async.bulk.tensor
// TMA:   scf.yield
// TMA: "cp.async.wait_all;"
// TMA: } else {
// TMA: "setmaxnreg.inc.sync.aligned.u32 232;"
// TMA: "fence.proxy.async.shared::cta;"
// TMA: scf.for
// TMA:   mbarrier.try_wait.parity
// TMA-NOT: fence.proxy.async
// TMA:   wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// TMAREQ: error: tma=1: the pipelined two-block kernel loads K/V with cp.async
// TMAMMA: error: tma=1: TMA loads are the Hopper (wgmma) kernel's; this attention gets the mma.sync kernel
// TMABAD: error: tma must be -1 (default), 0 or 1, got 2

// Warp-specialized and pipelined: the first tile waits for full before its
// S; each iteration waits for tile t, and frees tile t - 1 (empty) once its
// P V has been waited for. The two computing warpgroups take turns (named
// barriers 2 and 3): warpgroup 1 hands the first turn over, each waits for
// its turn before issuing its wgmma and passes it on after committing them,
// and warpgroup 0 takes the last turn after the loop.
// WSPIPE-LABEL: module attributes
// WSPIPE-SAME: pingpong = true
// WSPIPE-SAME: pipeline = true
// WSPIPE-SAME: stages = 3
// WSPIPE: "setmaxnreg.inc.sync.aligned.u32 232;"
// WSPIPE: scf.if
// WSPIPE:   "bar.arrive 2, 256;"
// WSPIPE: scf.if
// WSPIPE:   mbarrier.try_wait.parity
// WSPIPE:   "fence.proxy.async.shared::cta;"
// WSPIPE:   "bar.sync $0, 256;"
// WSPIPE-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}} p, 1, 1, 0, 0;
// WSPIPE:   "wgmma.commit_group.sync.aligned;"
// WSPIPE:   "bar.arrive $0, 256;"
// WSPIPE: scf.for
// WSPIPE:   mbarrier.try_wait.parity
// WSPIPE:   "bar.sync $0, 256;"
// WSPIPE:   "bar.arrive $0, 256;"
// WSPIPE:   "wgmma.wait_group.sync.aligned 1;"
// WSPIPE:   nvvm.vote.sync any
// WSPIPE:   "wgmma.wait_group.sync.aligned 0;"
// WSPIPE:   mbarrier.arrive.shared::cta.b64
// WSPIPE:   scf.yield
// WSPIPE: scf.if
// WSPIPE:   "bar.sync 2, 256;"
// PPOFF-LABEL: module attributes
// PPOFF-SAME: pingpong = false
// PPOFF-NOT: bar.arrive
// PPBAD: error: pingpong=1 needs the warp-specialized, pipelined kernel with two computing warpgroups (warp-specialize=1 pipeline=1 warps=8)

// ptxas sees 384 threads and one block: a 168-register cap at entry.
// WSPTX: .target sm_90a
// WSPTX-SAME: .maxntid 384, 1, 1
// WSPTX-SAME: .minnctapersm 1
// WSPTX-SAME: setmaxnreg.dec.sync.aligned.u32 40
// WSPTX-SAME: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// WSPTX-SAME: prefetch.tensormap
// WSPTX-SAME: setmaxnreg.inc.sync.aligned.u32 232

// warp-specialize applies to the wgmma kernel only (like q-shared to the
// mma.sync one): ignored where another kernel runs.
// WSOFF: mma = "mma.sync"
// WSOFF-NOT: setmaxnreg
// WSBAD: error: warp-specialize must be -1 (default), 0 or 1, got 2

// BADW: error: the wgmma kernel takes warps = 4, 8 or 12 (one warpgroup per 64 query rows), got 6
// BADQ: error: the wgmma kernel takes tile-q = 16 x warps = 128, got 64
// BADSMEM: error: the wgmma kernel needs 279552 bytes of shared memory (tile-kv = 256, stages = 4, D = 64, E = 64); the limit is 232448 (sm_90a)
// BADCHIP: error: chip must be sm_80 or sm_90a, got 'sm_70'
func.func @attention(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x100x64xf16>, %v: tensor<2x4x100x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x100x64xf16>, tensor<2x4x100x64xf16>)
      scale(%s) outs(%o : tensor<2x4x100x64xf16>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}

// -----

// D = 128, E = 64 (bf16): two Q/K panels (k-steps 4-7 read the second one),
// one V panel; the default for D = 128 is 64-key tiles. Both kernels ask
// ptxas for two resident blocks (min_blocks, read by attn-gpu-occupancy).
// CHECK-LABEL: module attributes
// CHECK-SAME: min_blocks = 2
// CHECK-SAME: mma = "wgmma"
// CHECK-SAME: shared_bytes = 82984
// CHECK-SAME: tile_kv = 64
// CHECK: memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref<2x2x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK: memref<2x1x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}} p, 1, 1, 0, 0;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}} p, 1, 1, 1;
// REQ-LABEL: module attributes
// REQ-SAME: mma = "wgmma"
func.func @attention(%q: tensor<2x130x128xbf16>, %k: tensor<2x333x128xbf16>, %v: tensor<2x333x64xbf16>, %o: tensor<2x130x64xbf16>) -> tensor<2x130x64xbf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x130x128xbf16>, tensor<2x333x128xbf16>, tensor<2x333x64xbf16>)
      scale(%s) outs(%o : tensor<2x130x64xbf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<2x130x64xbf16>
  return %r : tensor<2x130x64xbf16>
}

// -----

// E = 32 is half a 64-column panel: the wgmma kernel holds V in one panel,
// half used, and P V is one m64n32k16 per 16 keys.
// CHECK-LABEL: module attributes
// CHECK-SAME: mma = "wgmma"
// CHECK: wgmma.mma_async.sync.aligned.m64n32k16
func.func @attention(%q: tensor<2x33x64xf16>, %k: tensor<2x47x64xf16>, %v: tensor<2x47x32xf16>, %o: tensor<2x33x32xf16>) -> tensor<2x33x32xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x33x64xf16>, tensor<2x47x64xf16>, tensor<2x47x32xf16>)
      scale(%s) outs(%o : tensor<2x33x32xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<2x33x32xf16>
  return %r : tensor<2x33x32xf16>
}

// -----

// f16 inputs accumulating into an f32 output take no tensor-core kernel:
// wgmma=1 says why it cannot comply.
// CHECK-LABEL: module attributes
// CHECK-SAME: mma = "none"
// REQ: convert-attn-to-gpu-wgmma.mlir:[[# @LINE + 3]]:8: error: wgmma=1: the wgmma kernel needs chip=sm_90a, f16/bf16 inputs and output, D and E multiples of 16 up to 256, contiguous head dims: the output is f32, q f16 (one element type throughout)
func.func @attention(%q: tensor<2x33x64xf16>, %k: tensor<2x47x64xf16>, %v: tensor<2x47x64xf16>, %o: tensor<2x33x64xf32>) -> tensor<2x33x64xf32> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x33x64xf16>, tensor<2x47x64xf16>, tensor<2x47x64xf16>)
      scale(%s) outs(%o : tensor<2x33x64xf32>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<2x33x64xf32>
  return %r : tensor<2x33x64xf32>
}

// -----

// The default launch shape at D = 128 (static 1024 <= N <= 16384, K/V by
// TMA): warp-specialized, pipelined, 128-key tiles, 3 stages.
// CHECK-LABEL: module attributes
// CHECK-SAME: block = array<i64: 384, 1, 1>
// CHECK-SAME: min_blocks = 1
// CHECK-SAME: pingpong = true
// CHECK-SAME: pipeline = true
// CHECK-SAME: stages = 3
// CHECK-SAME: tile_kv = 128 : i64, tile_q = 128 : i64, tma = {{[01]}} : i64, warp_specialize = 1 : i64, warps = 8
// CHECK: setmaxnreg.dec.sync.aligned.u32 40
func.func @attention(%q: tensor<1x256x128xf16>, %k: tensor<1x4096x128xf16>, %v: tensor<1x4096x128xf16>, %o: tensor<1x256x128xf16>) -> tensor<1x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xf16>, tensor<1x4096x128xf16>, tensor<1x4096x128xf16>)
      scale(%s) outs(%o : tensor<1x256x128xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<1x256x128xf16>
  return %r : tensor<1x256x128xf16>
}

// -----

// Causal too (TMA; 1.12-1.40x the two-block kernel at N >= 4096).
// CHECK-LABEL: module attributes
// CHECK-SAME: block = array<i64: 384, 1, 1>
// CHECK-SAME: Q/K/V by TMA
// CHECK-SAME: tile_kv = 128 : i64, tile_q = 128 : i64, tma = {{[01]}} : i64, warp_specialize = 1 : i64
func.func @attention(%q: tensor<1x256x128xf16>, %k: tensor<1x4096x128xf16>, %v: tensor<1x4096x128xf16>, %o: tensor<1x256x128xf16>) -> tensor<1x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xf16>, tensor<1x4096x128xf16>, tensor<1x4096x128xf16>)
      scale(%s) outs(%o : tensor<1x256x128xf16>) causal
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<1x256x128xf16>
  return %r : tensor<1x256x128xf16>
}

// -----

// 512 <= N < 1024 without a mask tensor: the warp-specialized kernel with
// persistent blocks (1.10-1.27x the two-block kernel at N = 512): as many
// blocks as query tiles here, the tile counter in the workspace.
// CHECK-LABEL: module attributes
// CHECK-SAME: name = "tile_counter", shape = array<i64: 2>
// CHECK-SAME: block = array<i64: 384, 1, 1>
// CHECK-SAME: grid = array<i64: 2, 1, 1>
// CHECK-SAME: persistent: 2 blocks take the 2 query tiles from a counter
// CHECK-SAME: grid = "[min(ceil(m / tile_q) * b0, persistent), 1, 1]"
// CHECK-SAME: persistent = 2 : i64
func.func @attention(%q: tensor<1x256x128xf16>, %k: tensor<1x1023x128xf16>, %v: tensor<1x1023x128xf16>, %o: tensor<1x256x128xf16>) -> tensor<1x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xf16>, tensor<1x1023x128xf16>, tensor<1x1023x128xf16>)
      scale(%s) outs(%o : tensor<1x256x128xf16>) causal
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<1x256x128xf16>
  return %r : tensor<1x256x128xf16>
}

// -----

// N < 512 (not measured with persistent blocks): two blocks of two
// warpgroups per multiprocessor, 64-key tiles.
// CHECK-LABEL: module attributes
// CHECK-SAME: block = array<i64: 256, 1, 1>
// CHECK-SAME: min_blocks = 2
// CHECK-SAME: tile_kv = 64 : i64, tile_q = 128 : i64, tma = {{[01]}} : i64, warp_specialize = 0 : i64
func.func @attention(%q: tensor<1x256x128xf16>, %k: tensor<1x511x128xf16>, %v: tensor<1x511x128xf16>, %o: tensor<1x256x128xf16>) -> tensor<1x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xf16>, tensor<1x511x128xf16>, tensor<1x511x128xf16>)
      scale(%s) outs(%o : tensor<1x256x128xf16>) causal
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<1x256x128xf16>
  return %r : tensor<1x256x128xf16>
}

// -----

// D = 80 non-causal below N = 4096 (0.92-0.93x at N = 1024): the two-block
// kernel; a causal window at D = 128: persistent warp-specialized blocks
// (1.05-1.28x the two-block kernel, log step 182); D = 80 causal from
// N = 1024.
// CHECK-LABEL: module attributes
// CHECK-SAME: warp_specialize = 0 : i64
// CHECK-LABEL: module attributes
// CHECK-SAME: persistent = 2 : i64
// CHECK-SAME: warp_specialize = 1 : i64
// CHECK-LABEL: module attributes
// CHECK-SAME: warp_specialize = 1 : i64
func.func @attention(%q: tensor<1x256x80xf16>, %k: tensor<1x2048x80xf16>, %v: tensor<1x2048x80xf16>, %o: tensor<1x256x80xf16>) -> tensor<1x256x80xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x80xf16>, tensor<1x2048x80xf16>, tensor<1x2048x80xf16>)
      scale(%s) outs(%o : tensor<1x256x80xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<1x256x80xf16>
  return %r : tensor<1x256x80xf16>
}

// -----

func.func @attention(%q: tensor<1x256x128xf16>, %k: tensor<1x4096x128xf16>, %v: tensor<1x4096x128xf16>, %o: tensor<1x256x128xf16>) -> tensor<1x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xf16>, tensor<1x4096x128xf16>, tensor<1x4096x128xf16>)
      scale(%s) outs(%o : tensor<1x256x128xf16>) causal window = 512
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<1x256x128xf16>
  return %r : tensor<1x256x128xf16>
}

// -----

func.func @attention(%q: tensor<1x256x80xf16>, %k: tensor<1x2048x80xf16>, %v: tensor<1x2048x80xf16>, %o: tensor<1x256x80xf16>) -> tensor<1x256x80xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x80xf16>, tensor<1x2048x80xf16>, tensor<1x2048x80xf16>)
      scale(%s) outs(%o : tensor<1x256x80xf16>) causal
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<1x256x80xf16>
  return %r : tensor<1x256x80xf16>
}

// -----

// N > 16384 with TMA (1.18-1.29x at N = 32768-131072): warp-specialized.
// CHECK-LABEL: module attributes
// CHECK-SAME: block = array<i64: 384, 1, 1>
// CHECK-SAME: tile_kv = 128 : i64, tile_q = 128 : i64, tma = {{[01]}} : i64, warp_specialize = 1 : i64
func.func @attention(%q: tensor<1x256x128xf16>, %k: tensor<1x16400x128xf16>, %v: tensor<1x16400x128xf16>, %o: tensor<1x256x128xf16>) -> tensor<1x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xf16>, tensor<1x16400x128xf16>, tensor<1x16400x128xf16>)
      scale(%s) outs(%o : tensor<1x256x128xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<1x256x128xf16>
  return %r : tensor<1x256x128xf16>
}

// -----

// A 16-bit bias over (m, n) at the warp-specialized default past N = 8192
// (D = 128, N = 16384; up to 8192 persistent blocks: the next case): V a
// tile behind K in each stage, so that two 128-key stages keep the loop a
// tile ahead and each holds the block's 128 x 128 bias tile (two 128-byte
// panels of 64 keys, 256-byte rows unpadded): thread 0 loads Q, K, the
// bias tile and (from the second stage) V of the tile before by TMA onto
// the stage's full barrier (one expect-tx arrival: K and the bias, plus V
// past the first), then one stage with the last tile's V alone; the
// consumers read the fragments once full has flipped.
// CHECK-LABEL: module attributes
// CHECK-SAME: {box = array<i64: 1, 128, 64>, dtype = "int64", map = "tensormap", name = "tmap_mask", shape = array<i64: 16>, tensor = "mask"}
// CHECK-SAME: block = array<i64: 384, 1, 1>
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup (mbarriers, setmaxnreg 40/232), 128-key tiles, 2 stages, Q/K/V and the mask by TMA, mask tiles staged in shared memory (in the K/V stages), pipelined, V a tile behind K in each stage, ping-pong, a block per query tile (persistent: not faster measured here), 1 block(s) per multiprocessor"
// CHECK-SAME: mask_row_bytes = 256
// CHECK-SAME: shared_bytes = 231424
// CHECK: mbarrier.init.shared::cta.b64 [$0], $1;", "r,r" %{{.*}}, %c1_i32
// CHECK: "setmaxnreg.dec.sync.aligned.u32 40;"
// CHECK: scf.for
// CHECK:   mbarrier.try_wait.parity
// CHECK:   %[[BYTES:.*]] = arith.select %{{.*}}, %c98304_i32, %c65536_i32 : i32
// CHECK:   mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1;{{.*}}"r,r" %{{.*}}, %[[BYTES]]
// CHECK-COUNT-4: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK:   scf.if
// CHECK-COUNT-2: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 st, [$0], $1;{{.*}}"r,r" %{{.*}}, %c32768_i32
// CHECK-COUNT-2: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: } else {
// CHECK: "setmaxnreg.inc.sync.aligned.u32 232;"
// CHECK-NOT: nvgpu.device_async_copy
// CHECK-NOT: nvgpu.device_async_wait
// CHECK: vector.load {{.*}} : memref<512x64xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-NOT: nvgpu.device_async_wait
// CHECK: gpu.terminator
func.func @attention(%q: tensor<1x256x128xf16>, %k: tensor<1x16384x128xf16>, %v: tensor<1x16384x128xf16>, %bias: tensor<1x256x16384xf16>, %o: tensor<1x256x128xf16>) -> tensor<1x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xf16>, tensor<1x16384x128xf16>, tensor<1x16384x128xf16>)
      scale(%s) mask(%bias : tensor<1x256x16384xf16>) outs(%o : tensor<1x256x128xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>,
                       affine_map<(b, m, n, d, e) -> (b, m, n)>]
      -> tensor<1x256x128xf16>
  return %r : tensor<1x256x128xf16>
}

// -----

// A bias over (m, n) at N = 4096 (1024 <= N <= 8192): persistent blocks
// with two computing warpgroups (log step 73: 1.01-1.06x the block per
// query tile, causal 1.09-1.13x), the bias tile still in the K/V stages.
// CHECK-LABEL: module attributes
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup (mbarriers, setmaxnreg 40/232), 128-key tiles, 2 stages, Q/K/V and the mask by TMA, mask tiles staged in shared memory (in the K/V stages), pipelined, V a tile behind K in each stage, ping-pong, persistent: 2 blocks take the 2 query tiles from a counter, 1 block(s) per multiprocessor"
func.func @attention(%q: tensor<1x256x128xf16>, %k: tensor<1x4096x128xf16>, %v: tensor<1x4096x128xf16>, %bias: tensor<1x256x4096xf16>, %o: tensor<1x256x128xf16>) -> tensor<1x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xf16>, tensor<1x4096x128xf16>, tensor<1x4096x128xf16>)
      scale(%s) mask(%bias : tensor<1x256x4096xf16>) outs(%o : tensor<1x256x128xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>,
                       affine_map<(b, m, n, d, e) -> (b, m, n)>]
      -> tensor<1x256x128xf16>
  return %r : tensor<1x256x128xf16>
}

// -----

// The same bias at N = 1024: the warp-specialized kernel with the bias in
// its K/V stages (measured 1.13-1.18x the two-block kernel, which reads the
// bias fragments from global memory), two computing warpgroups there.
// CHECK-LABEL: module attributes
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup {{.*}}, 128-key tiles, 2 stages, Q/K/V and the mask by TMA, mask tiles staged in shared memory (in the K/V stages), pipelined, V a tile behind K in each stage, ping-pong
func.func @attention(%q: tensor<1x256x128xf16>, %k: tensor<1x1024x128xf16>, %v: tensor<1x1024x128xf16>, %bias: tensor<1x256x1024xf16>, %o: tensor<1x256x128xf16>) -> tensor<1x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xf16>, tensor<1x1024x128xf16>, tensor<1x1024x128xf16>)
      scale(%s) mask(%bias : tensor<1x256x1024xf16>) outs(%o : tensor<1x256x128xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>,
                       affine_map<(b, m, n, d, e) -> (b, m, n)>]
      -> tensor<1x256x128xf16>
  return %r : tensor<1x256x128xf16>
}

// -----

// The bias under causal at N = 4096: the ring with TMA K/V and two
// computing warpgroups (1.23-1.38x the two-block kernel; three measured
// less).
// CHECK-LABEL: module attributes
// CHECK-SAME: causal = true
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup {{.*}}, 128-key tiles, 2 stages, Q/K/V and the mask by TMA, mask tiles staged in shared memory (in the K/V stages), pipelined, V a tile behind K in each stage, ping-pong
func.func @attention(%q: tensor<1x256x128xf16>, %k: tensor<1x4096x128xf16>, %v: tensor<1x4096x128xf16>, %bias: tensor<1x256x4096xf16>, %o: tensor<1x256x128xf16>) -> tensor<1x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xf16>, tensor<1x4096x128xf16>, tensor<1x4096x128xf16>)
      scale(%s) mask(%bias : tensor<1x256x4096xf16>) outs(%o : tensor<1x256x128xf16>) causal
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>,
                       affine_map<(b, m, n, d, e) -> (b, m, n)>]
      -> tensor<1x256x128xf16>
  return %r : tensor<1x256x128xf16>
}

// -----

// N = 512 (below 1024, not measured): the two-block kernel.
// CHECK-LABEL: module attributes
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, 64-key tiles, 2 stages, Q/K/V by TMA, 2 block(s) per multiprocessor"
func.func @attention(%q: tensor<1x256x128xf16>, %k: tensor<1x512x128xf16>, %v: tensor<1x512x128xf16>, %bias: tensor<1x256x512xf16>, %o: tensor<1x256x128xf16>) -> tensor<1x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xf16>, tensor<1x512x128xf16>, tensor<1x512x128xf16>)
      scale(%s) mask(%bias : tensor<1x256x512xf16>) outs(%o : tensor<1x256x128xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>,
                       affine_map<(b, m, n, d, e) -> (b, m, n)>]
      -> tensor<1x256x128xf16>
  return %r : tensor<1x256x128xf16>
}

// -----

// D = 64, non-causal, N = 16384: the two-block kernel with TMA (measured
// 1.01-1.07x three computing warpgroups of 192 rows here, log step 64;
// those: convert-attn-to-gpu-wgmma-w12.mlir).
// CHECK-LABEL: module attributes
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, 128-key tiles, 2 stages, Q/K/V by TMA, 2 block(s) per multiprocessor"
func.func @attention(%q: tensor<2x384x64xbf16>, %k: tensor<2x16384x64xbf16>, %v: tensor<2x16384x64xbf16>, %o: tensor<2x384x64xbf16>) -> tensor<2x384x64xbf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x384x64xbf16>, tensor<2x16384x64xbf16>, tensor<2x16384x64xbf16>)
      scale(%s) outs(%o : tensor<2x384x64xbf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<2x384x64xbf16>
  return %r : tensor<2x384x64xbf16>
}

// -----

// The same at N = 8192: the two-block kernel.
// CHECK-LABEL: module attributes
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, 128-key tiles, 2 stages, Q/K/V by TMA, 2 block(s) per multiprocessor"
func.func @attention(%q: tensor<2x384x64xbf16>, %k: tensor<2x8192x64xbf16>, %v: tensor<2x8192x64xbf16>, %o: tensor<2x384x64xbf16>) -> tensor<2x384x64xbf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x384x64xbf16>, tensor<2x8192x64xbf16>, tensor<2x8192x64xbf16>)
      scale(%s) outs(%o : tensor<2x384x64xbf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<2x384x64xbf16>
  return %r : tensor<2x384x64xbf16>
}

// -----

// And causal at N = 16384: the two-block kernel.
// CHECK-LABEL: module attributes
// CHECK-SAME: causal = true
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, 128-key tiles, 2 stages, Q/K/V by TMA, 2 block(s) per multiprocessor"
func.func @attention(%q: tensor<2x384x64xbf16>, %k: tensor<2x16384x64xbf16>, %v: tensor<2x16384x64xbf16>, %o: tensor<2x384x64xbf16>) -> tensor<2x384x64xbf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x384x64xbf16>, tensor<2x16384x64xbf16>, tensor<2x16384x64xbf16>)
      scale(%s) outs(%o : tensor<2x384x64xbf16>) causal
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<2x384x64xbf16>
  return %r : tensor<2x384x64xbf16>
}

// -----

// A negative scale does not fold into the exponent: the scores are scaled
// first (log2 units) and P = 2^(s - m) as they are, not the natural-unit
// exponent of a bias or a finite fill (whose guard compares the row
// references with +-2^16; that path multiplied these scores by log2 e
// once more).
// CHECK-LABEL: module attributes
// CHECK-SAME: mma = "wgmma"
// CHECK: gpu.launch
// CHECK-NOT: 6.553600e+04
// CHECK: gpu.terminator
func.func @negative_scale(%q: tensor<1x2x150x64xf16>, %k: tensor<1x2x150x64xf16>, %v: tensor<1x2x150x64xf16>, %o: tensor<1x2x150x64xf16>) -> tensor<1x2x150x64xf16> {
  %s = arith.constant -0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x150x64xf16>, tensor<1x2x150x64xf16>, tensor<1x2x150x64xf16>)
      scale(%s) outs(%o : tensor<1x2x150x64xf16>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<1x2x150x64xf16>
  return %r : tensor<1x2x150x64xf16>
}

// -----

// A causal window with a dynamic N: persistent warp-specialized blocks from
// a window of 2048 keys (W = 4096 measured 1.04-1.13x), the two-block
// kernel below (W = 128: 0.94-0.97x; log step 183).
// CHECK-LABEL: module attributes
// CHECK-SAME: persistent = {{[0-9]+}} : i64
// CHECK-SAME: warp_specialize = 1 : i64
// CHECK-LABEL: module attributes
// CHECK-SAME: warp_specialize = 0 : i64
func.func @window_dynamic_long(%q: tensor<1x?x128xf16>, %k: tensor<1x?x128xf16>, %v: tensor<1x?x128xf16>, %o: tensor<1x?x128xf16>) -> tensor<1x?x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x?x128xf16>, tensor<1x?x128xf16>, tensor<1x?x128xf16>)
      scale(%s) outs(%o : tensor<1x?x128xf16>) causal window = 4096
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<1x?x128xf16>
  return %r : tensor<1x?x128xf16>
}

// -----

func.func @window_dynamic_short(%q: tensor<1x?x128xf16>, %k: tensor<1x?x128xf16>, %v: tensor<1x?x128xf16>, %o: tensor<1x?x128xf16>) -> tensor<1x?x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x?x128xf16>, tensor<1x?x128xf16>, tensor<1x?x128xf16>)
      scale(%s) outs(%o : tensor<1x?x128xf16>) causal window = 128
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<1x?x128xf16>
  return %r : tensor<1x?x128xf16>
}
