// The generated host function and kernel never clash with user symbols: a
// user function may itself be called @attn_fwd (or @attn_fwd_kernel); the
// bundle's module keeps only the generated ones.
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_80" | FileCheck %s

// CHECK-NOT: func.func
// CHECK: llvm.func @attn_fwd(
// CHECK: gpu.launch_func @attn_fwd_kernel::@attn_fwd_kernel
// CHECK-NOT: llvm.func @attn_fwd_kernel
// CHECK: gpu.binary @attn_fwd_kernel
func.func @attn_fwd(%q: tensor<1x128x64xf16>, %k: tensor<1x128x64xf16>, %v: tensor<1x128x64xf16>, %o: tensor<1x128x64xf16>) -> tensor<1x128x64xf16> {
  %s = arith.constant 0.5 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x128x64xf16>, tensor<1x128x64xf16>, tensor<1x128x64xf16>) scale(%s)
      outs(%o : tensor<1x128x64xf16>)
      indexing_maps = [affine_map<(b0, m, n, d, e) -> (b0, m, d)>, affine_map<(b0, m, n, d, e) -> (b0, n, d)>, affine_map<(b0, m, n, d, e) -> (b0, n, e)>, affine_map<(b0, m, n, d, e) -> (b0, m, e)>]
      -> tensor<1x128x64xf16>
  %r2 = func.call @attn_fwd_kernel(%r) : (tensor<1x128x64xf16>) -> tensor<1x128x64xf16>
  return %r2 : tensor<1x128x64xf16>
}
func.func @attn_fwd_kernel(%x: tensor<1x128x64xf16>) -> tensor<1x128x64xf16> {
  return %x : tensor<1x128x64xf16>
}
