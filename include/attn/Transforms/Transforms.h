//===- Transforms.h - attn transformations as functions ---------*- C++ -*-===//
//
// Entry points another compiler can call without the passes: recognition,
// fusion and tiling are plain functions over a RewriterBase.
//
#ifndef ATTN_TRANSFORMS_TRANSFORMS_H
#define ATTN_TRANSFORMS_TRANSFORMS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Transforms/AttentionMatchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {

/// Replaces the chain described by `match` with one attn.attention. Creates no
/// IR unless it succeeds.
FailureOr<AttentionOp> fuseAttention(RewriterBase &rewriter,
                                     const AttentionMatch &match);

/// Patterns that fuse every recognized attention (anchored on P·V).
void populateAttnFusionPatterns(RewritePatternSet &patterns);

struct TileOptions {
  int64_t queryTile = 64; ///< 0: one query tile (no query loop)
  int64_t keyTile = 64;
};

/// Rewrites `op` into the online-softmax tiled loop; returns the value that
/// replaced the op's result.
FailureOr<Value> tileOnlineSoftmax(RewriterBase &rewriter, AttentionOp op,
                                   const TileOptions &options);

/// Lowers attn.online_update / attn.finalize to linalg on tensors.
void populateAttnToLinalgPatterns(RewritePatternSet &patterns);

/// arith.extf from f8E4M3FN / f8E5M2 as exact integer operations on the
/// byte (the LLVM lowering has no conversion for them).
void populateExpandF8Patterns(RewritePatternSet &patterns);

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_TRANSFORMS_H
