// f32 past D = 64 on the mma.sync kernel: 8 warps (256 query rows, Q in
// shared memory) where they fit (sm_90a's 227 KB), 4 on sm_80, whose 163 KB
// cannot hold 256 rows of f32 Q beside the K/V stages at D = 128. An
// explicit warps=8 there is an error at the attention naming the limit.
// RUN: attn-opt %s --convert-attn-to-gpu | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --convert-attn-to-gpu="chip=sm_90a wgmma=0" | FileCheck %s --check-prefix=SM90
// RUN: not attn-opt %s --convert-attn-to-gpu="warps=8" 2>&1 | FileCheck %s --check-prefix=W8

// SM80: kernel_choice = "mma.sync m16n8k8 3xTF32 {{.*}}, 4 warps x 2 x 16 query rows
// SM90: kernel_choice = "mma.sync m16n8k8 3xTF32 {{.*}}, 8 warps x 2 x 16 query rows
// W8: convert-attn-to-gpu-f32-sm80.mlir:[[@LINE+3]]:8: error: the tensor-core kernel needs {{[0-9]+}} bytes of shared memory (tile-kv = 32, stages = 2, D = 128, E = 128); the limit is 166912 (sm_80)
func.func @f32_d128(%q: tensor<?x4x?x128xf32>, %k: tensor<?x4x?x128xf32>, %v: tensor<?x4x?x128xf32>, %o: tensor<?x4x?x128xf32>) -> tensor<?x4x?x128xf32> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>, tensor<?x4x?x128xf32>) scale(%s)
      outs(%o : tensor<?x4x?x128xf32>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<?x4x?x128xf32>
  return %r : tensor<?x4x?x128xf32>
}
