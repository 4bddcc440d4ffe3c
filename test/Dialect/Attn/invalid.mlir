// RUN: attn-opt %s --split-input-file --verify-diagnostics

func.func @query_rank_1(%q: tensor<8xf32>, %k: tensor<8xf32>, %v: tensor<8xf32>, %o: tensor<8xf32>) -> tensor<8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{expects the query to have rank >= 2 (batch..., m, d), got rank 1}}
  %r = attn.attention ins(%q, %k, %v : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) scale(%s)
      outs(%o : tensor<8xf32>) indexing_maps = [] -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @wrong_number_of_maps(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{expects 4 indexing maps (query, key, value, output), got 3}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>] -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @map_wrong_num_dims(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{expects the key indexing map to have 4 dimensions (0 batch + m, n, d, e) and no symbols}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @output_rank_mismatch(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{expects the output to have rank 3 like the query, got 2}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @key_misses_head_dim(%q: tensor<2x4x8xf32>, %k: tensor<2x6xf32>, %v: tensor<2x6x8xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{the key indexing map must use the head dimension 'd'}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x8xf32>, tensor<2x6xf32>, tensor<2x6x8xf32>) scale(%s)
      outs(%o : tensor<2x4x8xf32>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>] -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

func.func @map_results_vs_rank(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{expects the value indexing map to have 2 results (the rank of the value)}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @not_projected_permutation(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{expects the query indexing map to be a projected permutation}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m + n, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @query_indexes_key_dim(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{the query must not index the key dimension 'n'}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @head_dim_mismatch(%q: tensor<4x8xf32>, %k: tensor<6x16xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{has inconsistent sizes for the head dimension 'd': 8 in the query but 16 in the key}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x16xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @kv_length_mismatch(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<7x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{has inconsistent sizes for the key dimension 'n': 6 in the key but 7 in the value}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<7x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @mask_indexes_head_dim(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %mask: tensor<4x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{the mask must not index the head dimension 'd'}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      mask(%mask : tensor<4x8xf32>) outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>,
                       affine_map<(m, n, d, e) -> (m, d)>] -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @mask_query_len_mismatch(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %mask: tensor<5x6xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{has inconsistent sizes for the query dimension 'm': 4 in the output but 5 in the mask}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      mask(%mask : tensor<5x6xf32>) outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>,
                       affine_map<(m, n, d, e) -> (m, n)>] -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @integer_query(%q: tensor<4x8xi32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xi32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @update_rank_mismatch(%s: tensor<4x16x32xf32>, %v: tensor<32x64xf16>,
    %m: tensor<4x16xf32>, %l: tensor<4x16xf32>, %acc: tensor<4x16x64xf32>) {
  // expected-error @below {{expects scores and acc of rank 3, value of rank 3 and max/sum of rank 2}}
  %m2, %l2, %acc2 = attn.online_update %s, %v into(%m, %l, %acc)
      : tensor<4x16x32xf32>, tensor<32x64xf16>, tensor<4x16xf32>, tensor<4x16x64xf32>
  return
}

// -----

func.func @update_key_mismatch(%s: tensor<16x32xf32>, %v: tensor<31x64xf16>,
    %m: tensor<16xf32>, %l: tensor<16xf32>, %acc: tensor<16x64xf32>) {
  // expected-error @below {{expects scores and value to agree on the key dimension, got 32 and 31}}
  %m2, %l2, %acc2 = attn.online_update %s, %v into(%m, %l, %acc)
      : tensor<16x32xf32>, tensor<31x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @update_rows_mismatch(%s: tensor<16x32xf32>, %v: tensor<32x64xf16>,
    %m: tensor<15xf32>, %l: tensor<15xf32>, %acc: tensor<16x64xf32>) {
  // expected-error @below {{expects scores and max to agree on the query dimension, got 16 and 15}}
  %m2, %l2, %acc2 = attn.online_update %s, %v into(%m, %l, %acc)
      : tensor<16x32xf32>, tensor<32x64xf16>, tensor<15xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @update_f16_state(%s: tensor<16x32xf32>, %v: tensor<32x64xf16>,
    %m: tensor<16xf16>, %l: tensor<16xf16>, %acc: tensor<16x64xf32>) {
  // expected-error @below {{operand #2 must be ranked tensor of 32-bit float values}}
  %m2, %l2, %acc2 = attn.online_update %s, %v into(%m, %l, %acc)
      : tensor<16x32xf32>, tensor<32x64xf16>, tensor<16xf16>, tensor<16x64xf32>
  return
}

// -----

func.func @finalize_sum_rank(%acc: tensor<16x64xf32>, %l: tensor<16x64xf32>) {
  // expected-error @below {{expects sum to have rank 1 (acc without its value dimension), got 2}}
  %o = attn.finalize %acc, %l : tensor<16x64xf32>, tensor<16x64xf32> -> tensor<16x64xf16>
  return
}

// -----

func.func @finalize_shape(%acc: tensor<16x64xf32>, %l: tensor<16xf32>) {
  // expected-error @below {{expects acc and result to agree on the shape, got 64 and 32}}
  %o = attn.finalize %acc, %l : tensor<16x64xf32>, tensor<16xf32> -> tensor<16x32xf16>
  return
}

// -----

// An empty dimension: nothing to tile or launch (repro: internal-error-tile-zero-d).
func.func @empty_head_dim(%q: tensor<4x0xf32>, %k: tensor<6x0xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 0.5 : f32
  // expected-error @below {{expects non-empty dimensions, but the head dimension 'd' has size 0 in the key}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x0xf32>, tensor<6x0xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @empty_batch(%q: tensor<0x4x8xf32>, %k: tensor<0x6x8xf32>, %v: tensor<0x6x8xf32>, %o: tensor<0x4x8xf32>) -> tensor<0x4x8xf32> {
  %s = arith.constant 0.5 : f32
  // expected-error @below {{expects non-empty dimensions, but the batch dimension 0 has size 0 in the output}}
  %r = attn.attention ins(%q, %k, %v : tensor<0x4x8xf32>, tensor<0x6x8xf32>, tensor<0x6x8xf32>) scale(%s)
      outs(%o : tensor<0x4x8xf32>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>, affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>]
      -> tensor<0x4x8xf32>
  return %r : tensor<0x4x8xf32>
}

// -----

// +inf as the fill would make every row with a masked key NaN (repro:
// bundle-mask-value-posinf-becomes-neginf).
func.func @posinf_fill(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 0.5 : f32
  // expected-error @below {{expects mask_value to be -inf or finite}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>) causal mask_value = 0x7F800000
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @nan_fill(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 0.5 : f32
  // expected-error @below {{expects mask_value to be -inf or finite}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>) causal mask_value = 0x7FC00000
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @query_offset_without_causal(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 0.5 : f32
  // expected-error @below {{query_offset only applies to causal or window}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>) query_offset = 2
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @negative_query_offset(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = arith.constant 0.5 : f32
  // expected-error @below {{attribute 'query_offset' failed to satisfy constraint}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>) causal query_offset = -1
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>, affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>]
      -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @score_mod_wrong_arity(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>, %x: tensor<6xf16>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{expects the score_mod block to take 3 arguments (the f32 score, 0 batch indices, m, n, 0 operand elements), got 2}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] score_mod {
      ^bb0(%sc: f32, %m: index):
        attn.yield %sc : f32
      } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @score_mod_operand_type(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>, %x: tensor<6xf16>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{expects score_mod argument #3 to be 'f16', got 'f32'}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s) score_mod_operands(%x : tensor<6xf16>)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>, affine_map<(m, n, d, e) -> (n)>] score_mod {
      ^bb0(%sc: f32, %m: index, %n: index, %e: f32):
        attn.yield %sc : f32
      } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @score_mod_operand_indexes_d(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>, %x: tensor<6xf16>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{the score_mod operand must not index the head dimension 'd'}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s) score_mod_operands(%x : tensor<6xf16>)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>, affine_map<(m, n, d, e) -> (d)>] score_mod {
      ^bb0(%sc: f32, %m: index, %n: index, %e: f16):
        attn.yield %sc : f32
      } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @score_mod_operands_without_region(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>, %x: tensor<6xf16>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{has score_mod_operands but no score_mod region}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s) score_mod_operands(%x : tensor<6xf16>)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>, affine_map<(m, n, d, e) -> (n)>]  -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @score_mod_tensor_op(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>, %x: tensor<6xf16>) -> tensor<4x8xf32> {
  %s = arith.constant 1.0 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] score_mod {
      ^bb0(%sc: f32, %m: index, %n: index):
        // expected-error @below {{is not allowed in a score_mod region (scalar arith and math ops only)}}
        %t = tensor.empty() : tensor<2xf32>
        attn.yield %sc : f32
      } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

func.func @lse_wrong_shape(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>) -> tensor<5xf32> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{expects the lse result to have the output's shape without e, got 'tensor<5xf32>' for output 'tensor<4x8xf32>'}}
  %r, %l = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf32>, tensor<5xf32>
  return %l : tensor<5xf32>
}

// -----

func.func @merge_count_mismatch(%o0: tensor<4x8xf16>, %o1: tensor<4x8xf16>, %l0: tensor<4xf32>) -> tensor<4x8xf16> {
  // expected-error @below {{expects one lse per partial output, got 2 outputs and 1 lses}}
  %r, %l = attn.merge (%o0, %o1 : tensor<4x8xf16>, tensor<4x8xf16>) lse(%l0 : tensor<4xf32>) -> tensor<4x8xf16>, tensor<4xf32>
  return %r : tensor<4x8xf16>
}

// -----

func.func @merge_shape_mismatch(%o0: tensor<4x8xf16>, %o1: tensor<4x9xf16>, %l0: tensor<4xf32>, %l1: tensor<4xf32>) -> tensor<4x8xf16> {
  // expected-error @below {{expects partial output #1 to have the result's shape, got 'tensor<4x9xf16>'}}
  %r, %l = attn.merge (%o0, %o1 : tensor<4x8xf16>, tensor<4x9xf16>) lse(%l0, %l1 : tensor<4xf32>, tensor<4xf32>) -> tensor<4x8xf16>, tensor<4xf32>
  return %r : tensor<4x8xf16>
}

// -----

func.func @merge_lse_rank(%o0: tensor<4x8xf16>, %l0: tensor<4x8xf32>) -> tensor<4x8xf16> {
  // expected-error @below {{expects the lse to have the result's shape without its last dim, got 'tensor<4x8xf32>' for 'tensor<4x8xf16>'}}
  %r, %l = attn.merge (%o0 : tensor<4x8xf16>) lse(%l0 : tensor<4x8xf32>) -> tensor<4x8xf16>, tensor<4x8xf32>
  return %r : tensor<4x8xf16>
}

// -----

func.func @page_gather_same_dims(%c: tensor<8x16x64xf16>, %t: tensor<2x4xi32>) -> tensor<2x64x64xf16> {
  // expected-error @below {{expects seq_dim and token_dim to be two different dimensions of the cache (rank 3), got 1 and 1}}
  %k = attn.page_gather %c[%t] seq_dim = 1 token_dim = 1 : tensor<8x16x64xf16>, tensor<2x4xi32> -> tensor<2x64x64xf16>
  return %k : tensor<2x64x64xf16>
}

// -----

func.func @page_gather_table_rank(%c: tensor<8x16x64xf16>, %t: tensor<8xi32>) -> tensor<2x64x64xf16> {
  // expected-error @below {{expects a block table of rank 2 (sequences x pages per sequence), got 'tensor<8xi32>'}}
  %k = attn.page_gather %c[%t] seq_dim = 0 token_dim = 1 : tensor<8x16x64xf16>, tensor<8xi32> -> tensor<2x64x64xf16>
  return %k : tensor<2x64x64xf16>
}

// -----

func.func @page_gather_tokens(%c: tensor<8x16x64xf16>, %t: tensor<2x4xi32>) -> tensor<2x60x64xf16> {
  // expected-error @below {{expects result dimension 1 to be 64 (pages per sequence x page size), got 60}}
  %k = attn.page_gather %c[%t] seq_dim = 0 token_dim = 1 : tensor<8x16x64xf16>, tensor<2x4xi32> -> tensor<2x60x64xf16>
  return %k : tensor<2x60x64xf16>
}

// -----

func.func @page_gather_sequences(%c: tensor<8x16x64xf16>, %t: tensor<2x4xi32>) -> tensor<3x64x64xf16> {
  // expected-error @below {{expects result dimension 0 to be 2 (the table's sequences), got 3}}
  %k = attn.page_gather %c[%t] seq_dim = 0 token_dim = 1 : tensor<8x16x64xf16>, tensor<2x4xi32> -> tensor<3x64x64xf16>
  return %k : tensor<3x64x64xf16>
}

// -----

func.func @page_gather_table_type(%c: tensor<8x16x64xf16>, %t: tensor<2x4xi64>) -> tensor<2x64x64xf16> {
  // expected-error @below {{operand #1 must be ranked tensor of 32-bit signless integer values}}
  %k = attn.page_gather %c[%t] seq_dim = 0 token_dim = 1 : tensor<8x16x64xf16>, tensor<2x4xi64> -> tensor<2x64x64xf16>
  return %k : tensor<2x64x64xf16>
}

// -----

func.func @length_mask_rows(%lens: tensor<8xi32>) -> tensor<4x64xi1> {
  // expected-error @below {{expects one length per result row, got 8 lengths for 4 rows}}
  %m = attn.length_mask %lens : tensor<8xi32> -> tensor<4x64xi1>
  return %m : tensor<4x64xi1>
}

// -----

func.func @length_mask_dynamic_keys(%lens: tensor<8xi32>) -> tensor<8x?xi1> {
  // expected-error @below {{expects a static key count (the result's dim 1)}}
  %m = attn.length_mask %lens : tensor<8xi32> -> tensor<8x?xi1>
  return %m : tensor<8x?xi1>
}

// -----

func.func @varlen_mask_tables(%cq: tensor<5xi32>, %ck: tensor<4xi32>) -> tensor<64x64xi1> {
  // expected-error @below {{expects query and key tables of one static size (S + 1), got 'tensor<5xi32>' and 'tensor<4xi32>'}}
  %m = attn.varlen_mask %cq, %ck : tensor<5xi32>, tensor<4xi32> -> tensor<64x64xi1>
  return %m : tensor<64x64xi1>
}

// -----

func.func @varlen_mask_no_sequence(%cq: tensor<1xi32>) -> tensor<64x64xi1> {
  // expected-error @below {{expects at least one sequence (S + 1 >= 2 table entries), got 1}}
  %m = attn.varlen_mask %cq, %cq : tensor<1xi32>, tensor<1xi32> -> tensor<64x64xi1>
  return %m : tensor<64x64xi1>
}

// -----

func.func @varlen_mask_dynamic(%cq: tensor<3xi32>) -> tensor<?x64xi1> {
  // expected-error @below {{expects one size per dynamic token count (1 for 'tensor<?x64xi1>'), got 0}}
  %m = attn.varlen_mask %cq, %cq : tensor<3xi32>, tensor<3xi32> -> tensor<?x64xi1>
  return %m : tensor<?x64xi1>
}

// -----

func.func @varlen_mask_extra_size(%cq: tensor<3xi32>, %t: index) -> tensor<64x64xi1> {
  // expected-error @below {{expects one size per dynamic token count (0 for 'tensor<64x64xi1>'), got 1}}
  %m = attn.varlen_mask %cq, %cq sizes(%t) : tensor<3xi32>, tensor<3xi32> -> tensor<64x64xi1>
  return %m : tensor<64x64xi1>
}

// -----

func.func @varlen_mask_rank(%cq: tensor<3xi32>) -> tensor<2x64x64xi1> {
  // expected-error @below {{expects cumulative lengths [S + 1] for queries and keys and a result [Tq, Tk]}}
  %m = attn.varlen_mask %cq, %cq : tensor<3xi32>, tensor<3xi32> -> tensor<2x64x64xi1>
  return %m : tensor<2x64x64xi1>
}

// -----

func.func @varlen_mask_bottom_right(%cq: tensor<3xi32>) -> tensor<64x64xi1> {
  // expected-error @below {{bottom_right aligns the causal rule; it needs causal}}
  %m = attn.varlen_mask %cq, %cq bottom_right : tensor<3xi32>, tensor<3xi32> -> tensor<64x64xi1>
  return %m : tensor<64x64xi1>
}

// -----

func.func @fp8_mixed_types(%q: tensor<4x8xf8E4M3FN>, %k: tensor<6x8xf8E5M2>, %v: tensor<6x8xf8E4M3FN>, %o: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{expects query, key and value of one 8-bit float type when any is 8-bit, got 'f8E4M3FN', 'f8E5M2', 'f8E4M3FN'}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf8E4M3FN>, tensor<6x8xf8E5M2>, tensor<6x8xf8E4M3FN>) scale(%s)
      outs(%o : tensor<4x8xf16>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf16>
  return %r : tensor<4x8xf16>
}

// -----

func.func @fp8_with_f16_query(%q: tensor<4x8xf16>, %k: tensor<6x8xf8E4M3FN>, %v: tensor<6x8xf8E4M3FN>, %o: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{expects query, key and value of one 8-bit float type when any is 8-bit, got 'f16', 'f8E4M3FN', 'f8E4M3FN'}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf16>, tensor<6x8xf8E4M3FN>, tensor<6x8xf8E4M3FN>) scale(%s)
      outs(%o : tensor<4x8xf16>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf16>
  return %r : tensor<4x8xf16>
}

// -----

func.func @fp8_result(%q: tensor<4x8xf8E4M3FN>, %k: tensor<6x8xf8E4M3FN>, %v: tensor<6x8xf8E4M3FN>, %o: tensor<4x8xf8E4M3FN>) -> tensor<4x8xf8E4M3FN> {
  %s = arith.constant 1.0 : f32
  // expected-error @below {{operand #4 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf8E4M3FN>, tensor<6x8xf8E4M3FN>, tensor<6x8xf8E4M3FN>) scale(%s)
      outs(%o : tensor<4x8xf8E4M3FN>)
      indexing_maps = [affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
                       affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] -> tensor<4x8xf8E4M3FN>
  return %r : tensor<4x8xf8E4M3FN>
}

// -----

// The score_mod body reads only its block arguments (every backend clones
// it per score element, also inside a GPU kernel): a runtime scalar from
// outside is an operand tensor or nothing. (The recognizer refuses such
// programs with a remark; this is the op as written by hand.)
func.func @score_mod_captures(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %o: tensor<4x8xf32>, %cap: f32) -> tensor<4x8xf32> {
  %s = arith.constant 0.125 : f32
  // expected-note @below {{required by region isolation constraints}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) scale(%s)
      outs(%o : tensor<4x8xf32>) indexing_maps = [
        affine_map<(m, n, d, e) -> (m, d)>, affine_map<(m, n, d, e) -> (n, d)>,
        affine_map<(m, n, d, e) -> (n, e)>, affine_map<(m, n, d, e) -> (m, e)>] score_mod {
      ^bb0(%x: f32, %m: index, %n: index):
        // expected-error @below {{using value defined outside the region}}
        %y = arith.mulf %x, %cap : f32
        attn.yield %y : f32
      } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
