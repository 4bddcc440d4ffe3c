// A function of several chained attentions (a model's layers), fused and
// lowered for the CPU: attn-outline gives each its own function, and the
// result matches the unfused program run through stock MLIR.
// RUN: attn-opt %s --attn-cpu-pipeline -o /dev/null
// RUN: attn-opt %s --attn-fuse --attn-outline | FileCheck %s
// RUN: %exec-check %s
//
// CHECK-COUNT-3: func.func private @layers_attn
// CHECK-LABEL: func.func @layers(
// CHECK-COUNT-3: call @layers_attn
// EXEC: amp=2.0 arg3=bias tol=1e-5

func.func @layers(%q: tensor<2x20x16xf32>, %k: tensor<2x33x16xf32>, %v: tensor<2x33x16xf32>, %bias: tensor<20x33xf32>) -> tensor<2x20x16xf32> {
  %z = arith.constant 0.0 : f32
  %sc = arith.constant 0.25 : f32
  %es0 = tensor.empty() : tensor<2x20x33xf32>
  %fs0 = linalg.fill ins(%z : f32) outs(%es0 : tensor<2x20x33xf32>) -> tensor<2x20x33xf32>
  %s0 = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, d) -> (b, m, d)>, affine_map<(b, m, n, d) -> (b, n, d)>, affine_map<(b, m, n, d) -> (b, m, n)>] ins(%q, %k : tensor<2x20x16xf32>, tensor<2x33x16xf32>) outs(%fs0 : tensor<2x20x33xf32>) -> tensor<2x20x33xf32>
  %t0 = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s0, %bias : tensor<2x20x33xf32>, tensor<20x33xf32>) outs(%es0 : tensor<2x20x33xf32>) {
  ^bb0(%a: f32, %w: f32, %o: f32):
    %x = arith.mulf %a, %sc : f32
    %y = arith.addf %x, %w : f32
    linalg.yield %y : f32
  } -> tensor<2x20x33xf32>
  %ep0 = tensor.empty() : tensor<2x20x33xf32>
  %p0 = linalg.softmax dimension(2) ins(%t0 : tensor<2x20x33xf32>) outs(%ep0 : tensor<2x20x33xf32>) -> tensor<2x20x33xf32>
  %eo0 = tensor.empty() : tensor<2x20x16xf32>
  %fo0 = linalg.fill ins(%z : f32) outs(%eo0 : tensor<2x20x16xf32>) -> tensor<2x20x16xf32>
  %o0 = linalg.batch_matmul ins(%p0, %v : tensor<2x20x33xf32>, tensor<2x33x16xf32>) outs(%fo0 : tensor<2x20x16xf32>) -> tensor<2x20x16xf32>
  %es1 = tensor.empty() : tensor<2x20x33xf32>
  %fs1 = linalg.fill ins(%z : f32) outs(%es1 : tensor<2x20x33xf32>) -> tensor<2x20x33xf32>
  %s1 = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, d) -> (b, m, d)>, affine_map<(b, m, n, d) -> (b, n, d)>, affine_map<(b, m, n, d) -> (b, m, n)>] ins(%o0, %k : tensor<2x20x16xf32>, tensor<2x33x16xf32>) outs(%fs1 : tensor<2x20x33xf32>) -> tensor<2x20x33xf32>
  %t1 = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s1, %bias : tensor<2x20x33xf32>, tensor<20x33xf32>) outs(%es1 : tensor<2x20x33xf32>) {
  ^bb0(%a: f32, %w: f32, %o: f32):
    %x = arith.mulf %a, %sc : f32
    %y = arith.addf %x, %w : f32
    linalg.yield %y : f32
  } -> tensor<2x20x33xf32>
  %ep1 = tensor.empty() : tensor<2x20x33xf32>
  %p1 = linalg.softmax dimension(2) ins(%t1 : tensor<2x20x33xf32>) outs(%ep1 : tensor<2x20x33xf32>) -> tensor<2x20x33xf32>
  %eo1 = tensor.empty() : tensor<2x20x16xf32>
  %fo1 = linalg.fill ins(%z : f32) outs(%eo1 : tensor<2x20x16xf32>) -> tensor<2x20x16xf32>
  %o1 = linalg.batch_matmul ins(%p1, %v : tensor<2x20x33xf32>, tensor<2x33x16xf32>) outs(%fo1 : tensor<2x20x16xf32>) -> tensor<2x20x16xf32>
  %es2 = tensor.empty() : tensor<2x20x33xf32>
  %fs2 = linalg.fill ins(%z : f32) outs(%es2 : tensor<2x20x33xf32>) -> tensor<2x20x33xf32>
  %s2 = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, d) -> (b, m, d)>, affine_map<(b, m, n, d) -> (b, n, d)>, affine_map<(b, m, n, d) -> (b, m, n)>] ins(%o1, %k : tensor<2x20x16xf32>, tensor<2x33x16xf32>) outs(%fs2 : tensor<2x20x33xf32>) -> tensor<2x20x33xf32>
  %t2 = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s2, %bias : tensor<2x20x33xf32>, tensor<20x33xf32>) outs(%es2 : tensor<2x20x33xf32>) {
  ^bb0(%a: f32, %w: f32, %o: f32):
    %x = arith.mulf %a, %sc : f32
    %y = arith.addf %x, %w : f32
    linalg.yield %y : f32
  } -> tensor<2x20x33xf32>
  %ep2 = tensor.empty() : tensor<2x20x33xf32>
  %p2 = linalg.softmax dimension(2) ins(%t2 : tensor<2x20x33xf32>) outs(%ep2 : tensor<2x20x33xf32>) -> tensor<2x20x33xf32>
  %eo2 = tensor.empty() : tensor<2x20x16xf32>
  %fo2 = linalg.fill ins(%z : f32) outs(%eo2 : tensor<2x20x16xf32>) -> tensor<2x20x16xf32>
  %o2 = linalg.batch_matmul ins(%p2, %v : tensor<2x20x33xf32>, tensor<2x33x16xf32>) outs(%fo2 : tensor<2x20x16xf32>) -> tensor<2x20x16xf32>
  return %o2 : tensor<2x20x16xf32>
}
