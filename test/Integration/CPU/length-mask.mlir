// Per-sequence key counts (attn.length_mask as the attention's mask),
// executed on the CPU against the same attention with the key-padding mask
// written out in linalg (n + 1 <= len, a form the folder leaves alone):
// an empty sequence (every key masked: 0), a full
// one, lengths past N and below 0, GQA; and the mask as a program writes
// it (arange(N) < lens[:, None]), folded by attn-fold-length-mask.
// RUN: %exec-check %s

// EXEC: @lengths ref=fn:padding amp=2.0
func.func @lengths(%q: tensor<4x3x2x2x16xf32>, %k: tensor<4x20x2x16xf32>, %v: tensor<4x20x2x16xf32>) -> tensor<4x3x2x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %lens = arith.constant dense<[0, 20, 7, -4]> : tensor<4xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3x2x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3x2x2x16xf32>) -> tensor<4x3x2x2x16xf32>
  %m = attn.length_mask %lens : tensor<4xi32> -> tensor<4x20xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x3x2x2x16xf32>, tensor<4x20x2x16xf32>, tensor<4x20x2x16xf32>) scale(%s)
      mask(%m : tensor<4x20xi1>)
      outs(%init : tensor<4x3x2x2x16xf32>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n)>] -> tensor<4x3x2x2x16xf32>
  return %r : tensor<4x3x2x2x16xf32>
}
func.func @padding(%q: tensor<4x3x2x2x16xf32>, %k: tensor<4x20x2x16xf32>, %v: tensor<4x20x2x16xf32>) -> tensor<4x3x2x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %lens = arith.constant dense<[0, 20, 7, -4]> : tensor<4xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3x2x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3x2x2x16xf32>) -> tensor<4x3x2x2x16xf32>
  %me = tensor.empty() : tensor<4x20xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%lens : tensor<4xi32>) outs(%me : tensor<4x20xi1>) {
  ^bb0(%len: i32, %out: i1):
    %n = linalg.index 1 : index
    %n32 = arith.index_cast %n : index to i32
    %c1 = arith.constant 1 : i32
    %n1 = arith.addi %n32, %c1 : i32
    %keep = arith.cmpi sle, %n1, %len : i32
    linalg.yield %keep : i1
  } -> tensor<4x20xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x3x2x2x16xf32>, tensor<4x20x2x16xf32>, tensor<4x20x2x16xf32>) scale(%s)
      mask(%m : tensor<4x20xi1>)
      outs(%init : tensor<4x3x2x2x16xf32>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n)>] -> tensor<4x3x2x2x16xf32>
  return %r : tensor<4x3x2x2x16xf32>
}

// -----

// EXEC: @program_padding ref=fn:padding2 amp=2.0
func.func @program_padding(%q: tensor<4x3x2x2x16xf32>, %k: tensor<4x20x2x16xf32>, %v: tensor<4x20x2x16xf32>) -> tensor<4x3x2x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %lens = arith.constant dense<[0, 20, 7, -4]> : tensor<4xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3x2x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3x2x2x16xf32>) -> tensor<4x3x2x2x16xf32>
  %me = tensor.empty() : tensor<4x20xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%lens : tensor<4xi32>) outs(%me : tensor<4x20xi1>) {
  ^bb0(%len: i32, %out: i1):
    %n = linalg.index 1 : index
    %n32 = arith.index_cast %n : index to i32
    %keep = arith.cmpi slt, %n32, %len : i32
    linalg.yield %keep : i1
  } -> tensor<4x20xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x3x2x2x16xf32>, tensor<4x20x2x16xf32>, tensor<4x20x2x16xf32>) scale(%s)
      mask(%m : tensor<4x20xi1>)
      outs(%init : tensor<4x3x2x2x16xf32>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n)>] -> tensor<4x3x2x2x16xf32>
  return %r : tensor<4x3x2x2x16xf32>
}
func.func @padding2(%q: tensor<4x3x2x2x16xf32>, %k: tensor<4x20x2x16xf32>, %v: tensor<4x20x2x16xf32>) -> tensor<4x3x2x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %lens = arith.constant dense<[0, 20, 7, -4]> : tensor<4xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3x2x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3x2x2x16xf32>) -> tensor<4x3x2x2x16xf32>
  %me = tensor.empty() : tensor<4x20xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b)>, affine_map<(b, n) -> (b, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%lens : tensor<4xi32>) outs(%me : tensor<4x20xi1>) {
  ^bb0(%len: i32, %out: i1):
    %n = linalg.index 1 : index
    %n32 = arith.index_cast %n : index to i32
    %c1 = arith.constant 1 : i32
    %n1 = arith.addi %n32, %c1 : i32
    %keep = arith.cmpi sle, %n1, %len : i32
    linalg.yield %keep : i1
  } -> tensor<4x20xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x3x2x2x16xf32>, tensor<4x20x2x16xf32>, tensor<4x20x2x16xf32>) scale(%s)
      mask(%m : tensor<4x20xi1>)
      outs(%init : tensor<4x3x2x2x16xf32>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n)>] -> tensor<4x3x2x2x16xf32>
  return %r : tensor<4x3x2x2x16xf32>
}
