// The stock mlir-opt runs every attn pass through the plugin
// (build/lib/AttnPlugin.so: --load-dialect-plugin and --load-pass-plugin;
// passes loaded from a plugin are named in --pass-pipeline).
// RUN: mlir-opt %s --load-dialect-plugin=%attn_obj_root/lib/AttnPlugin.so \
// RUN:   --load-pass-plugin=%attn_obj_root/lib/AttnPlugin.so \
// RUN:   --pass-pipeline="builtin.module(attn-fuse{explain=true}, attn-tile{tile-q=16 tile-kv=32})" 2>&1 \
// RUN:   | FileCheck %s
// RUN: mlir-opt %s --load-dialect-plugin=%attn_obj_root/lib/AttnPlugin.so \
// RUN:   --load-pass-plugin=%attn_obj_root/lib/AttnPlugin.so \
// RUN:   --pass-pipeline="builtin.module(attn-cpu-pipeline)" | FileCheck %s --check-prefix=CPU
// RUN: mlir-opt %s --load-dialect-plugin=%attn_obj_root/lib/AttnPlugin.so \
// RUN:   --load-pass-plugin=%attn_obj_root/lib/AttnPlugin.so \
// RUN:   --pass-pipeline="builtin.module(attn-fuse, convert-attn-to-gpu{chip=sm_90a})" | FileCheck %s --check-prefix=GPU

// CHECK: remark: attention fused: scale=0.125
// CHECK-LABEL: func.func @attention
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: attn.online_update
// CHECK: attn.finalize
// CPU: llvm.func @attention
// CPU-NOT: attn.
// GPU: func.func @attn_fwd
// GPU: gpu.launch
// GPU: cp.async.bulk.tensor
// GPU: wgmma.mma_async
func.func @attention(%q: tensor<2x128x64xf16>, %k: tensor<2x100x64xf16>, %v: tensor<2x100x64xf16>) -> tensor<2x128x64xf16> {
  %z = arith.constant 0.0 : f16
  %es = tensor.empty() : tensor<2x128x100xf16>
  %fs = linalg.fill ins(%z : f16) outs(%es : tensor<2x128x100xf16>) -> tensor<2x128x100xf16>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x128x64xf16>, tensor<2x100x64xf16>) outs(%fs : tensor<2x128x100xf16>) -> tensor<2x128x100xf16>
  %c = arith.constant 0.125 : f16
  %sc = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<2x128x100xf16>) outs(%es : tensor<2x128x100xf16>) {
  ^bb0(%x: f16, %o: f16):
    %y = arith.mulf %x, %c : f16
    linalg.yield %y : f16
  } -> tensor<2x128x100xf16>
  %p = linalg.softmax dimension(2) ins(%sc : tensor<2x128x100xf16>) outs(%es : tensor<2x128x100xf16>) -> tensor<2x128x100xf16>
  %eo = tensor.empty() : tensor<2x128x64xf16>
  %fo = linalg.fill ins(%z : f16) outs(%eo : tensor<2x128x64xf16>) -> tensor<2x128x64xf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x128x100xf16>, tensor<2x100x64xf16>) outs(%fo : tensor<2x128x64xf16>) -> tensor<2x128x64xf16>
  return %o : tensor<2x128x64xf16>
}
