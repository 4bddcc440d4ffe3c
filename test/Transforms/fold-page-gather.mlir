// attn-fold-page-gather: K and V gathered from a paged cache by one block
// table (whole pages, the page and slot dims merged into keys) become
// attn.page_gather; other gathers stay (with --attn-explain, a remark says
// why).
// RUN: attn-opt %s --split-input-file --attn-fold-page-gather --attn-explain --verify-diagnostics | FileCheck %s

// vLLM's cache layout [pages, page, kv heads, D], GQA.
// CHECK-LABEL: func.func @vllm_layout
// CHECK: %[[K:.*]] = attn.page_gather %{{.*}}[%[[T:.*]]] seq_dim = 0 token_dim = 1 : tensor<64x16x2x32xf16>, tensor<4x8xi32> -> tensor<4x128x2x32xf16>
// CHECK: %[[V:.*]] = attn.page_gather %{{.*}}[%[[T]]] seq_dim = 0 token_dim = 1
// CHECK: attn.attention ins(%{{.*}}, %[[K]], %[[V]] :
func.func @vllm_layout(%q: tensor<4x1x2x2x32xf16>, %kc: tensor<64x16x2x32xf16>, %vc: tensor<64x16x2x32xf16>, %t: tensor<4x8xi32>, %o: tensor<4x1x2x2x32xf16>) -> tensor<4x1x2x2x32xf16> {
  %ke = tensor.empty() : tensor<4x8x16x2x32xf16>
  %kg = linalg.generic {indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<4x8xi32>) outs(%ke : tensor<4x8x16x2x32xf16>) {
  ^bb0(%entry: i32, %out: f16):
    %pg = arith.index_cast %entry : i32 to index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %x = tensor.extract %kc[%pg, %i2, %i3, %i4] : tensor<64x16x2x32xf16>
    linalg.yield %x : f16
  } -> tensor<4x8x16x2x32xf16>
  %k = tensor.collapse_shape %kg [[0], [1, 2], [3], [4]] : tensor<4x8x16x2x32xf16> into tensor<4x128x2x32xf16>
  %ve = tensor.empty() : tensor<4x8x16x2x32xf16>
  %vg = linalg.generic {indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<4x8xi32>) outs(%ve : tensor<4x8x16x2x32xf16>) {
  ^bb0(%entry: i32, %out: f16):
    %pg = arith.index_cast %entry : i32 to index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %x = tensor.extract %vc[%pg, %i2, %i3, %i4] : tensor<64x16x2x32xf16>
    linalg.yield %x : f16
  } -> tensor<4x8x16x2x32xf16>
  %v = tensor.collapse_shape %vg [[0], [1, 2], [3], [4]] : tensor<4x8x16x2x32xf16> into tensor<4x128x2x32xf16>
  %s = arith.constant 0.17 : f32
  // expected-remark @below {{paged K/V: the gathers of K and V by the block table are attn.page_gather (page dim 0, slot dim 1)}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x1x2x2x32xf16>, tensor<4x128x2x32xf16>, tensor<4x128x2x32xf16>) scale(%s)
      outs(%o : tensor<4x1x2x2x32xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>]
      -> tensor<4x1x2x2x32xf16>
  return %r : tensor<4x1x2x2x32xf16>
}

// -----

// The table entry shifted: not a page of the table.
// CHECK-LABEL: func.func @shifted_entry
// CHECK-NOT: attn.page_gather
func.func @shifted_entry(%q: tensor<4x1x2x2x32xf16>, %kc: tensor<64x16x2x32xf16>, %vc: tensor<64x16x2x32xf16>, %t: tensor<4x8xi32>, %o: tensor<4x1x2x2x32xf16>) -> tensor<4x1x2x2x32xf16> {
  %ke = tensor.empty() : tensor<4x8x16x2x32xf16>
  %kg = linalg.generic {indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<4x8xi32>) outs(%ke : tensor<4x8x16x2x32xf16>) {
  ^bb0(%entry: i32, %out: f16):
    %e1 = arith.constant 1 : i32
    %en = arith.addi %entry, %e1 : i32
    %pg = arith.index_cast %en : i32 to index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %x = tensor.extract %kc[%pg, %i2, %i3, %i4] : tensor<64x16x2x32xf16>
    linalg.yield %x : f16
  } -> tensor<4x8x16x2x32xf16>
  %k = tensor.collapse_shape %kg [[0], [1, 2], [3], [4]] : tensor<4x8x16x2x32xf16> into tensor<4x128x2x32xf16>
  %ve = tensor.empty() : tensor<4x8x16x2x32xf16>
  %vg = linalg.generic {indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<4x8xi32>) outs(%ve : tensor<4x8x16x2x32xf16>) {
  ^bb0(%entry: i32, %out: f16):
    %pg = arith.index_cast %entry : i32 to index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %x = tensor.extract %vc[%pg, %i2, %i3, %i4] : tensor<64x16x2x32xf16>
    linalg.yield %x : f16
  } -> tensor<4x8x16x2x32xf16>
  %v = tensor.collapse_shape %vg [[0], [1, 2], [3], [4]] : tensor<4x8x16x2x32xf16> into tensor<4x128x2x32xf16>
  %s = arith.constant 0.17 : f32
  // expected-remark @below {{paged K/V left as gathers: K: the cache's first index is not the table entry}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x1x2x2x32xf16>, tensor<4x128x2x32xf16>, tensor<4x128x2x32xf16>) scale(%s)
      outs(%o : tensor<4x1x2x2x32xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>]
      -> tensor<4x1x2x2x32xf16>
  return %r : tensor<4x1x2x2x32xf16>
}

// -----

// Rows within a page picked by a computed index: not whole pages.
// CHECK-LABEL: func.func @rows_in_page
// CHECK-NOT: attn.page_gather
func.func @rows_in_page(%q: tensor<4x1x2x2x32xf16>, %kc: tensor<64x16x2x32xf16>, %vc: tensor<64x16x2x32xf16>, %t: tensor<4x8xi32>, %o: tensor<4x1x2x2x32xf16>) -> tensor<4x1x2x2x32xf16> {
  %ke = tensor.empty() : tensor<4x8x16x2x32xf16>
  %kg = linalg.generic {indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<4x8xi32>) outs(%ke : tensor<4x8x16x2x32xf16>) {
  ^bb0(%entry: i32, %out: f16):
    %pg = arith.index_cast %entry : i32 to index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %x = tensor.extract %kc[%pg, %i2, %i3, %i4] : tensor<64x16x2x32xf16>
    linalg.yield %x : f16
  } -> tensor<4x8x16x2x32xf16>
  %k = tensor.collapse_shape %kg [[0], [1, 2], [3], [4]] : tensor<4x8x16x2x32xf16> into tensor<4x128x2x32xf16>
  %ve = tensor.empty() : tensor<4x8x16x2x32xf16>
  %vg = linalg.generic {indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<4x8xi32>) outs(%ve : tensor<4x8x16x2x32xf16>) {
  ^bb0(%entry: i32, %out: f16):
    %pg = arith.index_cast %entry : i32 to index
    %i1 = linalg.index 1 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %i2 = arith.addi %i1, %i1 : index
    %x = tensor.extract %vc[%pg, %i2, %i3, %i4] : tensor<64x16x2x32xf16>
    linalg.yield %x : f16
  } -> tensor<4x8x16x2x32xf16>
  %v = tensor.collapse_shape %vg [[0], [1, 2], [3], [4]] : tensor<4x8x16x2x32xf16> into tensor<4x128x2x32xf16>
  %s = arith.constant 0.17 : f32
  // expected-remark @below {{paged K/V left as gathers: V: a cache index other than the first is not its loop (not a gather of whole pages)}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x1x2x2x32xf16>, tensor<4x128x2x32xf16>, tensor<4x128x2x32xf16>) scale(%s)
      outs(%o : tensor<4x1x2x2x32xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>]
      -> tensor<4x1x2x2x32xf16>
  return %r : tensor<4x1x2x2x32xf16>
}

// -----

// K and V through different tables.
// CHECK-LABEL: func.func @two_tables
// CHECK-NOT: attn.page_gather
func.func @two_tables(%q: tensor<4x1x2x2x32xf16>, %kc: tensor<64x16x2x32xf16>, %vc: tensor<64x16x2x32xf16>, %t: tensor<4x8xi32>, %t2: tensor<4x8xi32>, %o: tensor<4x1x2x2x32xf16>) -> tensor<4x1x2x2x32xf16> {
  %ke = tensor.empty() : tensor<4x8x16x2x32xf16>
  %kg = linalg.generic {indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<4x8xi32>) outs(%ke : tensor<4x8x16x2x32xf16>) {
  ^bb0(%entry: i32, %out: f16):
    %pg = arith.index_cast %entry : i32 to index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %x = tensor.extract %kc[%pg, %i2, %i3, %i4] : tensor<64x16x2x32xf16>
    linalg.yield %x : f16
  } -> tensor<4x8x16x2x32xf16>
  %k = tensor.collapse_shape %kg [[0], [1, 2], [3], [4]] : tensor<4x8x16x2x32xf16> into tensor<4x128x2x32xf16>
  %ve = tensor.empty() : tensor<4x8x16x2x32xf16>
  %vg = linalg.generic {indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%t2 : tensor<4x8xi32>) outs(%ve : tensor<4x8x16x2x32xf16>) {
  ^bb0(%entry: i32, %out: f16):
    %pg = arith.index_cast %entry : i32 to index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %x = tensor.extract %vc[%pg, %i2, %i3, %i4] : tensor<64x16x2x32xf16>
    linalg.yield %x : f16
  } -> tensor<4x8x16x2x32xf16>
  %v = tensor.collapse_shape %vg [[0], [1, 2], [3], [4]] : tensor<4x8x16x2x32xf16> into tensor<4x128x2x32xf16>
  %s = arith.constant 0.17 : f32
  // expected-remark @below {{paged K/V left as gathers: K and V use different tables}}
  %r = attn.attention ins(%q, %k, %v : tensor<4x1x2x2x32xf16>, tensor<4x128x2x32xf16>, tensor<4x128x2x32xf16>) scale(%s)
      outs(%o : tensor<4x1x2x2x32xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>]
      -> tensor<4x1x2x2x32xf16>
  return %r : tensor<4x1x2x2x32xf16>
}

// -----

// Only V is paged (K is a plain tensor): left alone, the remark says why.
// CHECK-LABEL: func.func @v_only
// CHECK-NOT: attn.page_gather
func.func @v_only(%q: tensor<4x1x2x2x32xf16>, %kc: tensor<64x16x2x32xf16>, %vc: tensor<64x16x2x32xf16>, %t: tensor<4x8xi32>, %kk: tensor<4x128x2x32xf16>, %o: tensor<4x1x2x2x32xf16>) -> tensor<4x1x2x2x32xf16> {
  %ve = tensor.empty() : tensor<4x8x16x2x32xf16>
  %vg = linalg.generic {indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<4x8xi32>) outs(%ve : tensor<4x8x16x2x32xf16>) {
  ^bb0(%entry: i32, %out: f16):
    %pg = arith.index_cast %entry : i32 to index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %x = tensor.extract %vc[%pg, %i2, %i3, %i4] : tensor<64x16x2x32xf16>
    linalg.yield %x : f16
  } -> tensor<4x8x16x2x32xf16>
  %v = tensor.collapse_shape %vg [[0], [1, 2], [3], [4]] : tensor<4x8x16x2x32xf16> into tensor<4x128x2x32xf16>
  %s = arith.constant 0.17 : f32
  // expected-remark @below {{paged K/V left as gathers: K: not a collapse_shape of a gather}}
  %r = attn.attention ins(%q, %kk, %v : tensor<4x1x2x2x32xf16>, tensor<4x128x2x32xf16>, tensor<4x128x2x32xf16>) scale(%s)
      outs(%o : tensor<4x1x2x2x32xf16>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>, affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>]
      -> tensor<4x1x2x2x32xf16>
  return %r : tensor<4x1x2x2x32xf16>
}
