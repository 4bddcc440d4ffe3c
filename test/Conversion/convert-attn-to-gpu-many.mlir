// A module with several attentions (one per layer of a model): one host
// function and kernel each, @attn_fwd_0, @attn_fwd_1, ... in module order,
// described by `attn.bundles` (with the source location and function of
// each); `attention=i` takes one alone; each kernel keeps its own
// occupancy request.
// RUN: attn-opt %s --convert-attn-to-gpu="chip=sm_90a" --gpu-kernel-outlining --attn-gpu-occupancy | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="chip=sm_90a attention=1" | FileCheck %s --check-prefix=ONE
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90a" | FileCheck %s --check-prefix=BIN
// RUN: not attn-opt %s --convert-attn-to-gpu="attention=2" 2>&1 | FileCheck %s --check-prefix=RANGE

// CHECK: attn.bundles = [{
// CHECK-SAME: function = "layer0"
// CHECK-SAME: kernel = "attn_fwd_0_kernel"
// CHECK-SAME: location = "convert-attn-to-gpu-many.mlir:[[@LINE+27]]:8"
// CHECK-SAME: mma = "wgmma"
// CHECK-SAME: }, {
// CHECK-SAME: function = "layer1"
// CHECK-SAME: kernel = "attn_fwd_1_kernel"
// CHECK-SAME: kernel_choice = "mma.sync m16n8k8 3xTF32
// CHECK-NOT: func.func @layer
// CHECK: func.func @attn_fwd_0(%{{.*}}: memref<2x4x100x64xf16>
// CHECK: gpu.launch_func @attn_fwd_0_kernel::@attn_fwd_0_kernel
// CHECK: gpu.func @attn_fwd_0_kernel({{.*}}nvvm.minctasm = 2 : i32
// CHECK: func.func @attn_fwd_1(%{{.*}}: memref<2x40x32xf32>
// CHECK: gpu.launch_func @attn_fwd_1_kernel::@attn_fwd_1_kernel
// CHECK: gpu.func @attn_fwd_1_kernel(
// CHECK-NOT: nvvm.minctasm

// ONE: attn.bundle = {
// ONE-SAME: function = "layer1"
// ONE-SAME: kernel = "attn_fwd_kernel"
// ONE: func.func @attn_fwd(%{{.*}}: memref<2x40x32xf32>
// ONE-NOT: func.func

// BIN: gpu.binary @attn_fwd_0_kernel
// BIN: gpu.binary @attn_fwd_1_kernel

// RANGE: error: attention=2 is not an attention of the module (it has 2; -1 takes all)
func.func @layer0(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>) scale(%s)
      outs(%o : tensor<2x4x100x64xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}
func.func @layer1(%q: tensor<2x40x32xf32>, %k: tensor<2x50x32xf32>, %v: tensor<2x50x32xf32>, %o: tensor<2x40x32xf32>) -> tensor<2x40x32xf32> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x40x32xf32>, tensor<2x50x32xf32>, tensor<2x50x32xf32>) scale(%s)
      outs(%o : tensor<2x40x32xf32>) indexing_maps = [
        affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
        affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>] -> tensor<2x40x32xf32>
  return %r : tensor<2x40x32xf32>
}
