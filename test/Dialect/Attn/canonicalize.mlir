// RUN: attn-opt %s --canonicalize --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-cpu-pipeline --split-input-file | FileCheck %s --check-prefix=CPU

// A score_mod body that folds to a constant (a fuzzer's mutant: the score
// bypassed): the folded constant stays in the region, which reads nothing
// from outside, and the CPU pipeline lowers it (it crashed when the
// constant was hoisted out of the region).
// CHECK-LABEL: func.func @constant_body
// CHECK: score_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT: %[[C:.*]] = arith.constant 4.99{{[0-9]+}} : f32
// CHECK-NEXT: attn.yield %[[C]] : f32
// CPU-LABEL: llvm.func @constant_body
func.func @constant_body(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 0.125 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%e : tensor<4x8xf32>) indexing_maps = [
        affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
        affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] score_mod {
      ^bb0(%x: f32, %m: index, %n: index):
        %cap = arith.constant 5.0 : f32
        %t = math.tanh %cap : f32
        %z = arith.mulf %t, %cap : f32
        attn.yield %z : f32
      } -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
