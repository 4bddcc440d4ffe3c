// V a tile behind K in each stage (shift-v): the stage of key tile t holds
// K (and a mask tile) of tile t and V of tile t - 1, which iteration t reads
// together, so two stages keep the pipelined loop a tile ahead. The default
// for a 16-bit bias over (m, n) on the warp-specialized kernel (its tile by
// TMA beside 128-key K/V tiles); an option elsewhere; refused where the
// kernel has no TMA producer or no pipelined loop.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a shift-v=0" | FileCheck %s --check-prefix=OFF
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a shift-v=1 warp-specialize=0" 2>&1 | FileCheck %s --check-prefix=NOWS
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a shift-v=1 warp-specialize=1 stages=2" 2>&1 | FileCheck %s --check-prefix=NOPIPE
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a shift-v=2" 2>&1 | FileCheck %s --check-prefix=BAD

// A bf16 bias per head at N = 4096: 128-key tiles, two stages, the bias by
// TMA (a box of the block's 128 rows by 64 keys per panel); with shift-v=0
// the 64-key ring of three stages, the bias copied by the producer's
// threads (cp.async), Q beside it by cp.async too.
// CHECK-LABEL: module attributes
// CHECK-SAME: {box = array<i64: 1, 128, 64>, dtype = "int64", map = "tensormap", name = "tmap_mask", shape = array<i64: 16>, tensor = "mask"}
// CHECK-SAME: 128-key tiles, 2 stages, Q/K/V and the mask by TMA, mask tiles staged in shared memory (in the K/V stages), pipelined, V a tile behind K in each stage
// CHECK-SAME: mask_row_bytes = 256
// CHECK-SAME: shared_bytes = 231424
// A mask tile per key tile: O starts at zero (an undefined O made ptxas
// wait for every product before the softmax; log step 216).
// CHECK-NOT: llvm.mlir.poison : f32
// CHECK: wgmma.mma_async
// OFF-LABEL: module attributes
// OFF-NOT: tmap_mask
// OFF-SAME: 64-key tiles, 3 stages, K/V by TMA, mask tiles staged in shared memory (in the K/V stages), pipelined, ping-pong
// OFF-SAME: mask_row_bytes = 144
// NOWS: error: shift-v=1 needs the warp-specialized, pipelined kernel with K/V by TMA (16-bit operands)
// NOPIPE: error: shift-v=1 needs the pipelined loop (pipeline=1)
// BAD: error: shift-v must be -1 (default), 0 or 1, got 2
func.func @bias_bf16(%q: tensor<2x4x4096x128xbf16>, %k: tensor<2x4x4096x128xbf16>, %v: tensor<2x4x4096x128xbf16>, %bias: tensor<4x4096x4096xbf16>, %o: tensor<2x4x4096x128xbf16>) -> tensor<2x4x4096x128xbf16> {
  %s = arith.constant 0.0883883461 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x4096x128xbf16>, tensor<2x4x4096x128xbf16>, tensor<2x4x4096x128xbf16>)
      scale(%s) mask(%bias : tensor<4x4096x4096xbf16>) outs(%o : tensor<2x4x4096x128xbf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
                       affine_map<(b, h, m, n, d, e) -> (h, m, n)>]
      -> tensor<2x4x4096x128xbf16>
  return %r : tensor<2x4x4096x128xbf16>
}

// -----

// An f32 bias: 96-key tiles (its 128-key tiles would not fit beside two
// K/V stages), three 128-byte panels of 32 keys per row, by TMA; with
// shift-v=0 64-key tiles in three stages, which it does not fit beside:
// its fragments read from global memory a tile ahead.
// CHECK-LABEL: module attributes
// CHECK-SAME: {box = array<i64: 1, 128, 32>, dtype = "int64", map = "tensormap", name = "tmap_mask", shape = array<i64: 16>, tensor = "mask"}
// CHECK-SAME: 96-key tiles, 2 stages, Q/K/V and the mask by TMA, mask tiles staged in shared memory (in the K/V stages), pipelined, V a tile behind K in each stage
// CHECK-SAME: mask_row_bytes = 384
// CHECK-SAME: shared_bytes = 231424
// OFF-LABEL: module attributes
// OFF-NOT: tmap_mask
// OFF-SAME: 64-key tiles, 3 stages, Q/K/V by TMA, pipelined, ping-pong
// OFF-NOT: mask_row_bytes
func.func @bias_f32(%q: tensor<2x4x4096x128xf16>, %k: tensor<2x4x4096x128xf16>, %v: tensor<2x4x4096x128xf16>, %bias: tensor<4x4096x4096xf32>, %o: tensor<2x4x4096x128xf16>) -> tensor<2x4x4096x128xf16> {
  %s = arith.constant 0.0883883461 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x4096x128xf16>, tensor<2x4x4096x128xf16>, tensor<2x4x4096x128xf16>)
      scale(%s) mask(%bias : tensor<4x4096x4096xf32>) outs(%o : tensor<2x4x4096x128xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
                       affine_map<(b, h, m, n, d, e) -> (h, m, n)>]
      -> tensor<2x4x4096x128xf16>
  return %r : tensor<2x4x4096x128xf16>
}
