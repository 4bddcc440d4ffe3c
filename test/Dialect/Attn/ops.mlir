// RUN: attn-opt %s --split-input-file | FileCheck %s
// Round trip: parse -> print -> parse again must give the same IR.
// RUN: attn-opt %s --split-input-file | attn-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @attention_bhsd_causal_f16
// CHECK: attn.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) scale(%{{.*}}) outs(%{{.*}} : tensor<2x8x128x64xf16>) causal indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}] -> tensor<2x8x128x64xf16>
func.func @attention_bhsd_causal_f16(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
    %v: tensor<2x8x128x64xf16>, %o: tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16> {
  %s = arith.constant 0.125 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>)
      scale(%s) outs(%o : tensor<2x8x128x64xf16>) causal
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
      -> tensor<2x8x128x64xf16>
  return %r : tensor<2x8x128x64xf16>
}

// -----

// A broadcast mask (no batch dims) and the [B, S, H, D] layout, bf16.
// CHECK-LABEL: func.func @attention_bshd_mask_bf16
// CHECK: attn.attention {{.*}} mask(%{{.*}} : tensor<100x70xf32>) outs
func.func @attention_bshd_mask_bf16(%q: tensor<2x100x4x32xbf16>, %k: tensor<2x70x4x32xbf16>,
    %v: tensor<2x70x4x16xbf16>, %mask: tensor<100x70xf32>, %o: tensor<2x100x4x16xbf16>) -> tensor<2x100x4x16xbf16> {
  %s = arith.constant 0.17677669 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x100x4x32xbf16>, tensor<2x70x4x32xbf16>, tensor<2x70x4x16xbf16>)
      scale(%s) mask(%mask : tensor<100x70xf32>) outs(%o : tensor<2x100x4x16xbf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, m, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, m, h, e)>,
                       affine_map<(b, h, m, n, d, e) -> (m, n)>]
      -> tensor<2x100x4x16xbf16>
  return %r : tensor<2x100x4x16xbf16>
}

// -----

// Grouped-query attention: K and V omit the query-group dim g (2 KV heads
// serve 4 query heads each), no broadcast copy.
// CHECK-LABEL: func.func @attention_gqa_kv_omit_group_dim
// CHECK: attn.attention
func.func @attention_gqa_kv_omit_group_dim(%q: tensor<2x2x4x64x32xf16>, %k: tensor<2x2x64x32xf16>,
    %v: tensor<2x2x64x32xf16>, %o: tensor<2x2x4x64x32xf16>) -> tensor<2x2x4x64x32xf16> {
  %s = arith.constant 0.17677669 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x2x4x64x32xf16>, tensor<2x2x64x32xf16>, tensor<2x2x64x32xf16>)
      scale(%s) outs(%o : tensor<2x2x4x64x32xf16>) causal
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, h, n, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, h, n, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, h, g, m, e)>]
      -> tensor<2x2x4x64x32xf16>
  return %r : tensor<2x2x4x64x32xf16>
}

// -----

// CHECK-LABEL: func.func @online_update_and_finalize
// CHECK: %[[M:.*]], %[[L:.*]], %[[A:.*]] = attn.online_update %{{.*}}, %{{.*}} into(%{{.*}}, %{{.*}}, %{{.*}}) : tensor<4x16x32xf32>, tensor<4x32x64xf16>, tensor<4x16xf32>, tensor<4x16x64xf32>
// CHECK: attn.finalize %[[A]], %[[L]] : tensor<4x16x64xf32>, tensor<4x16xf32> -> tensor<4x16x64xf16>
func.func @online_update_and_finalize(%s: tensor<4x16x32xf32>, %v: tensor<4x32x64xf16>,
    %m: tensor<4x16xf32>, %l: tensor<4x16xf32>, %acc: tensor<4x16x64xf32>) -> tensor<4x16x64xf16> {
  %m2, %l2, %acc2 = attn.online_update %s, %v into(%m, %l, %acc)
      : tensor<4x16x32xf32>, tensor<4x32x64xf16>, tensor<4x16xf32>, tensor<4x16x64xf32>
  %o = attn.finalize %acc2, %l2 : tensor<4x16x64xf32>, tensor<4x16xf32> -> tensor<4x16x64xf16>
  return %o : tensor<4x16x64xf16>
}

// -----

// Dynamic sizes.
// CHECK-LABEL: func.func @online_update_dynamic
// CHECK: attn.online_update
func.func @online_update_dynamic(%s: tensor<?x?xf32>, %v: tensor<?x8xf32>,
    %m: tensor<?xf32>, %l: tensor<?xf32>, %acc: tensor<?x8xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x8xf32>) {
  %m2, %l2, %acc2 = attn.online_update %s, %v into(%m, %l, %acc)
      : tensor<?x?xf32>, tensor<?x8xf32>, tensor<?xf32>, tensor<?x8xf32>
  return %m2, %l2, %acc2 : tensor<?xf32>, tensor<?xf32>, tensor<?x8xf32>
}

// -----

// The lse result (the output's dims without e, in its order) and attn.merge.
// CHECK-LABEL: func.func @lse_and_merge
// CHECK: %[[A:.*]]:2 = attn.attention
// CHECK-SAME: -> tensor<2x37x4x8xf16>, tensor<2x37x4xf32>
// CHECK: attn.merge(%[[A]]#0, %[[A]]#0 : tensor<2x37x4x8xf16>, tensor<2x37x4x8xf16>) lse(%[[A]]#1, %[[A]]#1 : tensor<2x37x4xf32>, tensor<2x37x4xf32>) -> tensor<2x37x4x8xf16>, tensor<2x37x4xf32>
func.func @lse_and_merge(%q: tensor<2x37x4x16xf16>, %k: tensor<2x45x4x16xf16>, %v: tensor<2x45x4x8xf16>, %o: tensor<2x37x4x8xf16>) -> (tensor<2x37x4x8xf16>, tensor<2x37x4xf32>) {
  %s = arith.constant 0.25 : f32
  %r, %l = attn.attention ins(%q, %k, %v : tensor<2x37x4x16xf16>, tensor<2x45x4x16xf16>, tensor<2x45x4x8xf16>) scale(%s)
      outs(%o : tensor<2x37x4x8xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, m, h, d)>, affine_map<(b, h, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, m, n, d, e) -> (b, m, h, e)>]
      -> tensor<2x37x4x8xf16>, tensor<2x37x4xf32>
  %mo, %ml = attn.merge (%r, %r : tensor<2x37x4x8xf16>, tensor<2x37x4x8xf16>) lse(%l, %l : tensor<2x37x4xf32>, tensor<2x37x4xf32>) -> tensor<2x37x4x8xf16>, tensor<2x37x4xf32>
  return %mo, %ml : tensor<2x37x4x8xf16>, tensor<2x37x4xf32>
}

// -----

// A paged KV cache ([pages, page, heads, D], vLLM's layout) read through a
// block table as the attention's K and V.
// CHECK-LABEL: func.func @paged
// CHECK: %[[K:.*]] = attn.page_gather %{{.*}}[%[[T:.*]]] seq_dim = 0 token_dim = 1 : tensor<64x16x8x128xf16>, tensor<4x32xi32> -> tensor<4x512x8x128xf16>
// CHECK: attn.page_gather %{{.*}}[%[[T]]] seq_dim = 0 token_dim = 1 : tensor<64x16x8x128xf16>, tensor<4x32xi32> -> tensor<4x512x8x128xf16>
func.func @paged(%q: tensor<4x1x8x128xf16>, %kc: tensor<64x16x8x128xf16>, %vc: tensor<64x16x8x128xf16>, %t: tensor<4x32xi32>, %o: tensor<4x1x8x128xf16>) -> tensor<4x1x8x128xf16> {
  %s = arith.constant 0.088 : f32
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<64x16x8x128xf16>, tensor<4x32xi32> -> tensor<4x512x8x128xf16>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<64x16x8x128xf16>, tensor<4x32xi32> -> tensor<4x512x8x128xf16>
  %r = attn.attention ins(%q, %k, %v : tensor<4x1x8x128xf16>, tensor<4x512x8x128xf16>, tensor<4x512x8x128xf16>) scale(%s)
      outs(%o : tensor<4x1x8x128xf16>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, m, h, d)>, affine_map<(b, h, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, m, n, d, e) -> (b, m, h, e)>]
      -> tensor<4x1x8x128xf16>
  return %r : tensor<4x1x8x128xf16>
}

// -----

// CHECK-LABEL: func.func @length_mask
// CHECK: attn.length_mask %{{.*}} : tensor<16xi32> -> tensor<16x8192xi1>
func.func @length_mask(%lens: tensor<16xi32>) -> tensor<16x8192xi1> {
  %m = attn.length_mask %lens : tensor<16xi32> -> tensor<16x8192xi1>
  return %m : tensor<16x8192xi1>
}

// -----

// CHECK-LABEL: func.func @varlen_mask
// CHECK: attn.varlen_mask %{{.*}}, %{{.*}} : tensor<5xi32>, tensor<5xi32> -> tensor<1000x1000xi1>
// CHECK: attn.varlen_mask %{{.*}}, %{{.*}} causal : tensor<5xi32>, tensor<5xi32> -> tensor<1000x1000xi1>
// CHECK: attn.varlen_mask %{{.*}}, %{{.*}} causal bottom_right : tensor<5xi32>, tensor<5xi32> -> tensor<1000x1200xi1>
func.func @varlen_mask(%cq: tensor<5xi32>, %ck: tensor<5xi32>) -> (tensor<1000x1000xi1>, tensor<1000x1000xi1>, tensor<1000x1200xi1>) {
  %a = attn.varlen_mask %cq, %cq : tensor<5xi32>, tensor<5xi32> -> tensor<1000x1000xi1>
  %b = attn.varlen_mask %cq, %cq causal : tensor<5xi32>, tensor<5xi32> -> tensor<1000x1000xi1>
  %c = attn.varlen_mask %cq, %ck causal bottom_right : tensor<5xi32>, tensor<5xi32> -> tensor<1000x1200xi1>
  return %a, %b, %c : tensor<1000x1000xi1>, tensor<1000x1000xi1>, tensor<1000x1200xi1>
}

// -----

// Dynamic token counts: one index size per dynamic result dim.
// CHECK-LABEL: func.func @varlen_mask_dynamic
// CHECK: attn.varlen_mask %{{.*}}, %{{.*}} causal sizes(%{{.*}}, %{{.*}}) : tensor<5xi32>, tensor<5xi32> -> tensor<?x?xi1>
// CHECK: attn.varlen_mask %{{.*}}, %{{.*}} sizes(%{{.*}}) : tensor<5xi32>, tensor<5xi32> -> tensor<64x?xi1>
func.func @varlen_mask_dynamic(%cq: tensor<5xi32>, %tq: index, %tk: index) -> (tensor<?x?xi1>, tensor<64x?xi1>) {
  %a = attn.varlen_mask %cq, %cq causal sizes(%tq, %tk) : tensor<5xi32>, tensor<5xi32> -> tensor<?x?xi1>
  %b = attn.varlen_mask %cq, %cq sizes(%tk) : tensor<5xi32>, tensor<5xi32> -> tensor<64x?xi1>
  return %a, %b : tensor<?x?xi1>, tensor<64x?xi1>
}

// -----

// FP8 operands with the value's dequantization scale.
// CHECK-LABEL: func.func @fp8_value_scale
// CHECK: attn.attention ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<2x16x64xf8E4M3FN>, tensor<2x32x64xf8E4M3FN>, tensor<2x32x64xf8E4M3FN>) scale(%{{.+}}) value_scale(%{{.+}}) outs
func.func @fp8_value_scale(%q: tensor<2x16x64xf8E4M3FN>, %k: tensor<2x32x64xf8E4M3FN>, %v: tensor<2x32x64xf8E4M3FN>, %o: tensor<2x16x64xf16>) -> tensor<2x16x64xf16> {
  %s = arith.constant 0.125 : f32
  %vs = arith.constant 0.5 : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x16x64xf8E4M3FN>, tensor<2x32x64xf8E4M3FN>, tensor<2x32x64xf8E4M3FN>) scale(%s) value_scale(%vs)
      outs(%o : tensor<2x16x64xf16>)
      indexing_maps = [affine_map<(b, m, n, d, e) -> (b, m, d)>, affine_map<(b, m, n, d, e) -> (b, n, d)>,
                       affine_map<(b, m, n, d, e) -> (b, n, e)>, affine_map<(b, m, n, d, e) -> (b, m, e)>] -> tensor<2x16x64xf16>
  return %r : tensor<2x16x64xf16>
}
