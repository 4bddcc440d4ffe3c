// A whole program as a user writes it (fills, generics computing inputs,
// func.call, bufferization.to_buffer, printMemrefF32) through
// --attn-cpu-pipeline under mlir-runner.
// RUN: attn-opt %s --attn-fuse | FileCheck %s --check-prefix=FUSED
// RUN: attn-opt %s --attn-cpu-pipeline="tile-q=8 tile-kv=16" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%runner-libs \
// RUN:   | FileCheck %s

// FUSED: attn.attention

// All keys are equal, so the softmax is uniform over the 70 keys and every
// output row is the mean of V's rows: V[n, e] = n + e gives (69 / 2) + e.
// CHECK: rank = 2 offset = 0 sizes = [20, 3]
// CHECK-COUNT-20: [34.5, 35.5, 36.5]

func.func @attention(%q: tensor<20x4xf32>, %k: tensor<70x4xf32>, %v: tensor<70x3xf32>) -> tensor<20x3xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<20x70xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<20x70xf32>) -> tensor<20x70xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>,
      affine_map<(m, n, k) -> (n, k)>,
      affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<20x4xf32>, tensor<70x4xf32>) outs(%z : tensor<20x70xf32>) -> tensor<20x70xf32>
  %e3 = tensor.empty() : tensor<20x70xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<20x70xf32>) outs(%e3 : tensor<20x70xf32>) -> tensor<20x70xf32>
  %eo = tensor.empty() : tensor<20x3xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<20x3xf32>) -> tensor<20x3xf32>
  %o = linalg.matmul ins(%p, %v : tensor<20x70xf32>, tensor<70x3xf32>) outs(%zo : tensor<20x3xf32>) -> tensor<20x3xf32>
  return %o : tensor<20x3xf32>
}

func.func @main() {
  %one = arith.constant 1.0 : f32
  %eq = tensor.empty() : tensor<20x4xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%eq : tensor<20x4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    linalg.yield %f : f32
  } -> tensor<20x4xf32>
  %ek = tensor.empty() : tensor<70x4xf32>
  %k = linalg.fill ins(%one : f32) outs(%ek : tensor<70x4xf32>) -> tensor<70x4xf32>
  %ev = tensor.empty() : tensor<70x3xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%ev : tensor<70x3xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %s = arith.addi %i, %j : index
    %ii = arith.index_cast %s : index to i32
    %f = arith.sitofp %ii : i32 to f32
    linalg.yield %f : f32
  } -> tensor<70x3xf32>
  %r = func.call @attention(%q, %k, %v) : (tensor<20x4xf32>, tensor<70x4xf32>, tensor<70x3xf32>) -> tensor<20x3xf32>
  %m = bufferization.to_buffer %r : tensor<20x3xf32> to memref<20x3xf32>
  %u = memref.cast %m : memref<20x3xf32> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}
