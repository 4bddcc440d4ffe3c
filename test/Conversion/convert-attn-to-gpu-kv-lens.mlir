// Per-sequence key counts: an attention whose mask is attn.length_mask
// (with the -inf fill) takes the int32 lengths as the kernel argument
// `kv_lens` instead of a mask tensor, and each block ends its key loop at
// its sequence's length (clamped to [0, N]). With a finite fill the masked
// keys still count, so the mask stays a mask tensor.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a wgmma=1" 2>&1 | FileCheck %s --check-prefix=WGMMA

// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: dtype = "int32", map = "kv_lens", name = "kv_lens", shape = array<i64: 4>
// CHECK-NOT: name = "mask"
// CHECK-SAME: per-sequence key counts, GQA packing
// CHECK-SAME: kv_lens = {batch_dim = 0 : i64}
// CHECK: func.func @attn_fwd(
// CHECK: memref.load %{{.*}} : memref<4xi32>
// CHECK: arith.minsi
// CHECK: arith.maxsi

// WGMMA: error: per-sequence key counts (attn.length_mask) run on the mma.sync kernel; they cannot be combined with wgmma=1
func.func @lengths(%q: tensor<4x2x4x1x128xf16>, %k: tensor<4x2x3000x128xf16>, %v: tensor<4x2x3000x128xf16>, %lens: tensor<4xi32>, %o: tensor<4x2x4x1x128xf16>) -> tensor<4x2x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %m = attn.length_mask %lens : tensor<4xi32> -> tensor<4x3000xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x4x1x128xf16>, tensor<4x2x3000x128xf16>, tensor<4x2x3000x128xf16>) scale(%s)
      mask(%m : tensor<4x3000xi1>)
      outs(%o : tensor<4x2x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, n)>] -> tensor<4x2x4x1x128xf16>
  return %r : tensor<4x2x4x1x128xf16>
}

// -----

// CHECK-LABEL: attn.bundle = {
// CHECK-SAME: dtype = "bool", map = #{{.*}}, name = "mask", shape = array<i64: 4, 3000>
// CHECK-NOT: kv_lens
// CHECK-SAME: location =

// WGMMA-LABEL: attn.bundle = {
func.func @finite_fill(%q: tensor<4x2x1x128xf16>, %k: tensor<4x2x3000x128xf16>, %v: tensor<4x2x3000x128xf16>, %lens: tensor<4xi32>, %o: tensor<4x2x1x128xf16>) -> tensor<4x2x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %m = attn.length_mask %lens : tensor<4xi32> -> tensor<4x3000xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x2x1x128xf16>, tensor<4x2x3000x128xf16>, tensor<4x2x3000x128xf16>) scale(%s)
      mask(%m : tensor<4x3000xi1>)
      outs(%o : tensor<4x2x1x128xf16>) mask_value = -1.0e4 indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<4x2x1x128xf16>
  return %r : tensor<4x2x1x128xf16>
}
