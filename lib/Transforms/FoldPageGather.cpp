//===- FoldPageGather.cpp - the program's paged-cache gathers -> ops -------===//
//
// Serving code reads K and V from a paged cache by gathering pages with a
// block table and merging the (page, slot) dims into keys, e.g. what
// torch-mlir makes of `k_cache[block_table].flatten(1, 2)`:
//
//   %g = linalg.generic ins(%table : [B, T] i32) outs(: [B, T, P, H, D])
//          { %p = index_cast %entry; tensor.extract %cache[%p, %i2, %i3, %i4] }
//   %k = tensor.collapse_shape %g [[0], [1, 2], [3], [4]] : -> [B, T*P, H, D]
//
// When both K and V of an attn.attention are such gathers through one table
// they become attn.page_gather, which the GPU kernels read through the table
// instead of materializing the gathered tensors. Anything else is left as it
// is (gathers of rows within a page, shifted or computed entries, a collapse
// that merges other dims, K and V through different tables).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFOLDPAGEGATHER
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct PageGatherMatch {
  Value cache, table;
  int64_t tokenDim;
};
} // namespace

/// `v` as collapse_shape(a gather of whole cache pages by a table), or why
/// not.
static FailureOr<PageGatherMatch> matchPageGather(Value v, std::string &why) {
  auto fail = [&](StringRef msg) {
    why = msg.str();
    return failure();
  };
  auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse)
    return fail("not a collapse_shape of a gather");
  auto gen = collapse.getSrc().getDefiningOp<linalg::GenericOp>();
  if (!gen || gen.getNumDpsInputs() != 1 || gen.getNumDpsInits() != 1 ||
      gen.getNumReductionLoops() != 0)
    return fail("not a gather (one table input, parallel loops)");
  Value table = gen.getDpsInputOperand(0)->get();
  auto tableType = dyn_cast<RankedTensorType>(table.getType());
  auto outType = dyn_cast<RankedTensorType>(gen.getResult(0).getType());
  if (!tableType || tableType.getRank() != 2 ||
      !tableType.getElementType().isInteger(32) || !outType)
    return fail("the gather's input is not an i32 block table [B, T]");
  int64_t rank = outType.getRank(); // cache rank + 1
  SmallVector<AffineMap> maps = gen.getIndexingMapsArray();
  if (!maps[1].isIdentity() || maps[0].getNumResults() != 2)
    return fail("the gather's maps are not (b, t) -> table, identity -> out");
  auto dimOf = [](AffineExpr e) -> int64_t {
    auto d = dyn_cast<AffineDimExpr>(e);
    return d ? d.getPosition() : -1;
  };
  int64_t k = dimOf(maps[0].getResult(1));
  if (dimOf(maps[0].getResult(0)) != 0 || k < 1 || k + 1 >= rank)
    return fail("the table is not read at (sequence dim 0, a page dim "
                "followed by the slot dim)");
  Block &body = gen.getRegion().front();
  auto extract = body.getTerminator()->getOperand(0).getDefiningOp<tensor::ExtractOp>();
  if (!extract || extract->getBlock() != &body)
    return fail("the gather does not yield a tensor.extract");
  Value cache = extract.getTensor();
  auto cacheType = cast<RankedTensorType>(cache.getType());
  if (cacheType.getRank() != rank - 1 ||
      cacheType.getElementType() != outType.getElementType() ||
      (isa<BlockArgument>(cache) &&
       cast<BlockArgument>(cache).getOwner() == &body))
    return fail("the extracted tensor is not a cache of the gather's rank - 1");
  // Index 0: the table entry; cache dim j >= 1: loop j (before the page
  // dim k) or j + 1 (after it).
  auto cast = extract.getIndices()[0].getDefiningOp<arith::IndexCastOp>();
  if (!cast || cast.getIn() != body.getArgument(0))
    return fail("the cache's first index is not the table entry");
  for (int64_t j = 1; j < rank - 1; ++j) {
    auto idx = extract.getIndices()[j].getDefiningOp<linalg::IndexOp>();
    int64_t want = j < k ? j : j + 1;
    if (!idx || static_cast<int64_t>(idx.getDim()) != want)
      return fail("a cache index other than the first is not its loop "
                  "(not a gather of whole pages)");
  }
  if (outType.getDimSize(k + 1) != cacheType.getDimSize(k) ||
      outType.getDimSize(0) != tableType.getDimSize(0) ||
      outType.getDimSize(k) != tableType.getDimSize(1))
    return fail("the gather's shape is not [B, ..., T, page, ...]");
  SmallVector<ReassociationIndices> want;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == k + 1)
      continue;
    want.push_back(d == k ? ReassociationIndices{k, k + 1}
                          : ReassociationIndices{d});
  }
  if (collapse.getReassociationIndices() != want)
    return fail("the collapse does not merge the page and slot dims alone");
  return PageGatherMatch{cache, table, k};
}

namespace {
struct AttnFoldPageGatherPass
    : public attn::impl::AttnFoldPageGatherBase<AttnFoldPageGatherPass> {
  using AttnFoldPageGatherBase::AttnFoldPageGatherBase;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    bool explain = this->explain || explainRequested();
    for (AttentionOp op : ops) {
      std::string whyK, whyV;
      FailureOr<PageGatherMatch> k = matchPageGather(op.getKey(), whyK);
      FailureOr<PageGatherMatch> v = matchPageGather(op.getValue(), whyV);
      if (failed(k) && failed(v))
        continue; // not a paged attention at all: nothing to say
      if (failed(k) || failed(v) || k->table != v->table) {
        if (explain)
          op.emitRemark() << "paged K/V left as gathers: "
                          << (failed(k)   ? "K: " + whyK
                              : failed(v) ? "V: " + whyV
                                          : "K and V use different tables");
        continue;
      }
      rewriter.setInsertionPoint(op);
      for (auto entry :
           {std::pair{*k, &op.getKeyMutable()}, {*v, &op.getValueMutable()}}) {
        const PageGatherMatch &m = entry.first;
        OpOperand *operand = entry.second;
        Value gathered = PageGatherOp::create(
            rewriter, op.getLoc(), operand->get().getType(), m.cache, m.table,
            rewriter.getI64IntegerAttr(0), rewriter.getI64IntegerAttr(m.tokenDim));
        rewriter.modifyOpInPlace(op, [&] { operand->assign(gathered); });
      }
      if (explain)
        op.emitRemark() << "paged K/V: the gathers of K and V by the block "
                           "table are attn.page_gather (page dim 0, slot dim "
                        << k->tokenDim << ")";
    }
  }
};
} // namespace
