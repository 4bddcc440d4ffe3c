// RUN: attn-opt %s --convert-attn-to-gpu --split-input-file --verify-diagnostics | FileCheck %s

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
// CHECK:   nvgpu.device_async_copy {{.*}}, %[[QT]]
// CHECK:   nvgpu.device_async_create_group
// CHECK:   nvgpu.device_async_copy {{.*}}, %[[KT]]
// CHECK:   nvgpu.device_async_create_group
// CHECK:   nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK:   gpu.barrier
// CHECK:   nvgpu.ldmatrix %[[QT]]
// CHECK:   scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, vector<2x2xf32>,
// CHECK:     nvgpu.device_async_wait %{{.*}} {numGroups = 0 : i32}
// CHECK:     gpu.barrier
// CHECK:     nvgpu.device_async_copy
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

// f32: the SIMT kernel. One thread per query row; grid = (ceil(M / threads), flattened batch).
// The key loop carries (m, ℓ) and rescales by α = exp(m - m'); the output is
// divided once. Causal rows stop at the diagonal.
// CHECK: module attributes {attn.bundle = {args = [{dtype = "float32", map = {{.*}}, name = "q", shape = array<i64: 2, 4, 100, 64>}
// CHECK-SAME: block = array<i64: 128, 1, 1>
// CHECK-SAME: causal = true
// CHECK-SAME: grid = array<i64: 1, 8, 1>
// CHECK-SAME: gpu.container_module
// CHECK-LABEL: func.func @attn_fwd
// CHECK-SAME: (%[[Q:.*]]: memref<2x4x100x64xf32>, %[[K:.*]]: memref<2x4x100x64xf32>, %[[V:.*]]: memref<2x4x100x64xf32>, %[[O:.*]]: memref<2x4x100x64xf32>)
// CHECK: gpu.launch
// CHECK-NOT: memref.alloca
// CHECK:   %[[UB:.*]] = arith.minui
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[UB]] step %{{.*}} iter_args(%[[M:[a-z0-9_]+]] = %{{[a-z0-9_]+}}, %[[L:[a-z0-9_]+]] = %{{[a-z0-9_]+}}, %[[A0:[a-z0-9_]+]] = %{{[a-z0-9_]+}}, {{.*}}) -> (f32, f32, f32,
// CHECK:     %[[MN:.*]] = arith.maximumf %[[M]], %{{.*}} : f32
// CHECK:     %[[ALPHA:.*]] = nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
// CHECK:     %[[P:.*]] = nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
// CHECK:     %[[AL:.*]] = arith.mulf %[[ALPHA]], %[[L]] fastmath<contract> : f32
// CHECK:     arith.addf %[[AL]], %[[P]] fastmath<contract> : f32
// CHECK:     %[[SA:.*]] = arith.mulf %[[ALPHA]], %[[A0]] : f32
// CHECK:   arith.divf
// CHECK:   memref.store %{{.*}}, %[[O]]
// CHECK-NOT: func.func @attention
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
