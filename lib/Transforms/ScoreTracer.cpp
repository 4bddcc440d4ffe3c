//===- ScoreTracer.cpp - symbolic view of the softmax chain ---------------===//
#include "ScoreTracer.h"
#include "IndexArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace mlir;
using namespace mlir::attn;

std::optional<double> mlir::attn::getSplatFloat(Value v) {
  Attribute attr;
  if (matchPattern(v, m_Constant(&attr))) {
    if (auto f = dyn_cast<FloatAttr>(attr))
      return f.getValueAsDouble();
    if (auto i = dyn_cast<IntegerAttr>(attr)) {
      if (i.getType().isInteger(1)) // true is 1, not -1
        return i.getValue().isOne() ? 1.0 : 0.0;
      return static_cast<double>(i.getValue().getSExtValue());
    }
    if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
      if (!dense.isSplat())
        return std::nullopt;
      if (isa<FloatType>(dense.getElementType()))
        return dense.getSplatValue<APFloat>().convertToDouble();
      if (dense.getElementType().isInteger(1))
        return dense.getSplatValue<bool>() ? 1.0 : 0.0;
    }
    return std::nullopt;
  }
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return getSplatFloat(fill.getInputs()[0]);
  // A reshaped splat is the same splat (bounded: reshape chains of
  // constants are short, and each step strips one op).
  for (int depth = 0; depth < 8; ++depth) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                         tensor::CastOp>(def))
      break;
    v = def->getOperand(0);
    if (auto fill = v.getDefiningOp<linalg::FillOp>())
      return getSplatFloat(fill.getInputs()[0]);
  }
  return std::nullopt;
}

static size_t hashTerm(const Term &t) {
  uint64_t bits;
  std::memcpy(&bits, &t.value, sizeof(bits));
  return llvm::hash_combine(
      static_cast<int>(t.kind), t.name, t.pred,
      llvm::hash_combine_range(t.kids.begin(), t.kids.end()),
      t.leaf.getAsOpaquePointer(), t.access.getAsOpaquePointer(), bits,
      t.index.getAsOpaquePointer(), t.dim, t.type.getAsOpaquePointer());
}

static bool sameTerm(const Term &x, const Term &y) {
  return x.kind == y.kind && x.name == y.name && x.pred == y.pred &&
         std::memcmp(&x.value, &y.value, sizeof(double)) == 0 &&
         x.dim == y.dim && x.index == y.index && x.leaf == y.leaf &&
         x.access == y.access && x.kids == y.kids && x.type == y.type;
}

int ScoreTracer::add(Term t) {
  SmallVector<int, 1> &bucket = interned[hashTerm(t)];
  for (int id : bucket)
    if (sameTerm(terms[id], t))
      return id;
  terms.push_back(std::move(t));
  bucket.push_back(terms.size() - 1);
  return terms.size() - 1;
}

std::optional<std::pair<Value, AffineMap>>
ScoreTracer::boolTensorOf(int id) const {
  std::optional<std::pair<Value, AffineMap>> best;
  for (const auto &[key, term] : memo) {
    if (term != id)
      continue;
    auto type = dyn_cast<RankedTensorType>(key.first.getType());
    Operation *def = key.first.getDefiningOp();
    if (!type || !type.getElementType().isInteger(1) || !def)
      continue;
    // The smallest such tensor (before the program broadcasts it), then the
    // latest definition: deterministic.
    if (!best) {
      best = key;
      continue;
    }
    auto size = [](RankedTensorType t) { // dynamic dims count as large
      double n = 1;
      for (int64_t d : t.getShape())
        n *= ShapedType::isDynamic(d) ? 1048576.0 : static_cast<double>(d);
      return n;
    };
    auto curType = cast<RankedTensorType>(best->first.getType());
    Operation *cur = best->first.getDefiningOp();
    if (size(type) < size(curType) ||
        (size(type) == size(curType) && cur->getBlock() == def->getBlock() &&
         cur->isBeforeInBlock(def)))
      best = key;
  }
  return best;
}

int ScoreTracer::leafTerm(Value v, AffineMap access) {
  Term leaf{Term::Leaf};
  leaf.leaf = v;
  leaf.access = access;
  return add(leaf);
}

int ScoreTracer::stripCasts(int id) const {
  while (id >= 0 && terms[id].kind == Term::Unary && terms[id].name == "cast")
    id = terms[id].kids[0];
  return id;
}

std::optional<double> ScoreTracer::constValue(int id) const {
  id = stripCasts(id);
  if (id >= 0 && terms[id].kind == Term::Const)
    return terms[id].value;
  return std::nullopt;
}

bool ScoreTracer::containsLeaf(int id, function_ref<bool(Value)> pred,
                               std::vector<int8_t> *cache) const {
  std::vector<int8_t> local;
  if (!cache)
    cache = &local;
  if (cache->size() < terms.size())
    cache->resize(terms.size(), -1);
  // Post-order over the DAG below `id`, each term once.
  SmallVector<std::pair<int, bool>> stack = {{id, false}};
  while (!stack.empty()) {
    auto [cur, kidsDone] = stack.pop_back_val();
    if ((*cache)[cur] >= 0)
      continue;
    const Term &t = terms[cur];
    if (t.kind == Term::Leaf) {
      (*cache)[cur] = pred(t.leaf);
      continue;
    }
    if (kidsDone) {
      (*cache)[cur] = llvm::any_of(t.kids, [&](int k) { return (*cache)[k]; });
      continue;
    }
    stack.push_back({cur, true});
    for (int k : t.kids)
      if ((*cache)[k] < 0)
        stack.push_back({k, false});
  }
  return (*cache)[id];
}

int ScoreTracer::lookup(Value v, AffineMap access,
                        SmallVectorImpl<Key> &missing) {
  auto it = memo.find({v, access});
  if (it != memo.end())
    return it->second;
  missing.push_back({v, access});
  return kPending;
}

int ScoreTracer::trace(Value t, AffineMap access) {
  if (auto it = memo.find({t, access}); it != memo.end())
    return it->second;
  // Depth-first over (value, access) pairs: a pair is attempted; if inputs
  // are missing they are traced first and the pair is attempted again, so
  // each pair is attempted at most twice and nothing recurses.
  SmallVector<Key> stack = {{t, access}}, missing;
  llvm::DenseSet<Key> expanded;
  while (!stack.empty()) {
    Key key = stack.back();
    if (memo.count(key)) {
      stack.pop_back();
      continue;
    }
    missing.clear();
    int id = attempt(key.first, key.second, missing);
    if (id == kPending) {
      if (!expanded.insert(key).second) {
        why = "the score expression depends on itself";
        return -1;
      }
      stack.append(missing.rbegin(), missing.rend());
      continue;
    }
    if (id < 0)
      return -1; // `why` says why; nothing partial is kept
    if (terms.size() > kMaxTerms) {
      why = llvm::formatv("score expression too large to trace: over {0} ops",
                          kMaxTerms)
                .str();
      return -1;
    }
    memo[key] = id;
    stack.pop_back();
  }
  return memo.lookup({t, access});
}

/// A linalg.softmax whose output (init) is provably not its input's shape:
/// the program is undefined at run time (e.g. the init of a sink's softmax
/// one column short), so it is not traced. Sizes that do not reduce to one
/// a * x + c each keep the benefit of the doubt.
static bool softmaxShapesDiffer(linalg::SoftmaxOp sm) {
  auto in = cast<RankedTensorType>(sm.getInput().getType());
  auto out = cast<RankedTensorType>(sm.getOutput().getType());
  if (in.getRank() != out.getRank())
    return true;
  // Dim d of a tensor as a * x + c, through a concatenation along d (a
  // sink's column): the operands' sizes summed where they share x.
  auto size = [](Value v, int64_t d) -> std::optional<LinearSize> {
    auto cat = v.getDefiningOp<tensor::ConcatOp>();
    if (!cat || static_cast<int64_t>(cat.getDim()) != d)
      return evalDimSize(v, d);
    LinearSize sum;
    for (Value x : cat.getInputs()) {
      std::optional<LinearSize> s = evalDimSize(x, d);
      if (!s || (s->a && sum.a && !s->sameSymbol(sum)))
        return std::nullopt;
      if (s->a) {
        sum.src = s->src;
        sum.dim = s->dim;
      }
      sum.a += s->a;
      sum.c += s->c;
    }
    return sum;
  };
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (!in.isDynamicDim(d) && !out.isDynamicDim(d)) {
      if (in.getDimSize(d) != out.getDimSize(d))
        return true;
      continue;
    }
    // The same multiple of one size plus different constants: never equal.
    // (Not upstream value bounds: they crash on a tensor.dim out of range.)
    std::optional<LinearSize> x = size(sm.getInput(), d),
                              y = evalDimSize(sm.getOutput(), d);
    if (x && y && x->a == y->a && (x->a == 0 || x->sameSymbol(*y)) &&
        x->c != y->c)
      return true;
  }
  return false;
}

/// A constant integer tensor whose element at (i0, ..., ik) is i_d (JAX's
/// `jnp.arange` folded to a constant, then broadcast): the index d of the
/// score point, as linalg.index would give it. Values stay far below 2^31,
/// so the element type does not matter.
static std::optional<AffineExpr> constantIota(Value t, AffineMap access) {
  DenseIntElementsAttr attr;
  if (!matchPattern(t, m_Constant(&attr)) || attr.isSplat() ||
      attr.getElementType().isInteger(1) || attr.getNumElements() > (1 << 20))
    return std::nullopt;
  auto type = cast<ShapedType>(attr.getType());
  int dim = -1;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.getDimSize(i) != 1) {
      if (dim >= 0)
        return std::nullopt; // varies along two dims
      dim = i;
    }
  if (dim < 0 || (unsigned)dim >= access.getNumResults())
    return std::nullopt;
  int64_t k = 0;
  for (const APInt &v : attr.getValues<APInt>())
    if (v.getSExtValue() != k++)
      return std::nullopt;
  AffineExpr e = access.getResult(dim);
  if (!isa<AffineDimExpr, AffineConstantExpr>(e))
    return std::nullopt;
  return e;
}

int ScoreTracer::attempt(Value t, AffineMap access,
                         SmallVectorImpl<Key> &missing) {
  if (std::optional<double> c = getSplatFloat(t)) {
    Term term{Term::Const};
    term.value = *c;
    return add(term);
  }
  if (std::optional<AffineExpr> index = constantIota(t, access)) {
    Term term{Term::Index};
    term.index = *index;
    return add(term);
  }
  Term leaf{Term::Leaf};
  leaf.leaf = t;
  leaf.access = access;
  Operation *def = t.getDefiningOp();
  if (!def)
    return add(leaf);
  if (auto sm = dyn_cast<linalg::SoftmaxOp>(def)) {
    auto dim = dyn_cast<AffineDimExpr>(access.getResult(sm.getDimension()));
    if (!dim)
      return add(leaf);
    if (softmaxShapesDiffer(sm)) {
      why = "the softmax's output is not its input's shape (a column short "
            "or long: undefined at run time)";
      return -1;
    }
    int kid = lookup(sm.getInput(), access, missing);
    if (kid < 0)
      return kid;
    ops.insert(def);
    Term term{Term::Softmax};
    term.dim = dim.getPosition();
    term.kids.push_back(kid);
    return add(term);
  }
  if (auto lop = dyn_cast<linalg::LinalgOp>(def))
    return attemptLinalg(lop, t, access, missing);
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
    return attemptReshape(def, t, access, missing);
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    // A leading slice (offsets 0, strides 1) of a computed tensor is traced
    // through and recorded: the caller decides whether it is legal (an
    // attention sink drops its column). A slice of a plain tensor stays a
    // leaf: it is a view the fused op can read as it is.
    if (slice.getSourceType().getRank() != slice.getType().getRank() ||
        !llvm::all_of(slice.getMixedOffsets(),
                      [](OpFoldResult o) { return isProvablyZero(o); }) ||
        !llvm::all_of(slice.getMixedStrides(),
                      [](OpFoldResult o) { return isConstantIntValue(o, 1); }))
      return add(leaf);
    int src = lookup(slice.getSource(), access, missing);
    if (src < 0)
      return src;
    if (terms[src].kind == Term::Leaf)
      return add(leaf);
    ops.insert(def);
    slices.push_back(def);
    return src;
  }
  if (auto cast = dyn_cast<tensor::CastOp>(def)) {
    int src = lookup(cast.getSource(), access, missing);
    if (src >= 0)
      ops.insert(def);
    return src;
  }
  return add(leaf);
}

int ScoreTracer::attemptReshape(Operation *op, Value t, AffineMap access,
                                SmallVectorImpl<Key> &missing) {
  Term leaf{Term::Leaf};
  leaf.leaf = t;
  leaf.access = access;
  Value src = op->getOperand(0);
  auto srcType = cast<RankedTensorType>(src.getType());
  auto dstType = cast<RankedTensorType>(t.getType());
  SmallVector<AffineExpr> results(srcType.getRank());
  AffineExpr zero = getAffineConstantExpr(0, ctx);
  if (auto ex = dyn_cast<tensor::ExpandShapeOp>(op)) {
    for (auto [srcDim, group] : llvm::enumerate(ex.getReassociationIndices())) {
      if (group.size() == 1) {
        results[srcDim] = access.getResult(group.front());
        continue;
      }
      // The dst dims of the group that carry a score dim; unit dims added
      // by keep-dims are read at the fixed index 0.
      SmallVector<int64_t> carried, nonUnit;
      for (int64_t d : group) {
        if (isa<AffineDimExpr>(access.getResult(d)))
          carried.push_back(d);
        if (dstType.getDimSize(d) != 1)
          nonUnit.push_back(d);
      }
      if (nonUnit.size() > 1)
        return add(leaf); // a real split, not a unit-dim reshape
      if (carried.size() > 1)
        carried = nonUnit;
      if (carried.size() > 1)
        return add(leaf);
      results[srcDim] =
          carried.empty() ? zero : access.getResult(carried.front());
    }
  } else {
    auto col = cast<tensor::CollapseShapeOp>(op);
    for (auto [dstDim, group] : llvm::enumerate(col.getReassociationIndices())) {
      int nonUnit = 0;
      for (int64_t d : group) {
        bool unit = srcType.getDimSize(d) == 1;
        results[d] = unit ? zero : access.getResult(dstDim);
        nonUnit += !unit;
      }
      if (nonUnit > 1)
        return add(leaf); // a real merge (e.g. KV heads x group)
      if (nonUnit == 0) // all unit: the last one carries the dst index
        results[group.back()] = access.getResult(dstDim);
    }
  }
  int id = lookup(src, AffineMap::get(access.getNumDims(), 0, results, ctx),
                  missing);
  if (id >= 0)
    ops.insert(op);
  return id;
}

/// Composes an operand map (loops -> operand dims) with loopToScore.
static AffineMap composeAccess(AffineMap m, ArrayRef<AffineExpr> loopToScore,
                               unsigned numScoreDims, MLIRContext *ctx) {
  SmallVector<AffineExpr> res;
  for (AffineExpr e : m.getResults())
    res.push_back(e.replaceDims(loopToScore));
  return AffineMap::get(numScoreDims, 0, res, ctx);
}

int ScoreTracer::attemptLinalg(linalg::LinalgOp op, Value t, AffineMap access,
                               SmallVectorImpl<Key> &missing) {
  Term leaf{Term::Leaf};
  leaf.leaf = t;
  leaf.access = access;
  if (linalg::isaContractionOpInterface(op) || !op.hasPureTensorSemantics())
    return add(leaf);
  // Several results (torch's max(dim) also yields the argmax): only the
  // traced one may be used; the others are dead work the fusion drops.
  unsigned resultNumber = cast<OpResult>(t).getResultNumber();
  for (OpResult other : op->getResults()) {
    if (other.getResultNumber() == resultNumber || other.use_empty())
      continue;
    if (op.getNumReductionLoops() == 0)
      return add(leaf);
    why = llvm::formatv("a row reduction ('{0}') also yields a result that is "
                        "used elsewhere (as torch's max(dim) yields the "
                        "argmax); fused only when that result is dead",
                        op->getName().getStringRef())
              .str();
    return -1;
  }
  unsigned numLoops = op.getNumLoops();
  SmallVector<AffineExpr> loopToScore(numLoops);
  OpOperand *init = op.getDpsInitOperand(resultNumber);
  AffineMap out = op.getMatchingIndexingMap(init);
  for (auto [p, e] : llvm::enumerate(out.getResults())) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      loopToScore[d.getPosition()] = access.getResult(p);
    else if (!isa<AffineConstantExpr>(e))
      return add(leaf);
  }
  SmallVector<unsigned> red;
  op.getReductionDims(red);
  if (red.size() > 1)
    return add(leaf);
  int reducedScoreDim = -1;
  if (red.size() == 1) {
    // The reduction runs over the one score dim this row tensor lacks.
    llvm::SmallBitVector used(access.getNumDims());
    for (AffineExpr e : access.getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e))
        used.set(d.getPosition());
    if (used.count() + 1 != access.getNumDims()) {
      why = llvm::formatv("'{0}' reduces a tensor that is not a row vector of "
                          "the scores",
                          op->getName().getStringRef())
                .str();
      return -1;
    }
    reducedScoreDim = used.find_first_unset();
    loopToScore[red.front()] = getAffineDimExpr(reducedScoreDim, ctx);
  }
  if (llvm::any_of(loopToScore, [](AffineExpr e) { return !e; }))
    return add(leaf);
  Block *body = op.getBlock();
  Value yielded = body->getTerminator()->getOperand(resultNumber);
  unsigned numScore = access.getNumDims();
  if (red.empty()) {
    int id = evalBody(op, yielded, loopToScore, numScore, missing);
    if (id >= 0)
      ops.insert(op);
    return id;
  }

  // A reduction: yield combiner(E, acc), init a constant identity.
  Value acc = body->getArgument(op.getNumDpsInputs() + resultNumber);
  Operation *comb = yielded.getDefiningOp();
  while (comb && isa<arith::ExtFOp, arith::TruncFOp>(comb))
    comb = comb->getOperand(0).getDefiningOp();
  // max written as select(x > acc, x, acc) (torch-mlir's max(dim)): the
  // same value as maximumf wherever the row has no NaN, and a row with a
  // NaN is NaN after exp/sum either way.
  std::optional<StringRef> selectMax;
  if (auto sel = dyn_cast_or_null<arith::SelectOp>(comb)) {
    auto cmp = sel.getCondition().getDefiningOp<arith::CmpFOp>();
    using P = arith::CmpFPredicate;
    if (cmp && comb->getBlock() == body &&
        llvm::is_contained({P::OGT, P::OGE, P::UGT, P::UGE},
                           cmp.getPredicate()) &&
        cmp.getLhs() == sel.getTrueValue() &&
        cmp.getRhs() == sel.getFalseValue() && sel.getFalseValue() == acc)
      selectMax = arith::MaximumFOp::getOperationName();
  }
  auto isAcc = [&](Value v) {
    while (Operation *d = v.getDefiningOp()) {
      if (!isa<arith::ExtFOp, arith::TruncFOp>(d))
        break;
      v = d->getOperand(0);
    }
    return v == acc;
  };
  if (!selectMax &&
      (!comb || comb->getNumOperands() != 2 || comb->getBlock() != body ||
       !isa<arith::MaximumFOp, arith::MaxNumFOp, arith::AddFOp, arith::AndIOp,
            arith::OrIOp>(comb))) {
    why = llvm::formatv("the reduction '{0}' is not a max, sum, and or or",
                        op->getName().getStringRef())
              .str();
    return -1;
  }
  Value e;
  if (selectMax)
    e = cast<arith::SelectOp>(comb).getTrueValue();
  else if (isAcc(comb->getOperand(1)))
    e = comb->getOperand(0);
  else if (isAcc(comb->getOperand(0)))
    e = comb->getOperand(1);
  else {
    why = "a reduction does not accumulate into its destination";
    return -1;
  }
  std::optional<double> iv = getSplatFloat(init->get());
  bool okInit = false;
  if (iv) {
    if (selectMax || isa<arith::MaximumFOp, arith::MaxNumFOp>(comb))
      okInit = *iv <= -65504.0; // -inf or the lowest finite value
    else if (isa<arith::AddFOp, arith::OrIOp>(comb))
      okInit = *iv == 0.0;
    else
      okInit = *iv != 0.0;
  }
  if (!okInit) {
    why = "a row reduction does not start from its identity (max: -inf or "
          "the lowest value, sum: 0)";
    return -1;
  }
  int kid = evalBody(op, e, loopToScore, numScore, missing);
  if (kid < 0)
    return kid;
  ops.insert(op);
  Term term{Term::Reduce};
  term.name = selectMax ? *selectMax : comb->getName().getStringRef();
  term.dim = reducedScoreDim;
  term.kids.push_back(kid);
  return add(term);
}

/// The term kind and name of an op in a linalg body, or false if it is not
/// part of a softmax, scale or mask.
static bool classifyBodyOp(Operation *def, Term &term) {
  term = Term(Term::Unary);
  if (isa<arith::ExtFOp, arith::TruncFOp>(def)) {
    term.name = "cast";
  } else if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
                 arith::ExtUIOp>(def) &&
             (def->getResult(0).getType().isIndex() ||
              def->getResult(0).getType().getIntOrFloatBitWidth() >= 32)) {
    // Index arithmetic survives casts to >= 32 bits (sequence lengths stay
    // far below 2^31); narrower casts wrap and keep their own name.
    term.name = "icast";
  } else if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
                 arith::ExtUIOp, arith::TruncIOp>(def)) {
    term.name = def->getName().getStringRef();
  } else if (isa<math::ExpOp, arith::NegFOp, arith::SIToFPOp, arith::UIToFPOp,
                 math::TanhOp, math::Exp2Op, math::LogOp, math::Log2Op,
                 math::SqrtOp, math::RsqrtOp, math::AbsFOp, math::AbsIOp>(
                 def)) {
    term.name = def->getName().getStringRef();
  } else if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
                 arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                 arith::MinNumFOp, math::PowFOp, arith::AddIOp, arith::SubIOp,
                 arith::MulIOp, arith::AndIOp, arith::OrIOp, arith::XOrIOp,
                 arith::FloorDivSIOp, arith::CeilDivSIOp, arith::DivSIOp,
                 arith::RemSIOp, arith::ShRSIOp, arith::ShLIOp, arith::MaxSIOp,
                 arith::MinSIOp>(def)) {
    term.kind = Term::Binary;
    term.name = def->getName().getStringRef();
    term.type = def->getResult(0).getType();
  } else if (auto c = dyn_cast<arith::CmpFOp>(def)) {
    term.kind = Term::Cmp;
    term.name = def->getName().getStringRef();
    term.pred = static_cast<int64_t>(c.getPredicate());
  } else if (auto c = dyn_cast<arith::CmpIOp>(def)) {
    term.kind = Term::Cmp;
    term.name = def->getName().getStringRef();
    term.pred = static_cast<int64_t>(c.getPredicate());
  } else if (isa<arith::SelectOp>(def)) {
    term.kind = Term::Select;
  } else {
    return false;
  }
  return true;
}

int ScoreTracer::evalBody(linalg::LinalgOp op, Value root,
                          ArrayRef<AffineExpr> loopToScore, unsigned numScore,
                          SmallVectorImpl<Key> &missing) {
  Block *body = op.getBlock();
  AffineMap scalar = AffineMap::get(numScore, 0, {}, ctx);
  // The body ops `root` needs (checked first), and its inputs: block
  // arguments read through their maps, values captured from above and
  // constants traced as scalars.
  llvm::SmallPtrSet<Operation *, 16> needed;
  DenseMap<Value, int> vals;
  bool pending = false;
  SmallVector<Value> work = {root};
  Term term{Term::Unary};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (vals.count(v))
      continue;
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == body && !isa<arith::ConstantOp>(def)) {
      if (!needed.insert(def).second || isa<linalg::IndexOp>(def))
        continue;
      if (!classifyBodyOp(def, term)) {
        why = llvm::formatv("'{0}' in the body of '{1}' is not part of a "
                            "softmax, scale or mask",
                            def->getName().getStringRef(),
                            op->getName().getStringRef())
                  .str();
        return -1;
      }
      for (Value operand : llvm::reverse(def->getOperands()))
        work.push_back(operand);
      continue;
    }
    int id;
    auto arg = dyn_cast<BlockArgument>(v);
    if (arg && arg.getOwner() == body &&
        arg.getArgNumber() >= op.getNumDpsInputs() &&
        op.getNumReductionLoops() > 0) {
      // A running value of a reduction is not a tensor read at a point.
      why = llvm::formatv("the reduction '{0}' combines its running value in "
                          "a way that is not a max, sum, and or or",
                          op->getName().getStringRef())
                .str();
      return -1;
    }
    if (arg && arg.getOwner() == body) {
      OpOperand &operand = op->getOpOperand(arg.getArgNumber());
      if (!isa<RankedTensorType>(operand.get().getType()))
        id = lookup(operand.get(), scalar, missing); // e.g. a fill's value
      else
        id = lookup(operand.get(),
                    composeAccess(op.getMatchingIndexingMap(&operand),
                                  loopToScore, numScore, ctx),
                    missing);
    } else {
      id = lookup(v, scalar, missing); // a constant or an opaque scalar
    }
    pending |= id == kPending;
    vals[v] = id;
  }
  if (pending)
    return kPending;
  // Block order is a topological order of the body.
  for (Operation &def : *body) {
    if (!needed.contains(&def))
      continue;
    if (auto idx = dyn_cast<linalg::IndexOp>(def)) {
      Term index{Term::Index};
      index.index = loopToScore[idx.getDim()];
      vals[idx] = add(index);
      continue;
    }
    classifyBodyOp(&def, term);
    for (Value operand : def.getOperands())
      term.kids.push_back(vals.lookup(operand));
    vals[def.getResult(0)] = add(term);
  }
  return vals.lookup(root);
}
