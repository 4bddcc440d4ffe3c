// Several new tokens per sequence with per-sequence lengths, causal as
// FlashAttention's cache_seqlens places them: token m of sequence b at
// position len[b] - M + m, seeing the keys n <= len[b] - M + m (the region
// decode_attention writes, over the lengths as its score_mod operand),
// executed on the CPU against the same attention with the [B, M, N] mask
// written out in linalg. Lengths 0, 2 (< M: the first token sees no key),
// 7 and N; GQA (two query heads per kv head). Then the same with Llama 4's
// chunks as well (n // 8 == (len - M + m) // 8), the tokens of one sequence
// straddling a chunk boundary (len 9).
// RUN: %exec-check %s

// EXEC: @spec ref=fn:spec_mask amp=2.0
func.func @spec(%q: tensor<4x3x2x2x16xf32>, %k: tensor<4x20x2x16xf32>, %v: tensor<4x20x2x16xf32>) -> tensor<4x3x2x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %lens = arith.constant dense<[0, 2, 7, 20]> : tensor<4xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3x2x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3x2x2x16xf32>) -> tensor<4x3x2x2x16xf32>
  %m = attn.length_mask %lens : tensor<4xi32> -> tensor<4x20xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x3x2x2x16xf32>, tensor<4x20x2x16xf32>, tensor<4x20x2x16xf32>) scale(%s)
      mask(%m : tensor<4x20xi1>) score_mod_operands(%lens : tensor<4xi32>)
      outs(%init : tensor<4x3x2x2x16xf32>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %g: index, %mi: index, %ni: index, %len: i32):
        %li = arith.index_cast %len : i32 to index
        %p = arith.addi %mi, %li : index
        %c = arith.constant -3 : index
        %pos = arith.addi %p, %c : index
        %ok = arith.cmpi sle, %ni, %pos : index
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %ok, %x, %ninf : f32
        attn.yield %y : f32
      } -> tensor<4x3x2x2x16xf32>
  return %r : tensor<4x3x2x2x16xf32>
}
func.func @spec_mask(%q: tensor<4x3x2x2x16xf32>, %k: tensor<4x20x2x16xf32>, %v: tensor<4x20x2x16xf32>) -> tensor<4x3x2x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %lens = arith.constant dense<[0, 2, 7, 20]> : tensor<4xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3x2x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3x2x2x16xf32>) -> tensor<4x3x2x2x16xf32>
  %me = tensor.empty() : tensor<4x3x20xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%lens : tensor<4xi32>) outs(%me : tensor<4x3x20xi1>) {
  ^bb0(%len: i32, %out: i1):
    %mi = linalg.index 1 : index
    %ni = linalg.index 2 : index
    %m32 = arith.index_cast %mi : index to i32
    %n32 = arith.index_cast %ni : index to i32
    %c3 = arith.constant 3 : i32
    %last = arith.subi %len, %c3 : i32
    %pos = arith.addi %last, %m32 : i32
    %causal = arith.cmpi sle, %n32, %pos : i32
    %inlen = arith.cmpi slt, %n32, %len : i32
    %keep = arith.andi %causal, %inlen : i1
    linalg.yield %keep : i1
  } -> tensor<4x3x20xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x3x2x2x16xf32>, tensor<4x20x2x16xf32>, tensor<4x20x2x16xf32>) scale(%s)
      mask(%m : tensor<4x3x20xi1>)
      outs(%init : tensor<4x3x2x2x16xf32>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, n)>] -> tensor<4x3x2x2x16xf32>
  return %r : tensor<4x3x2x2x16xf32>
}

// -----

// EXEC: @spec_chunk ref=fn:spec_chunk_mask amp=2.0
func.func @spec_chunk(%q: tensor<4x3x2x2x16xf32>, %k: tensor<4x20x2x16xf32>, %v: tensor<4x20x2x16xf32>) -> tensor<4x3x2x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %lens = arith.constant dense<[9, 2, 17, 20]> : tensor<4xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3x2x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3x2x2x16xf32>) -> tensor<4x3x2x2x16xf32>
  %m = attn.length_mask %lens : tensor<4xi32> -> tensor<4x20xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x3x2x2x16xf32>, tensor<4x20x2x16xf32>, tensor<4x20x2x16xf32>) scale(%s)
      mask(%m : tensor<4x20xi1>) score_mod_operands(%lens : tensor<4xi32>)
      outs(%init : tensor<4x3x2x2x16xf32>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b)>] score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %g: index, %mi: index, %ni: index, %len: i32):
        %li = arith.index_cast %len : i32 to index
        %p = arith.addi %mi, %li : index
        %c = arith.constant -3 : index
        %pos = arith.addi %p, %c : index
        %ok = arith.cmpi sle, %ni, %pos : index
        %ninf = arith.constant 0xFF800000 : f32
        %y = arith.select %ok, %x, %ninf : f32
        %c8 = arith.constant 8 : index
        %cm = arith.floordivsi %pos, %c8 : index
        %cn = arith.floordivsi %ni, %c8 : index
        %same = arith.cmpi eq, %cm, %cn : index
        %z = arith.select %same, %y, %ninf : f32
        attn.yield %z : f32
      } -> tensor<4x3x2x2x16xf32>
  return %r : tensor<4x3x2x2x16xf32>
}
func.func @spec_chunk_mask(%q: tensor<4x3x2x2x16xf32>, %k: tensor<4x20x2x16xf32>, %v: tensor<4x20x2x16xf32>) -> tensor<4x3x2x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %lens = arith.constant dense<[9, 2, 17, 20]> : tensor<4xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3x2x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3x2x2x16xf32>) -> tensor<4x3x2x2x16xf32>
  %me = tensor.empty() : tensor<4x3x20xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%lens : tensor<4xi32>) outs(%me : tensor<4x3x20xi1>) {
  ^bb0(%len: i32, %out: i1):
    %mi = linalg.index 1 : index
    %ni = linalg.index 2 : index
    %m32 = arith.index_cast %mi : index to i32
    %n32 = arith.index_cast %ni : index to i32
    %c3 = arith.constant 3 : i32
    %last = arith.subi %len, %c3 : i32
    %pos = arith.addi %last, %m32 : i32
    %causal = arith.cmpi sle, %n32, %pos : i32
    %inlen = arith.cmpi slt, %n32, %len : i32
    %c8 = arith.constant 8 : i32
    %cm = arith.floordivsi %pos, %c8 : i32
    %cn = arith.floordivsi %n32, %c8 : i32
    %same = arith.cmpi eq, %cm, %cn : i32
    %k1 = arith.andi %causal, %inlen : i1
    %keep = arith.andi %k1, %same : i1
    linalg.yield %keep : i1
  } -> tensor<4x3x20xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<4x3x2x2x16xf32>, tensor<4x20x2x16xf32>, tensor<4x20x2x16xf32>) scale(%s)
      mask(%m : tensor<4x3x20xi1>)
      outs(%init : tensor<4x3x2x2x16xf32>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, n)>] -> tensor<4x3x2x2x16xf32>
  return %r : tensor<4x3x2x2x16xf32>
}
