//===- FoldLengthMask.cpp - key padding from lengths -> attn.length_mask ---===//
//
// Serving code masks the keys past each sequence's length with
// `arange(N)[None, :] < seq_lens[:, None]`, a linalg.generic over [B, N]
// comparing the key index (linalg.index 1, or an iota constant read at n)
// with the sequence's i32 length. As the mask of an attn.attention that is
// attn.length_mask, whose lengths the GPU kernels take to end each key loop
// there. Other masks are left alone (another comparison, an unsigned one,
// lengths of another type, a mask over other dims).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFOLDLENGTHMASK
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// Whether `v` (in the generic's body) is the key index n: linalg.index 1
/// cast to the lengths' type, or the element of an input that is the
/// constant iota 0..N-1 read at n.
static bool isKeyIndex(Value v, linalg::GenericOp gen) {
  if (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    if (auto idx = cast.getIn().getDefiningOp<linalg::IndexOp>())
      return idx.getDim() == 1;
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != gen.getBody() ||
      arg.getArgNumber() >= gen.getNumDpsInputs())
    return false;
  OpOperand *in = gen.getDpsInputOperand(arg.getArgNumber());
  AffineMap map = gen.getMatchingIndexingMap(in);
  if (map.getNumResults() != 1 ||
      map.getResult(0) != getAffineDimExpr(1, gen.getContext()))
    return false;
  DenseIntElementsAttr iota;
  if (!matchPattern(in->get(), m_Constant(&iota)))
    return false;
  int64_t i = 0;
  for (const APInt &x : iota.getValues<APInt>())
    if (x.getSExtValue() != i++)
      return false;
  return true;
}

/// The lengths [B] (i32) if `mask` is n < lengths[b] over [B, N], else null.
static Value matchLengthMask(Value mask, std::string &why) {
  auto gen = mask.getDefiningOp<linalg::GenericOp>();
  auto type = dyn_cast<RankedTensorType>(mask.getType());
  if (!gen || !type || type.getRank() != 2 || !type.getElementType().isInteger(1) ||
      gen.getNumDpsInits() != 1 || gen.getNumReductionLoops() != 0 ||
      !gen.getMatchingIndexingMap(gen.getDpsInitOperand(0)).isIdentity()) {
    why = "not an elementwise i1 [B, N] generic";
    return Value();
  }
  Operation *yield = gen.getBody()->getTerminator();
  auto cmp = yield->getOperand(0).getDefiningOp<arith::CmpIOp>();
  if (!cmp) {
    why = "the mask is not a comparison";
    return Value();
  }
  // n < len, or len > n (signed: a negative length masks every key).
  Value n = cmp.getLhs(), len = cmp.getRhs();
  if (cmp.getPredicate() == arith::CmpIPredicate::sgt)
    std::swap(n, len);
  else if (cmp.getPredicate() != arith::CmpIPredicate::slt) {
    why = "the comparison is not n < length (signed)";
    return Value();
  }
  auto arg = dyn_cast<BlockArgument>(len);
  if (!isKeyIndex(n, gen) || !arg || arg.getOwner() != gen.getBody() ||
      arg.getArgNumber() >= gen.getNumDpsInputs() ||
      !arg.getType().isInteger(32)) {
    why = "not the key index against an i32 length";
    return Value();
  }
  OpOperand *in = gen.getDpsInputOperand(arg.getArgNumber());
  AffineMap map = gen.getMatchingIndexingMap(in);
  if (map.getNumResults() != 1 ||
      map.getResult(0) != getAffineDimExpr(0, gen.getContext())) {
    why = "the lengths are not read per sequence (dim 0)";
    return Value();
  }
  return in->get();
}

namespace {
struct AttnFoldLengthMaskPass
    : public attn::impl::AttnFoldLengthMaskBase<AttnFoldLengthMaskPass> {
  using AttnFoldLengthMaskBase::AttnFoldLengthMaskBase;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    bool explain = this->explain || explainRequested();
    for (AttentionOp op : ops) {
      Value mask = op.getMask();
      if (!mask || !mask.getDefiningOp<linalg::GenericOp>())
        continue;
      std::string why;
      Value lens = matchLengthMask(mask, why);
      if (!lens) {
        if (explain)
          op.emitRemark() << "mask left as a tensor (not per-sequence key "
                             "counts: "
                          << why << ")";
        continue;
      }
      rewriter.setInsertionPoint(op);
      Value lm = LengthMaskOp::create(rewriter, op.getLoc(), mask.getType(),
                                      lens);
      rewriter.modifyOpInPlace(op, [&] { op.getMaskMutable().assign(lm); });
      if (explain)
        op.emitRemark() << "mask n < lengths[b]: attn.length_mask";
    }
  }
};
} // namespace
