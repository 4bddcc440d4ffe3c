//===- IndexArith.cpp - sizes as converters compute them ------------------===//
#include "IndexArith.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Sizes past this are not reasoned about (no overflow in the arithmetic).
constexpr int64_t kLimit = int64_t(1) << 40;

bool small(int64_t v) { return v > -kLimit && v < kLimit; }

std::optional<LinearSize> combine(const LinearSize &l, const LinearSize &r,
                                  int64_t sign) {
  if (l.a && r.a && !l.sameSymbol(r))
    return std::nullopt; // two different sizes
  LinearSize out;
  const LinearSize &sym = l.a ? l : r;
  out.src = sym.src;
  out.dim = sym.dim;
  out.a = l.a + sign * r.a;
  out.c = l.c + sign * r.c;
  if (!small(out.a) || !small(out.c))
    return std::nullopt;
  if (!out.a) {
    out.src = Value();
    out.dim = -1;
  }
  return out;
}

/// The range of l - r over every x >= 0 (nullopt bounds: unbounded), or
/// nullopt when l and r use different sizes.
struct Range {
  std::optional<int64_t> lo, hi;
  bool alwaysLE(int64_t k) const { return hi && *hi <= k; }
  bool alwaysGE(int64_t k) const { return lo && *lo >= k; }
};
std::optional<Range> difference(const LinearSize &l, const LinearSize &r) {
  std::optional<LinearSize> d = combine(l, r, -1);
  if (!d)
    return std::nullopt;
  Range out;
  if (d->a >= 0)
    out.lo = d->c;
  if (d->a <= 0)
    out.hi = d->c;
  return out;
}

std::optional<LinearSize> eval(Value v, int depth);

/// Dim `d` of `v`: static, the size the tensor was created with, or the
/// symbol (v, d) where the chain of destinations and casts ends.
std::optional<LinearSize> dimSize(Value v, int64_t d, int depth) {
  for (; depth <= 24; ++depth) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || d < 0 || d >= type.getRank())
      return std::nullopt;
    if (!type.isDynamicDim(d)) {
      LinearSize s;
      s.c = type.getDimSize(d);
      return s;
    }
    Operation *def = v.getDefiningOp();
    if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(def))
      return eval(empty.getDynamicSize(d), depth + 1);
    if (Value origin = sizeOrigin(v); origin != v) {
      v = origin;
      continue;
    }
    LinearSize s;
    s.src = v;
    s.dim = d;
    s.a = 1;
    return s;
  }
  return std::nullopt;
}

std::optional<LinearSize> evalOfr(OpFoldResult ofr, int depth) {
  if (std::optional<int64_t> c = getConstantIntValue(ofr)) {
    if (!small(*c))
      return std::nullopt;
    LinearSize s;
    s.c = *c;
    return s;
  }
  return eval(cast<Value>(ofr), depth);
}

std::optional<bool> evalCmp(arith::CmpIOp cmp, int depth) {
  std::optional<LinearSize> l = eval(cmp.getLhs(), depth + 1);
  std::optional<LinearSize> r = eval(cmp.getRhs(), depth + 1);
  if (!l || !r)
    return std::nullopt;
  std::optional<Range> d = difference(*l, *r);
  if (!d)
    return std::nullopt;
  auto decide = [](bool yes, bool no) -> std::optional<bool> {
    if (yes)
      return true;
    if (no)
      return false;
    return std::nullopt;
  };
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::eq:
    return decide(d->alwaysLE(0) && d->alwaysGE(0),
                  d->alwaysGE(1) || d->alwaysLE(-1));
  case arith::CmpIPredicate::ne:
    return decide(d->alwaysGE(1) || d->alwaysLE(-1),
                  d->alwaysLE(0) && d->alwaysGE(0));
  case arith::CmpIPredicate::slt:
    return decide(d->alwaysLE(-1), d->alwaysGE(0));
  case arith::CmpIPredicate::sle:
    return decide(d->alwaysLE(0), d->alwaysGE(1));
  case arith::CmpIPredicate::sgt:
    return decide(d->alwaysGE(1), d->alwaysLE(0));
  case arith::CmpIPredicate::sge:
    return decide(d->alwaysGE(0), d->alwaysLE(-1));
  default:
    return std::nullopt; // unsigned: sizes past 2^63 are not modelled
  }
}

std::optional<LinearSize> eval(Value v, int depth) {
  if (depth > 24 || !v.getType().isIntOrIndex())
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto dim = dyn_cast<tensor::DimOp>(def)) {
    std::optional<int64_t> d = dim.getConstantIndex();
    if (!d)
      return std::nullopt;
    return dimSize(dim.getSource(), *d, depth + 1);
  }
  if (auto c = dyn_cast<arith::ConstantOp>(def)) {
    auto attr = dyn_cast<IntegerAttr>(c.getValue());
    if (!attr || (!attr.getType().isIndex() &&
                  attr.getType().getIntOrFloatBitWidth() > 64))
      return std::nullopt;
    return evalOfr(OpFoldResult(attr), depth);
  }
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(def) &&
      def->getResult(0).getType().isIntOrIndex() &&
      (def->getResult(0).getType().isIndex() ||
       def->getResult(0).getType().getIntOrFloatBitWidth() >= 64))
    return eval(def->getOperand(0), depth + 1); // value-preserving
  // Sums, differences and products in fewer than 64 bits wrap at their
  // width, which a * x + c does not model: unknown.
  if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def) &&
      !v.getType().isIndex() && v.getType().getIntOrFloatBitWidth() < 64)
    return std::nullopt;
  if (auto add = dyn_cast<arith::AddIOp>(def)) {
    auto l = eval(add.getLhs(), depth + 1), r = eval(add.getRhs(), depth + 1);
    return l && r ? combine(*l, *r, 1) : std::nullopt;
  }
  if (auto sub = dyn_cast<arith::SubIOp>(def)) {
    auto l = eval(sub.getLhs(), depth + 1), r = eval(sub.getRhs(), depth + 1);
    return l && r ? combine(*l, *r, -1) : std::nullopt;
  }
  if (auto mul = dyn_cast<arith::MulIOp>(def)) {
    // By a constant only (a product of two sizes is not linear).
    auto l = eval(mul.getLhs(), depth + 1), r = eval(mul.getRhs(), depth + 1);
    if (!l || !r || (l->a && r->a))
      return std::nullopt;
    const LinearSize &k = l->a ? *r : *l;
    LinearSize out = l->a ? *l : *r;
    if (llvm::MulOverflow(out.a, k.c, out.a) ||
        llvm::MulOverflow(out.c, k.c, out.c) || !small(out.a) || !small(out.c))
      return std::nullopt;
    return out;
  }
  if (isa<arith::MinSIOp, arith::MaxSIOp>(def)) {
    auto l = eval(def->getOperand(0), depth + 1);
    auto r = eval(def->getOperand(1), depth + 1);
    if (!l || !r)
      return std::nullopt;
    std::optional<Range> d = difference(*l, *r);
    if (!d)
      return std::nullopt;
    bool isMin = isa<arith::MinSIOp>(def);
    if (isMin ? d->alwaysLE(0) : d->alwaysGE(0))
      return l;
    if (isMin ? d->alwaysGE(0) : d->alwaysLE(0))
      return r;
    return std::nullopt;
  }
  if (auto sel = dyn_cast<arith::SelectOp>(def)) {
    auto cmp = sel.getCondition().getDefiningOp<arith::CmpIOp>();
    if (!cmp)
      return std::nullopt;
    std::optional<bool> b = evalCmp(cmp, depth);
    if (!b)
      return std::nullopt;
    return eval(*b ? sel.getTrueValue() : sel.getFalseValue(), depth + 1);
  }
  if (auto apply = dyn_cast<affine::AffineApplyOp>(def)) {
    AffineMap map = apply.getAffineMap();
    if (map.getNumResults() != 1)
      return std::nullopt;
    // a0 * v0 + ... + c with constant coefficients only.
    AffineExpr e = map.getResult(0);
    LinearSize acc;
    SmallVector<AffineExpr> terms = {e};
    while (!terms.empty()) {
      AffineExpr t = terms.pop_back_val();
      if (auto bin = dyn_cast<AffineBinaryOpExpr>(t);
          bin && bin.getKind() == AffineExprKind::Add) {
        terms.push_back(bin.getLHS());
        terms.push_back(bin.getRHS());
        continue;
      }
      int64_t coeff = 1;
      if (auto bin = dyn_cast<AffineBinaryOpExpr>(t);
          bin && bin.getKind() == AffineExprKind::Mul) {
        auto k = dyn_cast<AffineConstantExpr>(bin.getRHS());
        if (!k)
          return std::nullopt;
        coeff = k.getValue();
        t = bin.getLHS();
      }
      std::optional<LinearSize> part;
      if (auto k = dyn_cast<AffineConstantExpr>(t)) {
        part = LinearSize();
        part->c = k.getValue();
      } else if (auto d = dyn_cast<AffineDimExpr>(t)) {
        part = eval(apply.getMapOperands()[d.getPosition()], depth + 1);
      } else if (auto s = dyn_cast<AffineSymbolExpr>(t)) {
        part = eval(apply.getMapOperands()[map.getNumDims() + s.getPosition()],
                    depth + 1);
      }
      if (!part || !small(coeff))
        return std::nullopt;
      LinearSize scaled = *part;
      if (llvm::MulOverflow(scaled.a, coeff, scaled.a) ||
          llvm::MulOverflow(scaled.c, coeff, scaled.c) || !small(scaled.a) ||
          !small(scaled.c))
        return std::nullopt;
      std::optional<LinearSize> sum = combine(acc, scaled, 1);
      if (!sum)
        return std::nullopt;
      acc = *sum;
    }
    return acc;
  }
  return std::nullopt;
}
} // namespace

std::optional<LinearSize> mlir::attn::evalLinearSize(OpFoldResult v) {
  return evalOfr(v, 0);
}

Value mlir::attn::sizeOrigin(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto dps = dyn_cast_or_null<DestinationStyleOpInterface>(def);
      dps && dps.hasPureTensorSemantics())
    return dps.getDpsInitOperand(cast<OpResult>(v).getResultNumber())->get();
  if (auto castOp = dyn_cast_or_null<tensor::CastOp>(def))
    return castOp.getSource();
  return v;
}

std::optional<LinearSize> mlir::attn::evalDimSize(Value v, int64_t d) {
  return dimSize(v, d, 0);
}

bool mlir::attn::isProvablyZero(OpFoldResult v) {
  std::optional<LinearSize> s = evalLinearSize(v);
  return s && s->isConstant(0);
}
