// The Hopper kernel with three computing warpgroups (warps=12, 192 query
// rows) and a producer warpgroup: its register split by how the producer
// loads.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warps=12 warp-specialize=1 pipeline=1 stages=3 tile-kv=128" | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warps=12 warp-specialize=1 pipeline=1 stages=3 tile-kv=64" | FileCheck %s --check-prefix=RING

// Q, K and V by TMA (one producer thread issues the copies): the producer
// keeps 32 registers and the consumers get 160 (512 threads, 128 each at
// entry: 32 + 3 x 160 = 4 x 128), which at D = 64 leaves ptxas no spills;
// 384 rows are two 192-row tiles.
// CHECK-LABEL: module attributes
// CHECK-SAME: block = array<i64: 512, 1, 1>
// CHECK-SAME: grid = array<i64: 2, 2, 1>
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 3 warpgroup(s) x 64 query rows + a producer warpgroup (mbarriers, setmaxnreg 32/160), 128-key tiles, 3 stages, Q/K/V by TMA, pipelined, a block per query tile (persistent: not faster measured here), 1 block(s) per multiprocessor"
// CHECK: "setmaxnreg.dec.sync.aligned.u32 32;"
// CHECK: "setmaxnreg.inc.sync.aligned.u32 160;"
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

// A bias over (m, n) with 64-key tiles (RING) rides in the K/V stages (the
// producer's 128 threads copy it with cp.async beside one thread's TMA K/V;
// Q by cp.async too): the producer keeps 56 registers, the consumers 152.
// With 128-key tiles three bias tiles do not fit: read from global memory,
// and the producer is TMA alone again (32/160).
// CHECK-LABEL: module attributes
// CHECK-SAME: setmaxnreg 32/160
// CHECK-NOT: mask tiles staged
// RING-LABEL: {{.*}}shape = array<i64: 1, 192, 1024>
// RING-SAME: kernel_choice = "wgmma (sm_90a), 3 warpgroup(s) x 64 query rows + a producer warpgroup (mbarriers, setmaxnreg 56/152), 64-key tiles, 3 stages, K/V by TMA, mask tiles staged in shared memory (in the K/V stages)
// RING: "setmaxnreg.dec.sync.aligned.u32 56;"
// RING: "setmaxnreg.inc.sync.aligned.u32 152;"
func.func @attention(%q: tensor<1x192x64xf16>, %k: tensor<1x1024x64xf16>, %v: tensor<1x1024x64xf16>, %bias: tensor<1x192x1024xf16>, %o: tensor<1x192x64xf16>) -> tensor<1x192x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x192x64xf16>, tensor<1x1024x64xf16>, tensor<1x1024x64xf16>)
      scale(%s) mask(%bias : tensor<1x192x1024xf16>) outs(%o : tensor<1x192x64xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>,
                       affine_map<(b, m, n, d, e) -> (b, m, n)>]
      -> tensor<1x192x64xf16>
  return %r : tensor<1x192x64xf16>
}
