// score_mod regions the GPU kernels cannot take yet: an error at the
// attention that says why (the CPU path takes them).
// RUN: attn-opt %s --split-input-file --convert-attn-to-gpu --verify-diagnostics

func.func @runtime_operand_i1(%q: tensor<2x40x32xf16>, %k: tensor<2x50x32xf16>, %v: tensor<2x50x32xf16>, %w: tensor<50xi1>, %o: tensor<2x40x32xf16>) -> tensor<2x40x32xf16> {
  %s = arith.constant 0.125 : f32
  // expected-error @below {{the GPU kernel cannot take this score_mod: score_mod operand #0 is a runtime tensor of a type the kernels do not take (f32/f16/bf16/i32/i64)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x40x32xf16>, tensor<2x50x32xf16>, tensor<2x50x32xf16>) scale(%s)
      score_mod_operands(%w : tensor<50xi1>)
      outs(%o : tensor<2x40x32xf16>) indexing_maps = [
        affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
        affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>,
        affine_map<(b, m, n, d, e) -> (n)>] score_mod {
      ^bb0(%x: f32, %b: index, %m: index, %n: index, %wn: i1):
        %c = arith.constant -1.0e+04 : f32
        %y = arith.select %wn, %x, %c : f32
        attn.yield %y : f32
      } -> tensor<2x40x32xf16>
  return %r : tensor<2x40x32xf16>
}

// -----

func.func @f16_arithmetic(%q: tensor<2x40x32xf16>, %k: tensor<2x50x32xf16>, %v: tensor<2x50x32xf16>, %o: tensor<2x40x32xf16>) -> tensor<2x40x32xf16> {
  %s = arith.constant 0.125 : f32
  // expected-error @below {{a score_mod value has type f16 (a bundle describes f32, i64, i32, i1 and index values)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x40x32xf16>, tensor<2x50x32xf16>, tensor<2x50x32xf16>) scale(%s)
      outs(%o : tensor<2x40x32xf16>) indexing_maps = [
        affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
        affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>] score_mod {
      ^bb0(%x: f32, %b: index, %m: index, %n: index):
        %h = arith.truncf %x : f32 to f16
        %y = arith.extf %h : f16 to f32
        attn.yield %y : f32
      } -> tensor<2x40x32xf16>
  return %r : tensor<2x40x32xf16>
}
