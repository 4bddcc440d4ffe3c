// f32 decode kernels (M = 1, one warp, mma.sync) past D = 64 take Q from
// shared memory and 32-key tiles: with Q's TF32 fragments (or their split
// halves) in registers beside 64-key tiles they spilled 200-2100 bytes at
// D = 80-128 (log step 179). 3xTF32 (the default) and TF32, with a key
// mask; the sed lines make the variants.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-bundle %s -o %t/d96
// RUN: attn-bundle %s -o %t/d96_tf32 --f32-precision=tf32
// RUN: sed 's/x96xf32/x128xf32/g' %s > %t/d128.mlir
// RUN: attn-bundle %t/d128.mlir -o %t/d128
// RUN: attn-bundle %t/d128.mlir -o %t/d128_tf32 --f32-precision=tf32
// RUN: sed 's/x96xf32/x80xf32/g' %s > %t/d80.mlir
// RUN: attn-bundle %t/d80.mlir -o %t/d80
// RUN: %python %attn_src_root/test/Integration/GPU/spills.py %t --max-spill 0 | FileCheck %s

// CHECK-DAG: 0 B spilled  d96  mma.sync m16n8k8 3xTF32 (f32 split in TF32 halves: f32-accurate), 1 warps x 1 x 16 query r
// CHECK-DAG: 0 B spilled  d96_tf32  mma.sync m16n8k8 TF32, 1 warps x 1 x 16 query rows, 32-key tiles
// CHECK-DAG: 0 B spilled  d128  mma.sync
// CHECK-DAG: 0 B spilled  d128_tf32  mma.sync
// CHECK-DAG: 0 B spilled  d80  mma.sync
// CHECK: 5 kernels, 0 spill (max 0 bytes)

func.func @decode(%q: tensor<16x8x1x96xf32>, %k: tensor<16x8x8192x96xf32>, %v: tensor<16x8x8192x96xf32>, %mask: tensor<16x8192xi1>, %o: tensor<16x8x1x96xf32>) -> tensor<16x8x1x96xf32> {
  %s = arith.constant 0.1 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<16x8x1x96xf32>, tensor<16x8x8192x96xf32>, tensor<16x8x8192x96xf32>) scale(%s) mask(%mask : tensor<16x8192xi1>) outs(%o : tensor<16x8x1x96xf32>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>, affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<16x8x1x96xf32>
  return %r : tensor<16x8x1x96xf32>
}
