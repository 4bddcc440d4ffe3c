//===- Passes.td - attn transformation passes --------------*- tablegen -*-===//
#ifndef ATTN_TRANSFORMS_PASSES_TD
#define ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnFuse : Pass<"attn-fuse"> {
  let summary = "Recognize softmax(scale * Q K^T + mask) V and fuse it into attn.attention";
  let description = [{
    Walks back from every P·V contraction through a softmax over the key axis,
    an optional scale and additive mask, to the Q·K^T contraction, and replaces
    the chain with one `attn.attention`. Nothing is changed unless the fused
    op computes the same result (up to rounding): softmax over another axis,
    scores or probabilities with other uses, accumulators that are not zero,
    and contractions over the wrong axis are left alone. With `explain`, every
    candidate gets a remark saying what was fused or why not.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for every candidate: what was fused, or why not">
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::arith::ArithDialect"];
}

def AttnTile : Pass<"attn-tile"> {
  let summary = "Rewrite attn.attention into an online-softmax loop over key tiles";
  let description = [{
    Each `attn.attention` becomes an `scf.forall` over query tiles containing an
    `scf.for` over key/value tiles that carries the online-softmax state
    `(m, l, acc)` (f32) through `attn.online_update`, followed by one
    `attn.finalize`. Scores exist only as tiles of `tile-q x tile-kv`; the
    last tile may be ragged and is handled exactly with dynamic sizes.
  }];
  let options = [
    Option<"tileQ", "tile-q", "int64_t", /*default=*/"64",
           "Query rows per tile (0: no query tiling)">,
    Option<"tileKV", "tile-kv", "int64_t", /*default=*/"64",
           "Keys per tile of the online-softmax loop">
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnDecomposeAggregates : Pass<"attn-decompose-aggregates"> {
  let summary = "Decompose linalg aggregate ops (linalg.softmax) left unfused";
  let description = [{
    Softmaxes that were not part of a fused attention are decomposed into
    linalg.generic ops (max, sub+exp, sum, div) so the CPU pipeline can lower
    every module, fused or not.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def AttnExplicitUnitDrops : Pass<"attn-explicit-unit-drops"> {
  let summary = "Rank-reducing tensor.extract_slice as a slice and a collapse_shape";
  let description = [{
    A rank-reducing `tensor.extract_slice` names the unit dims it drops only
    through its result type; once bufferized, `memref.subview` infers them
    again from sizes and strides, and with two unit dims and dynamic strides
    it can drop the wrong one (a `[1, 2, 1, ?, ?]` mask reduced to
    `[1, 2, ?, ?]` became a `[2, 1, ?, ?]` view: a verifier error in the CPU
    pipeline). Each such slice becomes the same slice without the rank
    reduction followed by a `tensor.collapse_shape` that folds every dropped
    dim into a kept neighbour, so the dims are explicit. The CPU pipeline
    runs it before bufferization.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def AttnFoldPageGather : Pass<"attn-fold-page-gather"> {
  let summary = "Recognize K/V gathered from a paged cache by a block table";
  let description = [{
    Where both K and V of an `attn.attention` are gathers of whole cache
    pages through one block table, with the page and slot dims merged into
    keys (`tensor.collapse_shape` of a `linalg.generic` whose body extracts
    `cache[index_cast(table[b, t]), loops...]`), replaces them with
    `attn.page_gather`, which the GPU kernels read through the table.
    Other gathers are left alone; with `explain`, a remark says why.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Remark at each attention with gathered K/V: folded, or why not">
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnFoldLengthMask : Pass<"attn-fold-length-mask"> {
  let summary = "Recognize key padding computed from per-sequence lengths";
  let description = [{
    Where the mask of an `attn.attention` is `n < lengths[b]` over [B, N]
    (a `linalg.generic` comparing the key index, `linalg.index 1` or an iota
    constant, with an i32 length read per sequence), replaces it with
    `attn.length_mask`, whose lengths the GPU kernels take to end each
    sequence's key loop. With `explain`, a remark says why a generic mask
    was left alone.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Remark at each attention with a computed mask: folded, or why not">
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnExpandF8 : Pass<"attn-expand-f8"> {
  let summary = "Expand arith.extf from 8-bit floats into integer operations";
  let description = [{
    MLIR's LLVM lowering has no conversion for `arith.extf` from
    `f8E4M3FN` or `f8E5M2`. This rewrites each such extension as exact
    integer arithmetic on the byte (every code, NaN included), so FP8
    programs, fused or not, lower to the CPU. The CPU pipeline runs it
    before the LLVM conversion.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttnOutline : Pass<"attn-outline", "::mlir::ModuleOp"> {
  let summary = "Move each attn.attention of a large function into a private "
                "function of its own";
  let description = [{
    In every function with at least `min-count` `attn.attention` ops, each
    one becomes a call of a new private function (`<caller>_attn<i>`) that
    takes the values it reads (values made from nothing, such as constants
    and a static `tensor.empty`, are cloned into it, so a constant scale or
    score_mod table stays constant) and returns its results. The
    CPU pipeline runs it before tiling: upstream SCF-to-CF and the buffer
    deallocation simplification take time superlinear in a function's
    size, so a model's hundreds of attentions in one function lowered
    slowly (600: 39 s, 6.4 GB); one-shot bufferization crosses the calls.
  }];
  let options = [
    Option<"minCount", "min-count", "int64_t", /*default=*/"2",
           "Outline only in functions with at least this many attentions">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

#endif // ATTN_TRANSFORMS_PASSES_TD
