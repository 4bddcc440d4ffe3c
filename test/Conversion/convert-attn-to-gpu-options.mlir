// The mma.sync kernel's launch shape: tile-q (16 x warps x rows tiles),
// tile-kv, warps, stages, q-shared (the pipeline targets sm_90a: wgmma=0
// keeps it on this kernel). Out-of-range options are errors at the
// attention, with the option named.
// RUN: attn-opt %s --convert-attn-to-gpu="tile-q=128 tile-kv=32 stages=3" | FileCheck %s --check-prefix=R2
// RUN: attn-opt %s --convert-attn-to-gpu="tile-q=128 q-shared=1" | FileCheck %s --check-prefix=QSH
// RUN: attn-opt %s --convert-attn-to-gpu="warps=8 tile-q=256" | FileCheck %s --check-prefix=W8
// RUN: attn-opt %s --attn-gpu-pipeline="wgmma=0 tile-q=128 tile-kv=32 stages=3" | FileCheck %s --check-prefix=PTX
// RUN: attn-opt %s --attn-gpu-pipeline="wgmma=0 tile-kv=32 min-blocks=3" | FileCheck %s --check-prefix=OCC
// RUN: attn-opt %s --convert-attn-to-gpu="pipeline=1 tile-kv=32" | FileCheck %s --check-prefix=PIPE
// RUN: not attn-opt %s --convert-attn-to-gpu="pipeline=1 stages=2" 2>&1 | FileCheck %s --check-prefix=BADPIPE
// RUN: not attn-opt %s --convert-attn-to-gpu="tile-q=100" 2>&1 | FileCheck %s --check-prefix=BADQ
// RUN: not attn-opt %s --convert-attn-to-gpu="tile-kv=24" 2>&1 | FileCheck %s --check-prefix=BADKV
// RUN: not attn-opt %s --convert-attn-to-gpu="warps=9" 2>&1 | FileCheck %s --check-prefix=BADW
// RUN: not attn-opt %s --convert-attn-to-gpu="stages=5" 2>&1 | FileCheck %s --check-prefix=BADS
// RUN: not attn-opt %s --convert-attn-to-gpu="tile-kv=256 stages=4" 2>&1 | FileCheck %s --check-prefix=BADSMEM
// RUN: not attn-opt %s --convert-attn-to-gpu="f32-precision=fp64" 2>&1 | FileCheck %s --check-prefix=BADF32
// BADF32: convert-attn-to-gpu-options.mlir:{{[0-9]+}}:{{[0-9]+}}: error: f32-precision must be 3xtf32, tf32 or ieee, got 'fp64'

// Two 16-row tiles per warp (128 rows, 3 x 32-key stages): each K/V
// fragment feeds both row tiles; up to one younger tile may be pending at
// the wait. bf16: the same ldmatrix, mma.sync through inline PTX.
// R2: attn.bundle = {{.*}}block = array<i64: 128, 1, 1>
// R2-SAME: grid = array<i64: 3, 2, 1>
// R2-SAME: shared_bytes = 46080
// R2-SAME: stages = 3
// R2-SAME: tile_kv = 32 : i64, tile_q = 128 : i64, warps = 4
// R2: memref<3x32x72xbf16, #gpu.address_space<workgroup>>
// R2: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, vector<2x2xf32>
// R2:   nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// R2:   nvgpu.ldmatrix {{.*}} : memref<3x32x72xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// R2:   nvvm.inline_ptx "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// R2:   nvvm.inline_ptx "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// Q staged in shared memory once, re-read by ldmatrix every key tile.
// QSH: q_shared = true
// QSH-SAME: shared_bytes = 55296
// QSH: %[[QT:.*]] = memref.view {{.*}} to memref<128x72xbf16, #gpu.address_space<workgroup>>
// QSH: memref.extract_aligned_pointer_as_index %[[QT]]
// QSH: llvm.inline_asm has_side_effects {{.*}}"cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// QSH: scf.for
// QSH:   nvgpu.ldmatrix %[[QT]]

// W8: block = array<i64: 256, 1, 1>
// W8-SAME: grid = array<i64: 2, 2, 1>
// W8-SAME: tile_q = 256 : i64, warps = 8

// The PTX is one escaped string in the gpu.binary (\09 tab, \0A newline).
// Software pipelining: S of the first tile before the loop; each
// iteration waits for tile t + 1 (no younger group pending with 3 stages),
// issues its Q K^T, then the softmax and P V of tile t (the carried S);
// the last tile after the loop.
// PIPE: pipeline = true
// PIPE-SAME: stages = 3
// PIPE: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// PIPE: gpu.barrier
// PIPE: nvvm.inline_ptx "mma.sync
// PIPE: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, {{.*}}vector<2x2xf32>, index)
// PIPE:   nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// PIPE:   gpu.barrier
// PIPE:   nvgpu.device_async_create_group
// PIPE:   nvvm.inline_ptx "mma.sync
// PIPE:   nvvm.vote.sync any
// PIPE:   scf.yield
// PIPE: scf.if
// PIPE:   nvvm.inline_ptx "ex2.approx.ftz.f32
// BADPIPE: error: pipeline=1 keeps two key tiles in use while a third streams in: stages must be >= 3, got 2

// PTX: .target sm_90a
// PTX-SAME: .entry attn_fwd_kernel
// PTX-SAME: cp.async.cg.shared.global
// PTX-SAME: cp.async.wait_group \091;
// PTX-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-SAME: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-SAME: ex2.approx.ftz.f32
// PTX-SAME: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-SAME: cp.async.wait_group \090;

// min-blocks: ptxas is asked to leave registers for 3 blocks per SM.
// OCC: .maxntid 128, 1, 1
// OCC-SAME: .minnctapersm 3

// BADQ: convert-attn-to-gpu-options.mlir:[[# @LINE + 7]]:8: error: tile-q must be 0 (the kernel's default) or a multiple of 16 in [16, 256], got 100
// BADKV: error: tile-kv must be 0 (the kernel's default) or a multiple of 16 in [16, 256], got 24
// BADW: error: warps must be in [1, 8], got 9
// BADS: error: stages must be 0 (the kernel's default) or in [2, 4], got 5
// BADSMEM: error: the tensor-core kernel needs 313344 bytes of shared memory (tile-kv = 256, stages = 4, D = 64, E = 64); the limit is 166912 (sm_80)
func.func @attention(%q: tensor<1x2x300x64xbf16>, %k: tensor<1x2x300x64xbf16>, %v: tensor<1x2x300x64xbf16>, %o: tensor<1x2x300x64xbf16>) -> tensor<1x2x300x64xbf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>)
      scale(%s) outs(%o : tensor<1x2x300x64xbf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<1x2x300x64xbf16>
  return %r : tensor<1x2x300x64xbf16>
}
