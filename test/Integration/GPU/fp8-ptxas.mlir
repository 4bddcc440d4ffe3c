// FP8 kernels past D = 64 compile with no spills and with their wgmma
// products not serialized by ptxas (its C751x notes; log step 88: with P
// packed by an asm statement ptxas serialized every product, and the
// producer's transpose addresses spilled 80-900 bytes). The sed lines make
// the causal, D = 256 and N = 4096 (192-key tiles: log step 199) variants
// of the attention below.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-bundle %s -o %t/d128
// RUN: sed 's/ indexing_maps/ causal indexing_maps/' %s > %t/causal.mlir
// RUN: attn-bundle %t/causal.mlir -o %t/d128_causal
// RUN: sed 's/x128x/x256x/g; s/x128xf/x256xf/g' %t/causal.mlir > %t/d256.mlir
// RUN: attn-bundle %t/d256.mlir -o %t/d256_causal
// RUN: sed 's/x1024x/x4096x/g' %s > %t/wide.mlir
// RUN: attn-bundle %t/wide.mlir -o %t/d128_wide
// RUN: %python %attn_src_root/test/Integration/GPU/spills.py %t --max-spill 0 --no-serialized | FileCheck %s
// RUN: FileCheck %s --check-prefix=WIDE --input-file %t/d128_wide/manifest.json
// WIDE: 192-key tiles, 3 stages

// CHECK-DAG: 0 B spilled  d128  wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup
// CHECK-DAG: 0 B spilled  d128_causal  wgmma
// CHECK-DAG: 0 B spilled  d256_causal  wgmma
// CHECK-DAG: 0 B spilled  d128_wide  wgmma
// CHECK-NOT: serialized
// CHECK: 4 kernels, 0 spill (max 0 bytes)

func.func @attention(%q: tensor<2x2x1024x128xf8E4M3FN>, %k: tensor<2x2x1024x128xf8E4M3FN>, %v: tensor<2x2x1024x128xf8E4M3FN>, %o: tensor<2x2x1024x128xf16>) -> tensor<2x2x1024x128xf16> {
  %s = arith.constant 0.08838834764831843 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x2x1024x128xf8E4M3FN>, tensor<2x2x1024x128xf8E4M3FN>, tensor<2x2x1024x128xf8E4M3FN>) scale(%s) outs(%o : tensor<2x2x1024x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x2x1024x128xf16>
  return %r : tensor<2x2x1024x128xf16>
}
