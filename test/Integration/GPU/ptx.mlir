// The GPU path compiles here without a GPU: PTX for sm_90a and sm_80, and a
// bundle (PTX, cubin from ptxas, manifest). Running it is
// test/Integration/GPU/run_gpu_checks.py on the lent GPU.
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_90a" | FileCheck %s --check-prefix=SM90
// RUN: attn-opt %s --attn-gpu-pipeline="chip=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: rm -rf %t && attn-bundle %s -o %t && FileCheck %s --input-file=%t/manifest.json --check-prefix=MANIFEST
// RUN: test -s %t/kernel.ptx && test -s %t/kernel.cubin
// sm_80 bundles get a cubin too (ptxas took no sm_80 kernel whose PTX
// declared ISA 7.0 below cp.async's L2::128B qualifier, which needs 7.4).
// RUN: rm -rf %t.80 && attn-bundle %s -o %t.80 --chip=sm_80 && test -s %t.80/kernel.cubin
// RUN: FileCheck %s --input-file=%t.80/kernel.ptx --check-prefix=PTX80
// PTX80: .version 7.4
// PTX80: cp.async.cg.shared.global.L2::128B
// RUN: rm -rf %t.x && attn-bundle %s -o %t.x --explain 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// SM90: gpu.binary @attn_fwd_kernel
// SM90-SAME: chip = "sm_90a"
// SM90-SAME: .target sm_90a
// SM90-SAME: .entry attn_fwd_kernel
// SM80: .target sm_80
// Keys are written sorted; -inf is a string (JSON has no infinity); every
// file and the binding (kernel, files, launch, arguments) are hashed.
// MANIFEST: "mask_value": "-inf"
// MANIFEST: "binding_sha256": "{{[0-9a-f]{64}"}}
// MANIFEST: "format": "attn-opt-bundle/2"
// MANIFEST: "kernel": "attn_fwd_kernel"
// MANIFEST: "sha256": {
// MANIFEST-NEXT: "kernel.cubin": "{{[0-9a-f]{64}"}}
// MANIFEST-NEXT: "kernel.ptx": "{{[0-9a-f]{64}"}}
// The bool mask stays a tensor, read by the wgmma kernel into its score
// fragments; --explain names the kernel.
// EXPLAIN: ptx.mlir:[[# @LINE + 26]]:8: remark: GPU kernel: wgmma (sm_90a), 2 warpgroup(s)
// EXPLAIN-NOT: remark

// A frontend-style attention (linalg) with a boolean mask: fused, then
// compiled.
func.func @attention(%q: tensor<2x33x64xf16>, %k: tensor<2x47x64xf16>, %v: tensor<2x47x64xf16>, %mask: tensor<2x33x47xi1>) -> tensor<2x33x64xf16> {
  %zero = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %e = tensor.empty() : tensor<2x33x47xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<2x33x47xf16>) -> tensor<2x33x47xf16>
  %s = linalg.batch_matmul indexing_maps = [
      affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
      affine_map<(b, m, n, k) -> (b, m, n)>]
    ins(%q, %k : tensor<2x33x64xf16>, tensor<2x47x64xf16>) outs(%z : tensor<2x33x47xf16>) -> tensor<2x33x47xf16>
  %sm = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x33x47xf16>, tensor<2x33x47xi1>) outs(%e : tensor<2x33x47xf16>) {
  ^bb0(%x: f16, %keep: i1, %o: f16):
    %c = arith.constant 0.125 : f16
    %y = arith.mulf %x, %c : f16
    %r = arith.select %keep, %y, %ninf : f16
    linalg.yield %r : f16
  } -> tensor<2x33x47xf16>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<2x33x47xf16>) outs(%e : tensor<2x33x47xf16>) -> tensor<2x33x47xf16>
  %eo = tensor.empty() : tensor<2x33x64xf16>
  %zo = linalg.fill ins(%zero : f16) outs(%eo : tensor<2x33x64xf16>) -> tensor<2x33x64xf16>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x33x47xf16>, tensor<2x47x64xf16>) outs(%zo : tensor<2x33x64xf16>) -> tensor<2x33x64xf16>
  return %o : tensor<2x33x64xf16>
}
