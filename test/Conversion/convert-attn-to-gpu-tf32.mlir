// f32 attention with f32-precision=tf32 on sm_90a: the warp-specialized
// wgmma kernel with TF32 k8 products (K and V by TMA; K rounded to TF32 in
// place by the producer, which also writes V^T in the key order of P's A
// fragments). Past D = 64 each consumer thread holds its A fragments of Q
// in registers (read from global memory once, rounded; q-regs): no Q in
// shared memory, two 64-key stages and two V staging buffers (V a tile
// ahead). q-regs=0 keeps Q in shared memory
// (by TMA, rounded there by the consumers). What it cannot take falls to
// mma.sync with the reason in the remark; 3xTF32 (the default) stays there.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a f32-precision=tf32 explain=1" --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a f32-precision=tf32 q-regs=0" 2>&1 | FileCheck %s --check-prefix=QSMEM
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a f32-precision=tf32 tile-kv=48" 2>&1 | FileCheck %s --check-prefix=TKV
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a f32-precision=tf32 tma=0 explain=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTMA
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a f32-precision=tf32 tma=0 wgmma=1" 2>&1 | FileCheck %s --check-prefix=FORCED
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a q-regs=1" 2>&1 | FileCheck %s --check-prefix=QREGS3X
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a f32-precision=tf32 q-regs=1" 2>&1 | FileCheck %s --check-prefix=QDEC

// CHECK-LABEL: module attributes
// CHECK-SAME: attn.bundle = {args = [{dtype = "float32"
// CHECK-NOT: name = "tmap_q"
// CHECK-SAME: box = array<i64: 1, 1, 64, 32>
// CHECK-SAME: f32_precision = "tf32"
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, TF32 k8 products (V^T by the producer, Q in registers) + a producer warpgroup (mbarriers, setmaxnreg 56/224), 64-key tiles, 2 stages, K/V by TMA, a block per query tile (Q's fragments are in registers
// CHECK-SAME: "1024 + max(stages * tile_kv * (ceil(d / 32) + ceil(e / 32)) * 128 + (2 * tile_kv * ceil(e / 32)) * 128
// K and V^T rounded to TF32 in shared memory (16-byte reads and writes),
// Q and P in registers; S = Q K^T k8 steps of 64 keys with A from
// registers, O += P V^T.
// CHECK-DAG: nvvm.convert.float.to.tf32 {{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {{.*}}, {$32, $33, $34, $35}, $36, p, 1, 1;
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32
// CHECK-DAG: ld.shared.v4.b32
// CHECK-DAG: st.shared.v4.b32
// QSMEM: box = array<i64: 1, 1, 128, 32>
// QSMEM-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, TF32 k8 products (V^T by the producer) + a producer warpgroup (mbarriers, setmaxnreg 56/224), 64-key tiles, 2 stages, Q/K/V by TMA
// TKV: error: TF32 on wgmma takes tile-kv a multiple of 32 (the panels of V^T in shared memory), got 48
// NOTMA: remark: GPU kernel: mma.sync m16n8k8 TF32, 8 warps x 2 x 16 query rows, 32-key tiles, 2 stages; not wgmma: TF32 on wgmma needs the warp-specialized kernel with Q, K and V by TMA: tma=0
// FORCED: error: wgmma=1: TF32 on wgmma needs the warp-specialized kernel with Q, K and V by TMA: tma=0
// QREGS3X: error: q-regs=1: Q's fragments in registers are the Hopper TF32 kernel's (f32 with f32-precision=tf32 on sm_90a)
func.func @tf32_d128(%q: tensor<2x4x300x128xf32>, %k: tensor<2x4x300x128xf32>, %v: tensor<2x4x300x128xf32>, %o: tensor<2x4x300x128xf32>) -> tensor<2x4x300x128xf32> {
  %s = arith.constant 0.125 : f32
  // expected-remark @+1 {{GPU kernel: wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, TF32 k8 products (V^T by the producer, Q in registers)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x300x128xf32>, tensor<2x4x300x128xf32>, tensor<2x4x300x128xf32>) scale(%s)
      outs(%o : tensor<2x4x300x128xf32>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<2x4x300x128xf32>
  return %r : tensor<2x4x300x128xf32>
}

// -----

// D = 64, a bool key mask (read a tile ahead, never staged): two computing
// warpgroups (three spilled beside the mask's values).
// CHECK-LABEL: module attributes
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, TF32 k8 products
// CHECK: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
func.func @tf32_d64_key_mask(%q: tensor<2x4x300x64xf32>, %k: tensor<2x4x500x64xf32>, %v: tensor<2x4x500x64xf32>, %mask: tensor<2x500xi1>, %o: tensor<2x4x300x64xf32>) -> tensor<2x4x300x64xf32> {
  %s = arith.constant 0.125 : f32
  // expected-remark @+1 {{GPU kernel: wgmma (sm_90a), 2 warpgroup(s) x 64 query rows, TF32 k8 products (V^T by the producer)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x300x64xf32>, tensor<2x4x500x64xf32>, tensor<2x4x500x64xf32>) scale(%s)
      mask(%mask : tensor<2x500xi1>)
      outs(%o : tensor<2x4x300x64xf32>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>]
      -> tensor<2x4x300x64xf32>
  return %r : tensor<2x4x300x64xf32>
}

// -----

// Outside the eligible shapes: D = 192 (Q, two stages and the staging
// buffer do not fit) and D = 40 (not a whole 128-byte chunk of
// keys' columns) run on mma.sync, and say why.
// CHECK-LABEL: module attributes
// CHECK-SAME: f32_precision = "tf32"
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK-NOT: wgmma.mma_async
func.func @tf32_d192(%q: tensor<1x2x200x192xf32>, %k: tensor<1x2x200x192xf32>, %v: tensor<1x2x200x192xf32>, %o: tensor<1x2x200x192xf32>) -> tensor<1x2x200x192xf32> {
  %s = arith.constant 0.072 : f32
  // expected-remark @+1 {{not wgmma: TF32 on wgmma takes D and E multiples of 32 up to 128 (D = 192, E = 192)}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x200x192xf32>, tensor<1x2x200x192xf32>, tensor<1x2x200x192xf32>) scale(%s)
      outs(%o : tensor<1x2x200x192xf32>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<1x2x200x192xf32>
  return %r : tensor<1x2x200x192xf32>
}

// -----

// CHECK-LABEL: module attributes
// CHECK-SAME: f32_precision = "tf32"
// CHECK-NOT: wgmma.mma_async
func.func @tf32_d40(%q: tensor<1x2x200x40xf32>, %k: tensor<1x2x200x40xf32>, %v: tensor<1x2x200x40xf32>, %o: tensor<1x2x200x40xf32>) -> tensor<1x2x200x40xf32> {
  %s = arith.constant 0.125 : f32
  // expected-remark @+1 {{not wgmma: TF32 on wgmma takes D and E multiples of 32 up to 128 (D = 40, E = 40)}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x200x40xf32>, tensor<1x2x200x40xf32>, tensor<1x2x200x40xf32>) scale(%s)
      outs(%o : tensor<1x2x200x40xf32>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<1x2x200x40xf32>
  return %r : tensor<1x2x200x40xf32>
}

// -----

// A decode shape (M = 1) runs on mma.sync, which keeps Q in shared memory:
// q-regs=1 is an error there.
// CHECK-LABEL: module attributes
// CHECK-SAME: f32_precision = "tf32"
// CHECK-NOT: wgmma.mma_async
// QDEC: error: q-regs=1: this attention runs on mma.sync (a decode shape), which keeps Q in shared memory
func.func @tf32_decode(%q: tensor<2x4x1x128xf32>, %k: tensor<2x4x500x128xf32>, %v: tensor<2x4x500x128xf32>, %o: tensor<2x4x1x128xf32>) -> tensor<2x4x1x128xf32> {
  %s = arith.constant 0.125 : f32
  // expected-remark @+1 {{not wgmma: decode shape (M = 1 <= 16 query rows}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x1x128xf32>, tensor<2x4x500x128xf32>, tensor<2x4x500x128xf32>) scale(%s)
      outs(%o : tensor<2x4x1x128xf32>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<2x4x1x128xf32>
  return %r : tensor<2x4x1x128xf32>
}
