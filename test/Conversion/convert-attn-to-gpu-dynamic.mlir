// Dynamic shapes: batch dims, m and n may be dynamic; each tensor becomes a
// flat pointer viewed in the kernel with its runtime sizes and strides, the
// dynamic sizes are int64 kernel parameters (size_<dim>, after the
// tensors in the manifest), and grid x / y are -1 (the launcher computes
// them by launch_rules.grid). Head dims stay static; what the tensor-core
// kernels cannot take dynamically is refused with a reason. D = 128 with a
// dynamic N takes the warp-specialized kernel with Q/K/V by TMA (the loader
// encodes the tensor maps at each call's sizes).
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" -verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_80" -verify-diagnostics | FileCheck %s --check-prefix=SM80

// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: name = "q", shape = array<i64: -1, 16, -1, 128>
// CHECK-SAME: name = "k", shape = array<i64: -1, 16, -1, 128>
// CHECK-SAME: name = "out", shape = array<i64: -1, 16, -1, 128>
// CHECK-SAME: {dtype = "int64", map = "size", name = "size_b0", shape = array<i64>}
// CHECK-SAME: {dtype = "int64", map = "size", name = "size_m", shape = array<i64>}
// CHECK-SAME: {dtype = "int64", map = "size", name = "size_n", shape = array<i64>}
// CHECK-SAME: {box = array<i64: 1, 1, 128, 64>, dtype = "int64", map = "tensormap", name = "tmap_k", shape = array<i64: 16>, tensor = "k"}
// CHECK-SAME: grid = array<i64: -1, 1, 1>
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup
// CHECK-SAME: Q/K/V by TMA
// CHECK-SAME: persistent: up to 132 blocks take the query tiles from a counter
// CHECK-SAME: dynamic sizes (b0, m, n) as kernel parameters
// CHECK-SAME: grid = "[min(ceil(m / tile_q) * b0 * b1, persistent), 1, 1]"
// CHECK-SAME: persistent = 132
// CHECK: func.func @attn_fwd(%[[Q:.*]]: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf16>, %[[B:.*]]: index, %[[M:.*]]: index, %[[N:.*]]: index, %{{.*}}: memref<2xi32>, %{{.*}}: memref<16xi64>, %{{.*}}: memref<16xi64>)
// The grid: ceil(m / 128) query blocks times 16 * b batch entries, at most
// 132 persistent blocks.
// CHECK: %[[GX:.*]] = arith.ceildivui %{{.*}}, %c128
// CHECK: %[[GY:.*]] = arith.muli %c16, %[[B]]
// CHECK: %[[T:.*]] = arith.muli %[[GX]], %[[GY]]
// CHECK: %[[P:.*]] = arith.minui %[[T]], %c132
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[P]], {{.*}} = %c1{{.*}},
// The sizes narrowed to 32 bits in the kernel, then the views.
// CHECK: %[[B32:.*]] = arith.index_cast %[[B]] : index to i32
// CHECK: %[[B1:.*]] = arith.index_castui %[[B32]] : i32 to index
// CHECK: %[[M32:.*]] = arith.index_cast %[[M]] : index to i32
// CHECK: %[[M1:.*]] = arith.index_castui %[[M32]] : i32 to index
// CHECK: memref.reinterpret_cast %[[Q]] to offset: [0], sizes: [%[[B1]], 16, %[[M1]], 128], strides: [%{{.*}}, %{{.*}}, 128, 1] : memref<1099511627776xf16> to memref<?x16x?x128xf16, strided<[?, ?, 128, 1]>>
// CHECK-COUNT-3: memref.reinterpret_cast
// The shared memory keeps upstream's alignment: declared 1024-aligned the
// plain dynamic kernel measured 0.99-1.00x (only document and chunk
// ranges take it: convert-attn-to-gpu-score-mod.mlir).
// CHECK: gpu.dynamic_shared_memory :

// SM80-LABEL: attn.bundle = {
// SM80-SAME: grid = array<i64: -1, -1, 1>
// SM80-SAME: kernel_choice = "mma.sync m16n8k16
// SM80-SAME: dynamic sizes (b0, m, n)
func.func @bhnd(%q: tensor<?x16x?x128xf16>, %k: tensor<?x16x?x128xf16>, %v: tensor<?x16x?x128xf16>, %o: tensor<?x16x?x128xf16>) -> tensor<?x16x?x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>, tensor<?x16x?x128xf16>) scale(%s)
      outs(%o : tensor<?x16x?x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<?x16x?x128xf16>
  return %r : tensor<?x16x?x128xf16>
}

// -----

// Causal over a dynamic m and n with a bias [m, n] of the same dynamic
// sizes: the bias is read from global memory through its view (no
// shared-memory staging: a dynamic row length has no known alignment);
// causal blocks run longest first from the runtime grid size.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: name = "mask", shape = array<i64: -1, -1>
// CHECK-SAME: name = "size_m"
// CHECK-SAME: name = "size_n"
// CHECK-SAME: grid = array<i64: -1, 8, 1>
// CHECK-NOT: mask tiles staged
// CHECK-SAME: kernel_choice = "wgmma (sm_90a)
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%[[GX:.*]] = %{{.*}}, %{{.*}} = %c8
// CHECK: memref.reinterpret_cast {{.*}} : memref<1099511627776xf16> to memref<?x?xf16, strided<[?, 1]>>
// CHECK: %[[LAST:.*]] = arith.addi %[[GX]], %c-1
// CHECK: arith.subi %[[LAST]], %[[BX]]
// SM80-LABEL: attn.bundle = {
// SM80-SAME: grid = array<i64: -1, 8, 1>
func.func @causal_bias(%q: tensor<8x?x64xf16>, %k: tensor<8x?x64xf16>, %v: tensor<8x?x64xf16>, %bias: tensor<?x?xf16>, %o: tensor<8x?x64xf16>) -> tensor<8x?x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<8x?x64xf16>, tensor<8x?x64xf16>, tensor<8x?x64xf16>) scale(%s)
      mask(%bias : tensor<?x?xf16>)
      outs(%o : tensor<8x?x64xf16>) causal indexing_maps = [
        affine_map<(h, m, n, d, e) -> (h, m, d)>, affine_map<(h, m, n, d, e) -> (h, n, d)>,
        affine_map<(h, m, n, d, e) -> (h, n, e)>, affine_map<(h, m, n, d, e) -> (h, m, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<8x?x64xf16>
  return %r : tensor<8x?x64xf16>
}

// -----

// Decode with a dynamic batch and key count (M = 1 is static): the
// mma.sync decode kernel with 16-row warps and split-KV whose count is
// chosen at launch (grid z -1, splits -1): the workspace is sized by grid
// z and y, each block's chunk computed from gridDim.z, and a launch with
// one split takes the plain epilogue. One row warp at 64 < D <= 128: two
// key warps over 32-key tiles (16 keys each), three stages.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: name = "size_b0"
// CHECK-SAME: name = "size_n"
// CHECK-SAME: {dtype = "float32", map = "workspace", name = "o_part", shape = array<i64: -1, -1, 1, 128>}
// CHECK-SAME: {dtype = "float32", map = "workspace", name = "ml_part", shape = array<i64: -1, -1, 1, 2>}
// CHECK-SAME: {dtype = "int32", map = "workspace", name = "locks", shape = array<i64: -1, 1>}
// CHECK-SAME: block = array<i64: 64, 1, 1>
// CHECK-SAME: grid = array<i64: 1, -1, -1>
// CHECK-SAME: kernel_choice = "mma.sync m16n8k16, 1 warps x 1 x 16 query rows, 32-key tiles, 3 stages, 2 key warps per row tile (16 keys of each tile each
// CHECK-SAME: split-KV: the key ranges per query tile chosen at launch
// CHECK-SAME: key_warps = 2
// CHECK-SAME: splits = -1
// CHECK-NOT: variants
// CHECK: func.func @attn_fwd({{.*}}, %[[Z:.*]]: index)
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}, {{.*}}, %[[GZ:.*]] = %[[Z]])
// CHECK: arith.ceildivui %{{.*}}, %[[GZ]]
// CHECK: %[[SEVERAL:.*]] = arith.cmpi ugt, %[[GZ]], %c1
// CHECK-NEXT: scf.if %[[SEVERAL]] {
// The merge of a run-time split count: no staged statistics; one online
// pass per task, 8 partials a chunk, two tasks side by side: every (m, l)
// and O load of the chunk before its math.
// CHECK: "membar.gl;"
// CHECK-NOT: xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for {{.*}} step %c8
// CHECK-COUNT-32: ld.global.cg.v{{[24]}}.f32
// CHECK-NOT: ld.global.cg
// CHECK: arith.maximumf
// CHECK: scf.yield
// SM80-LABEL: attn.bundle = {
func.func @decode(%q: tensor<?x32x1x128xf16>, %k: tensor<?x32x?x128xf16>, %v: tensor<?x32x?x128xf16>, %o: tensor<?x32x1x128xf16>) -> tensor<?x32x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x32x1x128xf16>, tensor<?x32x?x128xf16>, tensor<?x32x?x128xf16>) scale(%s)
      outs(%o : tensor<?x32x1x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<?x32x1x128xf16>
  return %r : tensor<?x32x1x128xf16>
}

// -----

// The same decode at D = 64 keeps 64-key tiles (32-key ones measured
// 0.97-1.04x there: no gain).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: kernel_choice = "mma.sync m16n8k16, 1 warps x 1 x 16 query rows, 64-key tiles, {{[23]}} stages, 2 key warps per row tile (32 keys of each tile each
// SM80-LABEL: attn.bundle = {
func.func @decode_d64(%q: tensor<?x32x1x64xf16>, %k: tensor<?x32x?x64xf16>, %v: tensor<?x32x?x64xf16>, %o: tensor<?x32x1x64xf16>) -> tensor<?x32x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x32x1x64xf16>, tensor<?x32x?x64xf16>, tensor<?x32x?x64xf16>) scale(%s)
      outs(%o : tensor<?x32x1x64xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<?x32x1x64xf16>
  return %r : tensor<?x32x1x64xf16>
}

// -----

// Speculative decode with GQA packing (64 rows, four row warps): two key
// warps and three stages, as a static bundle (the launch rule then aims at
// one wave of ranges); the merge of a run-time split count is shared by the
// last 8 blocks from 8 ranges (a check at run time; fewer, and the last
// block runs the 8 slices). A block counts itself started only where grid
// z has several ranges (a launch with one takes the plain epilogue and
// never resets the counter). Where the launch's grid is full with one key
// range, a variant attn-bundle compiles takes it: one key warp, 32-key
// tiles, four stages, no split (what a static bundle of those sizes gets);
// any other launch with one range takes a second: this launch shape
// without a count chosen at launch.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: block = array<i64: 256, 1, 1>
// CHECK-SAME: 4 warps x 1 x 16 query rows, 64-key tiles, 3 stages, 2 key warps per row tile
// CHECK-SAME: merged by the last blocks to finish from 8 ranges (8, a slice of rows each)
// CHECK-SAME: key_warps = 2
// CHECK-SAME: variants = [{key_warps = 1 : i64, splits = 1 : i64, stages = 4 : i64, tile_kv = 32 : i64, when = "full_grid_one_range"}, {key_warps = 2 : i64, splits = 1 : i64, when = "one_range"}]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}}, {{.*}}, %[[GZ:arg[0-9]+]] = %{{[a-z0-9_]+}}) threads
// CHECK: %[[SEVERAL:.*]] = arith.cmpi ugt, %[[GZ]], %c1
// CHECK: %[[AND:.*]] = arith.andi %{{.*}}, %[[SEVERAL]]
// CHECK-NEXT: scf.if %[[AND]] {
// CHECK-NEXT: %c512_i32 = arith.constant 512 : i32
// CHECK-NEXT: memref.atomic_rmw addi %c512_i32
// CHECK: memref.atomic_rmw addi %c1_i32
// CHECK: arith.cmpi uge, %{{.*}}, %c8_i32 : i32
// CHECK: scf.while
// CHECK: nanosleep.u32
// CHECK: scf.while
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c8{{.*}} step %c1
// CHECK: llvm.intr.ctpop
// SM80-LABEL: attn.bundle = {
func.func @decode_packed(%q: tensor<?x8x4x16x128xf16>, %k: tensor<?x8x?x128xf16>, %v: tensor<?x8x?x128xf16>, %o: tensor<?x8x4x16x128xf16>) -> tensor<?x8x4x16x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x8x4x16x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>) scale(%s)
      outs(%o : tensor<?x8x4x16x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>] -> tensor<?x8x4x16x128xf16>
  return %r : tensor<?x8x4x16x128xf16>
}

// -----

// The same through 64-key pages with a dynamic batch: the variant keeps
// the default tiles (one key warp, no split).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: a full grid with one key range takes variant v1 (one key warp, no split), another launch with one key range v2
// CHECK-SAME: variants = [{key_warps = 1 : i64, splits = 1 : i64, when = "full_grid_one_range"}, {key_warps = 2 : i64, splits = 1 : i64, when = "one_range"}]
// SM80-LABEL: attn.bundle = {
func.func @decode_packed_paged(%q: tensor<?x8x4x16x128xf16>, %kc: tensor<1000x64x8x128xf16>, %vc: tensor<1000x64x8x128xf16>, %t: tensor<?x64xi32>, %o: tensor<?x8x4x16x128xf16>) -> tensor<?x8x4x16x128xf16> {
  %s = arith.constant 0.088 : f32
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<1000x64x8x128xf16>, tensor<?x64xi32> -> tensor<?x4096x8x128xf16>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<1000x64x8x128xf16>, tensor<?x64xi32> -> tensor<?x4096x8x128xf16>
  %r = attn.attention ins(%q, %k, %v : tensor<?x8x4x16x128xf16>, tensor<?x4096x8x128xf16>, tensor<?x4096x8x128xf16>) scale(%s)
      outs(%o : tensor<?x8x4x16x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>] -> tensor<?x8x4x16x128xf16>
  return %r : tensor<?x8x4x16x128xf16>
}

// -----

// Past D = 128, GQA-packed one-warp decode keeps two 32-key stages; a
// launch whose last wave three stages fill better takes the variant with
// three (rule decode_stages).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: 32-key tiles, 2 stages, 2 key warps per row tile
// CHECK-SAME: a launch with one key range whose last wave three stages fill better takes variant v1 (three stages, no split)
// CHECK-SAME: variants = [{key_warps = 2 : i64, splits = 1 : i64, stages = 3 : i64, when = "decode_stages"}]
// SM80-LABEL: attn.bundle = {
func.func @decode_d256(%q: tensor<?x8x4x1x256xf16>, %k: tensor<?x8x?x256xf16>, %v: tensor<?x8x?x256xf16>, %o: tensor<?x8x4x1x256xf16>) -> tensor<?x8x4x1x256xf16> {
  %s = arith.constant 0.0625 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x8x4x1x256xf16>, tensor<?x8x?x256xf16>, tensor<?x8x?x256xf16>) scale(%s)
      outs(%o : tensor<?x8x4x1x256xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>] -> tensor<?x8x4x1x256xf16>
  return %r : tensor<?x8x4x1x256xf16>
}

// -----

// With a static batch the pass's stage rule has already chosen for the
// launch's blocks: no variant.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: 32-key tiles, 3 stages, 2 key warps per row tile
// CHECK-NOT: variants
// CHECK: func.func @attn_fwd
// SM80-LABEL: attn.bundle = {
func.func @decode_d256_static_batch(%q: tensor<64x8x4x1x256xf16>, %k: tensor<64x8x?x256xf16>, %v: tensor<64x8x?x256xf16>, %o: tensor<64x8x4x1x256xf16>) -> tensor<64x8x4x1x256xf16> {
  %s = arith.constant 0.0625 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<64x8x4x1x256xf16>, tensor<64x8x?x256xf16>, tensor<64x8x?x256xf16>) scale(%s)
      outs(%o : tensor<64x8x4x1x256xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>] -> tensor<64x8x4x1x256xf16>
  return %r : tensor<64x8x4x1x256xf16>
}

// -----

// f32 runs on the tensor cores (3xTF32) with dynamic shapes too.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: name = "q", shape = array<i64: -1, 64>
// CHECK-SAME: kernel_choice = "mma.sync m16n8k8 3xTF32
// CHECK-SAME: dynamic sizes (m, n) as kernel parameters
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// SM80-LABEL: attn.bundle = {
// SM80-SAME: kernel_choice = "mma.sync m16n8k8 3xTF32
func.func @f32(%q: tensor<?x64xf32>, %k: tensor<?x64xf32>, %v: tensor<?x64xf32>, %o: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>)
      scale(%s) outs(%o : tensor<?x64xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// -----

// Varlen with dynamic token counts: the tables stay static ([S + 1]);
// each head has floor(T / tile_q) + S tile slots, computed from the
// runtime T, which persistent blocks (at most 132) take from a counter;
// the mask's sizes are not kernel arguments (the tensors carry them).
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: name = "q", shape = array<i64: -1, 8, 128>
// CHECK-SAME: name = "cu_seqlens_q", shape = array<i64: 5>
// CHECK-SAME: name = "size_m"
// CHECK-SAME: name = "size_n"
// CHECK-SAME: grid = array<i64: -1, 1, 1>
// CHECK-SAME: persistent: up to 132 blocks
// CHECK-SAME: varlen: 4 packed sequences
// CHECK: %[[T:.*]] = arith.divui %{{.*}}, %c128
// CHECK: %[[GX:.*]] = arith.addi %[[T]], %c4
// CHECK: %[[TILES:.*]] = arith.muli %[[GX]], %c8
// CHECK: %[[P:.*]] = arith.minui %[[TILES]], %c132
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[P]],
// SM80-LABEL: attn.bundle = {
// SM80-SAME: varlen: 4 packed sequences
func.func @varlen(%q: tensor<?x8x128xf16>, %k: tensor<?x8x128xf16>, %v: tensor<?x8x128xf16>, %cq: tensor<5xi32>, %ck: tensor<5xi32>, %o: tensor<?x8x128xf16>) -> tensor<?x8x128xf16> {
  %s = arith.constant 0.088 : f32
  %c0 = arith.constant 0 : index
  %tq = tensor.dim %q, %c0 : tensor<?x8x128xf16>
  %tk = tensor.dim %k, %c0 : tensor<?x8x128xf16>
  %m = attn.varlen_mask %cq, %ck causal bottom_right sizes(%tq, %tk) : tensor<5xi32>, tensor<5xi32> -> tensor<?x?xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<?x8x128xf16>, tensor<?x8x128xf16>, tensor<?x8x128xf16>) scale(%s)
      mask(%m : tensor<?x?xi1>)
      outs(%o : tensor<?x8x128xf16>) indexing_maps = [
        affine_map<(h, m, n, d, e) -> (m, h, d)>, affine_map<(h, m, n, d, e) -> (n, h, d)>,
        affine_map<(h, m, n, d, e) -> (n, h, e)>, affine_map<(h, m, n, d, e) -> (m, h, e)>,
        affine_map<(h, m, n, d, e) -> (m, n)>] -> tensor<?x8x128xf16>
  return %r : tensor<?x8x128xf16>
}

// -----

// Serving: paged K/V with per-sequence lengths and a dynamic batch (the
// cache and the table's width static). The block table and kv_lens have
// one row per sequence: flat pointers viewed with the runtime batch size;
// the split count is chosen at launch.
// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: name = "q", shape = array<i64: -1, 8, 4, 1, 128>
// CHECK-SAME: name = "k", shape = array<i64: 300, 16, 8, 128>
// CHECK-SAME: map = "kv_lens", name = "kv_lens", shape = array<i64: -1>
// CHECK-SAME: map = "block_table", name = "block_table", shape = array<i64: -1, 100>
// CHECK-SAME: name = "size_b0"
// CHECK-SAME: paged K/V (pages of 16 keys), per-sequence key counts, GQA packing
// CHECK-SAME: dynamic sizes (b0) as kernel parameters
// CHECK: func.func @attn_fwd(%{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xf16>, %{{.*}}: memref<1099511627776xi32>, %{{.*}}: memref<1099511627776xi32>,
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<1099511627776xi32> to memref<?xi32
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%{{.*}}, 100], strides: [100, 1] : memref<1099511627776xi32> to memref<?x100xi32
// SM80-LABEL: attn.bundle = {
// SM80-SAME: paged K/V (pages of 16 keys), per-sequence key counts
func.func @paged_lens(%q: tensor<?x8x4x1x128xf16>, %kc: tensor<300x16x8x128xf16>, %vc: tensor<300x16x8x128xf16>, %t: tensor<?x100xi32>, %lens: tensor<?xi32>, %o: tensor<?x8x4x1x128xf16>) -> tensor<?x8x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<300x16x8x128xf16>, tensor<?x100xi32> -> tensor<?x1600x8x128xf16>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<300x16x8x128xf16>, tensor<?x100xi32> -> tensor<?x1600x8x128xf16>
  %m = attn.length_mask %lens : tensor<?xi32> -> tensor<?x1600xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<?x8x4x1x128xf16>, tensor<?x1600x8x128xf16>, tensor<?x1600x8x128xf16>) scale(%s)
      mask(%m : tensor<?x1600xi1>)
      outs(%o : tensor<?x8x4x1x128xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n)>]
      -> tensor<?x8x4x1x128xf16>
  return %r : tensor<?x8x4x1x128xf16>
}

// -----

// The table's rows must follow the batch: a static table under a dynamic
// batch could be indexed past its end.
func.func @static_table(%q: tensor<?x4x1x64xf16>, %kc: tensor<10x4x16x64xf16>, %vc: tensor<10x4x16x64xf16>, %t: tensor<2x4xi32>, %o: tensor<?x4x1x64xf16>) -> tensor<?x4x1x64xf16> {
  %s = arith.constant 0.125 : f32
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 2 : tensor<10x4x16x64xf16>, tensor<2x4xi32> -> tensor<?x4x64x64xf16>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 2 : tensor<10x4x16x64xf16>, tensor<2x4xi32> -> tensor<?x4x64x64xf16>
  // expected-error @below {{'block_table' ('tensor<2x4xi32>') must have as many rows as batch dim 0, dynamic exactly when that dim is}}
  %r = attn.attention ins(%q, %k, %v : tensor<?x4x1x64xf16>, tensor<?x4x64x64xf16>, tensor<?x4x64x64xf16>) scale(%s)
      outs(%o : tensor<?x4x1x64xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<?x4x1x64xf16>
  return %r : tensor<?x4x1x64xf16>
}
