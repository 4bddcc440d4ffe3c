//===- AttnOps.td - attn operations ------------------------*- tablegen -*-===//
#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Attn_FloatElt : AnyTypeOf<[F32, F16, BF16]>;
def Attn_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
// Q, K and V may also be 8-bit floats (FP8 attention, dequantized by the
// op's scales).
def Attn_InputTensor : RankedTensorOf<[F32, F16, BF16, F8E4M3FN, F8E5M2]>;
def Attn_F32Tensor : RankedTensorOf<[F32]>;
def Attn_MaskTensor : RankedTensorOf<[F32, F16, BF16, I1]>;

//===----------------------------------------------------------------------===//
// attn.attention
//===----------------------------------------------------------------------===//

def Attn_AttentionOp : Attn_Op<"attention", [Pure, AttrSizedOperandSegments,
    IsolatedFromAbove,
    AllTypesMatch<["init", "result"]>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "Scaled dot-product attention: softmax(scale * Q K^T + mask) V";
  let description = [{
    Computes, over an iteration space `(b_0, ..., b_{r-1}, m, n, d, e)` of `r`
    batch dimensions (batch, heads, ...), query `m`, key `n`, head dim `d` and
    value dim `e`:

    ```
    S[b, m, n] = scale * sum_d Q[b, m, d] * K[b, n, d] + mask[b, m, n]
    S[b, m, n] = -inf                         if causal and n > m
    S[b, m, n] = -inf                         if window = W and m - n >= W
    P[b, m, n] = exp(S[b, m, n] - max_n S[b, m, :]) / sum_n exp(S[b, m, n] - max_n S[b, m, :])
    O[b, m, e] = sum_n P[b, m, n] * V[b, n, e]
    ```

    The softmax is over the key axis `n`. Which operand dimension is which is
    stated by `indexing_maps` (not guessed from position): one projected
    permutation per operand, in the order Q, K, V, out, mask, sink, over the
    `r + 4` iteration dimensions above. Q uses `{b..., m, d}`, K
    `{b..., n, d}`, V `{b..., n, e}`, out `{b..., m, e}`, each dimension
    exactly once and in any order. The optional `mask` uses any subset of
    `{b..., m, n}` (missing dimensions are broadcast): a float mask is added
    to the scores and may hold `-inf`; an i1 mask keeps the keys where it is
    true (`S = mask ? S : -inf`). `causal` masks keys after the query (`n > m`, aligned at the top
    left like `torch.nn.functional.scaled_dot_product_attention(is_causal=True)`).
    `window = W` (a sliding window, as Mistral and gpt-oss use it) masks keys
    `W` or more positions before the query, so each query sees at most the
    `W` keys `m - W < n` (with `causal`: `m - W < n <= m`).
    `query_offset = K` places query `m` at key position `m + K` for both
    rules (`causal`: keys `n > m + K` masked; `window`: keys
    `m + K - n >= W` masked): a chunk of `M` new tokens after a KV cache of
    `N - M` aligns at the bottom right with `K = N - M`, like
    `torch.nn.attention.bias.causal_lower_right`.

    `mask_value` (default `-inf`) is the score a key masked by `causal`,
    `window` or an i1 mask gets. Frontends that mask with the lowest finite
    value (JAX's `finfo.min`) keep their semantics exactly: a row whose keys
    are all masked averages V uniformly instead of giving 0.

    The optional `sink` (attention sinks, as gpt-oss writes them) is one more
    logit per row that takes part in the normalization but has no value:
    `P[b, m, n] = exp(S[b, m, n] - M) / (exp(sink - M) + sum_n exp(S - M))`
    with `M` the max over the keys and the sink. Its map uses batch dims and
    `m` only; it is never materialized as an extra score column.

    The optional `score_mod` region (soft-capping, ALiBi, any elementwise
    function of the score and its position, as FlexAttention's `score_mod`)
    is applied to the scaled score before the mask, causal and window rules:
    `S[b, m, n] = score_mod(scale * Q·K^T, b..., m, n, x...)`. Its block
    arguments are the f32 score, one index per batch dimension, `m` and `n`,
    then one element per `score_mod_operands` tensor, read through the maps
    that follow the mask's and sink's in `indexing_maps` (any subset of
    `{b..., m, n}`). The body holds scalar arith/math ops only and ends in
    `attn.yield` of an f32. The op is isolated from above: the body reads
    nothing but its block arguments (constants live in it; folding keeps
    them there), so every backend can clone it anywhere, a GPU kernel too.

    The optional second result `lse` is the log of each row's softmax
    denominator, `lse[b, m] = log(sum_n exp(S[b, m, n]))` (natural log, the
    sink included; `-inf` for a fully masked row), f32, with the output's
    dims except `e`, in the output's order: what FlashAttention and cuDNN
    return beside O, and what `attn.merge` combines partial results with.

    Inputs may be f32, f16 or bf16; scores, softmax statistics and the
    accumulation are computed in f32 and the result is rounded once to the
    element type of `init`.

    FP8: Q, K and V may instead all be `f8E4M3FN` or all `f8E5M2` (one
    type for the three), with per-tensor dequantization scales: the scales
    of Q and K are part of `scale`, and the optional `value_scale`
    multiplies the output, `O = value_scale * sum_n P V` (the value's scale;
    default 1). The result is f32, f16 or bf16. A row in which every score is `-inf` (fully
    masked) yields 0; the unfused softmax would yield NaN there.

    Example (`[B, H, S, D]` layout, causal):
    ```mlir
    %o = attn.attention ins(%q, %k, %v : tensor<2x8x128x64xf16>,
           tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) scale(%s)
         outs(%init : tensor<2x8x128x64xf16>) causal
         indexing_maps = [
           affine_map<(b, h, m, n, d, e) -> (b, h, m, d)>,
           affine_map<(b, h, m, n, d, e) -> (b, h, n, d)>,
           affine_map<(b, h, m, n, d, e) -> (b, h, n, e)>,
           affine_map<(b, h, m, n, d, e) -> (b, h, m, e)>]
         -> tensor<2x8x128x64xf16>
    ```
  }];

  let arguments = (ins Attn_InputTensor:$query, Attn_InputTensor:$key,
      Attn_InputTensor:$value, F32:$scale, Attn_FloatTensor:$init,
      Optional<Attn_MaskTensor>:$mask, Optional<Attn_FloatTensor>:$sink,
      Variadic<AnyRankedTensor>:$mod_operands, Optional<F32>:$value_scale,
      AffineMapArrayAttr:$indexing_maps,
      UnitAttr:$causal, OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$window,
      OptionalAttr<F32Attr>:$mask_value,
      OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$query_offset);
  let results = (outs Attn_FloatTensor:$result, Optional<Attn_F32Tensor>:$lse);
  let regions = (region AnyRegion:$score_mod);

  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:` type($query) `,` type($key) `,`
        type($value) `)`
    `scale` `(` $scale `)`
    (`value_scale` `(` $value_scale^ `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`sink` `(` $sink^ `:` type($sink) `)`)?
    (`score_mod_operands` `(` $mod_operands^ `:` type($mod_operands) `)`)?
    `outs` `(` $init `:` type($init) `)`
    (`causal` $causal^)?
    (`window` `=` $window^)?
    (`query_offset` `=` $query_offset^)?
    (`mask_value` `=` $mask_value^)?
    `indexing_maps` `=` $indexing_maps
    (`score_mod` $score_mod^)?
    attr-dict `->` type($result) (`,` type($lse)^)?
  }];

  let hasVerifier = 1;

  let extraClassDeclaration = [{
    /// Number of batch-like dimensions (r above).
    unsigned getNumBatchDims() { return getQuery().getType().getRank() - 2; }
    /// Positions of the named dimensions in the iteration space.
    unsigned getMDim() { return getNumBatchDims(); }
    unsigned getNDim() { return getNumBatchDims() + 1; }
    unsigned getDDim() { return getNumBatchDims() + 2; }
    unsigned getEDim() { return getNumBatchDims() + 3; }
    /// Key position of query 0 for causal and window (0: top left).
    int64_t getQueryOffsetOrZero() { return getQueryOffset().value_or(0); }
    AffineMap getQueryMap() { return getIndexingMapsArray()[0]; }
    AffineMap getKeyMap() { return getIndexingMapsArray()[1]; }
    AffineMap getValueMap() { return getIndexingMapsArray()[2]; }
    AffineMap getOutputMap() { return getIndexingMapsArray()[3]; }
    AffineMap getMaskMap() {
      return getMask() ? getIndexingMapsArray()[4] : AffineMap();
    }
    AffineMap getSinkMap() {
      return getSink() ? getIndexingMapsArray()[getMask() ? 5 : 4]
                       : AffineMap();
    }
    /// The map of score_mod operand `i` (after the mask's and sink's).
    AffineMap getModOperandMap(unsigned i) {
      return getIndexingMapsArray()[4 + (getMask() ? 1 : 0) +
                                    (getSink() ? 1 : 0) + i];
    }
    bool hasScoreMod() { return !getScoreMod().empty(); }
    LogicalResult verifyScoreMod(unsigned numBatch);
    /// The region's block: (s, b..., m, n, operand elements...).
    Block *getScoreModBlock() {
      return hasScoreMod() ? &getScoreMod().front() : nullptr;
    }
    SmallVector<AffineMap> getIndexingMapsArray() {
      return llvm::to_vector(getIndexingMaps().getAsValueRange<AffineMapAttr>());
    }
  }];
}

//===----------------------------------------------------------------------===//
// attn.merge
//===----------------------------------------------------------------------===//

def Attn_MergeOp : Attn_Op<"merge", [Pure, AttrSizedOperandSegments]> {
  let summary = "Combines partial attention results exactly through their LSE";
  let description = [{
    Given partial results `(O_i, lse_i)` of one attention over disjoint key
    ranges (split-KV decoding, context parallelism), each `O_i` normalized
    over its own keys, computes the attention over all of them:

    ```
    M   = max_i lse_i[b, m]
    lse = M + log(sum_i exp(lse_i - M))          (-inf if every lse_i is)
    O   = sum_i exp(lse_i - lse) * O_i           (0 for a fully masked row)
    ```

    in f32, rounded once to the result's element type. Associative and
    independent of the order up to rounding; a partial whose `lse_i` is
    `-inf` (no visible key) takes no part. All `O_i` have the result's
    shape (any float type); the `lse_i` and the `lse` result have it
    without the last dimension (the value dim `e`), f32.

    ```mlir
    %o, %l = attn.merge (%o0, %o1 : tensor<8x64xf16>, tensor<8x64xf16>)
               lse(%l0, %l1 : tensor<8xf32>, tensor<8xf32>)
               -> tensor<8x64xf16>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Variadic<Attn_FloatTensor>:$outputs,
      Variadic<Attn_F32Tensor>:$lses);
  let results = (outs Attn_FloatTensor:$result, Attn_F32Tensor:$lse);
  let assemblyFormat = [{
    `(` $outputs `:` type($outputs) `)` `lse` `(` $lses `:` type($lses) `)`
        attr-dict `->` type($result) `,` type($lse)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.page_gather
//===----------------------------------------------------------------------===//

def Attn_PageGatherOp : Attn_Op<"page_gather", [Pure]> {
  let summary = "The logical K or V of a paged KV cache";
  let description = [{
    A paged KV cache (vLLM, FlashInfer) holds keys in pages of `P` tokens;
    a block table says which page holds each sequence's tokens. The result
    is the cache as the attention reads it: the cache's shape with the page
    dimension `seq_dim` replaced by the sequences (the table's rows) and
    the token-in-page dimension `token_dim` by `pages_per_seq x P` tokens:

    ```
    result[.., s @ seq_dim, .., t @ token_dim, ..] =
        cache[.., table[s, t / P] @ seq_dim, .., t mod P @ token_dim, ..]
    ```

    Table entries outside `[0, pages)` read the nearest page (clamped):
    hostile tables never read out of bounds. As an operand of
    `attn.attention` (K and V both, through one table) the GPU kernels read
    the cache through the table and never materialize the result; the CPU
    path gathers it.

    ```mlir
    %k = attn.page_gather %cache[%table] seq_dim = 0 token_dim = 1
           : tensor<64x16x8x128xf16>, tensor<4x32xi32> -> tensor<4x512x8x128xf16>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$cache,
      RankedTensorOf<[I32]>:$table,
      ConfinedAttr<I64Attr, [IntNonNegative]>:$seq_dim,
      ConfinedAttr<I64Attr, [IntNonNegative]>:$token_dim);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $cache `[` $table `]` `seq_dim` `=` $seq_dim `token_dim` `=` $token_dim
        attr-dict `:` type($cache) `,` type($table) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.length_mask
//===----------------------------------------------------------------------===//

def Attn_LengthMaskOp : Attn_Op<"length_mask", [Pure]> {
  let summary = "Key padding from per-sequence lengths: n < lengths[b]";
  let description = [{
    `result[b, n] = n < lengths[b]` (i1, `[B, N]`): the keys a sequence of
    a batch really has, as serving code writes `arange(N) < seq_lens[:, None]`.
    As the mask of an `attn.attention` (with the default `-inf` fill) the
    GPU kernels take the lengths instead of the mask tensor and end each
    sequence's key loop at its length; the CPU path materializes the mask.
    A length at or below 0 masks every key; one at or past N none.

    ```mlir
    %m = attn.length_mask %lens : tensor<16xi32> -> tensor<16x8192xi1>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I32]>:$lengths);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat = [{
    $lengths attr-dict `:` type($lengths) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.varlen_mask
//===----------------------------------------------------------------------===//

def Attn_VarlenMaskOp : Attn_Op<"varlen_mask", [Pure]> {
  let summary = "Packed sequences of unequal length, from cumulative lengths";
  let description = [{
    Varlen batches (FlashAttention's `cu_seqlens`) pack `S` sequences along
    one token axis: sequence `s` holds queries `[cu_q[s], cu_q[s+1])` and
    keys `[cu_k[s], cu_k[s+1])`. The result (i1, `[Tq, Tk]`) says which
    keys a query sees: those of its own sequence, and with `causal` only
    keys at or before its position in the sequence, aligned at the top
    left (`n - cu_k[s] <= m - cu_q[s]`) or with `bottom_right` at the
    bottom right (`n - cu_k[s] <= m - cu_q[s] + len_k[s] - len_q[s]`, the
    last query sees every key of its sequence).

    Both tables have `S + 1` entries, nondecreasing, from 0 up to at most
    the token count; a query row past `cu_q[S]` sees no key. Entries are
    clamped to `[0, T]` (hostile tables never index out of bounds); for a
    table that decreases the result is unspecified.

    As the mask of an `attn.attention` (with the default `-inf` fill) the
    GPU kernels take the tables instead of a mask tensor: each block runs
    one query tile of one sequence over that sequence's keys only. The CPU
    path materializes the mask.

    Token counts may be dynamic: one `index` size per dynamic result dim,
    in order (as `tensor.empty` takes them). One GPU bundle then serves
    every token count.

    ```mlir
    %m = attn.varlen_mask %cu_q, %cu_k causal bottom_right
           : tensor<5xi32>, tensor<5xi32> -> tensor<1000x1200xi1>
    %d = attn.varlen_mask %cu_q, %cu_k causal sizes(%tq, %tk)
           : tensor<5xi32>, tensor<5xi32> -> tensor<?x?xi1>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I32]>:$cu_seqlens_q,
      RankedTensorOf<[I32]>:$cu_seqlens_k, UnitAttr:$causal,
      UnitAttr:$bottom_right, Variadic<Index>:$sizes);
  let results = (outs RankedTensorOf<[I1]>:$result);
  let assemblyFormat = [{
    $cu_seqlens_q `,` $cu_seqlens_k (`causal` $causal^)?
        (`bottom_right` $bottom_right^)? (`sizes` `(` $sizes^ `)`)? attr-dict
        `:` type($cu_seqlens_q) `,` type($cu_seqlens_k) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.yield
//===----------------------------------------------------------------------===//

def Attn_YieldOp : Attn_Op<"yield", [Pure, Terminator,
    HasParent<"AttentionOp">]> {
  let summary = "The modified score of an attn.attention score_mod region";
  let arguments = (ins F32:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// attn.online_update
//===----------------------------------------------------------------------===//

def Attn_OnlineUpdateOp : Attn_Op<"online_update", [Pure,
    AllTypesMatch<["max", "sum", "new_max", "new_sum"]>,
    AllTypesMatch<["acc", "new_acc"]>]> {
  let summary = "One step of the online-softmax recurrence over a tile of keys";
  let description = [{
    Folds a tile of scores `S[b, m, n]` (f32, already scaled and masked) and
    the matching values `V[b, n, e]` into the running state: row maximum
    `max[b, m]`, row sum `sum[b, m]` and unnormalized output `acc[b, m, e]`:

    ```
    m'  = max(m, rowmax(S))
    ms  = (m' == -inf) ? 0 : m'          // keeps fully masked rows finite
    α   = exp(m - ms)
    P   = exp(S - ms)
    ℓ'  = α * ℓ + rowsum(P)
    O'  = α * O + P V                     // V upcast to f32
    ```

    All layouts are canonical: batch dimensions first, then query, then
    key (S, V) or value dimension (acc). `value_batch_dims`, when present,
    lists the batch dimensions of S that V has (in order); V is broadcast
    over the others (grouped-query attention), without a copy. Starting from `m = -inf`, `ℓ = 0`,
    `O = 0` and applying this to every key tile, `attn.finalize` yields the
    softmax-weighted sum.
  }];

  let arguments = (ins Attn_F32Tensor:$scores, Attn_InputTensor:$value,
      Attn_F32Tensor:$max, Attn_F32Tensor:$sum, Attn_F32Tensor:$acc,
      OptionalAttr<DenseI64ArrayAttr>:$value_batch_dims);
  let results = (outs Attn_F32Tensor:$new_max, Attn_F32Tensor:$new_sum,
      Attn_F32Tensor:$new_acc);

  let assemblyFormat = [{
    $scores `,` $value `into` `(` $max `,` $sum `,` $acc `)` attr-dict `:`
        type($scores) `,` type($value) `,` type($max) `,` type($acc)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.finalize
//===----------------------------------------------------------------------===//

def Attn_FinalizeOp : Attn_Op<"finalize", [Pure]> {
  let summary = "The one division of the online softmax: O = acc / sum";
  let description = [{
    `O[b, m, e] = sum[b, m] == 0 ? 0 : acc[b, m, e] / sum[b, m]`, rounded to
    the result element type. A zero sum only arises for a fully masked row,
    which therefore yields 0.
  }];
  let arguments = (ins Attn_F32Tensor:$acc, Attn_F32Tensor:$sum);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $acc `,` $sum attr-dict `:` type($acc) `,` type($sum) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // ATTN_OPS_TD
