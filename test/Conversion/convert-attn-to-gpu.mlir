// RUN: attn-opt %s --convert-attn-to-gpu --split-input-file --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="f32-precision=tf32" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=TF32
// RUN: attn-opt %s --convert-attn-to-gpu="f32-precision=ieee" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=IEEE

// f16/bf16 with contiguous head dims: the tensor-core kernel (default
// launch shape for D = 64: 4 warps x 2 x 16 rows, 64-key tiles, 2 stages).
// Q is staged in shared memory (cp.async) and read into registers with
// ldmatrix once; the output block leaves through shared memory with
// 16-byte stores. K/V tiles stream through dynamic shared memory by cp.async (the next
// tile is issued after the barrier that frees its buffer; padded rows) and
// are read with ldmatrix (.trans for V); S = Q K^T and O += P V on
// mma.sync m16n8k16 with P re-packed from the S registers; row max/sum over
// the quad with xor shuffles; exp2 with the scale folded into one fma.
// Causal: the blocks with the most keys start first (reversed block x).
// CHECK: module attributes {attn.bundle = {{.*}}block = array<i64: 128, 1, 1>
// CHECK-SAME: grid = array<i64: 1, 8, 1>
// CHECK-SAME: q_shared = false
// CHECK-SAME: shared_bytes = 55296
// CHECK-SAME: stages = 2
// CHECK-SAME: tensor_cores = true, tile_kv = 64 : i64, tile_q = 128 : i64, warps = 4
// CHECK-LABEL: func.func @attn_fwd
// CHECK: gpu.launch blocks(%[[BX:[a-z0-9]+]], %{{.*}}, %{{.*}}) in {{.*}} dynamic_shared_memory_size
// CHECK:   %[[SM:.*]] = gpu.dynamic_shared_memory
// CHECK:   %[[KT:.*]] = memref.view %[[SM]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x72xf16, #gpu.address_space<workgroup>>
// CHECK:   %[[VT:.*]] = memref.view %[[SM]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x72xf16, #gpu.address_space<workgroup>>
// CHECK:   %[[QT:.*]] = memref.view %[[SM]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128x72xf16, #gpu.address_space<workgroup>>
// CHECK:   arith.subi %{{.*}}, %[[BX]] : index
// CHECK:   memref.extract_aligned_pointer_as_index %[[QT]]
// CHECK:   llvm.inline_asm has_side_effects {{.*}}"cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// CHECK:   nvgpu.device_async_create_group
// CHECK:   memref.extract_aligned_pointer_as_index %[[KT]]
// CHECK:   llvm.inline_asm has_side_effects {{.*}}"cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// CHECK:   nvgpu.device_async_create_group
// CHECK:   nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK:   gpu.barrier
// CHECK:   nvgpu.ldmatrix %[[QT]]
// CHECK:   scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, vector<2x2xf32>,
// CHECK:     nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK:     gpu.barrier
// CHECK:     llvm.inline_asm has_side_effects {{.*}}"cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// CHECK:     nvgpu.device_async_create_group
// CHECK:     nvgpu.ldmatrix %[[KT]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK:     nvvm.inline_ptx "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};"
// CHECK:     gpu.shuffle xor
// CHECK:     nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
// CHECK:     arith.mulf {{.*}} fastmath<contract>
// CHECK:     arith.addf {{.*}} fastmath<contract>
// CHECK:     nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
// CHECK:     nvgpu.ldmatrix %[[VT]]{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK:     nvvm.inline_ptx "mma.sync.aligned.m16n8k16
// CHECK-NOT: gpu.barrier
// CHECK:     scf.yield
// CHECK:   nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK:   gpu.barrier
// CHECK:   arith.divf
// CHECK:   vector.store %{{.*}} {alignment = 4 : i64} : memref<128x72xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK:   gpu.barrier
// CHECK:   vector.load {{.*}} {alignment = 16 : i64} : memref<128x72xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK:   vector.store %{{.*}} {alignment = 16 : i64} : memref<2x4x100x64xf16>, vector<8xf16>
// CHECK-NOT: func.func @attention
func.func @attention(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x100x64xf16>, %v: tensor<2x4x100x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x100x64xf16>, tensor<2x4x100x64xf16>)
      scale(%s) outs(%o : tensor<2x4x100x64xf16>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}

// -----

// f16 inputs accumulating into an f32 output: the SIMT kernel (the
// tensor-core kernel stages its output as 16-bit rows).
// CHECK: module attributes {attn.bundle = {{.*}}tensor_cores = false
// CHECK-LABEL: func.func @attn_fwd
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: memref.store %{{.*}} : memref<1x2x64x64xf32>
func.func @attention(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %v: tensor<1x2x64x64xf16>, %o: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>)
      scale(%s) outs(%o : tensor<1x2x64x64xf32>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<1x2x64x64xf32>
  return %r : tensor<1x2x64x64xf32>
}

// -----

// f32 (default f32-precision=3xtf32): the tensor-core kernel on TF32
// values (4 warps x 2 row tiles, Q re-read from shared memory: its split
// halves would not fit the registers). Rows are padded by 4 values (16
// bytes), copied in 4-value chunks and read with ldmatrix as 32-bit values;
// each value is split into hi (13 low mantissa bits cleared) and lo =
// x - hi, and each product is three m16n8k8 mma.sync (lo*hi, hi*lo, hi*hi). P V reads V's
// rows directly in the permuted key order of the S fragments, into a fresh
// accumulator that an f32 add folds into O.
// CHECK: module attributes {attn.bundle = {args = [{dtype = "float32", map = {{.*}}, name = "q", shape = array<i64: 2, 4, 100, 64>}
// CHECK-SAME: f32_precision = "3xtf32"
// CHECK-SAME: kernel_choice = "mma.sync m16n8k8 3xTF32 (f32 split in TF32 halves: f32-accurate), 4 warps x 2 x 16 query rows
// CHECK-SAME: q_shared = true
// CHECK-SAME: tile_q = 128
// CHECK-LABEL: func.func @attn_fwd
// CHECK: memref.extract_aligned_pointer_as_index {{.*}} : memref<128x68xf32, #gpu.address_space<workgroup>> -> index
// CHECK: memref.extract_aligned_pointer_as_index {{.*}} : memref<2x4x100x64xf32> -> index
// CHECK: llvm.inline_asm has_side_effects {{.*}}"cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<128x68xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[HI:.*]] = arith.andi %[[BITS]], %{{.*}} : i32
// CHECK: %[[HIF:.*]] = arith.bitcast %[[HI]] : i32 to f32
// CHECK: arith.subf %{{.*}}, %[[HIF]] : f32
// CHECK-NOT: cvt.rna.tf32.f32
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false} : memref<2x64x68xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK-COUNT-3: nvvm.inline_ptx "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK: memref.load %{{.*}} : memref<2x64x68xf32, #gpu.address_space<workgroup>>
// CHECK: memref.load %{{.*}} : memref<2x64x68xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-3: nvvm.inline_ptx "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<2x2xf32>
// TF32: f32_precision = "tf32"
// TF32-SAME: kernel_choice = "mma.sync m16n8k8 TF32, 4 warps x 2 x 16 query rows
// TF32: cvt.rna.tf32.f32
// f32-precision=ieee: the SIMT kernel. One thread per query row; grid = (ceil(M / threads), flattened batch).
// The key loop carries (m, ℓ) and rescales by α = exp(m - m'); the output is
// divided once. Causal rows stop at the diagonal.
// IEEE: module attributes {attn.bundle = {args = [{dtype = "float32", map = {{.*}}, name = "q", shape = array<i64: 2, 4, 100, 64>}
// IEEE-SAME: block = array<i64: 128, 1, 1>
// IEEE-SAME: causal = true
// IEEE-SAME: grid = array<i64: 1, 8, 1>
// IEEE-SAME: gpu.container_module
// IEEE: func.func @attn_fwd
// IEEE-SAME: (%[[Q:.*]]: memref<2x4x100x64xf32>, %[[K:.*]]: memref<2x4x100x64xf32>, %[[V:.*]]: memref<2x4x100x64xf32>, %[[O:.*]]: memref<2x4x100x64xf32>)
// IEEE: gpu.launch
// IEEE-NOT: memref.alloca
// IEEE:   %[[UB:.*]] = arith.minui
// IEEE:   scf.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} iter_args(%[[M:[a-z0-9_]+]] = %{{[a-z0-9_]+}}, %[[L:[a-z0-9_]+]] = %{{[a-z0-9_]+}}, %[[A0:[a-z0-9_]+]] = %{{[a-z0-9_]+}}, {{.*}}) -> (f32, f32, f32,
// IEEE:     %[[MN:.*]] = arith.maximumf %[[M]], %{{.*}} : f32
// IEEE:     %[[ALPHA:.*]] = nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
// IEEE:     %[[P:.*]] = nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
// IEEE:     %[[AL:.*]] = arith.mulf %[[ALPHA]], %[[L]] fastmath<contract> : f32
// IEEE:     arith.addf %[[AL]], %[[P]] fastmath<contract> : f32
// IEEE:     %[[SA:.*]] = arith.mulf %[[ALPHA]], %[[A0]] : f32
// IEEE:   arith.divf
// IEEE:   memref.store %{{.*}}, %[[O]]
// IEEE-NOT: func.func @attention
func.func @attention(%q: tensor<2x4x100x64xf32>, %k: tensor<2x4x100x64xf32>, %v: tensor<2x4x100x64xf32>, %o: tensor<2x4x100x64xf32>) -> tensor<2x4x100x64xf32> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>)
      scale(%s) outs(%o : tensor<2x4x100x64xf32>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<2x4x100x64xf32>
  return %r : tensor<2x4x100x64xf32>
}

// -----

// expected-error @below {{the GPU kernel path takes a module with at least one attention (after --attn-fuse), found none}}
module {
  func.func @no_attention(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

func.func @dynamic_head_dim(%q: tensor<64x?xf16>, %k: tensor<64x?xf16>, %v: tensor<64x64xf16>, %o: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %s = arith.constant 0.125 : f32
  // expected-error @below {{the GPU kernels unroll the head dims, which must be static; 'q' has type 'tensor<64x?xf16>'}}
  %r = attn.attention ins(%q, %k, %v : tensor<64x?xf16>, tensor<64x?xf16>, tensor<64x64xf16>)
      scale(%s) outs(%o : tensor<64x64xf16>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<64x64xf16>
  return %r : tensor<64x64xf16>
}

// -----

// The lse result is a kernel argument beside out (f32, out's dims without
// e): the first lane of each quad writes m + log l after the loop (lg2.approx,
// scaled to natural log).
// CHECK-LABEL: module attributes
// CHECK-SAME: {dtype = "float32", map = #{{.*}}, name = "lse", shape = array<i64: 2, 40>}
// CHECK: func.func @attn_fwd(%{{.*}}: memref<2x40x32xf16>, %{{.*}}: memref<2x50x32xf16>, %{{.*}}: memref<2x50x32xf16>, %{{.*}}: memref<2x40x32xf16>, %[[LSE:.*]]: memref<2x40xf32>)
// CHECK: lg2.approx.f32
// CHECK: memref.store %{{.*}}, %[[LSE]]
func.func @lse_on_gpu(%q: tensor<2x40x32xf16>, %k: tensor<2x50x32xf16>, %v: tensor<2x50x32xf16>, %o: tensor<2x40x32xf16>) -> tensor<2x40xf32> {
  %s = arith.constant 0.125 : f32
  %r, %l = attn.attention ins(%q, %k, %v : tensor<2x40x32xf16>, tensor<2x50x32xf16>, tensor<2x50x32xf16>) scale(%s)
      outs(%o : tensor<2x40x32xf16>) indexing_maps = [
        affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
        affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>] -> tensor<2x40x32xf16>, tensor<2x40xf32>
  return %l : tensor<2x40xf32>
}
