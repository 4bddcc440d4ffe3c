// Paged K/V: K and V are attn.page_gather of caches through one block
// table; the mma.sync kernel takes the caches and the table as arguments
// and reads each key's page through the table (clamped to the pages),
// never the gathered tensor. The manifest says `paged` (page size, pages)
// and gives the table the map "block_table".
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" 2>&1 | FileCheck %s
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a wgmma=1" 2>&1 | FileCheck %s --check-prefix=WGMMA

// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: name = "k", shape = array<i64: 300, 16, 8, 128>
// CHECK-SAME: dtype = "int32", map = "block_table", name = "block_table", shape = array<i64: 4, 100>
// CHECK-SAME: paged K/V (pages of 16 keys), GQA packing: 4 query heads x 1 rows per kv head
// CHECK-SAME: paged = {page_size = 16 : i64, pages = 300 : i64}
// CHECK: func.func @attn_fwd(%{{.*}}: memref<4x8x4x1x128xf16>, %{{.*}}: memref<300x16x8x128xf16>, %{{.*}}: memref<300x16x8x128xf16>, %{{.*}}: memref<4x100xi32>
// CHECK: memref.load %{{.*}} : memref<4x100xi32>
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: memref.extract_aligned_pointer_as_index {{.*}} : memref<300x16x8x128xf16> -> index
// CHECK: llvm.inline_asm has_side_effects {{.*}}"cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// The table entries of an iteration's copies were read an iteration
// earlier (i32 loop state): none is read between the barrier and the
// copies it would hold up; the next ones are read after them.
// CHECK: scf.for {{.*}} -> ({{.*}}, i32, i32, i32, i32, i32, index) {
// CHECK-NEXT: nvgpu.device_async_wait
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: memref<4x100xi32>
// CHECK: nvgpu.device_async_create_group
// CHECK: memref.load {{.*}} : memref<4x100xi32>
// CHECK-NOT: attn.page_gather

// WGMMA: error: paged K/V runs on the mma.sync kernel; it cannot be combined with wgmma=1
func.func @paged(%q: tensor<4x8x4x1x128xf16>, %kc: tensor<300x16x8x128xf16>, %vc: tensor<300x16x8x128xf16>, %t: tensor<4x100xi32>, %o: tensor<4x8x4x1x128xf16>) -> tensor<4x8x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<300x16x8x128xf16>, tensor<4x100xi32> -> tensor<4x1600x8x128xf16>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<300x16x8x128xf16>, tensor<4x100xi32> -> tensor<4x1600x8x128xf16>
  %r = attn.attention ins(%q, %k, %v : tensor<4x8x4x1x128xf16>, tensor<4x1600x8x128xf16>, tensor<4x1600x8x128xf16>) scale(%s)
      outs(%o : tensor<4x8x4x1x128xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      -> tensor<4x8x4x1x128xf16>
  return %r : tensor<4x8x4x1x128xf16>
}

// -----

// A ragged last key tile (1616 keys, 64-key tiles): the page its rows past
// the keys read is found before the loop, so no table load sits between
// the loop's barrier and its copies here either.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: shape = array<i64: 4, 101>
// CHECK: scf.for {{.*}} -> ({{.*}}, i32, i32, i32, i32, i32, index) {
// CHECK-NEXT: nvgpu.device_async_wait
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: memref<4x101xi32>
// CHECK: nvgpu.device_async_create_group
func.func @paged_ragged(%q: tensor<4x8x4x1x128xf16>, %kc: tensor<404x16x8x128xf16>, %vc: tensor<404x16x8x128xf16>, %t: tensor<4x101xi32>, %o: tensor<4x8x4x1x128xf16>) -> tensor<4x8x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<404x16x8x128xf16>, tensor<4x101xi32> -> tensor<4x1616x8x128xf16>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<404x16x8x128xf16>, tensor<4x101xi32> -> tensor<4x1616x8x128xf16>
  %r = attn.attention ins(%q, %k, %v : tensor<4x8x4x1x128xf16>, tensor<4x1616x8x128xf16>, tensor<4x1616x8x128xf16>) scale(%s)
      outs(%o : tensor<4x8x4x1x128xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      -> tensor<4x8x4x1x128xf16>
  return %r : tensor<4x8x4x1x128xf16>
}

// -----

// A window with a finite fill: the keys it hides from the block are folded
// in after the key loop, reading V through the table there (not through the
// loop's page entries, which do not dominate it).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: paged K/V (pages of 16 keys), GQA packing: 4 query heads x 2 rows per kv head, no split-KV (a finite fill with causal/window
func.func @paged_window_fill(%q: tensor<4x8x4x2x128xf16>, %kc: tensor<300x16x8x128xf16>, %vc: tensor<300x16x8x128xf16>, %t: tensor<4x100xi32>, %o: tensor<4x8x4x2x128xf16>) -> tensor<4x8x4x2x128xf16> {
  %s = arith.constant 0.088 : f32
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<300x16x8x128xf16>, tensor<4x100xi32> -> tensor<4x1600x8x128xf16>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<300x16x8x128xf16>, tensor<4x100xi32> -> tensor<4x1600x8x128xf16>
  %r = attn.attention ins(%q, %k, %v : tensor<4x8x4x2x128xf16>, tensor<4x1600x8x128xf16>, tensor<4x1600x8x128xf16>) scale(%s)
      outs(%o : tensor<4x8x4x2x128xf16>) window = 100 mask_value = -1.0e4
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      -> tensor<4x8x4x2x128xf16>
  return %r : tensor<4x8x4x2x128xf16>
}

// -----

// Only K is paged: the kernel reads both through one table or neither.
// CHECK: error: paged K/V: the GPU kernels read K and V through one block table (both attn.page_gather of the same table)
func.func @k_only(%q: tensor<2x4x1x64xf16>, %kc: tensor<10x4x16x64xf16>, %v: tensor<2x4x64x64xf16>, %t: tensor<2x4xi32>, %o: tensor<2x4x1x64xf16>) -> tensor<2x4x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 2 : tensor<10x4x16x64xf16>, tensor<2x4xi32> -> tensor<2x4x64x64xf16>
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x1x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>) scale(%s)
      outs(%o : tensor<2x4x1x64xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<2x4x1x64xf16>
  return %r : tensor<2x4x1x64xf16>
}

// -----

// A constant table (static paging) travels in the bundle with its data.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: {dtype = "int32", map = "block_table", name = "block_table", shape = array<i64: 2, 4>, value = dense<{{\[\[}}0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi32>}
func.func @constant_table(%q: tensor<2x4x1x64xf16>, %kc: tensor<10x4x16x64xf16>, %vc: tensor<10x4x16x64xf16>, %o: tensor<2x4x1x64xf16>) -> tensor<2x4x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %t = arith.constant dense<[[0, 1, 2, 3], [4, 5, 6, 7]]> : tensor<2x4xi32>
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 2 : tensor<10x4x16x64xf16>, tensor<2x4xi32> -> tensor<2x4x64x64xf16>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 2 : tensor<10x4x16x64xf16>, tensor<2x4xi32> -> tensor<2x4x64x64xf16>
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x1x64xf16>, tensor<2x4x64x64xf16>, tensor<2x4x64x64xf16>) scale(%s)
      outs(%o : tensor<2x4x1x64xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<2x4x1x64xf16>
  return %r : tensor<2x4x1x64xf16>
}
