// FP8 attentions the GPU kernels cannot take: errors at the attention.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a" --verify-diagnostics

func.func @fp8_f32_out(%q: tensor<2x4x256x128xf8E4M3FN>, %k: tensor<2x4x256x128xf8E4M3FN>, %v: tensor<2x4x256x128xf8E4M3FN>, %o: tensor<2x4x256x128xf32>) -> tensor<2x4x256x128xf32> {
  %s = arith.constant 0.125 : f32
  // expected-error @below {{FP8 attention runs on the Hopper kernel (warp-specialized wgmma with TMA) only: an FP8 attention writes f16 or bf16 here (the output is f32)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>) scale(%s)
      outs(%o : tensor<2x4x256x128xf32>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x256x128xf32>
  return %r : tensor<2x4x256x128xf32>
}

// -----

func.func @fp8_d48(%q: tensor<2x4x256x48xf8E4M3FN>, %k: tensor<2x4x256x48xf8E4M3FN>, %v: tensor<2x4x256x48xf8E4M3FN>, %o: tensor<2x4x256x48xf16>) -> tensor<2x4x256x48xf16> {
  %s = arith.constant 0.125 : f32
  // expected-error @below {{FP8 attention runs on the Hopper kernel (warp-specialized wgmma with TMA) only: FP8 takes D and E multiples of 32 up to 256 (D = 48, E = 48)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x48xf8E4M3FN>, tensor<2x4x256x48xf8E4M3FN>, tensor<2x4x256x48xf8E4M3FN>) scale(%s)
      outs(%o : tensor<2x4x256x48xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x256x48xf16>
  return %r : tensor<2x4x256x48xf16>
}

// -----

func.func @value_scale_f16(%q: tensor<2x4x256x128xf16>, %k: tensor<2x4x256x128xf16>, %v: tensor<2x4x256x128xf16>, %o: tensor<2x4x256x128xf16>) -> tensor<2x4x256x128xf16> {
  %s = arith.constant 0.125 : f32
  %vs = arith.constant 2.0 : f32
  // expected-error @below {{value_scale runs on the GPU with FP8 operands only (the FP8 kernel applies it)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16>, tensor<2x4x256x128xf16>) scale(%s) value_scale(%vs)
      outs(%o : tensor<2x4x256x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x256x128xf16>
  return %r : tensor<2x4x256x128xf16>
}

// -----

func.func @fp8_runtime_value_scale(%q: tensor<2x4x256x128xf8E4M3FN>, %k: tensor<2x4x256x128xf8E4M3FN>, %v: tensor<2x4x256x128xf8E4M3FN>, %o: tensor<2x4x256x128xf16>, %vs: f32) -> tensor<2x4x256x128xf16> {
  %s = arith.constant 0.125 : f32
  // expected-error @below {{the GPU kernel takes a constant value_scale, or one computed from elements of tensors it takes as arguments; it is a scalar argument (the kernel takes tensors: pass it as a one-element tensor)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>) scale(%s) value_scale(%vs)
      outs(%o : tensor<2x4x256x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x256x128xf16>
  return %r : tensor<2x4x256x128xf16>
}

// -----

func.func @scale_computed_index(%q: tensor<2x4x256x128xf8E4M3FN>, %k: tensor<2x4x256x128xf8E4M3FN>, %v: tensor<2x4x256x128xf8E4M3FN>, %o: tensor<2x4x256x128xf16>, %t: tensor<4xf32>, %i: index) -> tensor<2x4x256x128xf16> {
  %s = tensor.extract %t[%i] : tensor<4xf32>
  // expected-error @below {{the GPU kernel takes a constant scale, or one computed from elements of tensors it takes as arguments; it reads a tensor at a computed index}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>) scale(%s)
      outs(%o : tensor<2x4x256x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x256x128xf16>
  return %r : tensor<2x4x256x128xf16>
}

// -----

func.func @scale_sum(%q: tensor<2x4x256x128xf8E4M3FN>, %k: tensor<2x4x256x128xf8E4M3FN>, %v: tensor<2x4x256x128xf8E4M3FN>, %o: tensor<2x4x256x128xf16>, %t: tensor<f32>) -> tensor<2x4x256x128xf16> {
  %a = tensor.extract %t[] : tensor<f32>
  %c = arith.constant 0.1 : f32
  %s = arith.addf %a, %c : f32
  // expected-error @below {{the GPU kernel takes a constant scale, or one computed from elements of tensors it takes as arguments; 'arith.addf' computes it}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>) scale(%s)
      outs(%o : tensor<2x4x256x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x256x128xf16>
  return %r : tensor<2x4x256x128xf16>
}

// -----

func.func @scale_constant_tensor(%q: tensor<2x4x256x128xf8E4M3FN>, %k: tensor<2x4x256x128xf8E4M3FN>, %v: tensor<2x4x256x128xf8E4M3FN>, %o: tensor<2x4x256x128xf16>) -> tensor<2x4x256x128xf16> {
  %t = arith.constant dense<0.125> : tensor<f32>
  %s = tensor.extract %t[] : tensor<f32>
  // expected-error @below {{the GPU kernel takes a constant scale, or one computed from elements of tensors it takes as arguments; it reads a constant tensor (fold it first: a bundle cannot carry constant data)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>) scale(%s)
      outs(%o : tensor<2x4x256x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x256x128xf16>
  return %r : tensor<2x4x256x128xf16>
}

// -----

func.func @scale_dynamic_tensor(%q: tensor<2x4x256x128xf8E4M3FN>, %k: tensor<2x4x256x128xf8E4M3FN>, %v: tensor<2x4x256x128xf8E4M3FN>, %o: tensor<2x4x256x128xf16>, %t: tensor<?xf32>) -> tensor<2x4x256x128xf16> {
  %c0 = arith.constant 0 : index
  %s = tensor.extract %t[%c0] : tensor<?xf32>
  // expected-error @below {{the GPU kernel takes a constant scale, or one computed from elements of tensors it takes as arguments; it reads a dynamic or 64-bit tensor}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>) scale(%s)
      outs(%o : tensor<2x4x256x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x256x128xf16>
  return %r : tensor<2x4x256x128xf16>
}

// -----

func.func @scale_negative_constant(%q: tensor<2x4x256x128xf8E4M3FN>, %k: tensor<2x4x256x128xf8E4M3FN>, %v: tensor<2x4x256x128xf8E4M3FN>, %o: tensor<2x4x256x128xf16>, %t: tensor<f32>) -> tensor<2x4x256x128xf16> {
  %a = tensor.extract %t[] : tensor<f32>
  %c = arith.constant -0.125 : f32
  %s = arith.mulf %c, %a : f32
  // expected-error @below {{a runtime scale's constant factor must be positive (the kernels fold the scale into the exponent after the row max), got -1.250000e-01}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>) scale(%s)
      outs(%o : tensor<2x4x256x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x256x128xf16>
  return %r : tensor<2x4x256x128xf16>
}

// -----

func.func @scale_divides_by_zero(%q: tensor<2x4x256x128xf8E4M3FN>, %k: tensor<2x4x256x128xf8E4M3FN>, %v: tensor<2x4x256x128xf8E4M3FN>, %o: tensor<2x4x256x128xf16>, %t: tensor<f32>) -> tensor<2x4x256x128xf16> {
  %a = tensor.extract %t[] : tensor<f32>
  %c = arith.constant 0.0 : f32
  %s = arith.divf %a, %c : f32
  // expected-error @below {{the GPU kernel takes a constant scale, or one computed from elements of tensors it takes as arguments; it divides by a constant 0}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>, tensor<2x4x256x128xf8E4M3FN>) scale(%s)
      outs(%o : tensor<2x4x256x128xf16>) indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] -> tensor<2x4x256x128xf16>
  return %r : tensor<2x4x256x128xf16>
}
