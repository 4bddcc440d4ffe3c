// --mlir-pass-statistics counts fused attentions, refusals by reason and
// kernels by kind (kept by the attn passes: release LLVM compiles pass
// statistics out).
// RUN: attn-opt %s --attn-fuse --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s
// RUN: attn-opt %s --attn-fuse --mlir-pass-statistics --split-input-file -o /dev/null 2>&1 | FileCheck %s
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_80 format=isa" --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_80 format=isa f32-precision=ieee" --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=IEEE

// CHECK: 'attn-fuse'
// CHECK-NEXT: (S) 1 fused - Attentions fused
// CHECK: (S) 0 refused-other-uses
// CHECK: (S) 1 refused-softmax - Refused: no softmax over the keys
// CHECK: (S) 0 refused-too-large
// GPU: 'convert-attn-to-gpu'
// GPU-NEXT: (S) 1 kernels-mma-sync - mma.sync tensor-core kernels
// IEEE: 'convert-attn-to-gpu'
// IEEE-NEXT: (S) 1 kernels-simt - SIMT kernels
module {
func.func @fused(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %z = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6xf32>
  %fs = linalg.fill ins(%z : f32) outs(%es : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%fs : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x6xf32>) outs(%es : tensor<4x6xf32>) -> tensor<4x6xf32>
  %eo = tensor.empty() : tensor<4x8xf32>
  %fo = linalg.fill ins(%z : f32) outs(%eo : tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%fo : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
}

// -----

// The softmax runs over the queries: refused.
module {
func.func @wrong_axis(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %z = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<4x6xf32>
  %fs = linalg.fill ins(%z : f32) outs(%es : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%fs : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(0) ins(%s : tensor<4x6xf32>) outs(%es : tensor<4x6xf32>) -> tensor<4x6xf32>
  %eo = tensor.empty() : tensor<4x8xf32>
  %fo = linalg.fill ins(%z : f32) outs(%eo : tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%fo : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
}
