// The 16-bit kernels of the benchmark table's default launch shapes compile
// with no spills and with their wgmma products not serialized: D = 64
// causal (the two-block kernel; its masked key loop spilled 20 bytes at
// 128 registers until Q's descriptors took a warp-uniform warpgroup index),
// D = 64 non-causal static and ragged (24 bytes before), bf16, and D = 128
// causal and non-causal (the warp-specialized kernel). The sed lines make
// the variants.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-bundle %s -o %t/d64_causal
// RUN: sed 's/ causal indexing_maps/ indexing_maps/' %s > %t/full.mlir
// RUN: attn-bundle %t/full.mlir -o %t/d64_full
// RUN: sed 's/x4096x/x4000x/g' %t/full.mlir > %t/ragged.mlir
// RUN: attn-bundle %t/ragged.mlir -o %t/d64_ragged
// RUN: sed 's/xf16>/xbf16>/g' %s > %t/bf16.mlir
// RUN: attn-bundle %t/bf16.mlir -o %t/d64_causal_bf16
// RUN: sed 's/4x32x4096x64xf16/4x16x4096x128xf16/g' %s > %t/d128.mlir
// RUN: attn-bundle %t/d128.mlir -o %t/d128_causal
// RUN: sed 's/4x32x4096x64xf16/4x16x4096x128xf16/g' %t/full.mlir > %t/d128f.mlir
// RUN: attn-bundle %t/d128f.mlir -o %t/d128_full
// RUN: %python %attn_src_root/test/Integration/GPU/spills.py %t --max-spill 0 --no-serialized | FileCheck %s

// CHECK-DAG: 0 B spilled  d64_causal  wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, 128-key tiles
// CHECK-DAG: 0 B spilled  d64_causal_bf16  wgmma
// CHECK-DAG: 0 B spilled  d64_full  wgmma
// CHECK-DAG: 0 B spilled  d64_ragged  wgmma
// CHECK-DAG: 0 B spilled  d128_causal  wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup
// CHECK-DAG: 0 B spilled  d128_full  wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup
// CHECK-NOT: serialized
// CHECK: 6 kernels, 0 spill (max 0 bytes)

func.func @attention(%q: tensor<4x32x4096x64xf16>, %k: tensor<4x32x4096x64xf16>, %v: tensor<4x32x4096x64xf16>, %o: tensor<4x32x4096x64xf16>) -> tensor<4x32x4096x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x32x4096x64xf16>, tensor<4x32x4096x64xf16>, tensor<4x32x4096x64xf16>) scale(%s) outs(%o : tensor<4x32x4096x64xf16>)
      causal indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<4x32x4096x64xf16>
  return %r : tensor<4x32x4096x64xf16>
}
