// Hostile options and shapes: every option is range-checked for every kernel
// before one is chosen (the SIMT kernel in the first chunk reads none of
// the tensor-core options, the mma.sync kernel in the second none of the
// SIMT/Hopper ones), and every bad value is an error at the attention.
// RUN: not attn-opt %s --split-input-file --convert-attn-to-gpu=threads=0 2>&1 | FileCheck %s --check-prefix=THREADS0
// RUN: not attn-opt %s --split-input-file --attn-gpu-pipeline=threads=100000 2>&1 | FileCheck %s --check-prefix=THREADSBIG
// RUN: not attn-opt %s --split-input-file "--convert-attn-to-gpu=warps=1000" 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not attn-opt %s --split-input-file "--convert-attn-to-gpu=stages=99" 2>&1 | FileCheck %s --check-prefix=STAGES
// RUN: not attn-opt %s --split-input-file "--convert-attn-to-gpu=tile-kv=-1" 2>&1 | FileCheck %s --check-prefix=TILEKV
// RUN: not attn-opt %s --split-input-file "--convert-attn-to-gpu=pipeline=2" 2>&1 | FileCheck %s --check-prefix=PIPE
// RUN: not attn-opt %s --split-input-file "--convert-attn-to-gpu=rescale-threshold=-5" 2>&1 | FileCheck %s --check-prefix=RESCALE
// RUN: not attn-opt %s --split-input-file "--convert-attn-to-gpu=q-shared=5" 2>&1 | FileCheck %s --check-prefix=QSHARED
// RUN: not attn-opt %s --split-input-file "--attn-gpu-pipeline=warp-specialize=7" 2>&1 | FileCheck %s --check-prefix=WS
// RUN: not attn-opt %s --split-input-file "--attn-gpu-pipeline=pingpong=3" 2>&1 | FileCheck %s --check-prefix=PP
// RUN: not attn-opt %s --split-input-file "--attn-gpu-pipeline=min-blocks=-5" 2>&1 | FileCheck %s --check-prefix=MINB
// RUN: not attn-opt %s --split-input-file "--attn-gpu-pipeline=key-bias-mma=2" 2>&1 | FileCheck %s --check-prefix=KBM
// attn-bundle takes one module: the first chunk.
// RUN: sed -n '1,/^\/\/ -----/p' %s > %t.mlir
// RUN: rm -rf %t.d && not attn-bundle %t.mlir -o %t.d --block-threads=-1 2>&1 | FileCheck %s --check-prefix=BUNDLE
// RUN: not test -e %t.d

// THREADS0-COUNT-2: error: threads (SIMT kernel: query rows per block) must be in [1, 1024], got 0
// THREADSBIG-COUNT-2: error: threads (SIMT kernel: query rows per block) must be in [1, 1024], got 100000
// WARPS-COUNT-2: error: warps must be 0 (the kernel's default) or in [1, 12], got 1000
// STAGES-COUNT-2: error: stages must be 0 (the kernel's default) or in [2, 4], got 99
// TILEKV-COUNT-2: error: tile-kv must be 0 (the kernel's default) or a multiple of 16 in [16, 256], got -1
// PIPE-COUNT-2: error: pipeline must be in [0, 1], got 2
// RESCALE-COUNT-2: error: rescale-threshold must be in [0, 16], got -5
// QSHARED-COUNT-2: error: q-shared must be -1 (default), 0 or 1, got 5
// WS-COUNT-2: error: warp-specialize must be -1 (default), 0 or 1, got 7
// PP-COUNT-2: error: pingpong must be -1 (default), 0 or 1, got 3
// KBM-COUNT-2: error: key-bias-mma must be -1 (default), 0 or 1, got 2
// MINB-COUNT-2: convert-attn-to-gpu-invalid.mlir:{{[0-9]+}}:8: error: min-blocks must be in [-1, 32], got -5
// BUNDLE: .mlir:[[# @LINE + 4]]:8: error: threads (SIMT kernel: query rows per block) must be in [1, 1024], got -1

func.func @simt_f32(%q: tensor<2x100x32xf32>, %k: tensor<2x70x32xf32>, %v: tensor<2x70x16xf32>, %o: tensor<2x100x16xf32>) -> tensor<2x100x16xf32> {
  %s = arith.constant 0.5 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x100x32xf32>, tensor<2x70x32xf32>, tensor<2x70x16xf32>) scale(%s)
      outs(%o : tensor<2x100x16xf32>)
      indexing_maps = [affine_map<(b0, m, n, d, e) -> (b0, m, d)>, affine_map<(b0, m, n, d, e) -> (b0, n, d)>, affine_map<(b0, m, n, d, e) -> (b0, n, e)>, affine_map<(b0, m, n, d, e) -> (b0, m, e)>]
      -> tensor<2x100x16xf32>
  return %r : tensor<2x100x16xf32>
}

// -----

func.func @mma_f16(%q: tensor<1x128x48xf16>, %k: tensor<1x128x48xf16>, %v: tensor<1x128x48xf16>, %o: tensor<1x128x48xf16>) -> tensor<1x128x48xf16> {
  %s = arith.constant 0.5 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x128x48xf16>, tensor<1x128x48xf16>, tensor<1x128x48xf16>) scale(%s)
      outs(%o : tensor<1x128x48xf16>)
      indexing_maps = [affine_map<(b0, m, n, d, e) -> (b0, m, d)>, affine_map<(b0, m, n, d, e) -> (b0, n, d)>, affine_map<(b0, m, n, d, e) -> (b0, n, e)>, affine_map<(b0, m, n, d, e) -> (b0, m, e)>]
      -> tensor<1x128x48xf16>
  return %r : tensor<1x128x48xf16>
}
