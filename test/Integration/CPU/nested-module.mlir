// An attention in a nested builtin.module is lowered like one at the top
// level: the CPU pipeline runs on every module, innermost first (one-shot
// bufferization and the function passes see one module's symbols at a time).
// RUN: attn-opt %s --attn-cpu-pipeline | FileCheck %s

// CHECK: module {
// CHECK: module @inner {
// CHECK: llvm.func @inner_attention
// CHECK-NOT: attn.
// CHECK-NOT: tensor<
// CHECK: llvm.func @outer_attention
// CHECK-NOT: attn.
// CHECK-NOT: tensor<
module {
  module @inner {
    func.func @inner_attention(%q: tensor<1x128x64xf16>, %k: tensor<1x128x64xf16>, %v: tensor<1x128x64xf16>, %o: tensor<1x128x64xf16>) -> tensor<1x128x64xf16> {
      %s = arith.constant 0.5 : f32
      %r = attn.attention ins(%q, %k, %v : tensor<1x128x64xf16>, tensor<1x128x64xf16>, tensor<1x128x64xf16>) scale(%s)
          outs(%o : tensor<1x128x64xf16>)
          indexing_maps = [affine_map<(b0, m, n, d, e) -> (b0, m, d)>, affine_map<(b0, m, n, d, e) -> (b0, n, d)>, affine_map<(b0, m, n, d, e) -> (b0, n, e)>, affine_map<(b0, m, n, d, e) -> (b0, m, e)>]
          -> tensor<1x128x64xf16>
      return %r : tensor<1x128x64xf16>
    }
  }
  func.func @outer_attention(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %s = arith.constant 0.5 : f32
    %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
        outs(%o : tensor<4x8xf32>) causal
        indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
        -> tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
}
