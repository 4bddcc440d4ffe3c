// TF32 wgmma kernels (f32-precision=tf32) compile with no spills and with
// their wgmma products not serialized by ptxas: D = 128 with Q's fragments
// in registers (static and dynamic sizes), with Q in shared memory
// (q-regs=0), D = 64 with three computing warpgroups, and dynamic D = 64
// (two warpgroups: three spilled there; the producer at 72 registers:
// 56 spilled 4-8 bytes). The sed lines make the variants.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-bundle %s -o %t/d128 --f32-precision=tf32
// RUN: attn-bundle %s -o %t/d128_qsmem --f32-precision=tf32 --q-regs=0
// RUN: sed 's/2x2x4096x128xf32/?x2x?x128xf32/g' %s > %t/dyn.mlir
// RUN: attn-bundle %t/dyn.mlir -o %t/d128_dyn --f32-precision=tf32
// RUN: sed 's/x128xf32/x64xf32/g' %s > %t/d64.mlir
// RUN: attn-bundle %t/d64.mlir -o %t/d64 --f32-precision=tf32
// RUN: sed 's/2x2x4096x128xf32/?x2x?x64xf32/g' %s > %t/d64dyn.mlir
// RUN: attn-bundle %t/d64dyn.mlir -o %t/d64_dyn --f32-precision=tf32
// RUN: %python %attn_src_root/test/Integration/GPU/spills.py %t --max-spill 0 --no-serialized | FileCheck %s

// CHECK-DAG: 0 B spilled  d128  wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, TF32 k8 products (V^T by the producer, Q i
// CHECK-DAG: 0 B spilled  d128_qsmem  wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, TF32 k8 products (V^T by the producer) +
// CHECK-DAG: 0 B spilled  d128_dyn  wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, TF32 k8 products (V^T by the producer, Q i
// CHECK-DAG: 0 B spilled  d64  wgmma (sm_90a), 3 warpgroup(s)
// CHECK-DAG: 0 B spilled  d64_dyn  wgmma (sm_90a), 2 warpgroup(s)
// CHECK-NOT: serialized
// CHECK: 5 kernels, 0 spill (max 0 bytes)

func.func @attention(%q: tensor<2x2x4096x128xf32>, %k: tensor<2x2x4096x128xf32>, %v: tensor<2x2x4096x128xf32>, %o: tensor<2x2x4096x128xf32>) -> tensor<2x2x4096x128xf32> {
  %s = arith.constant 0.08838834764831843 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x2x4096x128xf32>, tensor<2x2x4096x128xf32>, tensor<2x2x4096x128xf32>) scale(%s) outs(%o : tensor<2x2x4096x128xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x2x4096x128xf32>
  return %r : tensor<2x2x4096x128xf32>
}
