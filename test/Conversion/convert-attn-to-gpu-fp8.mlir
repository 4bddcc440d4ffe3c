// FP8 attention on the GPU: 8-bit Q, K, V take the warp-specialized wgmma
// kernel with TMA only (k32 wgmma on e4m3/e5m2, P rounded to e4m3, V
// transposed by the producer), with the value's scale in the manifest; what
// it cannot take is an error at the attention (FP8 has no other kernel).
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a tile-kv=96" 2>&1 | FileCheck %s --check-prefix=TKV
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a tile-kv=64" | FileCheck %s --check-prefix=KV64
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a warp-specialize=0" 2>&1 | FileCheck %s --check-prefix=NOWS
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu 2>&1 | FileCheck %s --check-prefix=SM80

// CHECK: attn.bundle = {args = [{dtype = "float8_e4m3fn"
// CHECK-SAME: box = array<i64: 1, 1, 128, 128>
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup (mbarriers, setmaxnreg 40/232), 128-key tiles, 3 stages, Q/K/V by TMA, pipelined, persistent
// CHECK-SAME: value_scale = 1.500000e+00
// The producer's V transpose (byte permutes), then the consumers.
// CHECK: prmt.b32
// CHECK: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
// Past D = 64 P is packed by NVVM's conversion op (an asm statement made
// ptxas serialize the products: test/Integration/GPU/fp8-ptxas.mlir).
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK-NOT: cvt.rn.satfinite.e4m3x2.f32
// TKV: error: FP8 attention takes tile-kv a multiple of 64 up to 256 (V^T's panels of 128 keys and a last one of 64), got 96
// KV64: 64-key tiles, 3 stages
// KV64: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3
// NOWS: error: FP8 attention runs on the warp-specialized kernel; warp-specialize=0 excludes it
// SM80: error: FP8 attention runs on the Hopper kernel (warp-specialized wgmma with TMA) only: chip=sm_80 (needs sm_90a)
func.func @fp8_e4m3(%q: tensor<2x4x1024x128xf8E4M3FN>, %k: tensor<2x4x1024x128xf8E4M3FN>, %v: tensor<2x4x1024x128xf8E4M3FN>, %o: tensor<2x4x1024x128xf16>) -> tensor<2x4x1024x128xf16> {
  %s = arith.constant 0.0883883461 : f32
  %vs = arith.constant 1.5 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x1024x128xf8E4M3FN>, tensor<2x4x1024x128xf8E4M3FN>, tensor<2x4x1024x128xf8E4M3FN>) scale(%s) value_scale(%vs)
      outs(%o : tensor<2x4x1024x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x1024x128xf16>
  return %r : tensor<2x4x1024x128xf16>
}

// -----

// E5M2 V with P in e4m3; D = 64; bf16 output; no value scale.
// CHECK: attn.bundle = {args = [{dtype = "float8_e5m2"
// CHECK-SAME: 2 warpgroup(s) x 64 query rows
// CHECK-NOT: value_scale
// CHECK: wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2
// CHECK: wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2
// CHECK: cvt.rn.satfinite.e4m3x2.f32
func.func @fp8_e5m2(%q: tensor<2x4x300x64xf8E5M2>, %k: tensor<2x4x2000x64xf8E5M2>, %v: tensor<2x4x2000x64xf8E5M2>, %o: tensor<2x4x300x64xbf16>) -> tensor<2x4x300x64xbf16> {
  %s = arith.constant 0.0883883461 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x300x64xf8E5M2>, tensor<2x4x2000x64xf8E5M2>, tensor<2x4x2000x64xf8E5M2>) scale(%s)
      outs(%o : tensor<2x4x300x64xbf16>) causal indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x300x64xbf16>
  return %r : tensor<2x4x300x64xbf16>
}

// -----

// D = 256: three stages do not fit beside the staging buffer: two, not
// pipelined.
// CHECK: attn.bundle = {args = [{dtype = "float8_e4m3fn"
// CHECK-SAME: 128-key tiles, 2 stages, Q/K/V by TMA, a block per query tile
func.func @fp8_d256(%q: tensor<2x4x4096x256xf8E4M3FN>, %k: tensor<2x4x4096x256xf8E4M3FN>, %v: tensor<2x4x4096x256xf8E4M3FN>, %o: tensor<2x4x4096x256xbf16>) -> tensor<2x4x4096x256xbf16> {
  %s = arith.constant 0.0883883461 : f32
  %vs = arith.constant 1.5 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x4096x256xf8E4M3FN>, tensor<2x4x4096x256xf8E4M3FN>, tensor<2x4x4096x256xf8E4M3FN>) scale(%s) value_scale(%vs)
      outs(%o : tensor<2x4x4096x256xbf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x4096x256xbf16>
  return %r : tensor<2x4x4096x256xbf16>
}

// -----

// D = 64 from N = 4096: three computing warpgroups (causal below 4096
// keeps two, as @fp8_e5m2 above).
// CHECK: attn.bundle = {args = [{dtype = "float8_e4m3fn"
// CHECK-SAME: 3 warpgroup(s) x 64 query rows + a producer warpgroup (mbarriers, setmaxnreg 56/152)
func.func @fp8_d64(%q: tensor<2x4x4096x64xf8E4M3FN>, %k: tensor<2x4x4096x64xf8E4M3FN>, %v: tensor<2x4x4096x64xf8E4M3FN>, %o: tensor<2x4x4096x64xf16>) -> tensor<2x4x4096x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x4096x64xf8E4M3FN>, tensor<2x4x4096x64xf8E4M3FN>, tensor<2x4x4096x64xf8E4M3FN>) scale(%s)
      outs(%o : tensor<2x4x4096x64xf16>) causal indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x4096x64xf16>
  return %r : tensor<2x4x4096x64xf16>
}

// -----

// A mask tensor (key padding): read into the score fragments a tile ahead,
// not staged; a block per query tile.
// CHECK: attn.bundle = {args = [{dtype = "float8_e4m3fn"
// CHECK-SAME: {dtype = "bool", map = #{{.*}}, name = "mask"
// CHECK-SAME: a block per query tile
func.func @fp8_keypad(%q: tensor<2x4x1024x128xf8E4M3FN>, %k: tensor<2x4x1024x128xf8E4M3FN>, %v: tensor<2x4x1024x128xf8E4M3FN>, %o: tensor<2x4x1024x128xf16>, %mask: tensor<2x1024xi1>) -> tensor<2x4x1024x128xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x1024x128xf8E4M3FN>, tensor<2x4x1024x128xf8E4M3FN>, tensor<2x4x1024x128xf8E4M3FN>) scale(%s)
      mask(%mask : tensor<2x1024xi1>) outs(%o : tensor<2x4x1024x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<2x4x1024x128xf16>
  return %r : tensor<2x4x1024x128xf16>
}

// -----

// Runtime per-tensor scales: Q's from a 0-d f32 tensor, K's an element of a
// tensor<2xf16> (divided), V's a 0-d bf16 tensor. Each tensor is a kernel
// argument scale<i> (manifest map "scale"), the manifest's factors say how
// the constants take them, and the kernel reads them itself.
// CHECK: {dtype = "float32", map = "scale", name = "scale0", shape = array<i64>}, {dtype = "float16", map = "scale", name = "scale1", shape = array<i64: 2>}, {dtype = "bfloat16", map = "scale", name = "scale2", shape = array<i64>}
// CHECK-SAME: scale = 0.0883883461 : f32, scale_factors = [{arg = "scale0", divide = false, index = array<i64>}, {arg = "scale1", divide = true, index = array<i64: 1>}]
// CHECK-SAME: value_scale = 1.000000e+00 : f32, value_scale_factors = [{arg = "scale2", divide = false, index = array<i64>}]
// CHECK: func.func @attn_fwd({{.*}}memref<f32>, %{{.+}}: memref<2xf16>, %{{.+}}: memref<bf16>
// CHECK: gpu.launch
// CHECK: memref.load %{{.+}}[] : memref<f32>
// CHECK: memref.load %{{.+}}[%{{.+}}] : memref<2xf16>
// CHECK: memref.load %{{.+}}[] : memref<bf16>
func.func @fp8_runtime_scales(%qs: tensor<f32>, %ks: tensor<2xf16>, %vsc: tensor<bf16>, %q: tensor<2x4x1024x128xf8E4M3FN>, %k: tensor<2x4x1024x128xf8E4M3FN>, %v: tensor<2x4x1024x128xf8E4M3FN>, %o: tensor<2x4x1024x128xf16>) -> tensor<2x4x1024x128xf16> {
  %c1 = arith.constant 1 : index
  %s0 = arith.constant 0.0883883461 : f32
  %a = tensor.extract %qs[] : tensor<f32>
  %b16 = tensor.extract %ks[%c1] : tensor<2xf16>
  %b = arith.extf %b16 : f16 to f32
  %s1 = arith.mulf %s0, %a : f32
  %s = arith.divf %s1, %b : f32
  %c16 = tensor.extract %vsc[] : tensor<bf16>
  %vs = arith.extf %c16 : bf16 to f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x1024x128xf8E4M3FN>, tensor<2x4x1024x128xf8E4M3FN>, tensor<2x4x1024x128xf8E4M3FN>) scale(%s) value_scale(%vs)
      outs(%o : tensor<2x4x1024x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x1024x128xf16>
  return %r : tensor<2x4x1024x128xf16>
}

// -----

// Non-causal at D = 128 from N = 4096: 192-key tiles (V^T's last panel of
// 64 keys in the 64-byte swizzle) with two staging buffers.
// CHECK: attn.bundle = {args = [{dtype = "float8_e4m3fn"
// CHECK-SAME: 192-key tiles, 3 stages, Q/K/V by TMA, pipelined, persistent
// CHECK-SAME: shared_bytes = 214112
// CHECK: wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3
func.func @fp8_wide_keys(%q: tensor<2x4x4096x128xf8E4M3FN>, %k: tensor<2x4x4096x128xf8E4M3FN>, %v: tensor<2x4x4096x128xf8E4M3FN>, %o: tensor<2x4x4096x128xf16>) -> tensor<2x4x4096x128xf16> {
  %s = arith.constant 0.0883883461 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x4096x128xf8E4M3FN>, tensor<2x4x4096x128xf8E4M3FN>, tensor<2x4x4096x128xf8E4M3FN>) scale(%s)
      outs(%o : tensor<2x4x4096x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x4096x128xf16>
  return %r : tensor<2x4x4096x128xf16>
}
