//===- ExplicitUnitDrops.cpp - rank-reducing slices made explicit ---------===//
//
// A rank-reducing tensor.extract_slice becomes the non-reducing slice and a
// tensor.collapse_shape whose reassociation names the dropped unit dims, so
// that bufferization does not have to infer them (see Passes.td).
//
//===----------------------------------------------------------------------===//
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPLICITUNITDROPS
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnExplicitUnitDropsPass
    : public attn::impl::AttnExplicitUnitDropsBase<AttnExplicitUnitDropsPass> {
  void runOnOperation() override {
    SmallVector<tensor::ExtractSliceOp> slices;
    getOperation()->walk([&](tensor::ExtractSliceOp op) {
      if (op.getResultType().getRank() < op.getSourceType().getRank())
        slices.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (tensor::ExtractSliceOp op : slices) {
      llvm::SmallBitVector dropped = op.getDroppedDims();
      int64_t rank = op.getSourceType().getRank();
      // Each dropped dim joins the next kept dim's group (trailing ones the
      // last group); no kept dim at all: a rank-0 result, no groups.
      SmallVector<ReassociationIndices> groups;
      ReassociationIndices pending;
      for (int64_t i = 0; i < rank; ++i) {
        pending.push_back(i);
        if (!dropped.test(i)) {
          groups.push_back(pending);
          pending.clear();
        }
      }
      if (!groups.empty())
        groups.back().append(pending.begin(), pending.end());
      rewriter.setInsertionPoint(op);
      Value full = tensor::ExtractSliceOp::create(
          rewriter, op.getLoc(), op.getSource(), op.getMixedOffsets(),
          op.getMixedSizes(), op.getMixedStrides());
      rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
          op, op.getResultType(), full, groups);
    }
  }
};
} // namespace
