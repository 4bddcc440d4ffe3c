//===- DecomposeAggregates.cpp - linalg.softmax -> generics ---------------===//
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSEAGGREGATES
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct AttnDecomposeAggregatesPass
    : public attn::impl::AttnDecomposeAggregatesBase<
          AttnDecomposeAggregatesPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation()->walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(rewriter);
      if (failed(parts)) {
        op->emitError("cannot decompose this aggregate op");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *parts);
    }
  }
};
} // namespace
