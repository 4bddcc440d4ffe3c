//===- FuseAttention.cpp - the --attn-fuse pass and its pattern -----------===//
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/CommandLine.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

// `attn-opt --attn-fuse --attn-explain`: the same switch as the pass option
// `explain`, spelled as a tool flag.
static llvm::cl::opt<bool>
    clExplain("attn-explain",
              llvm::cl::desc("Remark on every attention candidate: what was "
                             "fused, or why not (same as attn-fuse{explain})"),
              llvm::cl::init(false));

/// Erases `op` if nothing uses it and it has no effects, then its producers.
static void eraseIfDead(RewriterBase &rewriter, Operation *op) {
  if (!op || !op->use_empty() || !isMemoryEffectFree(op))
    return;
  SmallVector<Operation *> producers;
  for (Value v : op->getOperands())
    if (Operation *def = v.getDefiningOp())
      producers.push_back(def);
  rewriter.eraseOp(op);
  for (Operation *def : producers)
    eraseIfDead(rewriter, def);
}

FailureOr<AttentionOp> mlir::attn::fuseAttention(RewriterBase &rewriter,
                                                 const AttentionMatch &match) {
  Operation *root = match.root;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(root);
  Location loc = root->getLoc();
  Value scale = arith::ConstantOp::create(
      rewriter, loc, rewriter.getF32FloatAttr(static_cast<float>(match.scale)));
  SmallVector<AffineMap> maps = {match.queryMap, match.keyMap, match.valueMap,
                                 match.outputMap};
  if (match.mask)
    maps.push_back(match.maskMap);
  auto op = AttentionOp::create(
      rewriter, loc, root->getResult(0).getType(), match.query, match.key,
      match.value, scale, match.init, match.mask,
      rewriter.getAffineMapArrayAttr(maps), match.causal);
  rewriter.replaceOp(root, op->getResults());
  // The chain is single-use, consumers first: each op is dead when reached.
  SmallVector<Operation *> producers;
  for (Operation *dead : match.deadChain) {
    for (Value v : dead->getOperands())
      if (Operation *def = v.getDefiningOp())
        producers.push_back(def);
    rewriter.eraseOp(dead);
    llvm::erase(producers, dead);
  }
  for (Operation *def : producers)
    eraseIfDead(rewriter, def);
  return op;
}

namespace {
/// Fuses the attention whose P·V contraction is the matched op.
struct FuseAttentionPattern
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    FailureOr<AttentionMatch> match = matchAttention(op, why);
    if (failed(match))
      return rewriter.notifyMatchFailure(op, why);
    return fuseAttention(rewriter, *match);
  }
};
} // namespace

void mlir::attn::populateAttnFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseAttentionPattern>(patterns.getContext());
}

namespace {
struct AttnFusePass : public attn::impl::AttnFuseBase<AttnFusePass> {
  using AttnFuseBase::AttnFuseBase;

  void runOnOperation() override {
    // Candidates are softmax-like ops; the P·V contraction that consumes one
    // anchors the match. Walking candidates (rather than running a greedy
    // driver) gives exactly one remark per candidate.
    SmallVector<Operation *> candidates;
    getOperation()->walk([&](Operation *op) {
      if (isSoftmaxCandidate(op))
        candidates.push_back(op);
    });
    bool explain = this->explain || clExplain;
    IRRewriter rewriter(&getContext());
    for (Operation *sm : candidates) {
      Value p = sm->getResult(0);
      std::string why;
      FailureOr<AttentionMatch> match = failure();
      Operation *user = p.hasOneUse() ? *p.getUsers().begin() : nullptr;
      if (p.use_empty())
        why = "the softmax result is unused";
      else if (!user)
        why = "the probabilities (softmax result) have more than one use";
      else
        match = matchAttention(user, why);
      if (failed(match)) {
        if (explain)
          emitRemark(sm->getLoc(), "attention not fused: ") << why;
        continue;
      }
      std::string what = match->describe();
      Operation *qk = match->qkContraction;
      if (explain) {
        emitRemark(sm->getLoc(), "attention fused: ") << what;
        emitRemark(qk->getLoc(), "Q·K^T of a fused attention (") << what << ")";
      }
      (void)fuseAttention(rewriter, *match);
    }
  }
};
} // namespace
