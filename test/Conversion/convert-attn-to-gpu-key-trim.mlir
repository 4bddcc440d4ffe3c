// A bool key padding mask ([B, N], the -inf fill) on the warp-specialized
// kernel: the producer warpgroup scans the block's mask row (16-byte loads,
// redux.sync per warp, the four warps through shared slots and named
// barrier 9) and the key loop ends at the last kept key, published with
// Q's arrival. Look-alikes keep the whole key range: a mask over queries
// too, a finite fill (masked keys still count), rows that are not 16-byte
// multiples, a window, persistent blocks.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a persistent=1" | FileCheck %s --check-prefix=PERS

// CHECK-LABEL: attn.bundle =
// CHECK-SAME: keys past the mask's last kept key skipped
// CHECK: setmaxnreg.dec
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK: cp.async.bulk.tensor
// CHECK: llvm.intr.ctlz
// CHECK: nvvm.redux.sync max
// CHECK: bar.sync 9, 128;
// CHECK: setmaxnreg.inc
// PERS-LABEL: attn.bundle =
// PERS-NOT: keys past the mask's last kept key skipped
// PERS: gpu.launch
// PERS-NOT: nvvm.redux.sync
// PERS: attn.bundle =
func.func @key_padding(%q: tensor<2x8x1024x128xf16>, %k: tensor<2x8x2048x128xf16>, %v: tensor<2x8x2048x128xf16>, %m: tensor<2x2048xi1>, %o: tensor<2x8x1024x128xf16>) -> tensor<2x8x1024x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x128xf16>, tensor<2x8x2048x128xf16>, tensor<2x8x2048x128xf16>) scale(%s)
      mask(%m : tensor<2x2048xi1>)
      outs(%o : tensor<2x8x1024x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<2x8x1024x128xf16>
  return %r : tensor<2x8x1024x128xf16>
}

// -----

// CHECK-LABEL: attn.bundle =
// CHECK-NOT: keys past the mask's last kept key skipped
// CHECK: gpu.launch
// CHECK-NOT: nvvm.redux.sync
func.func @query_mask(%q: tensor<2x8x1024x128xf16>, %k: tensor<2x8x2048x128xf16>, %v: tensor<2x8x2048x128xf16>, %m: tensor<2x1024x2048xi1>, %o: tensor<2x8x1024x128xf16>) -> tensor<2x8x1024x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x128xf16>, tensor<2x8x2048x128xf16>, tensor<2x8x2048x128xf16>) scale(%s)
      mask(%m : tensor<2x1024x2048xi1>)
      outs(%o : tensor<2x8x1024x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, m, n)>] -> tensor<2x8x1024x128xf16>
  return %r : tensor<2x8x1024x128xf16>
}

// -----

// CHECK-LABEL: attn.bundle =
// CHECK-NOT: keys past the mask's last kept key skipped
// CHECK: gpu.launch
// CHECK-NOT: nvvm.redux.sync
func.func @finite_fill(%q: tensor<2x8x1024x128xf16>, %k: tensor<2x8x2048x128xf16>, %v: tensor<2x8x2048x128xf16>, %m: tensor<2x2048xi1>, %o: tensor<2x8x1024x128xf16>) -> tensor<2x8x1024x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x128xf16>, tensor<2x8x2048x128xf16>, tensor<2x8x2048x128xf16>) scale(%s)
      mask(%m : tensor<2x2048xi1>)
      outs(%o : tensor<2x8x1024x128xf16>) mask_value = -1.0e4 indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<2x8x1024x128xf16>
  return %r : tensor<2x8x1024x128xf16>
}

// -----

// CHECK-LABEL: attn.bundle =
// CHECK-NOT: keys past the mask's last kept key skipped
// CHECK: gpu.launch
// CHECK-NOT: nvvm.redux.sync
func.func @rows_not_16_bytes(%q: tensor<2x8x1024x128xf16>, %k: tensor<2x8x2040x128xf16>, %v: tensor<2x8x2040x128xf16>, %m: tensor<2x2040xi1>, %o: tensor<2x8x1024x128xf16>) -> tensor<2x8x1024x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x128xf16>, tensor<2x8x2040x128xf16>, tensor<2x8x2040x128xf16>) scale(%s)
      mask(%m : tensor<2x2040xi1>)
      outs(%o : tensor<2x8x1024x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<2x8x1024x128xf16>
  return %r : tensor<2x8x1024x128xf16>
}
