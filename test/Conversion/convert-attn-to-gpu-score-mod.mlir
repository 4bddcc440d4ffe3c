// Score modifications on the tensor-core kernels: a mask tensor is read
// into the score fragments (any broadcast, through its map), a sink starts
// the running (m, l), a finite fill keeps its value and the keys hidden
// from a whole block are folded in after the key loop.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" | FileCheck %s
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu | FileCheck %s --check-prefix=SM80
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a explain=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHY
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a key-bias-mma=0" | FileCheck %s --check-prefix=FMA

// A bias per head (broadcast over the batch), scores in natural units: the
// bias pairs (contiguous along n, N even) are loaded two at a time before
// the tile's S product is issued; the accumulator is scaled (0.125) and the
// bias element added, contractible into one fma.
// CHECK-LABEL: module attributes
// CHECK-SAME: mma = "wgmma"
// CHECK: func.func @attn_fwd({{.*}}, %[[MASK:arg3]]: memref<4x100x130xf32>
// CHECK: gpu.launch
// CHECK: %[[PAIR:.*]] = vector.load %[[MASK]][%{{.*}}, %{{.*}}, %{{.*}}] {alignment = 8 : i64} : memref<4x100x130xf32>, vector<2xf32>
// CHECK-NEXT: %[[B:.*]] = vector.extract %[[PAIR]][0]
// CHECK: wgmma.mma_async
// CHECK: %[[S:.*]] = arith.mulf %{{.*}}, %[[SCALE:.*]] fastmath<contract> : f32
// CHECK: arith.addf %[[S]], %[[B]] fastmath<contract> : f32
// SM80-LABEL: module attributes
// SM80-SAME: mma = "mma.sync"
// SM80: gpu.launch
// SM80: memref.load %arg3
// WHY: remark: GPU kernel: wgmma (sm_90a)
func.func @bias(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %bias: tensor<4x100x130xf32>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>)
      scale(%s) mask(%bias : tensor<4x100x130xf32>) outs(%o : tensor<2x4x100x64xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
                       affine_map<(b, h, m, n, d, e) -> (h, m, n)>]
      -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}

// -----

// Key padding (bool [B, N]) with JAX's fill and a per-head sink: the mask
// selects the fill; the sink is loaded before the key loop and starts m.
// CHECK-LABEL: module attributes
// CHECK-SAME: mask_value = -2.38197633E+38 : f32
// CHECK-SAME: mma = "wgmma"
// CHECK: func.func @attn_fwd({{.*}}, %[[MASK:arg3]]: memref<2x130xi1>, %[[SINK:arg4]]: memref<8xbf16>
// CHECK: gpu.launch
// CHECK: memref.load %[[SINK]]
// CHECK: scf.for
// CHECK: %[[KEEP:.*]] = memref.load %[[MASK]][%{{.*}}, %{{.*}}] : memref<2x130xi1>
// CHECK: arith.select %[[KEEP]], %{{.*}}, %{{.*}} : f32
// SM80-LABEL: module attributes
// SM80-SAME: mma = "mma.sync"
// WHY: remark: GPU kernel: wgmma (sm_90a)
func.func @padding_sink(%q: tensor<2x8x100x64xbf16>, %k: tensor<2x8x130x64xbf16>, %v: tensor<2x8x130x64xbf16>, %keep: tensor<2x130xi1>, %sink: tensor<8xbf16>, %o: tensor<2x8x100x64xbf16>) -> tensor<2x8x100x64xbf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x100x64xbf16>, tensor<2x8x130x64xbf16>, tensor<2x8x130x64xbf16>)
      scale(%s) mask(%keep : tensor<2x130xi1>) sink(%sink : tensor<8xbf16>) outs(%o : tensor<2x8x100x64xbf16>)
      mask_value = -2.3819763e38
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n)>, affine_map<(b, h, m, n, d, e) -> (h)>]
      -> tensor<2x8x100x64xbf16>
  return %r : tensor<2x8x100x64xbf16>
}

// -----

// Key padding (bool [B, N]) with the -inf fill and a per-head sink: scores
// stay in the exp2 domain (the mask only selects -inf: it selects the raw
// accumulator, the scale goes into the exponent's fma), and the sink, a
// natural score, starts m in log2 units (times log2 e, kept below 2^126).
// CHECK-LABEL: module attributes
// CHECK: func.func @attn_fwd({{.*}}, %[[MASK:arg3]]: memref<2x130xi1>, %[[SINK:arg4]]: memref<8xbf16>
// CHECK: gpu.launch
// CHECK: %[[SV:.*]] = memref.load %[[SINK]]
// CHECK-NEXT: %[[SF:.*]] = arith.extf %[[SV]]
// CHECK-NEXT: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK-NEXT: %[[SL:.*]] = arith.mulf %[[SF]], %[[LOG2E]] : f32
// CHECK-NEXT: %[[CAP:.*]] = arith.constant 8.50705917E+37 : f32
// CHECK-NEXT: arith.minimumf %[[SL]], %[[CAP]] : f32
// CHECK: scf.for
// CHECK: memref.load %[[MASK]]
// CHECK: wgmma.mma_async
// CHECK: llvm.extractvalue %{{.*}}[0]
// CHECK-NOT: arith.mulf
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: arith.mulf
// CHECK: arith.maximumf
func.func @padding_sink_ninf(%q: tensor<2x8x100x64xbf16>, %k: tensor<2x8x130x64xbf16>, %v: tensor<2x8x130x64xbf16>, %keep: tensor<2x130xi1>, %sink: tensor<8xbf16>, %o: tensor<2x8x100x64xbf16>) -> tensor<2x8x100x64xbf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x100x64xbf16>, tensor<2x8x130x64xbf16>, tensor<2x8x130x64xbf16>)
      scale(%s) mask(%keep : tensor<2x130xi1>) sink(%sink : tensor<8xbf16>) outs(%o : tensor<2x8x100x64xbf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n)>, affine_map<(b, h, m, n, d, e) -> (h)>]
      -> tensor<2x8x100x64xbf16>
  return %r : tensor<2x8x100x64xbf16>
}

// -----

// Causal with a finite fill: the block's key loop stops at its diagonal as
// with -inf; the keys after it each score the fill and are folded in after
// the loop: a warp vote decides whether any e^(fill - m) is non-zero, and
// only then are their V rows summed.
// CHECK-LABEL: module attributes
// CHECK-SAME: causal = true
// CHECK-SAME: mask_value = -2.000000e+00 : f32
// CHECK: gpu.launch
// CHECK: arith.maximumf %{{.*}}, %[[FILL:.*]] : f32
// CHECK: nvvm.vote.sync any
// CHECK: scf.if
// CHECK: scf.for
// CHECK: memref.load %arg2
// SM80-LABEL: module attributes
// SM80: nvvm.vote.sync any
func.func @causal_fill(%q: tensor<1x2x300x64xf16>, %k: tensor<1x2x300x64xf16>, %v: tensor<1x2x300x64xf16>, %o: tensor<1x2x300x64xf16>) -> tensor<1x2x300x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x300x64xf16>, tensor<1x2x300x64xf16>, tensor<1x2x300x64xf16>)
      scale(%s) outs(%o : tensor<1x2x300x64xf16>) causal mask_value = -2.0
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<1x2x300x64xf16>
  return %r : tensor<1x2x300x64xf16>
}

// -----

// Look-alike for the kernel choice: f16 inputs accumulating into an f32
// output stay on the SIMT kernel, and --explain says why.
// CHECK-LABEL: module attributes
// CHECK-SAME: mma = "none"
// WHY: remark: GPU kernel: SIMT (one thread per query row, no tensor cores, far slower); no tensor cores: the output is f32, q f16 (one element type throughout)
func.func @f32_out(%q: tensor<2x100x64xf16>, %k: tensor<2x70x64xf16>, %v: tensor<2x70x64xf16>, %bias: tensor<100x70xf32>, %o: tensor<2x100x64xf32>) -> tensor<2x100x64xf32> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x100x64xf16>, tensor<2x70x64xf16>, tensor<2x70x64xf16>)
      scale(%s) mask(%bias : tensor<100x70xf32>) outs(%o : tensor<2x100x64xf32>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>,
                       affine_map<(b, m, n, d, e) -> (m, n)>]
      -> tensor<2x100x64xf32>
  return %r : tensor<2x100x64xf32>
}

// -----

// A score_mod region (ALiBi with constant per-head slopes, then Gemma-2
// soft-capping) on both tensor-core kernels: the body is cloned per score
// after the scale; what depends on the head only (the slope, read from a
// constant vector) is computed once per block; tanh is tanh.approx.f32
// (16-bit output; no libdevice call). The body ends in a multiply by the
// cap (c = 30), which leaves the scores: each row's tile max takes it once
// (c max(g) = max(c g) for c > 0) and P's exponent fma takes c log2 e.
// CHECK-LABEL: module attributes
// CHECK-SAME: mma = "wgmma"
// CHECK-SAME: score_mod = {num_args = 5 : i64, ops = [{op = "attn.table", operands = [2], shape = [4], type = "f32", values = [2.500000e-01, 6.250000e-02, 1.562500e-02, 3.906250e-03]}
// CHECK: gpu.launch
// CHECK: %[[SL:.*]] = vector.extract %{{.*}}[%{{.*}}] : f32 from vector<4xf32>
// CHECK: %[[CLOG2E:.*]] = arith.constant 43.2808495 : f32
// CHECK: wgmma.mma_async
// CHECK: arith.sitofp
// CHECK: arith.mulf %[[SL]]
// CHECK: %[[G:.*]] = nvvm.inline_ptx "tanh.approx.f32 $0, $1;"
// CHECK-NOT: math.tanh
// CHECK: %[[CAP:.*]] = arith.constant 3.000000e+01 : f32
// CHECK-NEXT: arith.mulf %{{.*}}, %[[CAP]] : f32
// CHECK: arith.mulf %[[G]], %[[CLOG2E]] fastmath<contract> : f32
// SM80: mma = "mma.sync"{{.*}}score_mod = {num_args = 5
// SM80: gpu.launch
// SM80: vector.extract %{{.*}}[%{{.*}}] : f32 from vector<4xf32>
// SM80: tanh.approx.f32
// WHY: remark: GPU kernel: wgmma (sm_90a)
func.func @alibi_softcap(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %slopes = arith.constant dense<[0.25, 0.0625, 0.015625, 0.00390625]> : tensor<4xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>) scale(%s)
      score_mod_operands(%slopes : tensor<4xf32>)
      outs(%o : tensor<2x4x100x64xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (h)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %sl: f32):
        %mm = arith.index_cast %m : index to i64
        %nn = arith.index_cast %n : index to i64
        %d = arith.subi %nn, %mm : i64
        %df = arith.sitofp %d : i64 to f32
        %bias = arith.mulf %sl, %df : f32
        %w = arith.addf %x, %bias : f32
        %cap = arith.constant 30.0 : f32
        %y = arith.divf %w, %cap : f32
        %t = math.tanh %y : f32
        %z = arith.mulf %t, %cap : f32
        attn.yield %z : f32
      } -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}

// -----

// f32 inputs: the TF32 tensor-core kernel applies the region to each
// score fragment, tanh exactly through ex2 and rcp (accurate to ~1e-7),
// not tanh.approx.
// CHECK-LABEL: module attributes
// CHECK-SAME: mma = "mma.sync"
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK: ex2.approx.ftz.f32
// CHECK: rcp.approx.ftz.f32
// CHECK-NOT: tanh.approx
// SM80: mma = "mma.sync"{{.*}}score_mod = {num_args = 4
// WHY: remark: GPU kernel: mma.sync m16n8k8 3xTF32
func.func @softcap_f32(%q: tensor<2x40x32xf32>, %k: tensor<2x50x32xf32>, %v: tensor<2x50x32xf32>, %o: tensor<2x40x32xf32>) -> tensor<2x40x32xf32> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x40x32xf32>, tensor<2x50x32xf32>, tensor<2x50x32xf32>) scale(%s)
      outs(%o : tensor<2x40x32xf32>) indexing_maps = [
        affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
        affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %m: index, %n: index):
        %cap = arith.constant 5.0 : f32
        %y = arith.divf %x, %cap : f32
        %t = math.tanh %y : f32
        %z = arith.mulf %t, %cap : f32
        attn.yield %z : f32
      } -> tensor<2x40x32xf32>
  return %r : tensor<2x40x32xf32>
}

// -----

// A score_mod operand that is a runtime tensor (a per-key weight) is a
// kernel argument `mod<i>`, loaded at the score's (clamped) key index.
// CHECK-LABEL: module attributes
// CHECK-SAME: {dtype = "float16", map = #{{.*}}, name = "mod0", shape = array<i64: 130>}
// CHECK-SAME: score_mod = {num_args = 5 : i64, ops = [{name = "mod0", op = "attn.arg", operands = [4], type = "f32"}
// CHECK: func.func @attn_fwd({{.*}}%[[W:arg[0-9]+]]: memref<130xf16>
// CHECK: wgmma.mma_async
// CHECK: memref.load %[[W]][%{{.*}}] : memref<130xf16>
// SM80: mma = "mma.sync"{{.*}}score_mod = {num_args = 5
// WHY: remark: GPU kernel: wgmma (sm_90a)
func.func @runtime_key_weight(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %w: tensor<130xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>) scale(%s)
      score_mod_operands(%w : tensor<130xf16>)
      outs(%o : tensor<2x4x100x64xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %wn: f16):
        %wf = arith.extf %wn : f16 to f32
        %y = arith.addf %x, %wf : f32
        attn.yield %y : f32
      } -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}

// -----

// ALiBi (slope_h * (n - m), the slope from the head index) under causal:
// the bias is linear in the key index, so at a tile's column j (key
// n0 + j) the wgmma kernel takes the score as
// scale * (s + j slope / scale) + slope (n0 - m). The tensor cores add
// j slope / scale: one more k-step of S in bf16 (A: the step in four bf16
// parts; B: a panel of key positions written once per block, unswizzled,
// behind the async-proxy fence), so no op per score; the row's term goes
// into each lane's tile maximum and P's exponent reference, whose factor
// becomes scale * log2 e (0.125 * 1.4427 = 0.180336878).
// CHECK-LABEL: module attributes
// CHECK-SAME: key_bias_mma = true
// CHECK-SAME: mma = "wgmma"
// CHECK: gpu.launch
// CHECK: vector.store %{{.*}} : memref<256x8xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: fence.proxy.async.shared::cta
// CHECK-NEXT: gpu.barrier
// CHECK: %[[EXPF:.*]] = arith.constant 0.180336878 : f32
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-NOT: llvm.intr.fma
// CHECK: arith.mulf %{{.*}}, %[[EXPF]] fastmath<contract> : f32
// CHECK-NEXT: arith.addf
// CHECK-NEXT: nvvm.inline_ptx "ex2.approx.ftz.f32 $0, $1;"
// With key-bias-mma=0: one fma per score with j's part within the lane's
// columns as its immediate instead.
// FMA-LABEL: function = "alibi_key_linear"
// FMA-NOT: bf16.bf16
// FMA: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, f32, f32) -> f32
// SM80: mma = "mma.sync"{{.*}}score_mod = {num_args = 5
func.func @alibi_key_linear(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>) scale(%s)
      outs(%o : tensor<2x4x100x64xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %h64 = arith.index_cast %h : index to i64
        %one = arith.constant 1 : i64
        %h1 = arith.addi %h64, %one : i64
        %hf = arith.sitofp %h1 : i64 to f32
        %c = arith.constant -2.0 : f32
        %e = arith.mulf %hf, %c : f32
        %slope = math.exp2 %e : f32
        %d = arith.subi %n, %m : index
        %d64 = arith.index_cast %d : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %bias = arith.mulf %slope, %df : f32
        %y = arith.addf %x, %bias : f32
        attn.yield %y : f32
      } -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}

// -----

// ALiBi beside a boolean key padding mask (BLOOM with an attention_mask):
// the mask selects -inf after the region, in any units, so the bias stays
// on the tensor cores; a float bias would be added to the unscaled score.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "alibi_key_padding"
// CHECK-SAME: key_bias_mma = true
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-NOT: llvm.intr.fma
// CHECK: gpu.terminator
func.func @alibi_key_padding(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %keep: tensor<2x130xi1>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>) scale(%s)
      mask(%keep : tensor<2x130xi1>) outs(%o : tensor<2x4x100x64xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %slope = arith.constant 0.25 : f32
        %d = arith.subi %n, %m : index
        %d64 = arith.index_cast %d : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %bias = arith.mulf %slope, %df : f32
        %y = arith.addf %x, %bias : f32
        attn.yield %y : f32
      } -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}

// -----

// Non-causal ALiBi, -slope |n - m| (FlashAttention's alibi_slopes): over a
// key tile where n - m keeps its sign in a row, the bias is linear in n.
// Per tile: each row's sign, and a warp vote on whether some row of the
// warp changes sign within the tile (the diagonal's tile). The k-step's
// per-key step is negated (the sign bits of its bf16 parts) on rows where
// n <= m and zero on such a warp, which applies the whole body per score.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "alibi_abs_noncausal"
// CHECK-SAME: key_bias_mma = true
// CHECK: gpu.launch
// CHECK: %[[MIXED:.*]] = nvvm.vote.sync  any %{{.*}}, %{{.*}} -> i1
// CHECK: arith.xori %{{.*}}, %c-2147450880_i32 : i32
// CHECK: arith.select %[[MIXED]], %{{.*}}, %{{.*}} : i32
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: scf.if %[[MIXED]] -> (f32
// CHECK: math.absf
// CHECK: } else {
// CHECK-NOT: math.absf
// CHECK: scf.yield
// With key-bias-mma=0: the fma per score, the row's sign in its step.
// FMA-LABEL: function = "alibi_abs_noncausal"
// FMA: nvvm.vote.sync  any
// FMA-NOT: bf16.bf16
// FMA: llvm.intr.fma
// The mma.sync kernel takes |n - m| per score (split per tile it measured
// 0.96-0.97x: its short tiles pay more for the branch than they save).
// SM80: function = "alibi_abs_noncausal"
// SM80-NOT: scf.if %{{.*}} -> (f32
// SM80: math.absf
// SM80: gpu.terminator
func.func @alibi_abs_noncausal(%q: tensor<2x4x300x64xf16>, %k: tensor<2x4x330x64xf16>, %v: tensor<2x4x330x64xf16>, %o: tensor<2x4x300x64xf16>) -> tensor<2x4x300x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x300x64xf16>, tensor<2x4x330x64xf16>, tensor<2x4x330x64xf16>) scale(%s)
      outs(%o : tensor<2x4x300x64xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %slope = arith.constant 0.25 : f32
        %mm = arith.index_cast %m : index to i64
        %nn = arith.index_cast %n : index to i64
        %d = arith.subi %nn, %mm : i64
        %df = arith.sitofp %d : i64 to f32
        %a = math.absf %df : f32
        %p = arith.mulf %slope, %a : f32
        %bias = arith.negf %p : f32
        %y = arith.addf %x, %bias : f32
        attn.yield %y : f32
      } -> tensor<2x4x300x64xf16>
  return %r : tensor<2x4x300x64xf16>
}

// -----

// MPT's spelling: slope * -(|n - m|), the absolute value on the integer
// distance; split alike, the diagonal's tiles take math.absi per score.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "alibi_absi_mpt"
// CHECK-SAME: key_bias_mma = true
// CHECK: %[[MIXED:.*]] = nvvm.vote.sync  any
// CHECK: scf.if %[[MIXED]] -> (f32
// CHECK: math.absi
// CHECK: } else {
// CHECK-NOT: math.absi
// CHECK: scf.yield
func.func @alibi_absi_mpt(%q: tensor<1x2x512x128xbf16>, %k: tensor<1x2x512x128xbf16>, %v: tensor<1x2x512x128xbf16>, %o: tensor<1x2x512x128xbf16>) -> tensor<1x2x512x128xbf16> {
  %s = arith.constant 0.088388 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16>) scale(%s)
      outs(%o : tensor<1x2x512x128xbf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %slope = arith.constant 0.0625 : f32
        %d = arith.subi %n, %m : index
        %d64 = arith.index_cast %d : index to i64
        %a = math.absi %d64 : i64
        %af = arith.sitofp %a : i64 to f32
        %na = arith.negf %af : f32
        %bias = arith.mulf %slope, %na : f32
        %y = arith.addf %x, %bias : f32
        attn.yield %y : f32
      } -> tensor<1x2x512x128xbf16>
  return %r : tensor<1x2x512x128xbf16>
}

// -----

// The bias subtracted: s - slope |n - m| (torch's `scores - slopes * dist`).
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "alibi_abs_subf"
// CHECK-SAME: key_bias_mma = true
// CHECK: nvvm.vote.sync  any
func.func @alibi_abs_subf(%q: tensor<1x2x512x128xf16>, %k: tensor<1x2x512x128xf16>, %v: tensor<1x2x512x128xf16>, %o: tensor<1x2x512x128xf16>) -> tensor<1x2x512x128xf16> {
  %s = arith.constant 0.088388 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x512x128xf16>, tensor<1x2x512x128xf16>, tensor<1x2x512x128xf16>) scale(%s)
      outs(%o : tensor<1x2x512x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %slope = arith.constant 0.0625 : f32
        %d = arith.subi %m, %n : index
        %d64 = arith.index_cast %d : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %a = math.absf %df : f32
        %p = arith.mulf %a, %slope : f32
        %y = arith.subf %x, %p : f32
        attn.yield %y : f32
      } -> tensor<1x2x512x128xf16>
  return %r : tensor<1x2x512x128xf16>
}

// -----

// A look-alike: two absolute values (kinks at n = m and at n = 100) are
// not one sign per tile and row; each score takes the whole body.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "two_kinks"
// CHECK-NOT: key_bias_mma = true
// CHECK: gpu.launch
// CHECK-NOT: nvvm.vote.sync  any
// CHECK: math.absf
// CHECK: math.absf
// CHECK: gpu.terminator
func.func @two_kinks(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>) scale(%s)
      outs(%o : tensor<2x4x100x64xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %slope = arith.constant 0.25 : f32
        %c100 = arith.constant 100 : index
        %d = arith.subi %n, %m : index
        %d64 = arith.index_cast %d : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %a = math.absf %df : f32
        %e = arith.subi %n, %c100 : index
        %e64 = arith.index_cast %e : index to i64
        %ef = arith.sitofp %e64 : i64 to f32
        %a2 = math.absf %ef : f32
        %sum = arith.addf %a, %a2 : f32
        %p = arith.mulf %slope, %sum : f32
        %y = arith.subf %x, %p : f32
        attn.yield %y : f32
      } -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}

// -----

// A look-alike: a bias quadratic in the key index is not split; each score
// is scaled and takes the whole bias (no fma with a per-column immediate).
// CHECK-LABEL: module attributes
// CHECK-SAME: mma = "wgmma"
// CHECK: gpu.launch
// CHECK: wgmma.mma_async
// CHECK: arith.muli
// CHECK-NOT: llvm.intr.fma
// CHECK: gpu.terminator
func.func @quadratic_key_bias(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>) scale(%s)
      outs(%o : tensor<2x4x100x64xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %sq = arith.muli %n, %n : index
        %d64 = arith.index_cast %sq : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %c = arith.constant -0.001 : f32
        %bias = arith.mulf %c, %df : f32
        %y = arith.addf %x, %bias : f32
        attn.yield %y : f32
      } -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}

// -----

// Soft-capping past N = 8192: tanh is a second MUFU op per score, so three
// computing warpgroups (more warps to hide the softmax), not pipelined.
// CHECK-LABEL: module attributes
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 3 warpgroup(s) x 64 query rows + a producer warpgroup (mbarriers, setmaxnreg 32/160), 128-key tiles, 2 stages
// WHY: remark: GPU kernel: wgmma (sm_90a), 3 warpgroup(s)
func.func @softcap_long(%q: tensor<1x2x16384x128xbf16>, %k: tensor<1x2x16384x128xbf16>, %v: tensor<1x2x16384x128xbf16>, %o: tensor<1x2x16384x128xbf16>) -> tensor<1x2x16384x128xbf16> {
  %s = arith.constant 0.088388 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x16384x128xbf16>, tensor<1x2x16384x128xbf16>, tensor<1x2x16384x128xbf16>) scale(%s)
      outs(%o : tensor<1x2x16384x128xbf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %cap = arith.constant 50.0 : f32
        %y = arith.divf %x, %cap : f32
        %t = math.tanh %y : f32
        %z = arith.mulf %t, %cap : f32
        attn.yield %z : f32
      } -> tensor<1x2x16384x128xbf16>
  return %r : tensor<1x2x16384x128xbf16>
}

// -----

// Look-alike: the same length with a region whose only math is on the
// indices (ALiBi) keeps two computing warpgroups in ping-pong; its bias
// goes on the tensor cores, whose panel of key positions takes two stages
// with V a tile behind K (three leave no room for it).
// CHECK-LABEL: module attributes
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup (mbarriers, setmaxnreg 40/232), 128-key tiles, 2 stages, Q/K/V by TMA, the key-linear bias on the tensor cores, pipelined, V a tile behind K in each stage, ping-pong
// FMA-LABEL: function = "alibi_long"
// FMA-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup (mbarriers, setmaxnreg 40/232), 128-key tiles, 3 stages, Q/K/V by TMA, pipelined, ping-pong
// WHY: remark: GPU kernel: wgmma (sm_90a), 2 warpgroup(s)
func.func @alibi_long(%q: tensor<1x2x16384x128xbf16>, %k: tensor<1x2x16384x128xbf16>, %v: tensor<1x2x16384x128xbf16>, %o: tensor<1x2x16384x128xbf16>) -> tensor<1x2x16384x128xbf16> {
  %s = arith.constant 0.088388 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x16384x128xbf16>, tensor<1x2x16384x128xbf16>, tensor<1x2x16384x128xbf16>) scale(%s)
      outs(%o : tensor<1x2x16384x128xbf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %mm = arith.index_cast %m : index to i64
        %nn = arith.index_cast %n : index to i64
        %d = arith.subi %nn, %mm : i64
        %df = arith.sitofp %d : i64 to f32
        %sl = arith.constant 0.0625 : f32
        %bias = arith.mulf %sl, %df : f32
        %w = arith.addf %x, %bias : f32
        attn.yield %w : f32
      } -> tensor<1x2x16384x128xbf16>
  return %r : tensor<1x2x16384x128xbf16>
}

// -----

// Look-alike: soft-capping at N = 8192 keeps the persistent ping-pong
// kernel (three warpgroups measured 1.01-1.02x there).
// CHECK-LABEL: module attributes
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup (mbarriers, setmaxnreg 40/232), 128-key tiles, 3 stages, Q/K/V by TMA, pipelined, ping-pong, persistent
// WHY: remark: GPU kernel: wgmma (sm_90a), 2 warpgroup(s)
func.func @softcap_8k(%q: tensor<1x2x8192x128xbf16>, %k: tensor<1x2x8192x128xbf16>, %v: tensor<1x2x8192x128xbf16>, %o: tensor<1x2x8192x128xbf16>) -> tensor<1x2x8192x128xbf16> {
  %s = arith.constant 0.088388 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x8192x128xbf16>, tensor<1x2x8192x128xbf16>, tensor<1x2x8192x128xbf16>) scale(%s)
      outs(%o : tensor<1x2x8192x128xbf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %cap = arith.constant 50.0 : f32
        %y = arith.divf %x, %cap : f32
        %t = math.tanh %y : f32
        %z = arith.mulf %t, %cap : f32
        attn.yield %z : f32
      } -> tensor<1x2x8192x128xbf16>
  return %r : tensor<1x2x8192x128xbf16>
}

// -----

// Look-alike: soft-capping past N = 8192 beside a key-padding mask (read a
// tile ahead; not measured on three warpgroups) keeps two.
// CHECK-LABEL: module attributes
// CHECK-SAME: kernel_choice = "wgmma (sm_90a), 2 warpgroup(s) x 64 query rows + a producer warpgroup
// WHY: remark: GPU kernel: wgmma (sm_90a), 2 warpgroup(s)
func.func @softcap_long_keypad(%q: tensor<1x2x16384x128xbf16>, %k: tensor<1x2x16384x128xbf16>, %v: tensor<1x2x16384x128xbf16>, %keep: tensor<1x16384xi1>, %o: tensor<1x2x16384x128xbf16>) -> tensor<1x2x16384x128xbf16> {
  %s = arith.constant 0.088388 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x16384x128xbf16>, tensor<1x2x16384x128xbf16>, tensor<1x2x16384x128xbf16>) scale(%s)
      mask(%keep : tensor<1x16384xi1>) outs(%o : tensor<1x2x16384x128xbf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %cap = arith.constant 50.0 : f32
        %y = arith.divf %x, %cap : f32
        %t = math.tanh %y : f32
        %z = arith.mulf %t, %cap : f32
        attn.yield %z : f32
      } -> tensor<1x2x16384x128xbf16>
  return %r : tensor<1x2x16384x128xbf16>
}

// -----

// Runtime slopes per (kv head, group) in a dynamic-shape kernel, as
// attn_opt.dense_attention(alibi_slopes=) writes them: dynamic kernels take
// every argument as a flat buffer, so the [2, 4] slopes are read at the
// row-major index h * 4 + g (each clamped to the tensor's own shape). The
// region reads m and n, whose dynamic sizes the manifest bounds
// (index_limit = 2^20: its index arithmetic is exact below).
// CHECK-LABEL: module attributes
// CHECK-SAME: name = "mod0", shape = array<i64: 2, 4>
// CHECK-SAME: index_limit = 1048576
// CHECK: gpu.launch
// CHECK: arith.minui
// CHECK: arith.minui
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<1099511627776xf32>
// CHECK: math.absf
// SM80: function = "alibi_runtime_dynamic"
// SM80: memref.load %{{.*}}[%{{.*}}] : memref<1099511627776xf32>
func.func @alibi_runtime_dynamic(%q: tensor<?x?x2x4x64xf16>, %k: tensor<?x?x2x64xf16>, %v: tensor<?x?x2x64xf16>, %al: tensor<2x4xf32>, %o: tensor<?x?x2x4x64xf16>) -> tensor<?x?x2x4x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x?x2x4x64xf16>, tensor<?x?x2x64xf16>, tensor<?x?x2x64xf16>) scale(%s)
      score_mod_operands(%al : tensor<2x4xf32>)
      outs(%o : tensor<?x?x2x4x64xf16>) indexing_maps = [
        affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
        affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>,
        affine_map<(b, h, g, m, n, d, e) -> (h, g)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %g: index, %m: index, %n: index, %sl: f32):
        %mm = arith.index_cast %m : index to i64
        %nn = arith.index_cast %n : index to i64
        %d = arith.subi %nn, %mm : i64
        %df = arith.sitofp %d : i64 to f32
        %a = math.absf %df : f32
        %p = arith.mulf %sl, %a : f32
        %bias = arith.negf %p : f32
        %w = arith.addf %x, %bias : f32
        attn.yield %w : f32
      } -> tensor<?x?x2x4x64xf16>
  return %r : tensor<?x?x2x4x64xf16>
}

// -----

// Packed documents: the region keeps s where the query's segment id equals
// the key's. The producer's threads find each query tile's key range from
// the ids (per-granule [min, max] of the key ids, the rows' [min, max], warp
// reductions combined through shared memory) and publish it with the tile;
// the consumers skip the select on tiles inside one document.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "document_ids"
// CHECK-SAME: each tile's keys limited to those its segment ids match
// CHECK-SAME: persistent: 64 blocks
// CHECK: gpu.launch
// CHECK: nvvm.redux.sync  min
// CHECK: nvvm.redux.sync  max
// CHECK: bar.sync 9, 128;
// CHECK: nvvm.redux.sync  add
// CHECK: %[[LO:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK: %[[HI:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}} : index
// CHECK: %[[IN:.*]] = arith.andi %[[LO]], %[[HI]] : i1
// CHECK: scf.if %[[IN]] -> (f32
// CHECK-NOT: memref<1x2048xi32>
// CHECK: } else {
// CHECK: memref.load %{{.*}} : memref<1x2048xi32>
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// WHY: remark: GPU kernel: wgmma (sm_90a){{.*}}each tile's keys limited to those its segment ids match
// The mma.sync kernel (a block per query tile, no producer) cuts each
// block's keys itself: its threads reduce the rows' [min, max] of ids
// (redux.sync, words in the not yet filled K buffer), then scan the key ids
// for the first and last match, before the first K/V copies; the select
// still applies per score on the tiles it runs.
// SM80: function = "document_ids"
// SM80-SAME: each block's keys limited to those its segment ids match (its threads scan the key ids)
// SM80: gpu.launch
// SM80: nvvm.redux.sync  min
// SM80: nvvm.redux.sync  max
// SM80: gpu.barrier
// SM80: scf.for {{.*}} iter_args(%{{.*}} = %c2147483647_i32{{.*}}, %{{.*}} = %c-1_i32{{.*}}) -> (i32, i32)
// SM80: nvvm.redux.sync  min
// SM80: nvvm.redux.sync  max
// SM80: "cp.async.cg.shared.global.L2::128B [$0], [$1], 16;"
// SM80: arith.cmpi eq, %{{.*}}, %{{.*}} : i32
func.func @document_ids(%q: tensor<1x4x2048x128xf16>, %k: tensor<1x4x2048x128xf16>, %v: tensor<1x4x2048x128xf16>, %sq: tensor<1x2048xi32>, %sk: tensor<1x2048xi32>, %o: tensor<1x4x2048x128xf16>) -> tensor<1x4x2048x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>) scale(%s)
      score_mod_operands(%sq, %sk : tensor<1x2048xi32>, tensor<1x2048xi32>)
      outs(%o : tensor<1x4x2048x128xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, m)>, affine_map<(b, h, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %qi: i32, %ki: i32):
        %eq = arith.cmpi eq, %qi, %ki : i32
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %ninf : f32
        attn.yield %y : f32
      } -> tensor<1x4x2048x128xf16>
  return %r : tensor<1x4x2048x128xf16>
}

// -----

// Position chunks (Llama 4's chunked attention, m / C == n / C): ids the
// region computes from the positions give the same key ranges, with no id
// tensor: the producer evaluates floordivsi on the positions it scans.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "position_chunks"
// CHECK-SAME: each tile's keys limited to those its segment ids match (ids computed from the positions)
// CHECK: gpu.launch
// CHECK: arith.floordivsi %{{.*}}, %c300{{.*}} : index
// CHECK: nvvm.redux.sync  min
// CHECK: nvvm.redux.sync  max
// CHECK: bar.sync 9, 128;
// CHECK: arith.floordivsi
// CHECK: arith.cmpi eq, %{{.*}}, %{{.*}} : index
// WHY: remark: GPU kernel: wgmma (sm_90a){{.*}}each tile's keys limited to those its segment ids match (ids computed from the positions)
// On mma.sync the chunk of a key never decreases along the keys: a binary
// search for the first key of the rows' lowest chunk and the first past
// their highest, no scan of every key.
// SM80: function = "position_chunks"
// SM80-SAME: each block's keys limited to those its segment ids match (the key ids, computed from the positions, never decrease: found by binary search)
// SM80: gpu.launch
// SM80: arith.floordivsi %{{.*}}, %c300{{.*}} : index
// SM80: nvvm.redux.sync  min
// SM80: scf.while
// SM80: arith.cmpi ult
// SM80: scf.condition
// SM80: arith.floordivsi %{{.*}}, %c300{{.*}} : index
// SM80: arith.cmpi sle
// SM80: scf.while
// SM80: arith.cmpi slt
// SM80-NOT: nvvm.redux.sync
// SM80: scf.for
func.func @position_chunks(%q: tensor<1x4x2048x128xf16>, %k: tensor<1x4x2048x128xf16>, %v: tensor<1x4x2048x128xf16>, %o: tensor<1x4x2048x128xf16>) -> tensor<1x4x2048x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>) scale(%s)
      outs(%o : tensor<1x4x2048x128xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %c = arith.constant 300 : index
        %mc = arith.floordivsi %m, %c : index
        %nc = arith.floordivsi %n, %c : index
        %eq = arith.cmpi eq, %mc, %nc : index
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %ninf : f32
        attn.yield %y : f32
      } -> tensor<1x4x2048x128xf16>
  return %r : tensor<1x4x2048x128xf16>
}

// -----

// A query id read from a tensor (torch's int64, compared as it is) against
// a key id computed from the position: the kernel reads the one and
// computes the other.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "id_tensor_against_chunk"
// CHECK-SAME: each tile's keys limited to those its segment ids match (key ids computed from the positions)
// CHECK: gpu.launch
// CHECK: arith.floordivsi %{{.*}}, %c300{{.*}} : i64
// CHECK: memref.load %{{.*}} : memref<1x2048xi64>
// CHECK: arith.minsi %{{.*}}, %c2147483647_i64{{.*}} : i64
// CHECK: nvvm.redux.sync  min
// WHY: remark: GPU kernel: wgmma (sm_90a){{.*}}each tile's keys limited to those its segment ids match
// SM80: function = "id_tensor_against_chunk"
// SM80-SAME: each block's keys limited to those its segment ids match (the key ids, computed from the positions, never decrease: found by binary search)
func.func @id_tensor_against_chunk(%q: tensor<1x4x2048x128xf16>, %k: tensor<1x4x2048x128xf16>, %v: tensor<1x4x2048x128xf16>, %sq: tensor<1x2048xi64>, %o: tensor<1x4x2048x128xf16>) -> tensor<1x4x2048x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>) scale(%s)
      score_mod_operands(%sq : tensor<1x2048xi64>)
      outs(%o : tensor<1x4x2048x128xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, m)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %qi: i64):
        %c = arith.constant 300 : i64
        %n64 = arith.index_cast %n : index to i64
        %nc = arith.floordivsi %n64, %c : i64
        %eq = arith.cmpi eq, %qi, %nc : i64
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %ninf : f32
        attn.yield %y : f32
      } -> tensor<1x4x2048x128xf16>
  return %r : tensor<1x4x2048x128xf16>
}

// -----

// Look-alike: a "chunk" of m + n is a function of both positions, not an
// id per row and per key: no key ranges, the region per score.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "chunk_of_both_positions"
// CHECK-NOT: segment ids
// CHECK: gpu.launch
// CHECK-NOT: nvvm.redux.sync  min
// CHECK: gpu.terminator
// WHY: remark: GPU kernel: wgmma (sm_90a)
// WHY-NOT: segment ids
// SM80: function = "chunk_of_both_positions"
func.func @chunk_of_both_positions(%q: tensor<1x4x2048x128xf16>, %k: tensor<1x4x2048x128xf16>, %v: tensor<1x4x2048x128xf16>, %o: tensor<1x4x2048x128xf16>) -> tensor<1x4x2048x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>) scale(%s)
      outs(%o : tensor<1x4x2048x128xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %c = arith.constant 300 : index
        %mn = arith.addi %m, %n : index
        %mc = arith.floordivsi %mn, %c : index
        %nc = arith.floordivsi %n, %c : index
        %eq = arith.cmpi eq, %mc, %nc : index
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %ninf : f32
        attn.yield %y : f32
      } -> tensor<1x4x2048x128xf16>
  return %r : tensor<1x4x2048x128xf16>
}

// -----

// Look-alike: query ids at most the key's (not their equality) bound no
// key range per tile: the region per score over every key.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "ids_ordered"
// CHECK-NOT: segment ids
// CHECK: gpu.launch
// CHECK-NOT: nvvm.redux.sync  add
// CHECK: gpu.terminator
// WHY: remark: GPU kernel: wgmma (sm_90a)
// WHY-NOT: segment ids
// SM80: function = "ids_ordered"
func.func @ids_ordered(%q: tensor<1x4x2048x128xf16>, %k: tensor<1x4x2048x128xf16>, %v: tensor<1x4x2048x128xf16>, %sq: tensor<1x2048xi32>, %sk: tensor<1x2048xi32>, %o: tensor<1x4x2048x128xf16>) -> tensor<1x4x2048x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>) scale(%s)
      score_mod_operands(%sq, %sk : tensor<1x2048xi32>, tensor<1x2048xi32>)
      outs(%o : tensor<1x4x2048x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, m)>, affine_map<(b, h, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %qi: i32, %ki: i32):
        %le = arith.cmpi sle, %qi, %ki : i32
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %le, %x, %ninf : f32
        attn.yield %y : f32
      } -> tensor<1x4x2048x128xf16>
  return %r : tensor<1x4x2048x128xf16>
}

// -----

// 64-bit ids (torch's int64): the producer saturates them to i32, which
// keeps every match inside the rows' [min, max]; a granule counts as one
// document only with ids strictly inside the i32 range.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "document_ids_i64"
// CHECK-SAME: each tile's keys limited to those its segment ids match
// CHECK: gpu.launch
// CHECK: %[[LO:.*]] = arith.minsi %{{.*}}, %c2147483647_i64{{.*}} : i64
// CHECK: %[[SAT:.*]] = arith.maxsi %[[LO]], %c-2147483648_i64{{.*}} : i64
// CHECK: arith.trunci %[[SAT]] : i64 to i32
// CHECK: arith.cmpi ne, %{{.*}}, %c2147483647_i32{{.*}} : i32
// WHY: remark: GPU kernel: wgmma (sm_90a){{.*}}each tile's keys limited to those its segment ids match
// SM80: function = "document_ids_i64"
func.func @document_ids_i64(%q: tensor<1x4x2048x128xf16>, %k: tensor<1x4x2048x128xf16>, %v: tensor<1x4x2048x128xf16>, %sq: tensor<1x2048xi64>, %sk: tensor<1x2048xi64>, %o: tensor<1x4x2048x128xf16>) -> tensor<1x4x2048x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>) scale(%s)
      score_mod_operands(%sq, %sk : tensor<1x2048xi64>, tensor<1x2048xi64>)
      outs(%o : tensor<1x4x2048x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, m)>, affine_map<(b, h, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %qi: i64, %ki: i64):
        %eq = arith.cmpi eq, %qi, %ki : i64
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %ninf : f32
        attn.yield %y : f32
      } -> tensor<1x4x2048x128xf16>
  return %r : tensor<1x4x2048x128xf16>
}

// -----

// Beside a key padding mask (applied after the region) the keys a range
// leaves out would not score the region's fill: the ids are compared per
// score, and the remark says why.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "document_ids_keypad"
// CHECK-NOT: keys limited
// CHECK-SAME: segment ids compared per score over every key (a mask tensor applies after the region)
// WHY: remark: GPU kernel: wgmma (sm_90a){{.*}}segment ids compared per score over every key (a mask tensor applies after the region)
// SM80: function = "document_ids_keypad"
func.func @document_ids_keypad(%q: tensor<1x4x2048x128xf16>, %k: tensor<1x4x2048x128xf16>, %v: tensor<1x4x2048x128xf16>, %pad: tensor<1x2048xi1>, %sq: tensor<1x2048xi32>, %sk: tensor<1x2048xi32>, %o: tensor<1x4x2048x128xf16>) -> tensor<1x4x2048x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>, tensor<1x4x2048x128xf16>) scale(%s)
      mask(%pad : tensor<1x2048xi1>)
      score_mod_operands(%sq, %sk : tensor<1x2048xi32>, tensor<1x2048xi32>)
      outs(%o : tensor<1x4x2048x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>,
        affine_map<(b, h, m, n, d, e) -> (b, m)>, affine_map<(b, h, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %qi: i32, %ki: i32):
        %eq = arith.cmpi eq, %qi, %ki : i32
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %ninf : f32
        attn.yield %y : f32
      } -> tensor<1x4x2048x128xf16>
  return %r : tensor<1x4x2048x128xf16>
}

// -----

// Packed documents with dynamic B, M and N: the ids are [?, ?] views with
// the launch's sizes (each index clamped to its runtime size), and the
// granules of ceil(N / 2048) * 16 keys are computed at run time; the key
// ranges as with static sizes.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "document_ids_dynamic"
// CHECK-SAME: each tile's keys limited to those its segment ids match
// CHECK-SAME: dynamic sizes (b0, m, n) as kernel parameters
// CHECK: gpu.launch
// Its shared memory is declared 1024-aligned (attn-gpu-align-shared), so
// the swizzle's alignment pad folds (log step 191).
// CHECK: gpu.dynamic_shared_memory {attn.align = 1024 : i64}
// CHECK: %[[N:.*]] = arith.addi %{{.*}}, %c2047{{.*}} : index
// CHECK: %[[G:.*]] = arith.divui %[[N]], %c2048{{.*}} : index
// CHECK: arith.muli %[[G]], %c16{{.*}} : index
// CHECK: %[[D:.*]] = memref.dim %[[IDS:.*]], %c1{{.*}} : memref<?x?xi32, strided<[?, 1]>>
// CHECK: %[[LAST:.*]] = arith.subi %[[D]], %c1{{.*}} : index
// CHECK: arith.minui %{{.*}}, %[[LAST]] : index
// CHECK: memref.load %[[IDS]][%{{.*}}, %{{.*}}] : memref<?x?xi32, strided<[?, 1]>>
// CHECK: nvvm.redux.sync  min
// WHY: remark: GPU kernel: wgmma (sm_90a){{.*}}each tile's keys limited to those its segment ids match
// SM80: function = "document_ids_dynamic"
// SM80-SAME: each block's keys limited to those its segment ids match (its threads scan the key ids)
// SM80-SAME: dynamic sizes (b0, m, n) as kernel parameters
// SM80: memref.load %{{.*}} : memref<?x?xi32, strided<[?, 1]>>
func.func @document_ids_dynamic(%q: tensor<?x4x?x128xf16>, %k: tensor<?x4x?x128xf16>, %v: tensor<?x4x?x128xf16>, %sq: tensor<?x?xi32>, %sk: tensor<?x?xi32>, %o: tensor<?x4x?x128xf16>) -> tensor<?x4x?x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x4x?x128xf16>, tensor<?x4x?x128xf16>, tensor<?x4x?x128xf16>) scale(%s)
      score_mod_operands(%sq, %sk : tensor<?x?xi32>, tensor<?x?xi32>)
      outs(%o : tensor<?x4x?x128xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, m)>, affine_map<(b, h, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %qi: i32, %ki: i32):
        %eq = arith.cmpi eq, %qi, %ki : i32
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %ninf : f32
        attn.yield %y : f32
      } -> tensor<?x4x?x128xf16>
  return %r : tensor<?x4x?x128xf16>
}

// -----

// Any runtime score_mod tensor may have dynamic dims: a per-key f16 bias
// [?, ?] read through its view at the launch's sizes.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "key_bias_dynamic"
// CHECK-SAME: dynamic sizes (b0, m, n) as kernel parameters
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<?x?xf16, strided<[?, 1]>>
// CHECK: arith.extf %{{.*}} : f16 to f32
// SM80: function = "key_bias_dynamic"
// SM80: memref.load %{{.*}} : memref<?x?xf16, strided<[?, 1]>>
func.func @key_bias_dynamic(%q: tensor<?x4x?x128xf16>, %k: tensor<?x4x?x128xf16>, %v: tensor<?x4x?x128xf16>, %w: tensor<?x?xf16>, %o: tensor<?x4x?x128xf16>) -> tensor<?x4x?x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x4x?x128xf16>, tensor<?x4x?x128xf16>, tensor<?x4x?x128xf16>) scale(%s)
      score_mod_operands(%w : tensor<?x?xf16>)
      outs(%o : tensor<?x4x?x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %wn: f16):
        %wf = arith.extf %wn : f16 to f32
        %y = arith.addf %x, %wf : f32
        attn.yield %y : f32
      } -> tensor<?x4x?x128xf16>
  return %r : tensor<?x4x?x128xf16>
}

// -----

// A `?` over loops that q, k and v fix: the kernel and the manifest take the
// tensor at those sizes (a static kernel's parameter stays a static memref,
// as the bare-pointer convention needs); with a dynamic batch only its dim
// stays -1.
// CHECK-LABEL: module attributes
// CHECK-SAME: name = "mod0", shape = array<i64: 2, 256>
// CHECK-SAME: function = "key_bias_known_sizes"
// CHECK: func.func @attn_fwd(%{{.*}}: memref<2x4x256x128xf16>, %{{.*}}: memref<2x4x256x128xf16>, %{{.*}}: memref<2x4x256x128xf16>, %{{.*}}: memref<2x256xf16>,
// SM80: function = "key_bias_known_sizes"
func.func @key_bias_known_sizes(%q: tensor<2x4x256x128xf16>, %k: tensor<2x4x256x128xf16>, %v: tensor<2x4x256x128xf16>, %w: tensor<?x?xf16>, %o: tensor<2x4x256x128xf16>) -> tensor<2x4x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16>) scale(%s)
      score_mod_operands(%w : tensor<?x?xf16>)
      outs(%o : tensor<2x4x256x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %wn: f16):
        %wf = arith.extf %wn : f16 to f32
        %y = arith.addf %x, %wf : f32
        attn.yield %y : f32
      } -> tensor<2x4x256x128xf16>
  return %r : tensor<2x4x256x128xf16>
}

// -----

// CHECK-LABEL: module attributes
// CHECK-SAME: name = "mod0", shape = array<i64: -1, 256>
// CHECK-SAME: function = "key_bias_partly_dynamic"
// CHECK-SAME: dynamic sizes (b0) as kernel parameters
// SM80: function = "key_bias_partly_dynamic"
func.func @key_bias_partly_dynamic(%q: tensor<?x4x256x128xf16>, %k: tensor<?x4x256x128xf16>, %v: tensor<?x4x256x128xf16>, %w: tensor<?x?xf16>, %o: tensor<?x4x256x128xf16>) -> tensor<?x4x256x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<?x4x256x128xf16>, tensor<?x4x256x128xf16>, tensor<?x4x256x128xf16>) scale(%s)
      score_mod_operands(%w : tensor<?x?xf16>)
      outs(%o : tensor<?x4x256x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %wn: f16):
        %wf = arith.extf %wn : f16 to f32
        %y = arith.addf %x, %wf : f32
        attn.yield %y : f32
      } -> tensor<?x4x256x128xf16>
  return %r : tensor<?x4x256x128xf16>
}

// -----

// A decode shape splits its keys over blocks (split-KV): each range runs
// the select per score, and the remark says why.
// CHECK-LABEL: module attributes
// CHECK-SAME: function = "document_ids_decode"
// SM80: function = "document_ids_decode"
// SM80-SAME: split-KV: 32 key ranges
// SM80-SAME: segment ids compared per score over every key (split-KV spreads the keys over blocks, and the key ids are not sorted by position)
func.func @document_ids_decode(%q: tensor<1x4x1x128xf16>, %k: tensor<1x4x8192x128xf16>, %v: tensor<1x4x8192x128xf16>, %sq: tensor<1x1xi32>, %sk: tensor<1x8192xi32>, %o: tensor<1x4x1x128xf16>) -> tensor<1x4x1x128xf16> {
  %s = arith.constant 0.088 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x1x128xf16>, tensor<1x4x8192x128xf16>, tensor<1x4x8192x128xf16>) scale(%s)
      score_mod_operands(%sq, %sk : tensor<1x1xi32>, tensor<1x8192xi32>)
      outs(%o : tensor<1x4x1x128xf16>) indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>,
        affine_map<(b, h, m, n, d, e) -> (b, m)>, affine_map<(b, h, m, n, d, e) -> (b, n)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index, %qi: i32, %ki: i32):
        %eq = arith.cmpi eq, %qi, %ki : i32
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %eq, %x, %ninf : f32
        attn.yield %y : f32
      } -> tensor<1x4x1x128xf16>
  return %r : tensor<1x4x1x128xf16>
}
