//===- ExpandF8.cpp - arith.extf from 8-bit floats as integer ops ---------===//
//
// The LLVM lowering has no conversion from f8E4M3FN or f8E5M2 (LLVM has no
// such types): `arith.extf` from them stays unconverted. This rewrites it as
// integer arithmetic on the byte, exact for every code: E5M2 is the high
// byte of an f16; E4M3FN (bias 7, no infinities, S.1111.111 is NaN) is
// assembled as f32 bits, its subnormals as mantissa * 2^-9.
//
//===----------------------------------------------------------------------===//
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPANDF8
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
/// A type like `like` (scalar or vector shape) with element type `elt`.
Type withElement(Type like, Type elt) {
  if (auto v = dyn_cast<VectorType>(like))
    return v.clone(elt);
  return elt;
}

struct ExpandF8Ext : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type src = getElementTypeOrSelf(op.getIn().getType());
    if (!attn::isFloat8(src))
      return failure();
    Location loc = op.getLoc();
    Type like = op.getIn().getType();
    Type i8 = withElement(like, rewriter.getI8Type());
    Type dstElt = getElementTypeOrSelf(op.getType());
    // A constant of type `t` (scalar or splat vector) from its element.
    auto splat = [&](Type t, TypedAttr elt) -> Value {
      TypedAttr attr = elt;
      if (auto v = dyn_cast<VectorType>(t))
        attr = DenseElementsAttr::get(v, elt);
      return arith::ConstantOp::create(rewriter, loc, attr);
    };
    auto cst = [&](Type t, int64_t v) {
      return splat(t, rewriter.getIntegerAttr(getElementTypeOrSelf(t), v));
    };
    Value byte = arith::BitcastOp::create(rewriter, loc, i8, op.getIn());
    Value wide;
    if (isa<Float8E5M2Type>(src)) {
      // E5M2 is f16 with the low mantissa byte zero.
      Type i16 = withElement(like, rewriter.getI16Type());
      Value u = arith::ExtUIOp::create(rewriter, loc, i16, byte);
      u = arith::ShLIOp::create(rewriter, loc, u, cst(i16, 8));
      wide = arith::BitcastOp::create(
          rewriter, loc, withElement(like, rewriter.getF16Type()), u);
    } else {
      Type i32 = withElement(like, rewriter.getI32Type());
      Type f32 = withElement(like, rewriter.getF32Type());
      Value u = arith::ExtUIOp::create(rewriter, loc, i32, byte);
      Value sign = arith::ShLIOp::create(
          rewriter, loc,
          arith::AndIOp::create(rewriter, loc, u, cst(i32, 0x80)),
          cst(i32, 24));
      Value mag = arith::AndIOp::create(rewriter, loc, u, cst(i32, 0x7F));
      // Normal: exponent e - 7 + 127 and the 3 mantissa bits at the top of
      // f32's 23: (mag << 20) + (120 << 23).
      Value normal = arith::AddIOp::create(
          rewriter, loc,
          arith::ShLIOp::create(rewriter, loc, mag, cst(i32, 20)),
          cst(i32, 120 << 23));
      // Subnormal (exponent 0): mantissa * 2^-9, exact in f32.
      Value mant = arith::AndIOp::create(rewriter, loc, u, cst(i32, 7));
      Value sub = arith::MulFOp::create(
          rewriter, loc, arith::UIToFPOp::create(rewriter, loc, f32, mant),
          splat(f32, rewriter.getF32FloatAttr(1.0f / 512.0f)));
      Value subBits = arith::BitcastOp::create(rewriter, loc, i32, sub);
      Value isSub = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, mag, cst(i32, 8));
      Value isNan = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, mag, cst(i32, 0x7F));
      Value bits =
          arith::SelectOp::create(rewriter, loc, isSub, subBits, normal);
      bits = arith::SelectOp::create(rewriter, loc, isNan, cst(i32, 0x7FC00000),
                                     bits);
      bits = arith::OrIOp::create(rewriter, loc, bits, sign);
      wide = arith::BitcastOp::create(rewriter, loc, f32, bits);
    }
    // Every 8-bit value is exact in f16, bf16, f32 and f64.
    Type wideElt = getElementTypeOrSelf(wide.getType());
    if (dstElt.getIntOrFloatBitWidth() > wideElt.getIntOrFloatBitWidth())
      wide = arith::ExtFOp::create(rewriter, loc, op.getType(), wide);
    else if (dstElt != wideElt)
      wide = arith::TruncFOp::create(rewriter, loc, op.getType(), wide);
    rewriter.replaceOp(op, wide);
    return success();
  }
};

struct AttnExpandF8Pass
    : public attn::impl::AttnExpandF8Base<AttnExpandF8Pass> {
  void runOnOperation() override {
    // Most modules have no 8-bit extension: skip the greedy driver, which
    // visits (and tries to fold) every op of the module.
    bool any = false;
    getOperation()->walk([&](arith::ExtFOp op) {
      if (attn::isFloat8(getElementTypeOrSelf(op.getIn().getType()))) {
        any = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (!any)
      return;
    RewritePatternSet patterns(&getContext());
    attn::populateExpandF8Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

void attn::populateExpandF8Patterns(RewritePatternSet &patterns) {
  patterns.add<ExpandF8Ext>(patterns.getContext());
}
