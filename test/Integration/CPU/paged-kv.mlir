// A paged KV cache read through a block table (attn.page_gather as the
// attention's K and V), executed on the CPU against the same attention over
// K/V gathered by a linalg program written out by hand: pages in a
// shuffled order, a page shared by two sequences, table entries out of
// range (clamped), bottom-right causal decode, GQA; and the gather as a
// program writes it (a linalg.generic reading whole pages through the
// table, then a collapse of page and slot), folded by attn-fold-page-gather.
// RUN: %exec-check %s

// EXEC: @paged ref=fn:gathered amp=2.0
func.func @paged(%q: tensor<2x3x2x2x16xf32>, %kc: tensor<6x4x2x16xf32>, %vc: tensor<6x4x2x8xf32>) -> tensor<2x3x2x2x8xf32> {
  %s = arith.constant 0.25 : f32
  %t = arith.constant dense<[[5, 0, 3], [3, 99, -1]]> : tensor<2x3xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x2x2x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x2x2x8xf32>) -> tensor<2x3x2x2x8xf32>
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<6x4x2x16xf32>, tensor<2x3xi32> -> tensor<2x12x2x16xf32>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<6x4x2x8xf32>, tensor<2x3xi32> -> tensor<2x12x2x8xf32>
  // q [b, m, hkv, g] with g = 2 query heads per kv head: GQA.
  %r = attn.attention ins(%q, %k, %v : tensor<2x3x2x2x16xf32>, tensor<2x12x2x16xf32>, tensor<2x12x2x8xf32>) scale(%s)
      outs(%init : tensor<2x3x2x2x8xf32>) causal query_offset = 9
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>] -> tensor<2x3x2x2x8xf32>
  return %r : tensor<2x3x2x2x8xf32>
}
func.func @gathered(%q: tensor<2x3x2x2x16xf32>, %kc: tensor<6x4x2x16xf32>, %vc: tensor<6x4x2x8xf32>) -> tensor<2x3x2x2x8xf32> {
  %s = arith.constant 0.25 : f32
  // The table above with its entries clamped to the 6 pages.
  %t = arith.constant dense<[[5, 0, 3], [3, 5, 0]]> : tensor<2x3xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x2x2x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x2x2x8xf32>) -> tensor<2x3x2x2x8xf32>
  %ke = tensor.empty() : tensor<2x12x2x16xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(b, n, h, d) -> (b, n, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%ke : tensor<2x12x2x16xf32>) {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %n = linalg.index 1 : index
    %h = linalg.index 2 : index
    %d = linalg.index 3 : index
    %c4 = arith.constant 4 : index
    %blk = arith.divui %n, %c4 : index
    %slot = arith.remui %n, %c4 : index
    %p32 = tensor.extract %t[%b, %blk] : tensor<2x3xi32>
    %p = arith.index_cast %p32 : i32 to index
    %x = tensor.extract %kc[%p, %slot, %h, %d] : tensor<6x4x2x16xf32>
    linalg.yield %x : f32
  } -> tensor<2x12x2x16xf32>
  %ve = tensor.empty() : tensor<2x12x2x8xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(b, n, h, d) -> (b, n, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%ve : tensor<2x12x2x8xf32>) {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %n = linalg.index 1 : index
    %h = linalg.index 2 : index
    %d = linalg.index 3 : index
    %c4 = arith.constant 4 : index
    %blk = arith.divui %n, %c4 : index
    %slot = arith.remui %n, %c4 : index
    %p32 = tensor.extract %t[%b, %blk] : tensor<2x3xi32>
    %p = arith.index_cast %p32 : i32 to index
    %x = tensor.extract %vc[%p, %slot, %h, %d] : tensor<6x4x2x8xf32>
    linalg.yield %x : f32
  } -> tensor<2x12x2x8xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<2x3x2x2x16xf32>, tensor<2x12x2x16xf32>, tensor<2x12x2x8xf32>) scale(%s)
      outs(%init : tensor<2x3x2x2x8xf32>) causal query_offset = 9
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>] -> tensor<2x3x2x2x8xf32>
  return %r : tensor<2x3x2x2x8xf32>
}

// -----

// EXEC: @program_gather ref=fn:gathered_rows amp=2.0
func.func @program_gather(%q: tensor<2x3x2x2x16xf32>, %kc: tensor<6x4x2x16xf32>, %vc: tensor<6x4x2x16xf32>) -> tensor<2x3x2x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %t = arith.constant dense<[[4, 1, 1], [0, 5, 2]]> : tensor<2x3xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x2x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x2x2x16xf32>) -> tensor<2x3x2x2x16xf32>
  %ge = tensor.empty() : tensor<2x3x4x2x16xf32>
  %kg = linalg.generic {indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<2x3xi32>) outs(%ge : tensor<2x3x4x2x16xf32>) {
  ^bb0(%entry: i32, %out: f32):
    %pg = arith.index_cast %entry : i32 to index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %x = tensor.extract %kc[%pg, %i2, %i3, %i4] : tensor<6x4x2x16xf32>
    linalg.yield %x : f32
  } -> tensor<2x3x4x2x16xf32>
  %vg = linalg.generic {indexing_maps = [affine_map<(b, t, p, h, d) -> (b, t)>, affine_map<(b, t, p, h, d) -> (b, t, p, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<2x3xi32>) outs(%ge : tensor<2x3x4x2x16xf32>) {
  ^bb0(%entry: i32, %out: f32):
    %pg = arith.index_cast %entry : i32 to index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %i4 = linalg.index 4 : index
    %x = tensor.extract %vc[%pg, %i2, %i3, %i4] : tensor<6x4x2x16xf32>
    linalg.yield %x : f32
  } -> tensor<2x3x4x2x16xf32>
  %k = tensor.collapse_shape %kg [[0], [1, 2], [3], [4]] : tensor<2x3x4x2x16xf32> into tensor<2x12x2x16xf32>
  %v = tensor.collapse_shape %vg [[0], [1, 2], [3], [4]] : tensor<2x3x4x2x16xf32> into tensor<2x12x2x16xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<2x3x2x2x16xf32>, tensor<2x12x2x16xf32>, tensor<2x12x2x16xf32>) scale(%s)
      outs(%init : tensor<2x3x2x2x16xf32>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>] -> tensor<2x3x2x2x16xf32>
  return %r : tensor<2x3x2x2x16xf32>
}
// The same keys gathered row by row (the table read inside the body: not
// a page gather the pass folds).
func.func @gathered_rows(%q: tensor<2x3x2x2x16xf32>, %kc: tensor<6x4x2x16xf32>, %vc: tensor<6x4x2x16xf32>) -> tensor<2x3x2x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %t = arith.constant dense<[[4, 1, 1], [0, 5, 2]]> : tensor<2x3xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x2x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x2x2x16xf32>) -> tensor<2x3x2x2x16xf32>
  %ke = tensor.empty() : tensor<2x12x2x16xf32>
  %k = linalg.generic {indexing_maps = [affine_map<(b, n, h, d) -> (b, n, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%ke : tensor<2x12x2x16xf32>) {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %n = linalg.index 1 : index
    %h = linalg.index 2 : index
    %d = linalg.index 3 : index
    %c4 = arith.constant 4 : index
    %blk = arith.divui %n, %c4 : index
    %slot = arith.remui %n, %c4 : index
    %p32 = tensor.extract %t[%b, %blk] : tensor<2x3xi32>
    %p = arith.index_cast %p32 : i32 to index
    %x = tensor.extract %kc[%p, %slot, %h, %d] : tensor<6x4x2x16xf32>
    linalg.yield %x : f32
  } -> tensor<2x12x2x16xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(b, n, h, d) -> (b, n, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%ke : tensor<2x12x2x16xf32>) {
  ^bb0(%out: f32):
    %b = linalg.index 0 : index
    %n = linalg.index 1 : index
    %h = linalg.index 2 : index
    %d = linalg.index 3 : index
    %c4 = arith.constant 4 : index
    %blk = arith.divui %n, %c4 : index
    %slot = arith.remui %n, %c4 : index
    %p32 = tensor.extract %t[%b, %blk] : tensor<2x3xi32>
    %p = arith.index_cast %p32 : i32 to index
    %x = tensor.extract %vc[%p, %slot, %h, %d] : tensor<6x4x2x16xf32>
    linalg.yield %x : f32
  } -> tensor<2x12x2x16xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<2x3x2x2x16xf32>, tensor<2x12x2x16xf32>, tensor<2x12x2x16xf32>) scale(%s)
      outs(%init : tensor<2x3x2x2x16xf32>)
      indexing_maps = [affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, g, m, n, d, e) -> (b, m, h, g, e)>] -> tensor<2x3x2x2x16xf32>
  return %r : tensor<2x3x2x2x16xf32>
}

// -----

// A cache whose page count is only known at run time (the clamp reads it).
// EXEC: @dynamic_pages dims=6,6 ref=fn:static_pages amp=2.0
func.func @dynamic_pages(%q: tensor<2x3x2x16xf32>, %kc: tensor<?x4x2x16xf32>, %vc: tensor<?x4x2x16xf32>) -> tensor<2x3x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %t = arith.constant dense<[[2, 7, 0], [5, 5, -3]]> : tensor<2x3xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x2x16xf32>) -> tensor<2x3x2x16xf32>
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<?x4x2x16xf32>, tensor<2x3xi32> -> tensor<2x12x2x16xf32>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<?x4x2x16xf32>, tensor<2x3xi32> -> tensor<2x12x2x16xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<2x3x2x16xf32>, tensor<2x12x2x16xf32>, tensor<2x12x2x16xf32>) scale(%s)
      outs(%init : tensor<2x3x2x16xf32>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, m, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, m, h, e)>] -> tensor<2x3x2x16xf32>
  return %r : tensor<2x3x2x16xf32>
}
// The same with the table clamped by hand to the 6 pages the run passes.
func.func @static_pages(%q: tensor<2x3x2x16xf32>, %kc: tensor<?x4x2x16xf32>, %vc: tensor<?x4x2x16xf32>) -> tensor<2x3x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %t = arith.constant dense<[[2, 5, 0], [5, 5, 0]]> : tensor<2x3xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x2x16xf32>) -> tensor<2x3x2x16xf32>
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<?x4x2x16xf32>, tensor<2x3xi32> -> tensor<2x12x2x16xf32>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<?x4x2x16xf32>, tensor<2x3xi32> -> tensor<2x12x2x16xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<2x3x2x16xf32>, tensor<2x12x2x16xf32>, tensor<2x12x2x16xf32>) scale(%s)
      outs(%init : tensor<2x3x2x16xf32>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, m, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, m, h, e)>] -> tensor<2x3x2x16xf32>
  return %r : tensor<2x3x2x16xf32>
}

// -----

// Serving with a dynamic batch: the block table, the lengths and q have a
// run-time row count (tensor.cast to ?), the cache is static; against the
// same program with static shapes.
// EXEC: @dynamic_batch ref=fn:static_batch amp=2.0
func.func @dynamic_batch(%q: tensor<2x3x2x16xf32>, %kc: tensor<6x4x2x16xf32>, %vc: tensor<6x4x2x16xf32>) -> tensor<2x3x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %t0 = arith.constant dense<[[2, 5, 0], [5, 1, 3]]> : tensor<2x3xi32>
  %l0 = arith.constant dense<[7, 12]> : tensor<2xi32>
  %t = tensor.cast %t0 : tensor<2x3xi32> to tensor<?x3xi32>
  %lens = tensor.cast %l0 : tensor<2xi32> to tensor<?xi32>
  %qd = tensor.cast %q : tensor<2x3x2x16xf32> to tensor<?x3x2x16xf32>
  %c0 = arith.constant 0 : index
  %bs = tensor.dim %qd, %c0 : tensor<?x3x2x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%bs) : tensor<?x3x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?x3x2x16xf32>) -> tensor<?x3x2x16xf32>
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<6x4x2x16xf32>, tensor<?x3xi32> -> tensor<?x12x2x16xf32>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<6x4x2x16xf32>, tensor<?x3xi32> -> tensor<?x12x2x16xf32>
  %m = attn.length_mask %lens : tensor<?xi32> -> tensor<?x12xi1>
  %r = attn.attention ins(%qd, %k, %v : tensor<?x3x2x16xf32>, tensor<?x12x2x16xf32>, tensor<?x12x2x16xf32>) scale(%s)
      mask(%m : tensor<?x12xi1>) outs(%init : tensor<?x3x2x16xf32>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, m, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, m, h, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<?x3x2x16xf32>
  %rs = tensor.cast %r : tensor<?x3x2x16xf32> to tensor<2x3x2x16xf32>
  return %rs : tensor<2x3x2x16xf32>
}
func.func @static_batch(%q: tensor<2x3x2x16xf32>, %kc: tensor<6x4x2x16xf32>, %vc: tensor<6x4x2x16xf32>) -> tensor<2x3x2x16xf32> {
  %s = arith.constant 0.25 : f32
  %t = arith.constant dense<[[2, 5, 0], [5, 1, 3]]> : tensor<2x3xi32>
  %lens = arith.constant dense<[7, 12]> : tensor<2xi32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x2x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x2x16xf32>) -> tensor<2x3x2x16xf32>
  %k = attn.page_gather %kc[%t] seq_dim = 0 token_dim = 1 : tensor<6x4x2x16xf32>, tensor<2x3xi32> -> tensor<2x12x2x16xf32>
  %v = attn.page_gather %vc[%t] seq_dim = 0 token_dim = 1 : tensor<6x4x2x16xf32>, tensor<2x3xi32> -> tensor<2x12x2x16xf32>
  %m = attn.length_mask %lens : tensor<2xi32> -> tensor<2x12xi1>
  %r = attn.attention ins(%q, %k, %v : tensor<2x3x2x16xf32>, tensor<2x12x2x16xf32>, tensor<2x12x2x16xf32>) scale(%s)
      mask(%m : tensor<2x12xi1>) outs(%init : tensor<2x3x2x16xf32>)
      indexing_maps = [affine_map<(b, h, m, n, d, e) -> (b, m, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, d)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n, h, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, m, h, e)>,
                       affine_map<(b, h, m, n, d, e) -> (b, n)>] -> tensor<2x3x2x16xf32>
  return %r : tensor<2x3x2x16xf32>
}
