//===- AttentionMatchers.cpp - structural attention matcher ---------------===//
//
// Matches: a P·V contraction whose P is, up to casts, a softmax over the key
//          axis of scores = scale * Q·K^T (+ additive mask) (with -inf
//          selected in by a causal iota comparison or a boolean mask), and
//          optionally the safe-softmax guard (fully -inf rows -> 0).
// Produces: an AttentionMatch (operands, maps over (b..., m, n, d, e), scale,
//          mask, causal) or the first reason it is not attention.
//
// Phases: trace P symbolically (ScoreTracer: any spelling of the softmax and
// of the score transforms becomes one expression tree), recognize the math,
// collect facts, validate (uses, blocks, types). No IR is created here, so a
// failed match never has anything to roll back.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/AttentionMatchers.h"
#include "IndexArith.h"
#include "ScoreTracer.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Recognizing the math on traced terms
//===----------------------------------------------------------------------===//

namespace {
/// P = softmax_n(x), possibly guarded.
struct SoftmaxFacts {
  int x = -1;
  int n = -1;
  bool guarded = false;
};

/// scores = scale * base + bias, with masks selected in.
struct ScoreFacts {
  int base = -1; ///< Leaf: the Q·K^T result
  double scale = 1.0;
  int bias = -1;     ///< Leaf: additive mask
  int boolMask = -1; ///< Leaf: i1 mask
  bool boolMaskKeepsTrue = true;
  bool causal = false;
  int64_t causalOffset = 0; ///< causal masks n > m + causalOffset
  /// Sliding windows mask m - n >= windowRel, i.e. W = windowRel + offset
  /// with the query offset of the causal rule.
  std::optional<int64_t> windowRel;
  std::optional<int64_t> window;
  int64_t queryOffset = 0;
  std::optional<double> maskValue; ///< the select's fill (-inf or lowest)
  bool shifted = false; ///< a row-uniform shift was dropped (exact w/o sink)
  /// causal/window came from an additive constant 0 / finfo.min mask.
  bool additiveCausal = false;
  /// ... whose masked entries all hold this value (NaN: not one value),
  /// added in this type.
  double additiveFill = 0;
  Type additiveType;
  /// A select's condition went into the score_mod region (toRegion).
  bool regionMask = false;
  /// Score modification steps, innermost first: `term` with `inner` as the
  /// score it reads, or (term < 0) a multiplication/division by `c`.
  struct Mod {
    int term = -1, inner = -1;
    double c = 1.0;
    bool div = false;
    bool add = false; ///< term < 0: + c instead of * c or / c
  };
  SmallVector<Mod> mods;
};
} // namespace

static bool isNegInf(std::optional<double> v) {
  // -inf, or the lowest finite value of f32/f16/bf16 used as "minus infinity".
  return v && (std::isinf(*v) ? *v < 0 : *v <= -65504.0);
}

static bool isName(const Term &t, StringRef name) { return t.name == name; }

static bool isContractionResult(Value v) {
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  return op && linalg::isaContractionOpInterface(op);
}

/// Matches exp(x - max_n(x)) and returns x.
static std::optional<std::pair<int, int>> matchExpShifted(ScoreTracer &tr,
                                                          int e) {
  e = tr.stripCasts(e);
  const Term &ex = tr.get(e);
  if (ex.kind != Term::Unary || !isName(ex, "math.exp"))
    return std::nullopt;
  int sub = tr.stripCasts(ex.kids[0]);
  const Term &s = tr.get(sub);
  if (s.kind != Term::Binary || !isName(s, "arith.subf"))
    return std::nullopt;
  int mx = tr.stripCasts(s.kids[1]);
  const Term &m = tr.get(mx);
  if (m.kind != Term::Reduce ||
      !(isName(m, "arith.maximumf") || isName(m, "arith.maxnumf")))
    return std::nullopt;
  if (!tr.equal(tr.stripCasts(m.kids[0]), tr.stripCasts(s.kids[0])))
    return std::nullopt;
  return std::make_pair(s.kids[0], m.dim);
}

static std::optional<SoftmaxFacts> matchSoftmaxTerm(ScoreTracer &tr, int p,
                                                    std::string &why,
                                                    unsigned depth = 0) {
  p = tr.stripCasts(p);
  const Term &t = tr.get(p);
  if (t.kind == Term::Softmax)
    return SoftmaxFacts{t.kids[0], t.dim, false};
  // The safe-softmax guard: select(all_n(x == -inf), 0, softmax(x)).
  if (t.kind == Term::Select && tr.constValue(t.kids[1]) == 0.0) {
    // One guard is what torch writes; a few nested ones are harmless.
    if (depth > 8) {
      why = "the probabilities go through more than 8 nested guards";
      return std::nullopt;
    }
    std::optional<SoftmaxFacts> inner =
        matchSoftmaxTerm(tr, t.kids[2], why, depth + 1);
    if (!inner)
      return std::nullopt;
    int c = tr.stripCasts(t.kids[0]);
    const Term &all = tr.get(c);
    bool ok = false;
    if (all.kind == Term::Reduce && isName(all, "arith.andi") &&
        all.dim == inner->n) {
      const Term &eq = tr.get(tr.stripCasts(all.kids[0]));
      ok = eq.kind == Term::Cmp && isName(eq, "arith.cmpf") &&
           eq.pred == static_cast<int64_t>(arith::CmpFPredicate::OEQ) &&
           isNegInf(tr.constValue(eq.kids[1])) &&
           tr.equal(tr.stripCasts(eq.kids[0]), tr.stripCasts(inner->x));
    }
    if (!ok) {
      why = "the probabilities are changed by a select between the softmax "
            "and P·V that is not the fully-masked-row guard";
      return std::nullopt;
    }
    inner->guarded = true;
    return inner;
  }
  // e / sum_n(e), e * (1 / sum_n(e)), e * reciprocal(sum).
  if (t.kind == Term::Binary &&
      (isName(t, "arith.divf") || isName(t, "arith.mulf"))) {
    for (int swap = 0; swap < 2; ++swap) {
      int e = t.kids[swap], d = t.kids[1 - swap];
      if (isName(t, "arith.divf") && swap)
        break;
      int sum = tr.stripCasts(d);
      if (isName(t, "arith.mulf")) {
        const Term &r = tr.get(sum);
        if (r.kind != Term::Binary || !isName(r, "arith.divf") ||
            tr.constValue(r.kids[0]) != 1.0)
          continue;
        sum = tr.stripCasts(r.kids[1]);
      }
      const Term &s = tr.get(sum);
      if (s.kind != Term::Reduce || !isName(s, "arith.addf"))
        continue;
      if (!tr.equal(tr.stripCasts(s.kids[0]), tr.stripCasts(e))) {
        why = "the softmax normalizes by the sum of something other than its "
              "numerator";
        return std::nullopt;
      }
      auto shifted = matchExpShifted(tr, e);
      if (!shifted) {
        why = "the normalized values are not exp(x - max(x))";
        return std::nullopt;
      }
      if (shifted->second != s.dim) {
        why = "the softmax takes its max and its sum over different axes";
        return std::nullopt;
      }
      return SoftmaxFacts{shifted->first, s.dim, false};
    }
  }
  if (t.kind == Term::Unary && isName(t, "math.exp"))
    why = "the exponentials are not normalized (no division by their sum)";
  else if (t.kind == Term::Leaf)
    why = "no softmax feeds this contraction";
  else if (t.kind == Term::Binary || t.kind == Term::Select)
    why = llvm::formatv("the probabilities are changed by '{0}' between the "
                        "softmax and P·V",
                        t.kind == Term::Select ? "arith.select" : t.name)
              .str();
  else
    why = "no softmax feeds this contraction";
  return std::nullopt;
}

namespace {
/// a*m + b*n + c over index terms.
struct Linear {
  int64_t a = 0, b = 0, c = 0;
};
} // namespace

/// Index terms visited per mask condition before giving up: a real mask is a
/// handful of ops; the bound keeps hostile (deep or shared) ones linear.
static constexpr unsigned kIndexMaskBudget = 256;

static std::optional<Linear> linearize(ScoreTracer &tr, int id, int mDim,
                                       int nDim, unsigned &budget) {
  if (budget == 0)
    return std::nullopt;
  --budget;
  const Term &t = tr.get(id);
  if (t.kind == Term::Unary && isName(t, "icast"))
    return linearize(tr, t.kids[0], mDim, nDim, budget);
  if (t.kind == Term::Const)
    return Linear{0, 0, static_cast<int64_t>(t.value)};
  if (t.kind == Term::Index) {
    if (auto d = dyn_cast<AffineDimExpr>(t.index)) {
      if ((int)d.getPosition() == mDim)
        return Linear{1, 0, 0};
      if ((int)d.getPosition() == nDim)
        return Linear{0, 1, 0};
    }
    return std::nullopt;
  }
  if (t.kind == Term::Binary &&
      (isName(t, "arith.addi") || isName(t, "arith.subi"))) {
    auto x = linearize(tr, t.kids[0], mDim, nDim, budget);
    auto y = linearize(tr, t.kids[1], mDim, nDim, budget);
    if (!x || !y)
      return std::nullopt;
    int64_t s = isName(t, "arith.addi") ? 1 : -1;
    return Linear{x->a + s * y->a, x->b + s * y->b, x->c + s * y->c};
  }
  return std::nullopt;
}

namespace {
/// Masks computed from query/key indices: causal masks n > m + offset
/// (offset 0: top left; N - M: bottom right), windows m - n >= windowRel.
struct IndexMask {
  bool causal = false;
  int64_t offset = 0;
  std::optional<int64_t> windowRel;
  void addCausal(int64_t k) {
    offset = causal ? std::min(offset, k) : k;
    causal = true;
  }
  void addWindow(int64_t rel) {
    windowRel = windowRel ? std::min(*windowRel, rel) : rel;
  }
};
} // namespace

/// A float 0/1 flag compared with a constant (ONNX's `Trilu` of ones, then
/// `Equal(tril, 0)`: cmpf(select(p, 1, 0), 0)) is `p` or `not p`: the
/// condition it stands for and whether it is negated, or nullopt when the
/// comparison does not separate the two values.
static std::optional<std::pair<int, bool>> flagCompare(ScoreTracer &tr,
                                                       int id) {
  const Term &c = tr.get(tr.stripCasts(id));
  if (c.kind != Term::Cmp || !isName(c, "arith.cmpf") || c.kids.size() != 2)
    return std::nullopt;
  const Term &sel = tr.get(tr.stripCasts(c.kids[0]));
  std::optional<double> k = tr.constValue(c.kids[1]);
  if (sel.kind != Term::Select || !k)
    return std::nullopt;
  std::optional<double> a = tr.constValue(sel.kids[1]),
                        b = tr.constValue(sel.kids[2]);
  if (!a || !b)
    return std::nullopt;
  auto eval = [&](double x) -> std::optional<bool> {
    using P = arith::CmpFPredicate;
    switch (static_cast<P>(c.pred)) {
    case P::OEQ:
    case P::UEQ:
      return x == *k;
    case P::ONE:
    case P::UNE:
      return x != *k;
    case P::OLT:
    case P::ULT:
      return x < *k;
    case P::OLE:
    case P::ULE:
      return x <= *k;
    case P::OGT:
    case P::UGT:
      return x > *k;
    case P::OGE:
    case P::UGE:
      return x >= *k;
    default:
      return std::nullopt;
    }
  };
  std::optional<bool> ra = eval(*a), rb = eval(*b);
  if (!ra || !rb || *ra == *rb || std::isnan(*a) || std::isnan(*b) ||
      std::isnan(*k))
    return std::nullopt;
  return std::make_pair(sel.kids[0], !*ra);
}

/// Classifies `cond` (which masks a key when it equals `maskedWhen`) as the
/// causal rule (n > m + K, K >= 0), a sliding window (m - n >= W), or a
/// conjunction of them. Returns false for anything else.
static bool classifyIndexMask(ScoreTracer &tr, int cond, bool maskedWhen,
                              int mDim, int nDim, IndexMask &out,
                              unsigned &budget) {
  if (budget == 0)
    return false;
  --budget;
  const Term &c = tr.get(tr.stripCasts(cond));
  if (c.kind == Term::Binary && isName(c, "arith.xori") &&
      tr.constValue(c.kids[1]) == 1.0)
    return classifyIndexMask(tr, c.kids[0], !maskedWhen, mDim, nDim, out,
                             budget);
  if (std::optional<std::pair<int, bool>> flag = flagCompare(tr, cond))
    return classifyIndexMask(tr, flag->first, maskedWhen != flag->second, mDim,
                             nDim, out, budget);
  // masked = a | b, or keep = a & b: each side masks on its own.
  if (c.kind == Term::Binary &&
      ((maskedWhen && isName(c, "arith.ori")) ||
       (!maskedWhen && isName(c, "arith.andi"))))
    return classifyIndexMask(tr, c.kids[0], maskedWhen, mDim, nDim, out,
                             budget) &&
           classifyIndexMask(tr, c.kids[1], maskedWhen, mDim, nDim, out,
                             budget);
  if (c.kind != Term::Cmp || !isName(c, "arith.cmpi"))
    return false;
  auto pred = static_cast<arith::CmpIPredicate>(c.pred);
  auto lhs = linearize(tr, c.kids[0], mDim, nDim, budget);
  auto rhs = linearize(tr, c.kids[1], mDim, nDim, budget);
  if (!lhs || !rhs)
    return false;
  using P = arith::CmpIPredicate;
  // Unsigned compares are the signed ones only on non-negative operands:
  // bare indices plus non-negative constants.
  bool nonNeg = lhs->c >= 0 && rhs->c >= 0 && lhs->a >= 0 && lhs->b >= 0 &&
                rhs->a >= 0 && rhs->b >= 0;
  switch (pred) {
  case P::ugt: case P::uge: case P::ult: case P::ule:
    if (!nonNeg)
      return false;
    pred = pred == P::ugt ? P::sgt : pred == P::uge ? P::sge
           : pred == P::ult ? P::slt : P::sle;
    break;
  default:
    break;
  }
  if (!maskedWhen)
    pred = arith::invertPredicate(pred);
  // masked iff L pred 0 with L = lhs - rhs; normalize to L = n - m + c.
  Linear l{lhs->a - rhs->a, lhs->b - rhs->b, lhs->c - rhs->c};
  if (l.a == 1 && l.b == -1) {
    l = Linear{-l.a, -l.b, -l.c};
    pred = pred == P::sgt ? P::slt : pred == P::slt ? P::sgt
           : pred == P::sge ? P::sle : pred == P::sle ? P::sge : pred;
  }
  if (l.a != -1 || l.b != 1)
    return false;
  std::optional<int64_t> offset, windowRel;
  switch (pred) {
  case P::sgt: offset = -l.c; break;     // n > m - c
  case P::sge: offset = -l.c - 1; break; // n > m - c - 1
  case P::slt: windowRel = l.c + 1; break; // m - n >= c + 1
  case P::sle: windowRel = l.c; break;     // m - n >= c
  default: break;
  }
  if (offset && *offset >= 0) {
    out.addCausal(*offset);
    return true;
  }
  if (windowRel) {
    out.addWindow(*windowRel);
    return true;
  }
  return false;
}

namespace {
/// A constant i1 mask as read at score point (m, n): torch-mlir writes
/// causal as a lower-triangular constant (GPT-2 slices it from a larger
/// one). Unit dims are read at 0; a static slice in between is folded.
struct ConstantMask {
  DenseElementsAttr data;
  /// Float data (an additive mask): an entry is "true" (kept) where it is 0.
  /// Otherwise i1 data, read as is.
  bool isFloat = false;
  SmallVector<double> values; ///< float data, row-major
  SmallVector<int64_t> strides;  ///< row-major strides of `data`
  SmallVector<int64_t> base;     ///< data index of score point (0, 0)
  SmallVector<int64_t> mStep, nStep; ///< data index step per m, per n
  int64_t M = 0, N = 0;
  /// Read through a slice of run-time size along m or n (a model's buffer
  /// cut to the sequence length): M x N is the largest block it can be,
  /// and the program reads its top-left corner.
  bool truncated = false;
  bool at(int64_t m, int64_t n) const {
    int64_t linear = 0;
    for (size_t i = 0; i < base.size(); ++i)
      linear += (base[i] + m * mStep[i] + n * nStep[i]) * strides[i];
    return isFloat ? values[linear] == 0.0 : data.getValues<bool>()[linear];
  }
  double value(int64_t m, int64_t n) const {
    int64_t linear = 0;
    for (size_t i = 0; i < base.size(); ++i)
      linear += (base[i] + m * mStep[i] + n * nStep[i]) * strides[i];
    return values[linear];
  }
};
} // namespace

static std::optional<ConstantMask> getConstantMask(const Term &leaf, int mDim,
                                                   int nDim) {
  Value v = leaf.leaf;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !(type.getElementType().isInteger(1) ||
                 isa<FloatType>(type.getElementType())))
    return std::nullopt;
  unsigned rank = type.getRank();
  // Slices of the constant (constant offsets and strides; sizes may be
  // run-time ones), composed: the data index of the leaf's element i is
  // offsets + i * steps.
  SmallVector<int64_t> offsets(rank, 0), steps(rank, 1);
  for (int depth = 0; depth < 4; ++depth) {
    auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice)
      break;
    if (slice.getSourceType().getRank() != rank ||
        ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
        ShapedType::isDynamicShape(slice.getStaticStrides()))
      return std::nullopt;
    for (unsigned i = 0; i < rank; ++i) {
      offsets[i] = slice.getStaticOffsets()[i] +
                   offsets[i] * slice.getStaticStrides()[i];
      steps[i] *= slice.getStaticStrides()[i];
    }
    v = slice.getSource();
  }
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  ConstantMask cm;
  cm.data = dyn_cast<DenseElementsAttr>(attr);
  if (!cm.data || cm.data.getElementType() != type.getElementType())
    return std::nullopt;
  cm.isFloat = isa<FloatType>(type.getElementType());
  ArrayRef<int64_t> shape = cast<ShapedType>(cm.data.getType()).getShape();
  cm.strides.assign(rank, 1);
  for (int i = static_cast<int>(rank) - 2; i >= 0; --i)
    cm.strides[i] = cm.strides[i + 1] * shape[i + 1];
  cm.base = offsets;
  cm.mStep.assign(rank, 0);
  cm.nStep.assign(rank, 0);
  // A run-time size along m or n: the largest the slice can be.
  auto extent = [&](unsigned i) -> int64_t {
    if (!type.isDynamicDim(i))
      return type.getDimSize(i);
    cm.truncated = true;
    return offsets[i] < shape[i]
               ? (shape[i] - offsets[i] + steps[i] - 1) / steps[i]
               : 0;
  };
  for (auto [i, e] : llvm::enumerate(leaf.access.getResults())) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (d && static_cast<int>(d.getPosition()) == mDim && !cm.M) {
      cm.mStep[i] = steps[i];
      cm.M = extent(i);
    } else if (d && static_cast<int>(d.getPosition()) == nDim && !cm.N) {
      cm.nStep[i] = steps[i];
      cm.N = extent(i);
    } else if (type.isDynamicDim(i) ||
               (type.getDimSize(i) != 1 &&
                !(isa<AffineConstantExpr>(e) &&
                  cast<AffineConstantExpr>(e).getValue() == 0))) {
      return std::nullopt; // varies along a batch dim, or read twice
    }
  }
  // Small enough to check every point (masks are S x S).
  if (!cm.M || !cm.N || cm.M * cm.N > (int64_t(1) << 24))
    return std::nullopt;
  if (cm.isFloat) {
    if (cm.data.getNumElements() > (int64_t(1) << 24))
      return std::nullopt;
    cm.values.reserve(cm.data.getNumElements());
    for (const APFloat &x : cm.data.getValues<APFloat>())
      cm.values.push_back(x.convertToDouble());
  }
  return cm;
}

/// A rule found on the largest block a truncated constant can be holds on
/// its top-left corner point by point; it is exact there only if every row
/// of every corner keeps a visible key (-inf and the fused op's fully
/// masked rows differ): causal with a non-negative offset (key 0 is always
/// visible) and no window.
static bool holdsOnEveryCorner(const ConstantMask &cm, const IndexMask &rule) {
  return !cm.truncated ||
         (!rule.windowRel && (!rule.causal || rule.offset >= 0));
}

/// True if the constant mask masks exactly what causal and/or a sliding
/// window mask (n > m + K, top left K = 0 or bottom right K = N - M;
/// m - n >= W - K), setting them in `out`. Any other pattern stays a mask
/// tensor.
static bool classifyConstantMask(const ConstantMask &cm, bool maskedWhen,
                                 IndexMask &out) {
  auto masked = [&](int64_t m, int64_t n) { return cm.at(m, n) == maskedWhen; };
  // Causal: the first masked key after row 0's first visible one is K + 1.
  // Window: keys before a row's first visible key n0 are masked, so
  // m - n >= m - n0 + 1 is the rule (negative with a bottom-right offset).
  std::optional<int64_t> offset, windowRel;
  int64_t first = 0;
  while (first < cm.N && masked(0, first))
    ++first;
  for (int64_t n = first + 1; n < cm.N && !offset; ++n)
    if (masked(0, n))
      offset = n - 1;
  for (int64_t m = 0; m < cm.M && !windowRel; ++m) {
    int64_t n0 = 0;
    while (n0 < cm.N && masked(m, n0))
      ++n0;
    if (n0 > 0 && n0 < cm.N)
      windowRel = m - n0 + 1;
  }
  for (int64_t m = 0; m < cm.M; ++m)
    for (int64_t n = 0; n < cm.N; ++n)
      if (masked(m, n) != ((offset && n > m + *offset) ||
                           (windowRel && m - n >= *windowRel)))
        return false;
  if (offset)
    out.addCausal(*offset);
  if (windowRel)
    out.addWindow(*windowRel);
  return true;
}

/// An additive constant mask (torch-mlir's Llama: 0 where visible, finfo.min
/// where masked) that is exactly causal and/or a band is that rule with
/// -inf: every masked entry is at most the fill bound and every row keeps a
/// visible key, so exp(s + c - rowmax) underflows to exactly 0 whenever the
/// scores of a row lie closer together than |c|, and no row is fully
/// masked, where -inf and a finite fill differ. An f16 add saturates at
/// -65504 (f16 scores cannot be further apart without overflowing); in f32
/// or bf16, scores 1e4 apart are plausible, so -65504 is only a bias there
/// and the fill must be at least 1e30 (finfo.min is -3.4e38).
static bool isCausalAdditiveMask(const ConstantMask &cm, Type addType,
                                 IndexMask &out) {
  if (!cm.isFloat)
    return false;
  double bound = addType && addType.isF16() ? -65504.0 : -1e30;
  for (int64_t m = 0; m < cm.M; ++m) {
    bool visible = false;
    for (int64_t n = 0; n < cm.N; ++n) {
      double x = cm.value(m, n);
      if (x == 0.0)
        visible = true;
      else if (!(x <= bound))
        return false; // a bias, or NaN
    }
    if (!visible)
      return false;
  }
  IndexMask rule;
  if (!classifyConstantMask(cm, /*maskedWhen=*/false, rule) ||
      (!rule.causal && !rule.windowRel))
    return false;
  out = rule;
  return true;
}

/// Upstream value bounds assume every `tensor.dim` they walk has a valid
/// index (one out of range is valid IR, undefined at run time, and crashes
/// them): true if none before `roots` has one.
static bool dimsInRange(ArrayRef<Value> roots) {
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  for (Value root : roots)
    if (failed(getBackwardSlice(root, &slice, options)))
      return false;
  for (Value root : roots)
    if (Operation *def = root.getDefiningOp())
      slice.insert(def);
  for (Operation *op : slice)
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      std::optional<int64_t> d = dim.getConstantIndex();
      auto type = dyn_cast<RankedTensorType>(dim.getSource().getType());
      if (!d || !type || *d < 0 || *d >= type.getRank())
        return false;
    }
  return true;
}

/// True if `slice` (a leading slice) has exactly `scores`' sizes: static
/// ones compared, dynamic ones proven equal by value bounds (a slice to
/// `dim(p) - 1` of a softmax over `scores` and one extra column, or to the
/// sizes `scores` was built with).
static bool slicesBackTo(tensor::ExtractSliceOp slice, Value scores) {
  auto type = cast<RankedTensorType>(scores.getType());
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  if ((int64_t)sizes.size() != type.getRank())
    return false;
  for (auto [d, size] : llvm::enumerate(sizes)) {
    std::optional<int64_t> c = getConstantIntValue(size);
    if (c && !type.isDynamicDim(d)) {
      if (*c != type.getDimSize(d))
        return false;
      continue;
    }
    // torch-mlir's clamps of `dim(P) - 1` in i64 (IndexArith: both sides
    // followed to the sizes the tensors were created with), then value
    // bounds for what they relate.
    std::optional<LinearSize> ls = evalLinearSize(size);
    std::optional<LinearSize> want = evalDimSize(scores, d);
    if (ls && want && *ls == *want)
      continue;
    std::optional<ValueBoundsConstraintSet::Variable> sizeVar;
    Value sizeValue;
    if (ls && ls->src && ls->a == 1 && ls->c == 0) {
      sizeVar.emplace(ls->src, ls->dim);
      sizeValue = ls->src;
    } else {
      sizeVar.emplace(size);
      sizeValue = dyn_cast<Value>(size);
    }
    if (!dimsInRange(sizeValue ? ArrayRef<Value>{sizeValue, scores}
                               : ArrayRef<Value>{scores}))
      return false;
    FailureOr<bool> eq = ValueBoundsConstraintSet::areEqual(
        *sizeVar, ValueBoundsConstraintSet::Variable(scores, d));
    if (failed(eq) || !*eq)
      return false;
  }
  return true;
}

static void mergeIndexMask(ScoreFacts &f, const IndexMask &im) {
  if (im.causal) {
    f.causalOffset = f.causal ? std::min(f.causalOffset, im.offset) : im.offset;
    f.causal = true;
  }
  if (im.windowRel)
    f.windowRel =
        f.windowRel ? std::min(*f.windowRel, *im.windowRel) : *im.windowRel;
}

/// Integer division, remainder and shifts: the ops that make position
/// chunks (m / C) and their JAX and torch spellings.
static bool isIndexDivision(StringRef name) {
  return llvm::is_contained({"arith.floordivsi", "arith.ceildivsi",
                             "arith.divsi", "arith.remsi", "arith.shrsi",
                             "arith.shli"},
                            name);
}

/// Why the region cannot take division or shift term `t` ("" if it can):
/// constant positive divisors only (no score may trap) and shifts within
/// the width; a left shift only on 64-bit values (the region computes
/// integers in i64, where a narrower one would not wrap).
static std::string indexDivisionRefusal(const ScoreTracer &tr, const Term &t) {
  std::optional<double> c = tr.constValue(t.kids[1]);
  unsigned width = 64;
  if (t.type && t.type.isIntOrFloat())
    width = t.type.getIntOrFloatBitWidth();
  bool shift = t.name.starts_with("arith.sh");
  if (t.name == "arith.shli" && width < 64)
    return llvm::formatv("'{0}' in the score modification shifts a {1}-bit "
                         "value (the region shifts 64-bit ones only)",
                         t.name, width)
        .str();
  if (!c || (shift ? (*c < 0 || *c > width - 1.0) : *c < 1))
    return llvm::formatv("'{0}' in the score modification takes a constant "
                         "{1} (got a runtime value or an out-of-range one)",
                         t.name,
                         shift ? "shift within the width" : "positive divisor")
        .str();
  return "";
}

/// The first division or shift in `cond` the region cannot take, or "".
static std::string divisionRefusalIn(const ScoreTracer &tr, int cond) {
  SmallVector<int> stack = {cond};
  llvm::DenseSet<int> seen;
  while (!stack.empty() && seen.size() < 256) {
    int id = stack.pop_back_val();
    if (!seen.insert(id).second)
      continue;
    const Term &t = tr.get(id);
    if (t.kind == Term::Binary && isIndexDivision(t.name))
      if (std::string no = indexDivisionRefusal(tr, t); !no.empty())
        return no;
    if (t.kind != Term::Leaf)
      llvm::append_range(stack, t.kids);
  }
  return "";
}

/// A mask condition that compares data read per query row with data read
/// per key (JAX's segment ids, a document mask: seg_q[b, m] == seg_kv[b, n]):
/// some tensor it reads is indexed by m, some by n, none by both, and no
/// score. The kernels evaluate it per score, in the score_mod region,
/// instead of reading the (m, n) tensor a program would materialize. Only
/// static numeric tensors (what a region's runtime operand may be on the
/// GPU): i1 ones (per-row and per-key padding flags) and dynamic ones stay
/// with the materialized mask as before.
static bool isRowKeyDataCondition(const ScoreTracer &tr, int cond, int mDim,
                                  int nDim) {
  bool rowData = false, keyData = false, rowPos = false, keyPos = false;
  bool chunks = false;
  SmallVector<int> stack = {cond};
  llvm::DenseSet<int> seen;
  while (!stack.empty()) {
    int id = stack.pop_back_val();
    if (!seen.insert(id).second)
      continue;
    if (seen.size() > 256)
      return false;
    const Term &t = tr.get(id);
    if (t.kind == Term::Reduce || t.kind == Term::Softmax)
      return false;
    if (t.kind == Term::Index) {
      // Positions: m and n themselves (through a division, below).
      if (auto d = dyn_cast<AffineDimExpr>(t.index)) {
        rowPos |= static_cast<int>(d.getPosition()) == mDim;
        keyPos |= static_cast<int>(d.getPosition()) == nDim;
      }
      continue;
    }
    if (t.kind != Term::Leaf) {
      if (t.kind == Term::Binary && isIndexDivision(t.name)) {
        // The region takes constant divisors and shifts only; a chunk of a
        // runtime width stays the program's materialized mask, if any.
        if (!indexDivisionRefusal(tr, t).empty())
          return false;
        chunks = true;
      }
      llvm::append_range(stack, t.kids);
      continue;
    }
    auto type = dyn_cast<RankedTensorType>(t.leaf.getType());
    if (!type)
      return false; // a runtime scalar: no region operand (the emitter refuses
                    // it)
    Type elt = type.getElementType();
    if (isContractionResult(t.leaf) || !type.hasStaticShape() ||
        !(elt.isInteger(32) || elt.isInteger(64) || elt.isF32() ||
          elt.isF16() || elt.isBF16()))
      return false;
    bool m = t.access.isFunctionOfDim(mDim), n = t.access.isFunctionOfDim(nDim);
    if (m && n)
      return false;
    rowData |= m;
    keyData |= n;
  }
  // Row data against key data; positions count only through a division
  // (position chunks: the affine comparisons of positions are causal and
  // window rules, or refused with their own reason).
  if (chunks)
    return (rowData || rowPos) && (keyData || keyPos);
  return rowData && keyData;
}

/// Splits a select condition into parts that each mask keys on their own
/// (the conjunction of keep conditions, or the disjunction of mask ones,
/// with `not` pushed inward) and applies them: constant splats that keep
/// every key are dropped, index rules and constant masks merged, one bool
/// mask tensor taken, parts that compare row data with key data
/// (isRowKeyDataCondition) left to the caller in `regionParts` (`masked`:
/// some other part masks keys). False with
/// `why` empty if a part is none of these (the caller explains), with `why`
/// set for a definite refusal.
static bool applyMaskParts(ScoreTracer &tr, int cond, bool maskedWhen, int mDim,
                           int nDim, ScoreFacts &f, std::string &why,
                           SmallVectorImpl<std::pair<int, bool>> &regionParts,
                           bool &masked) {
  SmallVector<std::pair<int, bool>> parts, work = {{cond, maskedWhen}};
  bool simplified = false;
  while (!work.empty()) {
    auto [id, when] = work.pop_back_val();
    if (parts.size() + work.size() > 16)
      return false;
    id = tr.stripCasts(id);
    const Term &t = tr.get(id);
    // x & true and x | false are x, whatever the polarity.
    if (t.kind == Term::Binary && t.kids.size() == 2 &&
        (isName(t, "arith.andi") || isName(t, "arith.ori"))) {
      double unit = isName(t, "arith.andi") ? 1.0 : 0.0;
      if (tr.constValue(t.kids[0]) == unit) {
        work.push_back({t.kids[1], when});
        simplified = true;
        continue;
      }
      if (tr.constValue(t.kids[1]) == unit) {
        work.push_back({t.kids[0], when});
        simplified = true;
        continue;
      }
    }
    if (t.kind == Term::Binary && t.kids.size() == 2 &&
        ((isName(t, "arith.andi") && !when) ||
         (isName(t, "arith.ori") && when))) {
      work.push_back({t.kids[0], when});
      work.push_back({t.kids[1], when});
      continue;
    }
    if (t.kind == Term::Binary && isName(t, "arith.xori") &&
        tr.constValue(t.kids[1]) == 1.0) {
      work.push_back({t.kids[0], !when});
      continue;
    }
    parts.push_back({id, when});
  }
  if (parts.size() < 2 && !simplified)
    return false; // one part as it was: the caller's own checks saw it
  IndexMask merged; // applied to `f` only once every part is known
  auto addRule = [&](const IndexMask &im) {
    if (im.causal)
      merged.addCausal(im.offset);
    if (im.windowRel)
      merged.addWindow(*im.windowRel);
  };
  std::optional<std::pair<int, bool>> tensorPart;
  SmallVector<std::pair<int, bool>> region;
  for (auto [id, when] : parts) {
    if (std::optional<double> v = tr.constValue(id)) {
      if ((*v != 0.0) == when) {
        why = "the scores are masked everywhere (a constant condition)";
        return false;
      }
      continue; // keeps every key
    }
    IndexMask im;
    unsigned budget = kIndexMaskBudget;
    if (classifyIndexMask(tr, id, when, mDim, nDim, im, budget)) {
      addRule(im);
      continue;
    }
    const Term &c = tr.get(id);
    if (c.kind != Term::Leaf) {
      if (!isRowKeyDataCondition(tr, id, mDim, nDim))
        return false;
      region.push_back({id, when});
      continue;
    }
    std::optional<ConstantMask> cm = getConstantMask(c, mDim, nDim);
    IndexMask constant;
    if (cm && classifyConstantMask(*cm, when, constant) &&
        holdsOnEveryCorner(*cm, constant)) {
      addRule(constant);
      continue;
    }
    if (!isa<RankedTensorType>(c.leaf.getType()) ||
        !cast<ShapedType>(c.leaf.getType()).getElementType().isInteger(1) ||
        tensorPart)
      return false;
    tensorPart = {id, when};
  }
  if (tensorPart && (f.boolMask >= 0 || f.bias >= 0)) {
    why = "more than one mask is applied to the scores";
    return false;
  }
  mergeIndexMask(f, merged);
  if (tensorPart) {
    f.boolMask = tensorPart->first;
    f.boolMaskKeepsTrue = !tensorPart->second;
  }
  masked =
      tensorPart.has_value() || merged.causal || merged.windowRel.has_value();
  regionParts.append(region.begin(), region.end());
  return true;
}

/// s + F == F for every score below 3.8e22 in `addType`: F = -inf, or
/// F <= -1e30 added in f32/bf16 (not f16, where -65504 + s moves with s past
/// |s| = 16).
static bool fillAbsorbsScores(double fill, Type addType) {
  return fill < 0 &&
         (std::isinf(fill) ||
          (fill <= -1e30 && addType && (addType.isF32() || addType.isBF16())));
}

/// Peels scale, additive masks and selects off the softmax input down to
/// the Q·K^T leaf. A chain of any length: the descent collects one step per
/// level (checks that decide the path first), the unwind applies them
/// innermost first, as the program applies them. `splitFills`: read
/// s + select(c, F, t) with a fill F that absorbs any score as a mask over
/// s + t (`*split` tells whether one was); the caller retries without where
/// that reading fails.
static bool analyzeScores(ScoreTracer &tr, int x, int mDim, int nDim,
                          ScoreFacts &f, std::string &why,
                          bool splitFills = false, bool *split = nullptr) {
  struct Step {
    enum { Scale, Add, Select, Mod } kind;
    bool div = false;
    double c = 0;
    int other = -1; ///< Add: the added term; Select: the condition;
                    ///< Mod: the score the modification reads
    bool maskedWhen = false;
    double fill = 0;
    int term = -1; ///< Mod: the modified score
    Type addType = {}; ///< Add: the element type of the addition
    int inner = -1;    ///< Select: the score it keeps
  };
  std::vector<int8_t> depCache;
  auto dependsOnScores = [&](int id) {
    return tr.containsLeaf(id, isContractionResult, &depCache);
  };
  // The one score term through which all of `t`'s score dependence goes
  // (a condition on the score counts as reading it), or -1.
  auto modInner = [&](const Term &t) {
    int inner = -1;
    for (int k : t.kids) {
      if (!dependsOnScores(k))
        continue;
      int cand = k;
      if (tr.get(k).kind == Term::Cmp) {
        cand = -1;
        for (int kk : tr.get(k).kids)
          if (dependsOnScores(kk)) {
            if (cand >= 0 && cand != kk)
              return -1;
            cand = kk;
          }
      }
      if (inner >= 0 && inner != cand)
        return -1;
      inner = cand;
    }
    return inner;
  };
  SmallVector<Step> path;
  // A score modification step: everything in `x` but its score input.
  auto pushMod = [&](int term) -> int {
    const Term &t = tr.get(term);
    if (t.kind == Term::Reduce || t.kind == Term::Softmax) {
      why = "the scores go through a reduction before the softmax, which is "
            "not an elementwise score modification";
      return -1;
    }
    int inner = modInner(t);
    if (inner < 0) {
      // Read along several paths (s * sigmoid(s), a select of two functions
      // of s): the input is the term nearest to `term` that every path to
      // the Q·K^T leaf goes through (at worst the leaf itself).
      auto reach = [&](int avoid, llvm::DenseSet<int> *all) {
        SmallVector<int> stack = {term};
        llvm::DenseSet<int> seen;
        SmallVector<int> leaves;
        while (!stack.empty()) {
          int id = stack.pop_back_val();
          if (id == avoid || !seen.insert(id).second || !dependsOnScores(id))
            continue;
          if (tr.get(id).kind == Term::Leaf)
            leaves.push_back(id);
          llvm::append_range(stack, tr.get(id).kids);
        }
        if (all)
          *all = std::move(seen);
        return leaves;
      };
      llvm::DenseSet<int> dependent;
      SmallVector<int> leaves = reach(-1, &dependent);
      if (leaves.size() != 1) {
        why = llvm::formatv("the scores go through '{0}', which reads Q·K^T "
                            "at more than one point",
                            t.name)
                  .str();
        return -1;
      }
      inner = leaves.front();
      // Dominators form a chain; the nearest one reaches the most terms.
      if (dependent.size() <= 256) {
        size_t best = 0;
        for (int d : dependent) {
          if (d == term || d == inner || !reach(d, nullptr).empty())
            continue;
          llvm::DenseSet<int> below;
          SmallVector<int> stack = {d};
          while (!stack.empty()) {
            int id = stack.pop_back_val();
            if (below.insert(id).second)
              llvm::append_range(stack, tr.get(id).kids);
          }
          if (below.size() > best) {
            best = below.size();
            inner = d;
          }
        }
      }
    }
    Step step{Step::Mod};
    step.term = term;
    step.other = inner;
    path.push_back(step);
    return inner;
  };
  for (;;) {
    x = tr.stripCasts(x);
    const Term &t = tr.get(x);
    if (t.kind == Term::Leaf) {
      if (!isContractionResult(t.leaf)) {
        why = "the softmax input is not computed from a Q·K^T contraction";
        return false;
      }
      f.base = x;
      break;
    }
    if (t.kind == Term::Binary &&
        (isName(t, "arith.mulf") || isName(t, "arith.divf"))) {
      bool div = isName(t, "arith.divf");
      int next = -1;
      for (int swap = 0; swap < (div ? 1 : 2) && next < 0; ++swap)
        if (std::optional<double> c = tr.constValue(t.kids[1 - swap])) {
          path.push_back({Step::Scale, div, *c});
          next = t.kids[swap];
        }
      if (next < 0)
        next = pushMod(x); // times a tensor or an expression
      if (next < 0)
        return false;
      x = next;
      continue;
    }
    if (t.kind == Term::Binary && isName(t, "arith.addf")) {
      int next = -1;
      for (int swap = 0; swap < 2 && next < 0; ++swap) {
        int s = t.kids[swap], b = t.kids[1 - swap];
        if (!dependsOnScores(s) || dependsOnScores(b))
          continue;
        // s + select(c, -inf, 0) is select(c, -inf, s) (torch.onnx's SDPA
        // adds Where(mask, 0, -inf)): a mask, not a modification.
        const Term &bt = tr.get(tr.stripCasts(b));
        if (bt.kind == Term::Select) {
          std::optional<double> a = tr.constValue(bt.kids[1]),
                                z = tr.constValue(bt.kids[2]);
          bool aInf = a && std::isinf(*a) && *a < 0,
               zInf = z && std::isinf(*z) && *z < 0;
          if ((aInf && z == 0.0) || (zInf && a == 0.0)) {
            Step step{Step::Select};
            step.other = tr.stripCasts(bt.kids[0]);
            step.maskedWhen = aInf;
            step.fill = -std::numeric_limits<double>::infinity();
            step.inner = s;
            path.push_back(step);
            next = s;
            break;
          }
          // s + select(c, F, t) is select(c, F, s + t) where s + F is F for
          // every score: F = -inf, or F <= -1e30 added in f32/bf16, whose
          // spacing there (2^76 at 1e30, 2^104 at finfo.min) swallows any
          // score below 3.8e22 (1e31 at finfo.min)
          // (Hugging Face's Where(attention_mask == 0, finfo.min,
          // causal_table) added to the scores: a padding mask over a causal
          // one, with the fill kept, so a row that masks every key averages
          // V over all of them, as the program's equal scores do). Not in
          // f16, where -65504 + s moves with s past |s| = 16.
          auto absorbs = [&](std::optional<double> v) {
            return v && fillAbsorbsScores(*v, t.type);
          };
          int kept = -1;
          if (splitFills && absorbs(a) && !z)
            kept = bt.kids[2];
          else if (splitFills && absorbs(z) && !a)
            kept = bt.kids[1];
          if (kept >= 0 && !dependsOnScores(kept) &&
              !dependsOnScores(bt.kids[0])) {
            Step sel{Step::Select};
            sel.other = tr.stripCasts(bt.kids[0]);
            sel.maskedWhen = absorbs(a);
            sel.fill = absorbs(a) ? *a : *z;
            path.push_back(sel);
            Step add{Step::Add};
            add.other = kept;
            add.addType = t.type;
            path.push_back(add);
            if (split)
              *split = true;
            next = s;
            break;
          }
        }
        // A tensor, a constant or a runtime scalar is a mask or a shift;
        // an expression (ALiBi's slope * (n - m)) is a score modification.
        if (bt.kind != Term::Leaf && bt.kind != Term::Const)
          break;
        Step step{Step::Add};
        step.other = b;
        step.addType = t.type;
        path.push_back(step);
        next = s;
      }
      if (next < 0)
        next = pushMod(x);
      if (next < 0)
        return false;
      x = next;
      continue;
    }
    if (t.kind == Term::Binary || t.kind == Term::Unary) {
      int next = pushMod(x);
      if (next < 0)
        return false;
      x = next;
      continue;
    }
    if (t.kind == Term::Select && !isNegInf(tr.constValue(t.kids[2])) &&
        !isNegInf(tr.constValue(t.kids[1]))) {
      int next = pushMod(x); // select(c, s, y) with a finite y
      if (next < 0)
        return false;
      x = next;
      continue;
    }
    if (t.kind == Term::Select) {
      // select(cond, x, -inf) keeps where cond; select(cond, -inf, x) masks.
      Step step{Step::Select};
      step.other = tr.stripCasts(t.kids[0]);
      if (isNegInf(tr.constValue(t.kids[2]))) {
        step.maskedWhen = false;
        step.fill = *tr.constValue(t.kids[2]);
        x = t.kids[1];
      } else if (isNegInf(tr.constValue(t.kids[1]))) {
        step.maskedWhen = true;
        step.fill = *tr.constValue(t.kids[1]);
        x = t.kids[2];
      } else {
        why = "the scores go through a select that does not mask with -inf";
        return false;
      }
      step.inner = x;
      path.push_back(step);
      continue;
    }
    why = "the softmax input is not scale * Q·K^T + mask";
    return false;
  }

  // A shift is softmax-invariant only if no modification follows it: a
  // modification applied later (outer in `path`) makes it part of the region.
  int64_t outermostMod = -1;
  for (auto [i, step] : llvm::enumerate(path))
    if (step.kind == Step::Mod) {
      outermostMod = i;
      break;
    }
  for (int64_t idx = static_cast<int64_t>(path.size()) - 1; idx >= 0; --idx) {
    const Step &step = path[idx];
    bool modLater = outermostMod >= 0 && outermostMod < idx;
    switch (step.kind) {
    case Step::Scale:
      if (f.bias >= 0 || f.boolMask >= 0 || f.causal) {
        why = "the mask is applied before the scale (scale * (Q·K^T + "
              "mask)); only scale * Q·K^T + mask is fused";
        return false;
      }
      if (step.div && step.c == 0.0) {
        why = "the scores are divided by zero";
        return false;
      }
      if (!f.mods.empty()) { // after a modification: part of it
        f.mods.push_back({-1, -1, step.c, step.div});
        break;
      }
      f.scale = step.div ? f.scale / step.c : f.scale * step.c;
      break;
    case Step::Mod: {
      // The op modifies the scores before masking them. Only an addition
      // commutes with a mask (-inf + x = -inf; a finite fill would move).
      if (f.bias >= 0 || f.boolMask >= 0 || f.causal || f.windowRel ||
          f.maskValue) {
        const Term &t = tr.get(step.term);
        bool additive = isName(t, "arith.addf") &&
                        llvm::is_contained(t.kids, step.other);
        if (!additive || (f.maskValue && !std::isinf(*f.maskValue))) {
          why = llvm::formatv("the scores are modified ('{0}') after they are "
                              "masked; only a modification before the mask "
                              "(or an addition after a -inf mask) is fused",
                              t.name)
                    .str();
          return false;
        }
      }
      f.mods.push_back({step.term, step.other});
      break;
    }
    case Step::Add: {
      int b = step.other;
      // The fused op adds the mask first and selects after; with a finite
      // fill the order shows (fill + -inf is -inf, not the fill).
      if (f.maskValue && !std::isinf(*f.maskValue) && !tr.constValue(b)) {
        why = "a finite mask fill is applied before an additive mask; only "
              "the other order is fused";
        return false;
      }
      if (std::optional<double> c = tr.constValue(b)) {
        // A constant shift leaves the softmax unchanged up to the rounding
        // of s + c: only small finite ones are dropped (±inf would turn
        // every score into ±inf; a large c rounds the scores away).
        if (modLater && std::isfinite(*c)) {
          f.mods.push_back({-1, -1, *c, /*div=*/false, /*add=*/true});
          break;
        }
        if (!std::isfinite(*c) || std::abs(*c) > 64.0) {
          why = llvm::formatv("the scores are shifted by a constant ({0}) "
                              "that is not finite or too large (|c| > 64) to "
                              "drop exactly",
                              *c)
                    .str();
          return false;
        }
        f.shifted = true;
        break;
      }
      int bl = tr.stripCasts(b);
      if (tr.get(bl).kind == Term::Leaf &&
          !isa<RankedTensorType>(tr.get(bl).leaf.getType())) {
        if (modLater) {
          why = "the scores are shifted by a runtime scalar before a score "
                "modification (not softmax-invariant there)";
          return false;
        }
        f.shifted = true; // so does a runtime scalar
        break;
      }
      if (tr.get(bl).kind != Term::Leaf) {
        why = "the additive mask is an expression, not a tensor";
        return false;
      }
      if (std::optional<ConstantMask> cm =
              getConstantMask(tr.get(bl), mDim, nDim)) {
        IndexMask constant;
        if (isCausalAdditiveMask(*cm, step.addType, constant) &&
            holdsOnEveryCorner(*cm, constant)) {
          mergeIndexMask(f, constant);
          double fill = [&] {
            std::optional<double> fill;
            for (int64_t m = 0; m < cm->M; ++m)
              for (int64_t n = 0; n < cm->N; ++n)
                if (double v = cm->value(m, n); v != 0.0) {
                  if (fill && *fill != v)
                    return std::numeric_limits<double>::quiet_NaN();
                  fill = v;
                }
            return fill.value_or(std::numeric_limits<double>::quiet_NaN());
          }();
          // Two tables: one fill only where both have the same.
          if (f.additiveCausal && f.additiveFill != fill)
            fill = std::numeric_limits<double>::quiet_NaN();
          f.additiveCausal = true;
          f.additiveFill = fill;
          f.additiveType = step.addType;
          break;
        }
      }
      if (f.bias >= 0) {
        why = "more than one additive mask is applied to the scores";
        return false;
      }
      f.bias = bl;
      break;
    }
    case Step::Select: {
      // The fill is kept exactly: a finite one (JAX's finfo.min) makes fully
      // masked rows average V, -inf makes them 0. Set after the inner scores
      // are analyzed: masks inside were applied before this one.
      if (f.maskValue && *f.maskValue != step.fill) {
        why = "the masks fill the scores with different values";
        return false;
      }
      std::optional<double> fillBefore = f.maskValue;
      f.maskValue = step.fill;
      int cond = step.other;
      // Parts that compare row data with key data (segment ids) become
      // select(part, s, fill) in the score_mod region, applied before the
      // op's masks: with the same fill they commute. Not under an additive
      // mask tensor with a finite fill (fill + bias is not the fill).
      auto toRegion = [&](ArrayRef<std::pair<int, bool>> parts) {
        if (step.inner < 0 || (f.bias >= 0 && !std::isinf(step.fill))) {
          why = "the scores are masked by a comparison of per-query and "
                "per-key data in a form not fused here (under a finite "
                "fill with an additive mask, or inside an addition)";
          return false;
        }
        Term fillTerm(Term::Const);
        fillTerm.value = step.fill;
        int fill = tr.compose(fillTerm);
        int cur = step.inner;
        for (auto [id, when] : parts) {
          Term sel(Term::Select);
          sel.kids = {id, when ? fill : cur, when ? cur : fill};
          cur = tr.compose(sel);
        }
        f.mods.push_back({cur, step.inner});
        f.regionMask = true;
        return true;
      };
      IndexMask im;
      unsigned budget = kIndexMaskBudget;
      auto merge = [&](const IndexMask &im) { mergeIndexMask(f, im); };
      if (classifyIndexMask(tr, cond, step.maskedWhen, mDim, nDim, im,
                            budget)) {
        merge(im);
        break;
      }
      const Term &c = tr.get(cond);
      if (c.kind == Term::Leaf) {
        std::optional<ConstantMask> cm = getConstantMask(c, mDim, nDim);
        IndexMask constant;
        if (cm && classifyConstantMask(*cm, step.maskedWhen, constant) &&
            holdsOnEveryCorner(*cm, constant)) {
          merge(constant);
          break;
        }
      }
      if (c.kind == Term::Leaf && isa<RankedTensorType>(c.leaf.getType()) &&
          cast<ShapedType>(c.leaf.getType()).getElementType().isInteger(1)) {
        if (f.boolMask >= 0 || f.bias >= 0) {
          why = "more than one mask is applied to the scores";
          return false;
        }
        f.boolMask = cond;
        f.boolMaskKeepsTrue = !step.maskedWhen;
        break;
      }
      // A combination (JAX's dot_product_attention ands the user's mask with
      // its own, all true without is_causal): a key is masked where any part
      // masks it, so each part is one of the forms above, and at most one is
      // a mask tensor.
      SmallVector<std::pair<int, bool>> regionParts;
      bool masked = false;
      if (applyMaskParts(tr, cond, step.maskedWhen, mDim, nDim, f, why,
                         regionParts, masked)) {
        if (regionParts.empty())
          break;
        if (!toRegion(regionParts))
          return false;
        if (!masked)
          f.maskValue = fillBefore;
        break;
      }
      if (!why.empty())
        return false;
      if (!dependsOnScores(cond) &&
          isRowKeyDataCondition(tr, cond, mDim, nDim)) {
        if (!toRegion({{cond, step.maskedWhen}}))
          return false;
        f.maskValue = fillBefore;
        break;
      }
      // Any other condition the program materializes as an i1 tensor (JAX's
      // padding masks from sequence lengths, anded with its own): that
      // tensor is the mask operand, computed by the program as before.
      if (!dependsOnScores(cond)) {
        if (std::optional<std::pair<Value, AffineMap>> t =
                tr.boolTensorOf(cond)) {
          if (f.boolMask >= 0 || f.bias >= 0) {
            why = "more than one mask is applied to the scores";
            return false;
          }
          f.boolMask = tr.leafTerm(t->first, t->second);
          f.boolMaskKeepsTrue = !step.maskedWhen;
          break;
        }
      }
      if (std::string no = divisionRefusalIn(tr, cond); !no.empty())
        why = "the scores are masked by position chunks the region cannot "
              "take: " +
              no;
      else if (c.kind == Term::Cmp && isName(c, "arith.cmpi"))
        why = "the scores are masked by an index comparison that is neither "
              "causal (n > m + K, K >= 0) nor a sliding window (m - n >= W)";
      else
        why = "the scores are masked by a condition that is neither causal "
              "nor a boolean mask tensor";
      return false;
    }
    }
  }
  // An additive constant causal mask never masks a whole row by itself, so
  // its fill does not show, and it is the op's causal rule. Beside another
  // mask a row may be masked by both: then each key keeps its own fill in
  // the program (the table's s + fill, or the other mask's), which the op's
  // one fill matches only where both are the same value and that value
  // absorbs the scores. Not beside a bias tensor or a mask moved into the
  // score_mod region (its keys take the region's fill, the table's -inf).
  if (f.additiveCausal && (f.bias >= 0 || f.maskValue || f.regionMask)) {
    bool absorbing = fillAbsorbsScores(f.additiveFill, f.additiveType);
    if (f.bias >= 0 || f.regionMask || !absorbing ||
        !(*f.maskValue == f.additiveFill)) {
      why = llvm::formatv(
                "a constant additive causal mask (fill {0}) beside {1}: rows "
                "both mask keep each key's own fill, which the op's single "
                "fill cannot",
                f.additiveFill,
                f.bias >= 0    ? std::string("an additive mask tensor")
                : f.regionMask ? std::string("a mask in the score_mod region")
                : !absorbing
                    ? std::string("another mask (its fill does not "
                                  "absorb the scores in this type)")
                    : llvm::formatv("a mask filling {0}", *f.maskValue).str())
                .str();
      return false;
    }
  }
  // A fill that absorbs the scores (s + F == F; a table's fill where rows
  // may be masked whole) was assumed for scores below 3.8e22 (-1e30's
  // spacing in f32; finfo.min's: 1e31), which a very large scale reaches
  // with ordinary inputs.
  if (((split && *split) || (f.additiveCausal && f.maskValue)) &&
      std::abs(f.scale) > 65536.0) {
    why = llvm::formatv("the scale ({0}) is too large for the mask's fill to "
                        "absorb every score",
                        f.scale)
              .str();
    return false;
  }
  // Windows are relative to the causal rule's diagonal: query m sits at
  // key m + K (bottom-right causal: K = N - M).
  if (f.causal)
    f.queryOffset = f.causalOffset;
  if (f.windowRel) {
    int64_t w = *f.windowRel + f.queryOffset;
    if (w < 1) {
      why = "the sliding window masks every key (m - n >= " +
            std::to_string(*f.windowRel) + " with the causal diagonal at n = m + " +
            std::to_string(f.queryOffset) + ")";
      return false;
    }
    f.window = w;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Score modifications
//===----------------------------------------------------------------------===//

namespace {
/// Turns the traced modification steps into ScoreModProgram nodes. The
/// walk is a worklist (bodies may be deep), each term emitted once per
/// step; constants take the type their consumer needs.
class ScoreModEmitter {
public:
  using NodeType = ScoreModNode::Type;
  static constexpr unsigned kMaxNodes = 4096;

  ScoreModEmitter(ScoreTracer &tr, ScoreModProgram &prog, std::string &why,
                  function_ref<int64_t(unsigned)> toLoop,
                  function_ref<int(const Term &)> operandOf)
      : tr(tr), prog(prog), why(why), toLoop(toLoop), operandOf(operandOf) {}

  /// Emits `term` with `inner` standing for the node `input`.
  int emit(int term, int inner, int input) {
    DenseMap<int, int> memo;
    memo[inner] = input;
    SmallVector<std::pair<int, bool>> stack = {{term, false}};
    while (!stack.empty()) {
      auto [id, kidsDone] = stack.pop_back_val();
      if (memo.count(id))
        continue;
      const Term &t = tr.get(id);
      if (!kidsDone && t.kind != Term::Const) {
        stack.push_back({id, true});
        for (int k : t.kids)
          if (!memo.count(k) && tr.get(k).kind != Term::Const)
            stack.push_back({k, false});
        continue;
      }
      int n = make(id, memo);
      if (n < 0)
        return -1;
      memo[id] = n;
    }
    return memo.lookup(term);
  }

  int add(ScoreModNode n) {
    if (prog.nodes.size() >= kMaxNodes) {
      why = "the score modification is too large (over " +
            std::to_string(kMaxNodes) + " ops)";
      return -1;
    }
    prog.nodes.push_back(std::move(n));
    return prog.nodes.size() - 1;
  }
  int constant(double v, NodeType type) {
    ScoreModNode n;
    n.kind = ScoreModNode::Const;
    n.value = v;
    n.type = type;
    return add(n);
  }
  int op(StringRef name, NodeType type, ArrayRef<int> operands,
         int64_t pred = -1) {
    ScoreModNode n;
    n.name = name;
    n.type = type;
    n.operands.assign(operands.begin(), operands.end());
    n.predicate = pred;
    return add(n);
  }

private:
  NodeType typeOf(int node) const { return prog.nodes[node].type; }

  /// The node for kid `k` of a term whose operands have type `want`.
  int kid(int k, NodeType want, DenseMap<int, int> &memo) {
    if (std::optional<double> c = tr.constValue(k);
        c && tr.get(tr.stripCasts(k)).kind == Term::Const)
      return constant(*c, want);
    return memo.lookup(k);
  }
  /// The type of the kids that are not constants (`dflt` if none).
  NodeType kidType(const Term &t, DenseMap<int, int> &memo, NodeType dflt,
                   unsigned from = 0) {
    for (unsigned i = from; i < t.kids.size(); ++i)
      if (tr.get(tr.stripCasts(t.kids[i])).kind != Term::Const)
        return typeOf(memo.lookup(t.kids[i]));
    return dflt;
  }

  int make(int id, DenseMap<int, int> &memo) {
    const Term &t = tr.get(id);
    auto unsupported = [&] {
      why = llvm::formatv("'{0}' in the score modification is not supported "
                          "(arith and math ops on f32, i64 and i1 are)",
                          t.name.empty() ? StringRef("a term") : t.name)
                .str();
      return -1;
    };
    switch (t.kind) {
    case Term::Const:
      return constant(t.value, NodeType::F32);
    case Term::Leaf: {
      if (isContractionResult(t.leaf)) {
        why = "the score modification reads Q·K^T other than through the "
              "score it modifies";
        return -1;
      }
      auto type = dyn_cast<RankedTensorType>(t.leaf.getType());
      if (!type) {
        why = "the score modification reads a runtime scalar (only tensors "
              "read through maps and constants are operands)";
        return -1;
      }
      Type elt = type.getElementType();
      if (!isa<FloatType>(elt) && !elt.isSignlessInteger() && !elt.isIndex()) {
        why = "a score modification operand is neither float nor integer";
        return -1;
      }
      int operand = operandOf(t);
      if (operand < 0)
        return -1;
      ScoreModNode n;
      n.kind = ScoreModNode::Operand;
      n.dim = operand;
      n.type = isa<FloatType>(elt)  ? NodeType::F32
               : elt.isInteger(1) ? NodeType::I1
                                  : NodeType::I64;
      return add(n);
    }
    case Term::Index: {
      auto d = dyn_cast<AffineDimExpr>(t.index);
      if (!d)
        return constant(0, NodeType::I64);
      int64_t loop = toLoop(d.getPosition());
      if (loop < 0) {
        why = "the score modification reads an index that is not a loop of "
              "the attention";
        return -1;
      }
      ScoreModNode n;
      n.kind = ScoreModNode::Index;
      n.dim = loop;
      n.type = NodeType::IndexT;
      int x = add(n);
      return x < 0 ? -1 : op("arith.index_cast", NodeType::I64, {x});
    }
    case Term::Unary: {
      if (t.name == "cast" || t.name == "icast")
        return memo.lookup(t.kids[0]);
      // Conversions of an integer, and |n - m| on the integer distance.
      if (t.name == "arith.sitofp" || t.name == "arith.uitofp" ||
          t.name == "math.absi") {
        int a = kid(t.kids[0], NodeType::I64, memo);
        if (a < 0 || typeOf(a) != NodeType::I64)
          return unsupported();
        return op(t.name, t.name == "math.absi" ? NodeType::I64 : NodeType::F32,
                  {a});
      }
      if (t.name == "arith.negf" || t.name.starts_with("math.")) {
        int a = kid(t.kids[0], NodeType::F32, memo);
        if (a < 0 || typeOf(a) != NodeType::F32)
          return unsupported();
        return op(t.name, NodeType::F32, {a});
      }
      return unsupported();
    }
    case Term::Binary: {
      StringRef name = t.name;
      NodeType type;
      if (name.ends_with("f"))
        type = NodeType::F32;
      else if (llvm::is_contained({"arith.addi", "arith.subi", "arith.muli"},
                                  name))
        type = NodeType::I64;
      else if (llvm::is_contained({"arith.andi", "arith.ori", "arith.xori"},
                                  name))
        type = kidType(t, memo, NodeType::I64);
      else if (isIndexDivision(name)) {
        // Position chunks (m / C == n / C, Llama 4's chunked attention):
        // integer division, remainder and shifts by constants only, so
        // that no score traps or shifts past the width.
        if (std::string no = indexDivisionRefusal(tr, t); !no.empty()) {
          why = no;
          return -1;
        }
        type = NodeType::I64;
      } else if (llvm::is_contained({"arith.maxsi", "arith.minsi"}, name))
        type = NodeType::I64;
      else
        return unsupported();
      int a = kid(t.kids[0], type, memo), b = kid(t.kids[1], type, memo);
      if (a < 0 || b < 0 || typeOf(a) != type || typeOf(b) != type)
        return unsupported();
      return op(name, type, {a, b});
    }
    case Term::Cmp: {
      NodeType type = t.name == "arith.cmpf" ? NodeType::F32
                                             : kidType(t, memo, NodeType::I64);
      int a = kid(t.kids[0], type, memo), b = kid(t.kids[1], type, memo);
      if (a < 0 || b < 0 || typeOf(a) != type || typeOf(b) != type)
        return unsupported();
      return op(t.name, NodeType::I1, {a, b}, t.pred);
    }
    case Term::Select: {
      NodeType type = kidType(t, memo, NodeType::F32, /*from=*/1);
      int c = kid(t.kids[0], NodeType::I1, memo);
      int a = kid(t.kids[1], type, memo), b = kid(t.kids[2], type, memo);
      if (c < 0 || a < 0 || b < 0 || typeOf(c) != NodeType::I1 ||
          typeOf(a) != type || typeOf(b) != type)
        return unsupported();
      return op("arith.select", type, {c, a, b});
    }
    case Term::Reduce:
    case Term::Softmax:
      why = "the score modification holds a reduction (it is not a function "
            "of one score and its indices)";
      return -1;
    }
    return unsupported();
  }

  ScoreTracer &tr;
  ScoreModProgram &prog;
  std::string &why;
  function_ref<int64_t(unsigned)> toLoop;
  function_ref<int(const Term &)> operandOf;
};
} // namespace

std::string ScoreModProgram::describe(unsigned numBatch) const {
  // Prefix form, bounded: "mulf(tanh(divf(s, 50)), 50)".
  std::vector<std::string> text(nodes.size());
  for (auto [i, n] : llvm::enumerate(nodes)) {
    std::string &out = text[i];
    switch (n.kind) {
    case ScoreModNode::Score:
      out = "s";
      break;
    case ScoreModNode::Index:
      out = n.dim < numBatch    ? "b" + std::to_string(n.dim)
            : n.dim == numBatch ? std::string("m")
                                : std::string("n");
      break;
    case ScoreModNode::Operand:
      out = "x" + std::to_string(n.dim);
      break;
    case ScoreModNode::Const: {
      char buf[32];
      snprintf(buf, sizeof(buf), "%g", n.value);
      out = buf;
      break;
    }
    case ScoreModNode::Op: {
      if (n.name == "arith.index_cast") {
        out = text[n.operands[0]];
        break;
      }
      StringRef name = n.name;
      name.consume_front("arith.");
      name.consume_front("math.");
      out = name.str() + "(";
      for (auto [j, o] : llvm::enumerate(n.operands))
        out += (j ? ", " : "") + text[o];
      out += ")";
      break;
    }
    }
    if (out.size() > 160)
      out = "...";
  }
  return result >= 0 ? text[result] : std::string();
}

/// Builds the program of the modification steps `mods` (innermost first).
static LogicalResult buildScoreMod(ScoreTracer &tr, ArrayRef<ScoreFacts::Mod> mods,
                                   ScoreModProgram &prog, std::string &why,
                                   function_ref<int64_t(unsigned)> toLoop,
                                   function_ref<int(const Term &)> operandOf) {
  ScoreModEmitter em(tr, prog, why, toLoop, operandOf);
  ScoreModNode score;
  score.kind = ScoreModNode::Score;
  int cur = em.add(score);
  for (const ScoreFacts::Mod &m : mods) {
    if (m.term < 0) {
      int c = em.constant(m.c, ScoreModNode::F32);
      cur = c < 0 ? -1
                  : em.op(m.add ? "arith.addf"
                          : m.div ? "arith.divf"
                                  : "arith.mulf",
                          ScoreModNode::F32, {cur, c});
    } else {
      cur = em.emit(m.term, m.inner, cur);
    }
    if (cur < 0)
      return failure();
  }
  if (prog.nodes[cur].type != ScoreModNode::F32) {
    why = "the score modification does not yield a float score";
    return failure();
  }
  prog.result = cur;
  return success();
}

/// True if `t` is log(sum_n exp(x - max_n x)) + max_n x over the scores x.
static bool isLseTerm(ScoreTracer &tr, int t, int x, int n) {
  const Term &add = tr.get(tr.stripCasts(t));
  if (add.kind != Term::Binary || !isName(add, "arith.addf"))
    return false;
  for (int swap = 0; swap < 2; ++swap) {
    const Term &lg = tr.get(tr.stripCasts(add.kids[swap]));
    int mx = tr.stripCasts(add.kids[1 - swap]);
    const Term &m = tr.get(mx);
    if (lg.kind != Term::Unary || !isName(lg, "math.log") ||
        m.kind != Term::Reduce || m.dim != n ||
        !(isName(m, "arith.maximumf") || isName(m, "arith.maxnumf")) ||
        tr.stripCasts(m.kids[0]) != tr.stripCasts(x))
      continue;
    const Term &sum = tr.get(tr.stripCasts(lg.kids[0]));
    if (sum.kind != Term::Reduce || !isName(sum, "arith.addf") || sum.dim != n)
      continue;
    std::optional<std::pair<int, int>> e = matchExpShifted(tr, sum.kids[0]);
    if (e && tr.stripCasts(e->first) == tr.stripCasts(x) && e->second == n &&
        tr.stripCasts(tr.get(tr.stripCasts(
                                  tr.get(tr.stripCasts(sum.kids[0])).kids[0]))
                          .kids[1]) == mx)
      return true;
  }
  return false;
}

/// Finds, among the values computed from the attention chain's reductions
/// by ops outside it, one that is the log-sum-exp of the softmax input `x`
/// (sharing the softmax's max and sum, or recomputing them), read over the
/// score dims without the key dim (or with it kept as a unit dim). On
/// success its ops join `chain` and `match.lse` is set; uses of the chain
/// that are not such an lse are left for the caller to refuse.
static LogicalResult matchLse(ScoreTracer &tr, int x, int64_t nPos,
                              unsigned rank, ArrayRef<int64_t> posToAttn,
                              Operation *root,
                              llvm::SetVector<Operation *> &chain,
                              AttentionMatch &match, std::string &why) {
  MLIRContext *ctx = root->getContext();
  // Candidates: results of elementwise ops a few steps after a chain op.
  SmallVector<Value> candidates;
  llvm::SmallPtrSet<Operation *, 8> seen;
  SmallVector<std::pair<Operation *, int>> work;
  for (Operation *op : chain)
    for (Operation *user : op->getUsers())
      if (user != root && !chain.contains(user))
        work.push_back({user, 0});
  if (work.empty())
    return success();
  while (!work.empty()) {
    auto [op, depth] = work.pop_back_val();
    if (depth > 8 || !seen.insert(op).second || op->getNumResults() != 1 ||
        op->getBlock() != root->getBlock())
      continue;
    candidates.push_back(op->getResult(0));
    for (Operation *user : op->getUsers())
      work.push_back({user, depth + 1});
  }
  for (Value v : candidates) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.getElementType().isF32())
      continue;
    // Score dims without n, in order; or all of them with n a unit dim.
    SmallVector<AffineExpr> res;
    int64_t keptN = -1;
    if (type.getRank() == static_cast<int64_t>(rank) - 1) {
      for (unsigned p = 0; p < rank; ++p)
        if (p != nPos)
          res.push_back(getAffineDimExpr(p, ctx));
    } else if (type.getRank() == static_cast<int64_t>(rank) &&
               type.getDimSize(nPos) == 1) {
      for (unsigned p = 0; p < rank; ++p)
        res.push_back(p == nPos ? getAffineConstantExpr(0, ctx)
                                : getAffineDimExpr(p, ctx));
      keptN = nPos;
    } else {
      continue;
    }
    int t = tr.trace(v, AffineMap::get(rank, 0, res, ctx));
    if (t < 0 || !isLseTerm(tr, t, x, nPos))
      continue;
    if (match.groups) {
      why = "the program's log-sum-exp is not fused with repeated K/V heads "
            "yet";
      return failure();
    }
    match.lse = v;
    match.lseKeptDim = keptN;
    match.lseLoops.clear();
    for (unsigned p = 0; p < rank; ++p)
      if (p != nPos)
        match.lseLoops.push_back(posToAttn[p]);
    // Its ops: the traced ones it is computed from (earlier candidates'
    // traces may have recorded some of them first).
    SmallVector<Operation *> stack;
    if (Operation *def = v.getDefiningOp())
      stack.push_back(def);
    while (!stack.empty()) {
      Operation *op = stack.pop_back_val();
      if (chain.contains(op) || !tr.ops.contains(op))
        continue;
      chain.insert(op);
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          stack.push_back(def);
    }
    if (Operation *def = v.getDefiningOp())
      chain.insert(def);
    return success();
  }
  return success();
}

bool mlir::attn::isSoftmaxCandidate(Operation *op) {
  if (isa<linalg::SoftmaxOp>(op))
    return true;
  auto lop = dyn_cast<linalg::LinalgOp>(op);
  if (!lop || linalg::isaContractionOpInterface(lop) || !lop.getBlock())
    return false;
  return llvm::any_of(lop.getBlock()->getOperations(),
                      [](Operation &o) { return isa<math::ExpOp>(o); });
}

//===----------------------------------------------------------------------===//
// Operand helpers
//===----------------------------------------------------------------------===//

static bool isZeroTensor(Value v) {
  std::optional<double> c = getSplatFloat(v);
  return c && *c == 0.0;
}

/// Composes `map` (results = dims of `transposed`) with the linalg.transpose
/// that produced it: the returned map indexes the transpose's input.
static AffineMap throughTranspose(linalg::TransposeOp t, AffineMap map) {
  ArrayRef<int64_t> perm = t.getPermutation();
  SmallVector<AffineExpr> results(perm.size());
  for (auto [outDim, inDim] : llvm::enumerate(perm))
    results[inDim] = map.getResult(outDim);
  return AffineMap::get(map.getNumDims(), 0, results, map.getContext());
}

namespace {
/// An operand of Q·K^T or P·V after looking through producers that only
/// permute or scale it.
struct PeeledOperand {
  Value value;
  AffineMap map; ///< over attention loops
  double scale = 1.0;
  SmallVector<Operation *> ops;
  /// FP8: `value` is the 8-bit tensor that the program dequantized
  /// (extf, times `dequantScale`); `plain*` is the operand before that step,
  /// used when the other operands are not dequantized alike.
  bool dequantized = false;
  double dequantScale = 1.0;
  SmallVector<RuntimeScaleFactor> dequantFactors; ///< runtime factors
  Value plainValue;
  AffineMap plainMap;
  double plainScale = 1.0;
  size_t plainOps = 0;
  Type f8Type() const {
    return dequantized ? cast<ShapedType>(value.getType()).getElementType()
                       : Type();
  }
};
} // namespace

/// `t` as x * c, c * x or x / c with c a finite nonzero constant: the
/// factor (c or 1 / c) and x's term.
static std::optional<std::pair<double, int>> constantFactor(ScoreTracer &tr,
                                                            const Term &t) {
  if (t.kind != Term::Binary ||
      !(isName(t, "arith.mulf") || isName(t, "arith.divf")))
    return std::nullopt;
  bool div = isName(t, "arith.divf");
  std::optional<double> c = tr.constValue(t.kids[1]);
  int x = t.kids[0];
  if (!c && !div) {
    c = tr.constValue(t.kids[0]);
    x = t.kids[1];
  }
  if (!c || *c == 0.0 || !std::isfinite(*c))
    return std::nullopt;
  return std::make_pair(div ? 1.0 / *c : *c, x);
}

/// `id` as one element of a float scalar or tensor that does not depend on
/// the score's position (a per-tensor scale given at run time), seen
/// through exact widenings only.
static std::optional<RuntimeScaleFactor> uniformFactor(ScoreTracer &tr,
                                                       int id) {
  const Term *t = &tr.get(id);
  while (t->kind == Term::Unary && isName(*t, "arith.extf"))
    t = &tr.get(t->kids[0]);
  if (t->kind != Term::Leaf)
    return std::nullopt;
  RuntimeScaleFactor f;
  f.source = t->leaf;
  Type elt = getElementTypeOrSelf(t->leaf.getType());
  if (!isa<FloatType>(elt) || attn::isFloat8(elt) ||
      elt.getIntOrFloatBitWidth() > 32)
    return std::nullopt;
  if (auto rt = dyn_cast<RankedTensorType>(t->leaf.getType())) {
    if (!rt.hasStaticShape() ||
        t->access.getNumResults() != static_cast<unsigned>(rt.getRank()))
      return std::nullopt;
    for (auto [i, e] : llvm::enumerate(t->access.getResults())) {
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (!c || c.getValue() < 0 || c.getValue() >= rt.getDimSize(i))
        return std::nullopt;
      f.indices.push_back(c.getValue());
    }
  } else if (t->access.getNumResults() != 0) {
    return std::nullopt;
  }
  return f;
}

/// Peels `x * c`, `c * x`, `x / c` factors off `id`, each a finite nonzero
/// constant (into `c`, as constantFactor) or a runtime scalar (into
/// `factors`). Returns x's term, or -1 where a product or quotient has no
/// such factor.
static int peelScaleFactors(ScoreTracer &tr, int id, double &c,
                            SmallVectorImpl<RuntimeScaleFactor> &factors) {
  while (true) {
    const Term &t = tr.get(id);
    if (t.kind != Term::Binary ||
        !(isName(t, "arith.mulf") || isName(t, "arith.divf")))
      return id;
    if (std::optional<std::pair<double, int>> f = constantFactor(tr, t)) {
      c *= f->first;
      id = f->second;
      continue;
    }
    bool div = isName(t, "arith.divf");
    std::optional<RuntimeScaleFactor> r = uniformFactor(tr, t.kids[1]);
    int x = t.kids[0];
    if (!r && !div) {
      r = uniformFactor(tr, t.kids[0]);
      x = t.kids[1];
    }
    if (!r)
      return -1;
    r->divide = div;
    factors.push_back(*r);
    id = x;
  }
}

/// Every op `tr` traced feeds only the traced chain or `consumer`.
static bool feedsOnly(ScoreTracer &tr, Operation *consumer) {
  return llvm::all_of(tr.ops, [&](Operation *op) {
    return llvm::all_of(op->getUsers(), [&](Operation *user) {
      return tr.ops.contains(user) || user == consumer;
    });
  });
}

/// The map over attention loops of a leaf read through `access` from a
/// value read through `map`.
static AffineMap throughAccess(AffineMap map, AffineMap access) {
  SmallVector<AffineExpr> res(access.getNumResults());
  for (unsigned i = 0; i < access.getNumResults(); ++i)
    res[i] = map.getResult(access.getDimPosition(i));
  return AffineMap::get(map.getNumDims(), 0, res, map.getContext());
}

/// Looks through single-use transposes and a multiplication/division by a
/// constant (scale on Q or K, as frontends often write it).
/// `broadcastBatchDims`: K and V may be read before a copy that repeats
/// them along batch dims (attention loops below that number), as torch's
/// repeat_kv (GQA) writes it once reshapes are folded.
static PeeledOperand peelOperand(Value v, AffineMap map, bool allowScale,
                                 unsigned broadcastBatchDims = 0) {
  PeeledOperand p;
  p.value = v;
  p.map = map;
  while (true) {
    if (!p.value.hasOneUse())
      return p;
    if (auto t = p.value.getDefiningOp<linalg::TransposeOp>()) {
      p.map = throughTranspose(t, p.map);
      p.value = t.getInput();
      p.ops.push_back(t);
      continue;
    }
    auto producer = p.value.getDefiningOp<linalg::LinalgOp>();
    if (!producer || linalg::isaContractionOpInterface(producer))
      return p;
    auto type = cast<RankedTensorType>(p.value.getType());
    ScoreTracer tr(v.getContext());
    int t = tr.trace(p.value, AffineMap::getMultiDimIdentityMap(
                                  type.getRank(), v.getContext()));
    if (t < 0)
      return p;
    const Term &term = tr.get(t);
    // A broadcasting copy drops only batch loops of the attention.
    auto dropsOnlyBatchDims = [&](AffineMap access) {
      if (!access.isProjectedPermutation())
        return false;
      llvm::SmallBitVector kept(access.getNumDims());
      for (unsigned i = 0; i < access.getNumResults(); ++i)
        kept.set(access.getDimPosition(i));
      for (unsigned d = 0; d < access.getNumDims(); ++d)
        if (!kept.test(d) &&
            cast<AffineDimExpr>(p.map.getResult(d)).getPosition() >=
                broadcastBatchDims)
          return false;
      return true;
    };
    // A transposing (or copying, or for K/V batch-broadcasting) generic:
    // read its input instead.
    if (term.kind == Term::Leaf && term.leaf != p.value &&
        (term.access.isPermutation() ||
         (broadcastBatchDims && dropsOnlyBatchDims(term.access))) &&
        p.map.isProjectedPermutation() &&
        cast<ShapedType>(term.leaf.getType()).getElementType() ==
            type.getElementType()) {
      p.map = throughAccess(p.map, term.access);
      p.value = term.leaf;
      llvm::append_range(p.ops, tr.ops);
      continue;
    }
    // FP8 dequantization, as frontends write it: an 8-bit float tensor
    // extended (to f16, bf16 or f32) and multiplied or divided by per-tensor
    // scales (constants, or runtime scalars: a scale tensor's one element,
    // as torch-mlir and JAX pass them), or extended only.
    if (!p.dequantized) {
      double c = 1.0;
      SmallVector<RuntimeScaleFactor> factors;
      int inner = peelScaleFactors(tr, tr.stripCasts(t), c, factors);
      int leafId = inner < 0 ? -1 : tr.stripCasts(inner);
      const Term *leaf = leafId < 0 ? nullptr : &tr.get(leafId);
      if (leaf && leaf->kind == Term::Leaf &&
          attn::isFloat8(leaf->leaf.getType()) && !attn::isFloat8(type) &&
          (leaf->access.isPermutation() ||
           (broadcastBatchDims && dropsOnlyBatchDims(leaf->access))) &&
          p.map.isProjectedPermutation()) {
        if (feedsOnly(tr, *p.value.getUsers().begin())) {
          p.plainValue = p.value;
          p.plainMap = p.map;
          p.plainScale = p.scale;
          p.plainOps = p.ops.size();
          p.map = throughAccess(p.map, leaf->access);
          p.value = leaf->leaf;
          p.dequantized = true;
          p.dequantFactors = std::move(factors);
          p.dequantScale = c;
          llvm::append_range(p.ops, tr.ops);
          continue;
        }
      }
    }
    std::optional<std::pair<double, int>> f =
        allowScale ? constantFactor(tr, term) : std::nullopt;
    if (!f)
      return p;
    const Term &leaf = tr.get(f->second); // no casts: the leaf keeps Q's type
    if (leaf.kind != Term::Leaf || !leaf.access.isPermutation() ||
        cast<ShapedType>(leaf.leaf.getType()).getElementType() !=
            type.getElementType())
      return p;
    // Every traced op must feed only this chain (ending in p.value's user).
    if (!feedsOnly(tr, *p.value.getUsers().begin()))
      return p;
    p.map = throughAccess(p.map, leaf.access);
    p.value = leaf.leaf;
    p.scale *= f->first;
    llvm::append_range(p.ops, tr.ops);
  }
}

namespace {
/// K or V as collapse_shape(broadcast(src)) merging (kv heads, group).
struct RepeatedHeads {
  Value src;
  SmallVector<int64_t> srcLoops; ///< attention loop per src dim, -1: kv head
  unsigned headLoop = 0;         ///< the attention loop of the merged head dim
  int64_t kvHeads = 0, groups = 0;
  SmallVector<Operation *> ops;
};
} // namespace

/// A `tensor.reshape` by a shape the program computes (torch-mlir's with
/// dynamic axes) that merges two adjacent static dims and keeps the others:
/// the collapse it stands for. Each dynamic dim is proven the source's
/// (IndexArith) but at most one, which the element count then fixes.
static std::optional<SmallVector<ReassociationIndices>>
reshapeAsCollapse(tensor::ReshapeOp rs) {
  auto src = dyn_cast<RankedTensorType>(rs.getSource().getType());
  auto res = dyn_cast<RankedTensorType>(rs.getResult().getType());
  auto elems = rs.getShape().getDefiningOp<tensor::FromElementsOp>();
  if (!src || !res || !elems || src.getRank() != res.getRank() + 1)
    return std::nullopt;
  for (int64_t j = 0; j < res.getRank(); ++j) {
    if (src.isDynamicDim(j) || src.isDynamicDim(j + 1) || res.isDynamicDim(j) ||
        res.getDimSize(j) != src.getDimSize(j) * src.getDimSize(j + 1))
      continue;
    int unproven = 0;
    bool ok = true;
    for (int64_t i = 0; i < res.getRank() && ok; ++i) {
      if (i == j)
        continue;
      int64_t si = i < j ? i : i + 1;
      if (!res.isDynamicDim(i) || !src.isDynamicDim(si)) {
        ok = res.getDimSize(i) == src.getDimSize(si);
        continue;
      }
      std::optional<LinearSize> want = evalDimSize(rs.getSource(), si);
      std::optional<LinearSize> got = evalLinearSize(elems.getElements()[i]);
      if (!want || !got || !(*want == *got))
        ++unproven;
    }
    if (!ok || unproven > 1)
      continue;
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i < res.getRank(); ++i) {
      int64_t si = i <= j ? i : i + 1;
      if (i == j)
        groups.push_back({si, si + 1});
      else
        groups.push_back({si});
    }
    return groups;
  }
  return std::nullopt;
}

static std::optional<RepeatedHeads> matchRepeatedHeads(Value v, AffineMap map) {
  Operation *reshape = nullptr;
  Value b;
  SmallVector<ReassociationIndices> groups;
  if (auto col = v.getDefiningOp<tensor::CollapseShapeOp>()) {
    reshape = col;
    b = col.getSrc();
    groups = col.getReassociationIndices();
  } else if (auto rs = v.getDefiningOp<tensor::ReshapeOp>()) {
    std::optional<SmallVector<ReassociationIndices>> g = reshapeAsCollapse(rs);
    if (!g)
      return std::nullopt;
    reshape = rs;
    b = rs.getSource();
    groups = std::move(*g);
  }
  if (!reshape || !v.hasOneUse())
    return std::nullopt;
  auto bop = b.getDefiningOp<linalg::LinalgOp>();
  if (!bop || !b.hasOneUse() || bop.getNumDpsInputs() != 1 ||
      bop.getNumDpsInits() != 1 ||
      bop.getNumParallelLoops() != bop.getNumLoops() ||
      !bop.hasPureTensorSemantics())
    return std::nullopt;
  Value yielded = bop.getBlock()->getTerminator()->getOperand(0);
  if (yielded != bop.getBlock()->getArgument(0))
    return std::nullopt; // not a pure broadcast
  AffineMap out = bop.getMatchingIndexingMap(bop.getDpsInitOperand(0));
  AffineMap in = bop.getMatchingIndexingMap(bop.getDpsInputOperand(0));
  if (!out.isIdentity() || !in.isProjectedPermutation(false))
    return std::nullopt;
  auto bType = cast<RankedTensorType>(b.getType());
  int64_t merged = -1;
  for (auto [j, g] : llvm::enumerate(groups)) {
    if (g.size() == 1)
      continue;
    if (g.size() != 2 || merged >= 0)
      return std::nullopt;
    merged = j;
  }
  if (merged < 0)
    return std::nullopt;
  int64_t a = groups[merged][0], rep = groups[merged][1];
  if (!in.isFunctionOfDim(a) || in.isFunctionOfDim(rep) ||
      bType.isDynamicDim(a) || bType.isDynamicDim(rep))
    return std::nullopt;
  RepeatedHeads r;
  r.src = bop.getDpsInputOperand(0)->get();
  r.headLoop = map.getDimPosition(merged);
  r.kvHeads = bType.getDimSize(a);
  r.groups = bType.getDimSize(rep);
  for (unsigned p = 0; p < in.getNumResults(); ++p) {
    int64_t q = in.getDimPosition(p);
    if (q == a) {
      r.srcLoops.push_back(-1);
      continue;
    }
    int64_t j = llvm::find_if(groups, [&](const ReassociationIndices &g) {
                  return llvm::is_contained(g, q);
                }) - groups.begin();
    r.srcLoops.push_back(map.getDimPosition(j));
  }
  r.ops = {reshape, bop};
  return r;
}

/// Rewrites `match` so the repeated K (and V) heads are read before the
/// repeat: the head loop h splits into (kv head, group), the other operands
/// that index h are viewed through an expand_shape.
static LogicalResult splitRepeatedHeads(AttentionMatch &match,
                                        const RepeatedHeads &rk,
                                        const std::optional<RepeatedHeads> &rv,
                                        std::string &why) {
  MLIRContext *ctx = match.queryMap.getContext();
  unsigned h = rk.headLoop;
  if (h >= match.numBatch) {
    why = "the repeated K/V dimension is not a batch (head) dimension";
    return failure();
  }
  unsigned numLoops = match.queryMap.getNumDims() + 1;
  auto renumber = [&](unsigned i) { return i <= h ? i : i + 1; };
  // Old map -> new map; the operand dim indexed by h (if any) is split.
  auto split = [&](AffineMap &m, int64_t &expandDim, Value v) -> LogicalResult {
    SmallVector<AffineExpr> res;
    expandDim = -1;
    for (auto [p, e] : llvm::enumerate(m.getResults())) {
      unsigned i = cast<AffineDimExpr>(e).getPosition();
      if (i == h) {
        auto t = cast<RankedTensorType>(v.getType());
        if (t.getDimSize(p) != rk.kvHeads * rk.groups) {
          why = "the repeated heads do not match the query heads";
          return failure();
        }
        expandDim = p;
        res.push_back(getAffineDimExpr(h, ctx));
        res.push_back(getAffineDimExpr(h + 1, ctx));
        continue;
      }
      res.push_back(getAffineDimExpr(renumber(i), ctx));
    }
    m = AffineMap::get(numLoops, 0, res, ctx);
    return success();
  };
  auto srcMap = [&](const RepeatedHeads &r) {
    SmallVector<AffineExpr> res;
    for (int64_t l : r.srcLoops)
      res.push_back(getAffineDimExpr(l < 0 ? h : renumber(l), ctx));
    return AffineMap::get(numLoops, 0, res, ctx);
  };
  if (rv && (rv->headLoop != h || rv->groups != rk.groups)) {
    why = "K and V repeat their heads differently";
    return failure();
  }
  AffineMap qm = match.queryMap, om = match.outputMap, vm = match.valueMap;
  if (failed(split(qm, match.queryExpandDim, match.query)) ||
      failed(split(om, match.outputExpandDim, match.init)))
    return failure();
  match.queryMap = qm;
  match.outputMap = om;
  if (rv) {
    match.value = rv->src;
    match.valueMap = srcMap(*rv);
  } else {
    if (failed(split(vm, match.valueExpandDim, match.value)))
      return failure();
    match.valueMap = vm;
  }
  match.key = rk.src;
  match.keyMap = srcMap(rk);
  match.splitHeadLoop = h;
  if (!match.scoreMod.operands.empty()) {
    why = "a score modification that reads tensors is not fused with "
          "repeated K/V heads yet";
    return failure();
  }
  if (match.mask) {
    AffineMap mm = match.maskMap;
    if (failed(split(mm, match.maskExpandDim, match.mask)))
      return failure();
    match.maskMap = mm;
  }
  if (match.sink) {
    AffineMap sm = match.sinkMap;
    if (failed(split(sm, match.sinkExpandDim, match.sink)))
      return failure();
    match.sinkMap = sm;
  }
  if ((match.mask && !match.maskUnitDims.empty() && match.maskExpandDim >= 0) ||
      (match.sink && !match.sinkUnitDims.empty() && match.sinkExpandDim >= 0)) {
    why = "a mask with broadcast unit dims indexes the repeated heads";
    return failure();
  }
  match.numBatch += 1;
  match.kvHeads = rk.kvHeads;
  match.groups = rk.groups;
  return success();
}

//===----------------------------------------------------------------------===//
// The matcher
//===----------------------------------------------------------------------===//

std::string AttentionMatch::describe() const {
  std::string maskStr = "none";
  if (mask) {
    bool isBool = cast<ShapedType>(mask.getType()).getElementType().isInteger(1);
    maskStr = isBool ? "boolean over (" : "additive over (";
    for (unsigned i = 0; i < maskMap.getNumResults(); ++i) {
      unsigned d = cast<AffineDimExpr>(maskMap.getResult(i)).getPosition();
      if (i)
        maskStr += ",";
      maskStr += d < numBatch ? "b" + std::to_string(d)
                              : std::string(1, "mnde"[d - numBatch]);
    }
    maskStr += ")";
  }
  auto elt = [](Value v) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << cast<ShapedType>(v.getType()).getElementType();
    return s;
  };
  char scaleStr[32];
  snprintf(scaleStr, sizeof(scaleStr), "%g", scale);
  std::string causalStr = causal ? "yes" : "no";
  if (queryOffset)
    causalStr += " (bottom right: query m at key m + " +
                 std::to_string(queryOffset) + ")";
  if (sink)
    maskStr += ", sink";
  if (groups)
    maskStr += ", kv heads " + std::to_string(kvHeads) + " x group " +
               std::to_string(groups);
  if (window)
    causalStr += ", window=" + std::to_string(*window);
  if (attn::isFloat8(query.getType())) {
    char vs[32];
    snprintf(vs, sizeof(vs), "%g", valueScale);
    maskStr += std::string(", fp8 (dequantization folded, value scale ") + vs;
    // Runtime scales: how many scalars multiply (or divide) each constant.
    if (!scaleFactors.empty() || !valueScaleFactors.empty())
      maskStr += llvm::formatv("; runtime per-tensor scales: {0} in the "
                               "scale, {1} in the value scale",
                               scaleFactors.size(), valueScaleFactors.size())
                     .str();
    maskStr += ")";
  }
  if (fromAdditiveMask)
    causalStr += " (from a constant additive 0 / finfo.min mask)";
  if (!scoreMod.empty())
    maskStr += ", score_mod=" +
               scoreMod.describe(splitHeadLoop >= 0 ? numBatch - 1 : numBatch);
  return llvm::formatv("scale={0}, mask={1}, causal={2}{3}, batch dims={4}, "
                       "dtype {5} -> {6}{7}",
                       scaleStr, maskStr, causalStr,
                       guarded ? ", guarded rows" : "", numBatch, elt(query),
                       elt(root->getResult(0)), lse ? ", lse" : "")
      .str();
}

/// The matcher proper. `queryChoice` picks which P-only dim is the query
/// axis when there are several (0: innermost); `numChoices` reports how many
/// there are.
static FailureOr<AttentionMatch> matchWithQueryChoice(Operation *root,
                                                      std::string &why,
                                                      unsigned queryChoice,
                                                      unsigned &numChoices) {
  auto fail = [&](const Twine &msg) -> FailureOr<AttentionMatch> {
    why = msg.str();
    return failure();
  };
  MLIRContext *ctx = root->getContext();
  auto pv = dyn_cast<linalg::LinalgOp>(root);
  if (!pv || pv.getNumDpsInputs() != 2 || pv.getNumDpsInits() != 1 ||
      !pv.hasPureTensorSemantics() || !linalg::isaContractionOpInterface(pv))
    return fail("the softmax result is not consumed by a contraction (P·V) on "
                "tensors");
  FailureOr<linalg::ContractionDimensions> pvDims =
      linalg::inferContractionDims(pv);
  if (failed(pvDims))
    return fail("P·V is not a contraction");

  // Which operand is P? Trace both; the one that is a softmax wins.
  ScoreTracer tr(ctx);
  std::optional<SoftmaxFacts> sm;
  OpOperand *pOperand = nullptr;
  std::string firstWhy;
  for (OpOperand *in : pv.getDpsInputOperands()) {
    auto type = cast<RankedTensorType>(in->get().getType());
    ScoreTracer candidate(ctx);
    int p = candidate.trace(in->get(), AffineMap::getMultiDimIdentityMap(
                                           type.getRank(), ctx));
    std::string smWhy = candidate.why;
    if (p >= 0)
      sm = matchSoftmaxTerm(candidate, p, smWhy);
    if (sm) {
      pOperand = in;
      tr = std::move(candidate);
      break;
    }
    if (firstWhy.empty() || firstWhy == "no softmax feeds this contraction")
      firstWhy = smWhy;
  }
  if (!pOperand)
    return fail(firstWhy.empty() ? "no softmax feeds this contraction"
                                 : firstWhy);
  OpOperand *vOperand =
      pv.getDpsInputOperand(pOperand->getOperandNumber() == 0 ? 1 : 0);
  if (!isZeroTensor(pv.getDpsInitOperand(0)->get()))
    return fail("the P·V accumulator is not zero-initialized");
  if (pvDims->k.size() != 1)
    return fail("P·V must contract exactly one dimension (the keys)");

  AffineMap pMap = pv.getMatchingIndexingMap(pOperand);
  AffineMap vMapPV = pv.getMatchingIndexingMap(vOperand);
  AffineMap oMapPV = pv.getMatchingIndexingMap(pv.getDpsInitOperand(0));
  if (!pMap.isProjectedPermutation(false) ||
      !vMapPV.isProjectedPermutation(false) ||
      !oMapPV.isProjectedPermutation(false))
    return fail("P·V indexing maps are not projected permutations");
  bool pIsLhs = pOperand->getOperandNumber() == 0;
  ArrayRef<unsigned> pvM = pIsLhs ? pvDims->m : pvDims->n;
  ArrayRef<unsigned> pvE = pIsLhs ? pvDims->n : pvDims->m;
  // Several P-only dims: one is the query axis, the others are batch dims
  // V does not index (query heads sharing a K/V head).
  if (pvM.empty() || pvE.size() != 1)
    return fail("P·V must have a query dimension and exactly one value "
                "dimension");
  if (pvDims->batch.size() + pvM.size() + 2 != pv.getNumLoops())
    return fail("P·V has dimensions that are neither batch, query, key nor "
                "value dimensions");

  unsigned rank = pMap.getNumResults();
  unsigned numBatch = rank - 2;
  unsigned kDim = pvDims->k.front();
  int64_t nPos = -1, mPos = -1;
  SmallVector<int64_t> queryCandidates; // P-only dims, innermost first
  for (unsigned i = 0; i < rank; ++i) {
    unsigned d = pMap.getDimPosition(i);
    if (d == kDim)
      nPos = i;
    else if (llvm::is_contained(pvM, d))
      queryCandidates.insert(queryCandidates.begin(), i);
  }
  numChoices = queryCandidates.size();
  if (queryChoice >= numChoices)
    return fail("no query dimension left to try");
  // The others are batch dims K and V do not index (grouped heads).
  mPos = queryCandidates[queryChoice];
  if (sm->n != nPos)
    return fail(llvm::formatv("the softmax normalizes dimension {0} of the "
                              "scores but P·V contracts dimension {1}: the "
                              "softmax is not over the key axis",
                              sm->n, nPos));

  // Score position -> attention dimension (b..., m, n).
  SmallVector<int64_t> posToAttn(rank);
  for (unsigned i = 0, b = 0; i < rank; ++i)
    posToAttn[i] = i == (unsigned)mPos   ? numBatch
                   : i == (unsigned)nPos ? numBatch + 1
                                         : b++;
  unsigned numLoops = numBatch + 4;
  auto remap = [&](AffineMap map, ArrayRef<int64_t> loopToAttn) {
    SmallVector<AffineExpr> res;
    for (AffineExpr e : map.getResults())
      res.push_back(getAffineDimExpr(
          loopToAttn[cast<AffineDimExpr>(e).getPosition()], ctx));
    return AffineMap::get(numLoops, 0, res, ctx);
  };
  SmallVector<int64_t> pvToAttn(pv.getNumLoops(), -1);
  for (unsigned i = 0; i < rank; ++i)
    pvToAttn[pMap.getDimPosition(i)] = posToAttn[i];
  pvToAttn[pvE.front()] = numBatch + 3;
  if (llvm::is_contained(pvToAttn, -1))
    return fail("P·V has a dimension that P does not index");

  // Attention sinks: softmax over concat(S, sink) along the keys with the
  // sink column sliced off before P·V.
  int sinkTerm = -1;
  Operation *sinkConcat = nullptr;
  {
    const Term &xt = tr.get(tr.stripCasts(sm->x));
    auto cat = xt.kind == Term::Leaf
                   ? xt.leaf.getDefiningOp<tensor::ConcatOp>()
                   : tensor::ConcatOp();
    if (cat) {
      auto catDim = dyn_cast<AffineDimExpr>(xt.access.getResult(cat.getDim()));
      if (!catDim || (int64_t)catDim.getPosition() != nPos ||
          cat.getInputs().size() != 2)
        return fail("the scores are concatenated along a dimension other "
                    "than the keys, or with more than one extra column");
      Value s0 = cat.getInputs()[0], s1 = cat.getInputs()[1];
      auto t1 = cast<RankedTensorType>(s1.getType());
      if (t1.getDimSize(cat.getDim()) != 1 || tr.slices.size() != 1 ||
          !slicesBackTo(cast<tensor::ExtractSliceOp>(tr.slices.front()), s0))
        return fail("the scores get an extra column that is not an attention "
                    "sink sliced off before P·V");
      sinkConcat = cat;
      AffineMap access = xt.access; // trace() grows the term list
      sm->x = tr.trace(s0, access);
      sinkTerm = tr.trace(s1, access);
      if (sm->x < 0 || sinkTerm < 0)
        return fail(tr.why);
      sinkTerm = tr.stripCasts(sinkTerm);
      const Term &st = tr.get(sinkTerm);
      if (st.kind != Term::Leaf || st.access.isFunctionOfDim(nPos))
        return fail("the extra score column is not one sink logit per row");
    } else if (!tr.slices.empty()) {
      return fail("the probabilities are sliced between the softmax and P·V");
    }
  }

  // The scores: scale, masks, then Q·K^T.
  ScoreFacts sf;
  bool split = false;
  if (!analyzeScores(tr, sm->x, mPos, nPos, sf, why, /*splitFills=*/true,
                     &split)) {
    if (!split)
      return failure();
    sf = ScoreFacts();
    why.clear();
    if (!analyzeScores(tr, sm->x, mPos, nPos, sf, why))
      return failure();
  }
  if (sf.shifted && sinkTerm >= 0)
    return fail("the scores are shifted by a constant, which changes their "
                "weight against the attention sink");
  const Term &base = tr.get(sf.base);
  if (!base.access.isPermutation())
    return fail("the scores broadcast the Q·K^T result");
  auto qk = base.leaf.getDefiningOp<linalg::LinalgOp>();
  if (qk.getNumDpsInputs() != 2 || qk.getNumDpsInits() != 1)
    return fail("the softmax input is not computed from a Q·K^T contraction");
  if (!isZeroTensor(qk.getDpsInitOperand(0)->get()))
    return fail("the Q·K^T accumulator is not zero-initialized");
  FailureOr<linalg::ContractionDimensions> qkDims =
      linalg::inferContractionDims(qk);
  if (failed(qkDims) || qkDims->k.size() != 1)
    return fail("Q·K^T must contract exactly one dimension (the head dim)");
  if (qkDims->m.empty() || qkDims->n.empty() ||
      qkDims->batch.size() + qkDims->m.size() + qkDims->n.size() + 1 !=
          qk.getNumLoops())
    return fail("Q·K^T must have query, key and batch dimensions only");
  AffineMap sMap = qk.getMatchingIndexingMap(qk.getDpsInitOperand(0));
  if (!sMap.isProjectedPermutation(false) || sMap.getNumResults() != rank)
    return fail("Q·K^T writes its result through a non-permutation map");
  // QK loop -> attention dim, through the score position each output dim
  // is read at.
  SmallVector<int64_t> qkToAttn(qk.getNumLoops(), -1);
  unsigned qkM = 0, qkN = 0;
  for (unsigned p = 0; p < rank; ++p) {
    unsigned scorePos = base.access.getDimPosition(p);
    unsigned loop = sMap.getDimPosition(p);
    qkToAttn[loop] = posToAttn[scorePos];
    if (scorePos == (unsigned)mPos)
      qkM = loop;
    if (scorePos == (unsigned)nPos)
      qkN = loop;
    if (scorePos != (unsigned)mPos && scorePos != (unsigned)nPos &&
        !llvm::is_contained(qkDims->batch, loop) &&
        !llvm::is_contained(qkDims->m, loop) &&
        !llvm::is_contained(qkDims->n, loop))
      return fail("a batch dimension of the scores is not a batch dimension "
                  "of Q·K^T");
  }
  qkToAttn[qkDims->k.front()] = numBatch + 2;
  OpOperand *qOperand = nullptr, *kOperand = nullptr;
  for (OpOperand *in : qk.getDpsInputOperands()) {
    AffineMap m = qk.getMatchingIndexingMap(in);
    if (m.isFunctionOfDim(qkM) && !m.isFunctionOfDim(qkN))
      qOperand = in;
    if (m.isFunctionOfDim(qkN) && !m.isFunctionOfDim(qkM))
      kOperand = in;
  }
  if (!qOperand || !kOperand || qOperand == kOperand)
    return fail("the scores' query and key axes do not come from different "
                "operands of Q·K^T");
  // K may omit batch dims of Q (grouped heads) but must not add any.
  {
    AffineMap qm = qk.getMatchingIndexingMap(qOperand);
    AffineMap km = qk.getMatchingIndexingMap(kOperand);
    for (AffineExpr e : km.getResults()) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      if (d != qkN && !qm.isFunctionOfDim(d))
        return fail("K has a dimension that Q and the scores lack");
    }
  }
  for (OpOperand *in : qk.getDpsInputOperands())
    if (!qk.getMatchingIndexingMap(in).isProjectedPermutation(false))
      return fail("Q·K^T reads an operand through a non-permutation map");

  auto supported = [](Value v, bool allowBool = false) {
    Type t = cast<ShapedType>(v.getType()).getElementType();
    return t.isF32() || t.isF16() || t.isBF16() || (allowBool && t.isInteger(1));
  };

  AttentionMatch match;
  match.numBatch = numBatch;
  match.root = root;
  match.qkContraction = qk;
  match.init = pv.getDpsInitOperand(0)->get();
  match.causal = sf.causal;
  match.fromAdditiveMask = sf.additiveCausal;
  match.window = sf.window;
  match.queryOffset = sf.queryOffset;
  if (sf.maskValue && !std::isinf(*sf.maskValue))
    match.maskValue = sf.maskValue;
  match.guarded = sm->guarded;
  PeeledOperand q = peelOperand(
      qOperand->get(), remap(qk.getMatchingIndexingMap(qOperand), qkToAttn),
      /*allowScale=*/true);
  PeeledOperand k = peelOperand(
      kOperand->get(), remap(qk.getMatchingIndexingMap(kOperand), qkToAttn),
      /*allowScale=*/true, numBatch);
  PeeledOperand v = peelOperand(vOperand->get(), remap(vMapPV, pvToAttn),
                                /*allowScale=*/false, numBatch);
  // FP8 only when Q, K and V are all dequantized from one 8-bit type (the
  // kernels multiply 8-bit by 8-bit); otherwise the dequantizations stay
  // in the program and the op takes their results.
  if (q.dequantized || k.dequantized || v.dequantized) {
    if (q.f8Type() && q.f8Type() == k.f8Type() && q.f8Type() == v.f8Type()) {
      q.scale *= q.dequantScale;
      k.scale *= k.dequantScale;
      match.valueScale = v.dequantScale;
      llvm::append_range(match.scaleFactors, q.dequantFactors);
      llvm::append_range(match.scaleFactors, k.dequantFactors);
      match.valueScaleFactors = v.dequantFactors;
    } else {
      for (PeeledOperand *p : {&q, &k, &v})
        if (p->dequantized) {
          p->value = p->plainValue;
          p->map = p->plainMap;
          p->scale = p->plainScale;
          p->ops.resize(p->plainOps); // the dequantization stays alive
          p->dequantized = false;
        }
    }
  }
  match.query = q.value;
  match.queryMap = q.map;
  match.key = k.value;
  match.keyMap = k.map;
  match.value = v.value;
  match.valueMap = v.map;
  match.scale = sf.scale * q.scale * k.scale;
  match.outputMap = remap(oMapPV, pvToAttn);
  for (Value val : {match.query, match.key, match.value, match.init})
    if (!supported(val) && !(val != match.init && q.dequantized))
      return fail("an operand has an element type other than f32, f16 or "
                  "bf16");

  // A leaf read from score space becomes an operand with a map over the
  // attention loops; fixed (unit) indices are recorded to be sliced away.
  auto leafOperand = [&](const Term &lt, Value &value, AffineMap &map,
                         SmallVector<int64_t> &unitDims) -> LogicalResult {
    SmallVector<AffineExpr> res;
    auto type = cast<RankedTensorType>(lt.leaf.getType());
    for (auto [i, e] : llvm::enumerate(lt.access.getResults())) {
      if (auto c = dyn_cast<AffineConstantExpr>(e)) {
        if (c.getValue() != 0 || type.getDimSize(i) != 1) {
          why = "a mask or sink is read at a fixed index of a dimension that "
                "is not of size 1";
          return failure();
        }
        unitDims.push_back(i);
        continue;
      }
      res.push_back(getAffineDimExpr(
          posToAttn[cast<AffineDimExpr>(e).getPosition()], ctx));
    }
    map = AffineMap::get(numLoops, 0, res, ctx);
    if (!map.isProjectedPermutation(false)) {
      why = "a mask or sink is read twice along one dimension";
      return failure();
    }
    value = lt.leaf;
    return success();
  };
  int maskTerm = sf.bias >= 0 ? sf.bias : sf.boolMask;
  if (maskTerm >= 0) {
    const Term &mt = tr.get(maskTerm);
    if (!supported(mt.leaf, /*allowBool=*/true))
      return fail("the mask has an element type other than f32, f16, bf16 "
                  "or i1");
    if (failed(leafOperand(mt, match.mask, match.maskMap, match.maskUnitDims)))
      return failure();
    match.invertBoolMask = sf.boolMask >= 0 && !sf.boolMaskKeepsTrue;
  }
  if (sinkTerm >= 0) {
    const Term &st = tr.get(sinkTerm);
    if (!supported(st.leaf))
      return fail("the sink has an element type other than f32, f16 or bf16");
    if (failed(leafOperand(st, match.sink, match.sinkMap, match.sinkUnitDims)))
      return failure();
  }

  if (!sf.mods.empty()) {
    auto toLoop = [&](unsigned pos) -> int64_t { return posToAttn[pos]; };
    auto operandOf = [&](const Term &lt) -> int {
      Value value;
      AffineMap map;
      SmallVector<int64_t> unitDims;
      if (failed(leafOperand(lt, value, map, unitDims)))
        return -1;
      for (auto [i, v] : llvm::enumerate(match.scoreMod.operands))
        if (v == value && match.scoreMod.operandMaps[i] == map)
          return i;
      match.scoreMod.operands.push_back(value);
      match.scoreMod.operandMaps.push_back(map);
      match.scoreMod.operandUnitDims.push_back(unitDims);
      return match.scoreMod.operands.size() - 1;
    };
    if (failed(buildScoreMod(tr, sf.mods, match.scoreMod, why, toLoop,
                             operandOf)))
      return failure();
  }

  // Repeated K/V heads (GQA written with a broadcast): read them unrepeated.
  SmallVector<Operation *> repeatOps;
  if (std::optional<RepeatedHeads> rk = matchRepeatedHeads(k.value, k.map)) {
    std::optional<RepeatedHeads> rv = matchRepeatedHeads(v.value, v.map);
    if (failed(splitRepeatedHeads(match, *rk, rv, why)))
      return failure();
    llvm::append_range(repeatOps, rk->ops);
    if (rv)
      llvm::append_range(repeatOps, rv->ops);
  }

  // Everything the fused op replaces must feed only the attention.
  llvm::SetVector<Operation *> chain(tr.ops.begin(), tr.ops.end());
  // A mask tensor the program computes stays, and so does what computes it.
  if (match.mask) {
    SmallVector<Value> stack = {match.mask};
    while (!stack.empty()) {
      Operation *def = stack.pop_back_val().getDefiningOp();
      if (!def || !chain.remove(def))
        continue;
      llvm::append_range(stack, def->getOperands());
    }
  }
  chain.insert(repeatOps.begin(), repeatOps.end());
  chain.insert(qk);
  if (sinkConcat)
    chain.insert(sinkConcat);
  for (PeeledOperand *po : {&q, &k, &v})
    chain.insert(po->ops.begin(), po->ops.end());
  // The program's own log-sum-exp of the same scores, alongside the output
  // (FlashAttention's second result): it becomes the op's lse result.
  if (failed(matchLse(tr, sm->x, nPos, rank, posToAttn, root, chain, match,
                      why)))
    return failure();
  // A dropped shift leaves the probabilities alone but not the lse.
  if (match.lse && sf.shifted)
    return fail("the scores are shifted by a constant or a runtime scalar, "
                "which the program's log-sum-exp keeps and the op's drops");
  for (Operation *op : chain) {
    if (op->getBlock() != root->getBlock())
      return fail("the attention chain spans several blocks");
    for (Operation *user : op->getUsers()) {
      // A shape query stays answerable without the op (dynamic programs
      // slice P back to `dim(P) - 1` keys after a sink).
      if (auto dim = dyn_cast<tensor::DimOp>(user)) {
        std::optional<int64_t> d = dim.getConstantIndex();
        if (d && succeeded(liveDimSize(dim.getSource(), *d, chain, nullptr,
                                       dim.getLoc()))) {
          if (!llvm::is_contained(match.dimUsers, user))
            match.dimUsers.push_back(user);
          continue;
        }
      }
      if (user != root && !chain.contains(user) &&
          !(match.lse && op == match.lse.getDefiningOp())) {
        if (op == qk)
          return fail("the scores (Q·K^T) have other uses besides the "
                      "softmax");
        if (op == pOperand->get().getDefiningOp())
          return fail("the probabilities (softmax result) have other uses "
                      "besides P·V");
        return fail(llvm::formatv("an intermediate result ('{0}') has other "
                                  "uses besides the attention",
                                  op->getName().getStringRef()));
      }
    }
  }
  // attn.attention has no empty dimensions (nothing to tile or launch).
  for (Value operand : {match.query, match.key, match.value, match.init})
    if (auto t = dyn_cast<RankedTensorType>(operand.getType()))
      if (llvm::is_contained(t.getShape(), 0))
        return fail(llvm::formatv("an operand has an empty dimension ({0}); "
                                  "attn.attention needs non-empty ones",
                                  t)
                        .str());
  // Consumers first: reverse program order within the block.
  match.deadChain.assign(chain.begin(), chain.end());
  llvm::sort(match.deadChain, [](Operation *a, Operation *b) {
    return b->isBeforeInBlock(a);
  });
  match.softmax = match.deadChain.front();
  return match;
}

FailureOr<Value>
mlir::attn::liveDimSize(Value v, int64_t d,
                        const llvm::SetVector<Operation *> &dead, OpBuilder *b,
                        Location loc) {
  auto constant = [&](int64_t c) -> Value {
    return b ? arith::ConstantIndexOp::create(*b, loc, c).getResult() : Value();
  };
  // Down to the size a tensor was created with, through destinations (also
  // of ops that stay, so that a fill of the scores is not kept alive for a
  // shape), casts, slices and concats. Bounded: each step moves to an
  // operand.
  for (unsigned depth = 0; depth < 32; ++depth) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || d < 0 || d >= type.getRank())
      return failure();
    if (!type.isDynamicDim(d))
      return constant(type.getDimSize(d));
    Operation *def = v.getDefiningOp();
    if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(def))
      return b ? empty.getDynamicSize(d) : Value();
    if (Value origin = sizeOrigin(v); origin != v) {
      v = origin;
    } else if (isa_and_nonnull<DestinationStyleOpInterface>(def)) {
      return failure(); // a destination op on buffers
    } else if (auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(def)) {
      if (slice.getSourceType().getRank() != type.getRank())
        return failure(); // rank-reducing: the dims do not line up
      OpFoldResult size = slice.getMixedSizes()[d];
      auto val = dyn_cast<Value>(size);
      if (!val)
        return constant(cast<IntegerAttr>(cast<Attribute>(size)).getInt());
      // The size is computed before the slice; it must itself stay.
      if (Operation *sd = val.getDefiningOp(); sd && dead.contains(sd))
        return failure();
      return b ? val : Value();
    } else if (auto cat = dyn_cast_or_null<tensor::ConcatOp>(def)) {
      if ((int64_t)cat.getDim() != d) {
        v = cat.getInputs()[0];
        continue;
      }
      Value sum;
      for (Value in : cat.getInputs()) {
        FailureOr<Value> part = liveDimSize(in, d, dead, b, loc);
        if (failed(part))
          return failure();
        if (b)
          sum = sum ? arith::AddIOp::create(*b, loc, sum, *part).getResult()
                    : *part;
      }
      return sum;
    } else {
      if (def && dead.contains(def))
        return failure();
      return b ? tensor::DimOp::create(*b, loc, v, d).getResult() : Value();
    }
  }
  return failure();
}

FailureOr<AttentionMatch> mlir::attn::matchAttention(Operation *root,
                                                     std::string &why) {
  // With grouped heads P has several query-like dims; the one the causal or
  // window mask compares with the keys is the query axis. Try each.
  unsigned numChoices = 1;
  std::string firstWhy;
  for (unsigned c = 0; c < numChoices; ++c) {
    std::string w;
    FailureOr<AttentionMatch> m = matchWithQueryChoice(root, w, c, numChoices);
    if (succeeded(m))
      return m;
    if (c == 0)
      firstWhy = w;
  }
  why = firstWhy;
  return failure();
}
