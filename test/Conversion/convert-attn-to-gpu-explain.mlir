// --convert-attn-to-gpu with `explain` (or attn-opt --attn-explain): a
// remark at each attention names the kernel it gets, its launch shape, and
// why not a faster one. Without it, nothing is said.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a explain=1" --verify-diagnostics -o /dev/null
// RUN: attn-opt %s --split-input-file --attn-explain --convert-attn-to-gpu="chip=sm_80" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a wgmma=0 explain=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark: GPU kernel

// SM80: remark: GPU kernel: mma.sync m16n8k16, 4 warps x 2 x 16 query rows, 64-key tiles, 2 stages; not wgmma: chip=sm_80 (wgmma needs sm_90a)
// OFF: remark: GPU kernel: mma.sync m16n8k16, 4 warps x 2 x 16 query rows, 64-key tiles, 2 stages; not wgmma: wgmma=0
func.func @wgmma(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x100x64xf16>, %v: tensor<2x4x100x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  // expected-remark @+1 {{GPU kernel: wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, 128-key tiles, 2 stages, Q/K/V by TMA, 2 block(s) per multiprocessor}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x100x64xf16>, tensor<2x4x100x64xf16>)
      scale(%s) outs(%o : tensor<2x4x100x64xf16>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}

// -----

// SM80: remark: GPU kernel: mma.sync m16n8k16, 4 warps x 2 x 16 query rows, 32-key tiles, 2 stages; not wgmma: chip=sm_80
func.func @warp_specialized(%q: tensor<1x256x128xbf16>, %k: tensor<1x4096x128xbf16>, %v: tensor<1x4096x128xbf16>, %o: tensor<1x256x128xbf16>) -> tensor<1x256x128xbf16> {
  %s = arith.constant 0.088 : f32
  // expected-remark @+1 {{GPU kernel: wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup (mbarriers, setmaxnreg 40/232), 128-key tiles, 3 stages, Q/K/V by TMA, pipelined, ping-pong, persistent: 2 blocks take the 2 query tiles from a counter, 1 block(s) per multiprocessor}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x256x128xbf16>, tensor<1x4096x128xbf16>, tensor<1x4096x128xbf16>)
      scale(%s) outs(%o : tensor<1x256x128xbf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<1x256x128xbf16>
  return %r : tensor<1x256x128xbf16>
}

// -----

func.func @head_dim_32(%q: tensor<2x33x64xf16>, %k: tensor<2x47x64xf16>, %v: tensor<2x47x32xf16>, %o: tensor<2x33x32xf16>) -> tensor<2x33x32xf16> {
  %s = arith.constant 0.125 : f32
  // expected-remark @+1 {{GPU kernel: wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, 128-key tiles, 2 stages, Q/K/V by TMA, 2 block(s) per multiprocessor}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x33x64xf16>, tensor<2x47x64xf16>, tensor<2x47x32xf16>)
      scale(%s) outs(%o : tensor<2x33x32xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<2x33x32xf16>
  return %r : tensor<2x33x32xf16>
}

// -----

// SM80: remark: GPU kernel: mma.sync m16n8k8 3xTF32 (f32 split in TF32 halves: f32-accurate), 4 warps x 2 x 16 query rows, 64-key tiles, 2 stages; not wgmma: chip=sm_80 (wgmma needs sm_90a)
func.func @f32(%q: tensor<2x100x64xf32>, %k: tensor<2x100x64xf32>, %v: tensor<2x100x64xf32>, %o: tensor<2x100x64xf32>) -> tensor<2x100x64xf32> {
  %s = arith.constant 0.125 : f32
  // expected-remark @+1 {{GPU kernel: mma.sync m16n8k8 3xTF32 (f32 split in TF32 halves: f32-accurate), 4 warps x 2 x 16 query rows, 64-key tiles, 2 stages; not wgmma: q is f32 and f32-precision=3xtf32 (the split products run on mma.sync; f32-precision=tf32 takes wgmma)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x100x64xf32>, tensor<2x100x64xf32>, tensor<2x100x64xf32>)
      scale(%s) outs(%o : tensor<2x100x64xf32>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<2x100x64xf32>
  return %r : tensor<2x100x64xf32>
}

// -----

func.func @f32_output(%q: tensor<2x100x64xf16>, %k: tensor<2x100x64xf16>, %v: tensor<2x100x64xf16>, %o: tensor<2x100x64xf32>) -> tensor<2x100x64xf32> {
  %s = arith.constant 0.125 : f32
  // expected-remark @+1 {{no tensor cores: the output is f32, q f16 (one element type throughout)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x100x64xf16>, tensor<2x100x64xf16>, tensor<2x100x64xf16>)
      scale(%s) outs(%o : tensor<2x100x64xf32>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<2x100x64xf32>
  return %r : tensor<2x100x64xf32>
}

// -----

func.func @mask_tensor(%q: tensor<2x100x64xf16>, %k: tensor<2x70x64xf16>, %v: tensor<2x70x64xf16>, %mask: tensor<100x70xf32>, %o: tensor<2x100x64xf16>) -> tensor<2x100x64xf16> {
  %s = arith.constant 0.125 : f32
  // expected-remark @+1 {{GPU kernel: wgmma (sm_90a), 2 warpgroup(s) x 64 query rows}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x100x64xf16>, tensor<2x70x64xf16>, tensor<2x70x64xf16>)
      scale(%s) mask(%mask : tensor<100x70xf32>) outs(%o : tensor<2x100x64xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>,
                       affine_map<(b, m, n, d, e) -> (m, n)>]
      -> tensor<2x100x64xf16>
  return %r : tensor<2x100x64xf16>
}
