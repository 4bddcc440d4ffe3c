// Builds examples/consumer against the installed AttnOpt package (as another
// compiler would) and runs it.
// RUN: rm -rf %t && mkdir -p %t
// RUN: cmake --install %attn_obj_root --prefix %t/install > %t/install.log
// RUN: cmake -G Ninja -S %attn_src_root/examples/consumer -B %t/build -DCMAKE_BUILD_TYPE=Release %cmake_compilers -DAttnOpt_DIR=%t/install/lib/cmake/AttnOpt > %t/configure.log
// RUN: ninja -C %t/build > %t/build.log
// RUN: %t/build/my-compiler %s | FileCheck %s

// CHECK-LABEL: func.func @attention
// CHECK-NOT: linalg.softmax
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: attn.online_update
// CHECK: attn.finalize
func.func @attention(%q: tensor<32x16xf32>, %k: tensor<40x16xf32>, %v: tensor<40x16xf32>) -> tensor<32x16xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x40xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<32x40xf32>) -> tensor<32x40xf32>
  %s = linalg.matmul indexing_maps = [
      affine_map<(m, n, k) -> (m, k)>,
      affine_map<(m, n, k) -> (n, k)>,
      affine_map<(m, n, k) -> (m, n)>]
    ins(%q, %k : tensor<32x16xf32>, tensor<40x16xf32>) outs(%z : tensor<32x40xf32>) -> tensor<32x40xf32>
  %e3 = tensor.empty() : tensor<32x40xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<32x40xf32>) outs(%e3 : tensor<32x40xf32>) -> tensor<32x40xf32>
  %eo = tensor.empty() : tensor<32x16xf32>
  %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<32x16xf32>) -> tensor<32x16xf32>
  %o = linalg.matmul ins(%p, %v : tensor<32x40xf32>, tensor<40x16xf32>) outs(%zo : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %o : tensor<32x16xf32>
}
