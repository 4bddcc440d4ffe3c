// key-bias-mma=1 asks for the key-linear bias on the tensor cores: an
// attention without such a bias is an error that says why, at the op.
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu="chip=sm_90a key-bias-mma=1" --verify-diagnostics

func.func @no_score_mod(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  // expected-error @below {{key-bias-mma=1: the attention has no score_mod bias linear in the key index (score + X * (n - m) with X free of the score, m and n)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>) scale(%s)
      outs(%o : tensor<2x4x100x64xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}

// -----

// A look-alike: a bias quadratic in the key index.
func.func @quadratic_key_bias(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  // expected-error @below {{key-bias-mma=1: the attention has no score_mod bias linear in the key index}}
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

// ALiBi takes it; without a GPU the option only shapes the kernel.
func.func @alibi(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x130x64xf16>, %v: tensor<2x4x130x64xf16>, %o: tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>, tensor<2x4x130x64xf16>, tensor<2x4x130x64xf16>) scale(%s)
      outs(%o : tensor<2x4x100x64xf16>) causal indexing_maps = [
        affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>, affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
        affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %m: index, %n: index):
        %c = arith.constant 0.25 : f32
        %d = arith.subi %n, %m : index
        %d64 = arith.index_cast %d : index to i64
        %df = arith.sitofp %d64 : i64 to f32
        %bias = arith.mulf %c, %df : f32
        %y = arith.addf %x, %bias : f32
        attn.yield %y : f32
      } -> tensor<2x4x100x64xf16>
  return %r : tensor<2x4x100x64xf16>
}
