//===- AttnToLinalg.cpp - attn ops -> linalg on tensors -------------------===//
//
// attn.online_update (canonical layout, r batch dims):
//   m'  = max(m, rowmax(S))                   reduction over n, init m
//   ms  = m' == -inf ? 0 : m'
//   P   = exp(S - ms)                         [b.., tm, tn]
//   α   = exp(m - ms)
//   ℓ'  = α ℓ + rowsum(P)                     reduction over n, init α ℓ
//   O'  = α O + P V                           contraction over n, init α O
// attn.finalize: O = ℓ == 0 ? 0 : O / ℓ, rounded to the result type.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOLINALG
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// `v` as `type` (a tensor.cast where a generic's result is more static).
static Value castTo(OpBuilder &b, Location loc, Value v, Type type) {
  return v.getType() == type ? v
                             : tensor::CastOp::create(b, loc, type, v).getResult();
}

namespace {
using BodyFn = function_ref<void(OpBuilder &, Location, ValueRange)>;

/// Builds generics over the loop space (b.., m, x) where x is n (S, V) or
/// e (acc); rows are (b.., m).
struct LoopSpace {
  OpBuilder &b;
  Location loc;
  unsigned r; // batch dims
  MLIRContext *ctx() { return b.getContext(); }

  AffineMap map(unsigned numDims, ArrayRef<unsigned> dims) {
    SmallVector<AffineExpr> res;
    for (unsigned d : dims)
      res.push_back(getAffineDimExpr(d, ctx()));
    return AffineMap::get(numDims, 0, res, ctx());
  }
  SmallVector<unsigned> rows() {
    return llvm::to_vector(llvm::seq<unsigned>(0, r + 1));
  }
  SmallVector<unsigned> rowsPlus(unsigned extra) {
    SmallVector<unsigned> v = rows();
    v.push_back(extra);
    return v;
  }
  Value emptyLike(Value v, Type elt) {
    return tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, v),
                                   elt);
  }
  Value generic(Type resultType, ValueRange ins, Value init,
                ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iters,
                BodyFn body) {
    return linalg::GenericOp::create(b, loc, resultType, ins, init, maps,
                                     iters, body)
        ->getResult(0);
  }
};

Value safeMax(OpBuilder &b, Location loc, Value m) {
  Value ninf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value isNinf =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, ninf);
  return arith::SelectOp::create(b, loc, isNinf, zero, m);
}

struct LowerOnlineUpdate : public OpRewritePattern<OnlineUpdateOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(OnlineUpdateOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    unsigned r = op.getScores().getType().getRank() - 2;
    LoopSpace ls{rewriter, loc, r};
    unsigned R = r + 2; // loops (b.., m, n)
    auto par = utils::IteratorType::parallel;
    auto red = utils::IteratorType::reduction;
    SmallVector<utils::IteratorType> rowRed(r + 1, par), all(R, par);
    rowRed.push_back(red);
    SmallVector<utils::IteratorType> rowPar(r + 1, par);
    AffineMap full = AffineMap::getMultiDimIdentityMap(R, rewriter.getContext());
    AffineMap row = ls.map(R, ls.rows());
    AffineMap rowId = AffineMap::getMultiDimIdentityMap(r + 1,
                                                        rewriter.getContext());
    Value s = op.getScores(), v = op.getValue(), m = op.getMax(),
          l = op.getSum(), acc = op.getAcc();
    Type f32 = rewriter.getF32Type();

    // m' = max(m, rowmax(S))
    Value mNew = ls.generic(m.getType(), s, m, {full, row}, rowRed,
                            [](OpBuilder &b, Location l, ValueRange a) {
                              linalg::YieldOp::create(
                                  b, l, arith::MaximumFOp::create(b, l, a[0], a[1])
                                            .getResult());
                            });
    // P = exp(S - ms)
    Value p = ls.generic(s.getType(), ValueRange{s, mNew}, ls.emptyLike(s, f32),
                         {full, row, full}, all,
                         [](OpBuilder &b, Location l, ValueRange a) {
                           Value d = arith::SubFOp::create(b, l, a[0],
                                                           safeMax(b, l, a[1]));
                           linalg::YieldOp::create(
                               b, l, math::ExpOp::create(b, l, d).getResult());
                         });
    // α = exp(m - ms)
    Value alpha = ls.generic(m.getType(), ValueRange{m, mNew},
                             ls.emptyLike(m, f32), {rowId, rowId, rowId}, rowPar,
                             [](OpBuilder &b, Location l, ValueRange a) {
                               Value d = arith::SubFOp::create(
                                   b, l, a[0], safeMax(b, l, a[1]));
                               linalg::YieldOp::create(
                                   b, l,
                                   math::ExpOp::create(b, l, d).getResult());
                             });
    auto mul = [](OpBuilder &b, Location l, ValueRange a) {
      linalg::YieldOp::create(b, l,
                              arith::MulFOp::create(b, l, a[0], a[1]).getResult());
    };
    // ℓ' = α ℓ + rowsum(P)
    // In place on ℓ and O, so the loop-carried buffers stay where they are.
    Value lScaled = ls.generic(l.getType(), ValueRange{alpha}, l,
                               {rowId, rowId}, rowPar, mul);
    Value lNew = ls.generic(l.getType(), p, lScaled, {full, row}, rowRed,
                            [](OpBuilder &b, Location l, ValueRange a) {
                              linalg::YieldOp::create(
                                  b, l,
                                  arith::AddFOp::create(b, l, a[1], a[0])
                                      .getResult());
                            });
    // O' = α O + P V   (loops b.., m, e, n)
    AffineMap accId = AffineMap::getMultiDimIdentityMap(R, rewriter.getContext());
    Value accScaled = ls.generic(acc.getType(), ValueRange{alpha}, acc,
                                 {row, accId}, all, mul);
    unsigned M = r, Ev = r + 1, Nk = r + 2;
    SmallVector<unsigned> batch = llvm::to_vector(llvm::seq<unsigned>(0, r));
    auto withTail = [&](std::initializer_list<unsigned> tail) {
      SmallVector<unsigned> d = batch;
      d.append(tail.begin(), tail.end());
      return ls.map(R + 1, d);
    };
    SmallVector<utils::IteratorType> pvIters(R, par);
    pvIters.push_back(red);
    // V may omit batch dims (grouped-query attention): index it by the ones
    // it has.
    SmallVector<unsigned> vDims;
    if (auto vb = op.getValueBatchDims())
      for (int64_t d : *vb)
        vDims.push_back(d);
    else
      vDims = batch;
    vDims.append({Nk, Ev});
    Value accNew = ls.generic(
        acc.getType(), ValueRange{p, v}, accScaled,
        {withTail({M, Nk}), ls.map(R + 1, vDims), withTail({M, Ev})}, pvIters,
        [](OpBuilder &b, Location l, ValueRange a) {
          Value vv = a[1];
          if (!vv.getType().isF32())
            vv = arith::ExtFOp::create(b, l, b.getF32Type(), vv);
          Value prod = arith::MulFOp::create(b, l, a[0], vv);
          linalg::YieldOp::create(
              b, l, arith::AddFOp::create(b, l, a[2], prod).getResult());
        });
    rewriter.replaceOp(op, {mNew, lNew, accNew});
    return success();
  }
};

struct LowerFinalize : public OpRewritePattern<FinalizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(FinalizeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resType = cast<RankedTensorType>(op.getType());
    unsigned R = resType.getRank();
    LoopSpace ls{rewriter, loc, R - 2};
    AffineMap id = AffineMap::getMultiDimIdentityMap(R, rewriter.getContext());
    AffineMap row = ls.map(R, ls.rows());
    SmallVector<utils::IteratorType> par(R, utils::IteratorType::parallel);
    Type elt = resType.getElementType();
    Value empty = ls.emptyLike(op.getAcc(), elt);
    Value out = ls.generic(
        empty.getType(), ValueRange{op.getAcc(), op.getSum()}, empty,
        {id, row, id}, par, [&](OpBuilder &b, Location l, ValueRange a) {
          Value zero = arith::ConstantOp::create(b, l, b.getF32FloatAttr(0.0f));
          Value isZero = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ,
                                               a[1], zero);
          Value q = arith::DivFOp::create(b, l, a[0], a[1]);
          Value x = arith::SelectOp::create(b, l, isZero, zero, q);
          if (elt != x.getType())
            x = arith::TruncFOp::create(b, l, elt, x);
          linalg::YieldOp::create(b, l, x);
        });
    rewriter.replaceOp(op, castTo(rewriter, loc, out, resType));
    return success();
  }
};
/// attn.merge as two elementwise generics over the partials: the result
/// sum_i exp(lse_i - lse) O_i and the lse, both from M = max_i lse_i (a
/// row whose partials are all -inf gives 0 and -inf).
struct LowerMerge : public OpRewritePattern<MergeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MergeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    auto resType = cast<RankedTensorType>(op.getResult().getType());
    auto lseType = cast<RankedTensorType>(op.getLse().getType());
    unsigned rank = resType.getRank();
    size_t k = op.getOutputs().size();
    AffineMap full = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap rows = AffineMap::getMultiDimIdentityMap(rank - 1, ctx);
    AffineMap dropE = full.getMajorSubMap(rank - 1);
    Value f32Ninf = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    // (M, weights, sum) of one point from its k lse values.
    auto weights = [&](OpBuilder &b, Location l, ValueRange lses,
                       SmallVectorImpl<Value> &w) {
      Value m = lses[0];
      for (Value x : lses.drop_front())
        m = arith::MaximumFOp::create(b, l, m, x);
      Value none = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, m,
                                         f32Ninf);
      Value zero = arith::ConstantOp::create(b, l, b.getF32FloatAttr(0));
      Value ref = arith::SelectOp::create(b, l, none, zero, m);
      Value sum = zero;
      for (Value x : lses) {
        w.push_back(math::ExpOp::create(
            b, l, arith::SubFOp::create(b, l, x, ref)));
        sum = arith::AddFOp::create(b, l, sum, w.back());
      }
      return std::make_tuple(m, none, sum);
    };
    SmallVector<Value> inputs(op.getLses());
    llvm::append_range(inputs, op.getOutputs());
    SmallVector<AffineMap> maps(k, dropE);
    maps.append(k + 1, full);
    SmallVector<utils::IteratorType> par(rank, utils::IteratorType::parallel);
    Value outInit = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, op.getOutputs()[0]),
        resType.getElementType());
    Value out =
        linalg::GenericOp::create(
            rewriter, loc, outInit.getType(), inputs, outInit, maps, par,
            [&](OpBuilder &b, Location l, ValueRange a) {
              SmallVector<Value> w;
              auto [m, none, sum] = weights(b, l, a.take_front(k), w);
              Value acc = arith::ConstantOp::create(b, l, b.getF32FloatAttr(0));
              for (size_t i = 0; i < k; ++i) {
                Value o = a[k + i];
                if (!o.getType().isF32())
                  o = arith::ExtFOp::create(b, l, b.getF32Type(), o);
                acc = arith::AddFOp::create(
                    b, l, acc, arith::MulFOp::create(b, l, w[i], o));
              }
              Value zero = arith::ConstantOp::create(b, l, b.getF32FloatAttr(0));
              Value x = arith::SelectOp::create(
                  b, l, none, zero, arith::DivFOp::create(b, l, acc, sum));
              if (x.getType() != resType.getElementType())
                x = arith::TruncFOp::create(b, l, resType.getElementType(), x);
              linalg::YieldOp::create(b, l, x);
            })
            ->getResult(0);
    Value lseInit = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, op.getLses()[0]),
        rewriter.getF32Type());
    SmallVector<AffineMap> lmaps(k + 1, rows);
    SmallVector<utils::IteratorType> lpar(rank - 1,
                                         utils::IteratorType::parallel);
    Value lse =
        linalg::GenericOp::create(
            rewriter, loc, lseInit.getType(), op.getLses(), lseInit, lmaps,
            lpar,
            [&](OpBuilder &b, Location l, ValueRange a) {
              SmallVector<Value> w;
              auto [m, none, sum] = weights(b, l, a.take_front(k), w);
              Value x = arith::AddFOp::create(b, l, m,
                                              math::LogOp::create(b, l, sum));
              linalg::YieldOp::create(
                  b, l, arith::SelectOp::create(b, l, none, f32Ninf, x)
                            .getResult());
            })
            ->getResult(0);
    rewriter.replaceOp(op, ValueRange{castTo(rewriter, loc, out, resType),
                                      castTo(rewriter, loc, lse, lseType)});
    return success();
  }
};

/// attn.page_gather: the logical tensor, each element read from its page
/// (the table entry clamped to the cache's pages).
struct LowerPageGather : public OpRewritePattern<PageGatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PageGatherOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resType = cast<RankedTensorType>(op.getResult().getType());
    unsigned rank = resType.getRank();
    int64_t seq = op.getSeqDim(), tok = op.getTokenDim();
    Value cache = op.getCache(), table = op.getTable();
    SmallVector<OpFoldResult> sizes;
    for (unsigned d = 0; d < rank; ++d) {
      if (!resType.isDynamicDim(d)) {
        sizes.push_back(rewriter.getIndexAttr(resType.getDimSize(d)));
        continue;
      }
      Value x = d == seq ? tensor::DimOp::create(rewriter, loc, table, 0)
                         : tensor::DimOp::create(rewriter, loc, cache, d);
      if (d == tok)
        x = arith::MulIOp::create(rewriter, loc, x,
                                  tensor::DimOp::create(rewriter, loc, table, 1));
      sizes.push_back(x);
    }
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                         resType.getElementType());
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, op.getContext());
    SmallVector<utils::IteratorType> par(rank, utils::IteratorType::parallel);
    Value out =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), ValueRange{}, init,
            ArrayRef<AffineMap>{id}, par,
            [&](OpBuilder &b, Location l, ValueRange) {
              SmallVector<Value> idx;
              for (unsigned d = 0; d < rank; ++d)
                idx.push_back(linalg::IndexOp::create(b, l, d));
              Value pageSize = tensor::DimOp::create(b, l, cache, tok);
              Value pages = tensor::DimOp::create(b, l, cache, seq);
              Value entry = tensor::ExtractOp::create(
                  b, l, table,
                  ValueRange{idx[seq],
                             arith::DivUIOp::create(b, l, idx[tok], pageSize)});
              Value page =
                  arith::IndexCastOp::create(b, l, b.getIndexType(), entry);
              Value zero = arith::ConstantIndexOp::create(b, l, 0);
              Value last = arith::SubIOp::create(
                  b, l, pages, arith::ConstantIndexOp::create(b, l, 1));
              page = arith::MaxSIOp::create(
                  b, l, arith::MinSIOp::create(b, l, page, last), zero);
              SmallVector<Value> at(idx);
              at[seq] = page;
              at[tok] = arith::RemUIOp::create(b, l, idx[tok], pageSize);
              linalg::YieldOp::create(
                  b, l, tensor::ExtractOp::create(b, l, cache, at).getResult());
            })
            ->getResult(0);
    rewriter.replaceOp(op, castTo(rewriter, loc, out, resType));
    return success();
  }
};

/// attn.length_mask: n < lengths[b], elementwise.
struct LowerLengthMask : public OpRewritePattern<LengthMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LengthMaskOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resType = cast<RankedTensorType>(op.getResult().getType());
    SmallVector<OpFoldResult> sizes = {
        resType.isDynamicDim(0)
            ? OpFoldResult(
                  tensor::DimOp::create(rewriter, loc, op.getLengths(), 0)
                      .getResult())
            : OpFoldResult(rewriter.getIndexAttr(resType.getDimSize(0))),
        rewriter.getIndexAttr(resType.getDimSize(1))};
    Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                         rewriter.getI1Type());
    MLIRContext *ctx = op.getContext();
    AffineMap rows = AffineMap::get(2, 0, {getAffineDimExpr(0, ctx)}, ctx);
    AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
    SmallVector<utils::IteratorType> par(2, utils::IteratorType::parallel);
    Value out =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), ValueRange{op.getLengths()}, init,
            ArrayRef<AffineMap>{rows, id}, par,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value n = arith::IndexCastOp::create(
                  b, l, b.getI64Type(), linalg::IndexOp::create(b, l, 1));
              Value len = arith::ExtSIOp::create(b, l, b.getI64Type(), a[0]);
              linalg::YieldOp::create(
                  b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                              n, len)
                            .getResult());
            })
            ->getResult(0);
    rewriter.replaceOp(op, castTo(rewriter, loc, out, resType));
    return success();
  }
};

/// attn.varlen_mask: per (m, n), the sequence s of query m (the table
/// entries at or below m, counted), then n's place in s's keys and the
/// causal rule, in i64 on entries clamped to [0, T].
struct LowerVarlenMask : public OpRewritePattern<VarlenMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(VarlenMaskOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resType = cast<RankedTensorType>(op.getResult().getType());
    int64_t S = op.getCuSeqlensQ().getType().getDimSize(0) - 1;
    bool causal = op.getCausal(), bottomRight = op.getBottomRight();
    Value init = tensor::EmptyOp::create(rewriter, loc, resType.getShape(),
                                         rewriter.getI1Type(), op.getSizes());
    // The token counts as i64: constants, or the dynamic sizes.
    SmallVector<Value> tokens;
    for (int64_t d = 0, dyn = 0; d < 2; ++d)
      tokens.push_back(
          resType.isDynamicDim(d)
              ? arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                           op.getSizes()[dyn++])
                    .getResult()
              : arith::ConstantIntOp::create(rewriter, loc,
                                             resType.getDimSize(d), 64)
                    .getResult());
    Value Tq = tokens[0], Tk = tokens[1];
    MLIRContext *ctx = op.getContext();
    AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
    SmallVector<utils::IteratorType> par(2, utils::IteratorType::parallel);
    Value cq = op.getCuSeqlensQ(), ck = op.getCuSeqlensK();
    Value out =
        linalg::GenericOp::create(
            rewriter, loc, init.getType(), ValueRange{}, init,
            ArrayRef<AffineMap>{id}, par,
            [&](OpBuilder &b, Location l, ValueRange) {
              Type i64 = b.getI64Type();
              auto c64 = [&](int64_t v) {
                return arith::ConstantIntOp::create(b, l, v, 64).getResult();
              };
              auto entry = [&](Value table, Value i, Value T) -> Value {
                Value x = arith::ExtSIOp::create(
                    b, l, i64, tensor::ExtractOp::create(b, l, table, i));
                return arith::MinSIOp::create(
                    b, l, arith::MaxSIOp::create(b, l, x, c64(0)), T);
              };
              Value m = arith::IndexCastOp::create(
                  b, l, i64, linalg::IndexOp::create(b, l, 0));
              Value n = arith::IndexCastOp::create(
                  b, l, i64, linalg::IndexOp::create(b, l, 1));
              Value one = arith::ConstantIndexOp::create(b, l, 1);
              auto count = scf::ForOp::create(
                  b, l, one, arith::ConstantIndexOp::create(b, l, S + 1), one,
                  ValueRange{arith::ConstantIndexOp::create(b, l, 0)},
                  [&](OpBuilder &fb, Location fl, Value j, ValueRange acc) {
                    Value at = arith::CmpIOp::create(
                        fb, fl, arith::CmpIPredicate::sle, entry(cq, j, Tq), m);
                    Value next = arith::AddIOp::create(
                        fb, fl, acc[0],
                        arith::SelectOp::create(
                            fb, fl, at, one,
                            arith::ConstantIndexOp::create(fb, fl, 0)));
                    scf::YieldOp::create(fb, fl, next);
                  });
              // s in [0, S): clamp for the reads; the range test decides.
              Value s = arith::MinUIOp::create(
                  b, l, count.getResult(0),
                  arith::ConstantIndexOp::create(b, l, S - 1));
              Value s1 = arith::AddIOp::create(b, l, s, one);
              Value q0 = entry(cq, s, Tq), q1 = entry(cq, s1, Tq);
              Value k0 = entry(ck, s, Tk), k1 = entry(ck, s1, Tk);
              auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
                return arith::CmpIOp::create(b, l, p, x, y).getResult();
              };
              auto andI = [&](Value x, Value y) {
                return arith::AndIOp::create(b, l, x, y).getResult();
              };
              using P = arith::CmpIPredicate;
              Value ok = andI(andI(cmp(P::sle, q0, m), cmp(P::slt, m, q1)),
                              andI(cmp(P::sle, k0, n), cmp(P::slt, n, k1)));
              if (causal) {
                Value qi = arith::SubIOp::create(b, l, m, q0);
                Value ki = arith::SubIOp::create(b, l, n, k0);
                if (bottomRight)
                  qi = arith::AddIOp::create(
                      b, l, qi,
                      arith::SubIOp::create(
                          b, l, arith::SubIOp::create(b, l, k1, k0),
                          arith::SubIOp::create(b, l, q1, q0)));
                ok = andI(ok, cmp(P::sle, ki, qi));
              }
              linalg::YieldOp::create(b, l, ok);
            })
            ->getResult(0);
    rewriter.replaceOp(op, out);
    return success();
  }
};
} // namespace

void mlir::attn::populateAttnToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerOnlineUpdate, LowerFinalize, LowerMerge, LowerPageGather,
               LowerLengthMask, LowerVarlenMask>(patterns.getContext());
}

namespace {
struct ConvertAttnToLinalgPass
    : public attn::impl::ConvertAttnToLinalgBase<ConvertAttnToLinalgPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) { ops.push_back(op); });
    for (AttentionOp op : ops)
      if (failed(tileOnlineSoftmax(rewriter, op, TileOptions{})))
        return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateAttnToLinalgPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
