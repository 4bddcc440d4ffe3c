//===- AttentionMatchers.cpp - structural attention matcher ---------------===//
//
// Matches: P·V contraction <- softmax over the key axis <- elementwise
//          scale / additive mask <- Q·K^T contraction, every link single-use.
// Produces: an AttentionMatch (operands, maps over (b..., m, n, d, e), scale,
//          mask) or the first reason it is not attention.
//
// Phases: walk back structurally, collect facts, validate; no IR is created
// here, so a failed match never has anything to roll back.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/AttentionMatchers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The softmax link of the chain, whatever its spelling.
struct SoftmaxFacts {
  Value input;      ///< the scores
  int64_t dim = -1; ///< normalized dimension (a position in the scores)
  SmallVector<Operation *> ops; ///< ops implementing it, consumers first
};

/// The elementwise links between Q·K^T and the softmax, folded together:
/// softmax input = scale * qk + bias.
struct ScoreTransform {
  double scale = 1.0;
  Value bias;
  AffineMap biasMap; ///< over score positions
  SmallVector<Operation *> ops; ///< consumers first
};

} // namespace

//===----------------------------------------------------------------------===//
// Small structural helpers
//===----------------------------------------------------------------------===//

/// The float value of a scalar constant, a splat constant tensor or a
/// linalg.fill of a constant.
static std::optional<double> getSplatFloat(Value v) {
  Attribute attr;
  if (matchPattern(v, m_Constant(&attr))) {
    if (auto f = dyn_cast<FloatAttr>(attr))
      return f.getValueAsDouble();
    if (auto dense = dyn_cast<DenseFPElementsAttr>(attr))
      if (dense.isSplat())
        return dense.getSplatValue<APFloat>().convertToDouble();
    return std::nullopt;
  }
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return getSplatFloat(fill.getInputs()[0]);
  return std::nullopt;
}

static bool isZeroTensor(Value v) {
  std::optional<double> c = getSplatFloat(v);
  return c && *c == 0.0;
}

static bool hasSingleUse(Value v) { return v.hasOneUse(); }

/// Looks through value-preserving float casts inside a region body.
static Value stripCasts(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// For a block argument of a linalg op body, the operand it stands for.
static OpOperand *operandOfArg(linalg::LinalgOp op, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != op.getBlock())
    return nullptr;
  return &op->getOpOperand(arg.getArgNumber());
}

/// A float constant inside or outside the body, or a body argument whose
/// operand is a splat.
static std::optional<double> getBodyConstant(linalg::LinalgOp op, Value v) {
  v = stripCasts(v);
  if (OpOperand *operand = operandOfArg(op, v)) {
    if (op.isDpsInit(operand))
      return std::nullopt;
    return getSplatFloat(operand->get());
  }
  return getSplatFloat(v);
}

/// Composes `map` (over some loops, results = dims of `transposed`) with the
/// linalg.transpose that produced `transposed`: the returned map indexes the
/// transpose's input instead.
static AffineMap throughTranspose(linalg::TransposeOp t, AffineMap map) {
  ArrayRef<int64_t> perm = t.getPermutation();
  SmallVector<AffineExpr> results(perm.size());
  for (auto [outDim, inDim] : llvm::enumerate(perm))
    results[inDim] = map.getResult(outDim);
  return AffineMap::get(map.getNumDims(), 0, results, map.getContext());
}

/// Follows single-use linalg.transpose producers of `v`.
static std::pair<Value, AffineMap>
foldTransposes(Value v, AffineMap map, SmallVectorImpl<Operation *> &dead) {
  while (auto t = v.getDefiningOp<linalg::TransposeOp>()) {
    if (!t->getResult(0).hasOneUse())
      break;
    map = throughTranspose(t, map);
    v = t.getInput();
    dead.push_back(t);
  }
  return {v, map};
}

//===----------------------------------------------------------------------===//
// Softmax normalizers
//===----------------------------------------------------------------------===//

/// linalg.softmax
static FailureOr<SoftmaxFacts> matchNamedSoftmax(Value p, std::string &why) {
  auto sm = p.getDefiningOp<linalg::SoftmaxOp>();
  if (!sm)
    return failure();
  SoftmaxFacts facts;
  facts.input = sm.getInput();
  facts.dim = sm.getDimension();
  facts.ops.push_back(sm);
  return facts;
}

static FailureOr<SoftmaxFacts> matchSoftmax(Value p, std::string &why) {
  if (FailureOr<SoftmaxFacts> f = matchNamedSoftmax(p, why); succeeded(f))
    return f;
  return failure();
}

bool mlir::attn::isSoftmaxCandidate(Operation *op) {
  return isa<linalg::SoftmaxOp>(op);
}

//===----------------------------------------------------------------------===//
// Scale and mask between Q·K^T and the softmax
//===----------------------------------------------------------------------===//

namespace {
/// The body of an elementwise op, as `scale * score + bias`.
struct BodyAffine {
  double scale = 1.0;
  OpOperand *bias = nullptr;
};
} // namespace

static FailureOr<BodyAffine> evalBody(linalg::LinalgOp op, Value v,
                                      OpOperand *scoreOperand,
                                      std::string &why) {
  v = stripCasts(v);
  if (OpOperand *operand = operandOfArg(op, v)) {
    if (operand == scoreOperand)
      return BodyAffine{};
    why = "an elementwise op between Q·K^T and the softmax reads something "
          "other than the scores where a score is expected";
    return failure();
  }
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != op.getBlock()) {
    why = "an elementwise op between Q·K^T and the softmax does not use the "
          "scores";
    return failure();
  }
  auto scaled = [&](Value x, Value c, bool divide) -> FailureOr<BodyAffine> {
    std::optional<double> k = getBodyConstant(op, c);
    if (!k)
      return failure();
    FailureOr<BodyAffine> inner = evalBody(op, x, scoreOperand, why);
    if (failed(inner))
      return failure();
    if (inner->bias) {
      why = "the mask is added before the scale (scale * (Q·K^T + mask)); "
            "only scale * Q·K^T + mask is fused";
      return failure();
    }
    if (divide && *k == 0.0) {
      why = "the scores are divided by zero";
      return failure();
    }
    inner->scale = divide ? inner->scale / *k : inner->scale * *k;
    return inner;
  };
  if (auto mul = dyn_cast<arith::MulFOp>(def)) {
    if (auto r = scaled(mul.getLhs(), mul.getRhs(), false); succeeded(r))
      return r;
    if (!why.empty())
      return failure();
    if (auto r = scaled(mul.getRhs(), mul.getLhs(), false); succeeded(r))
      return r;
    if (why.empty())
      why = "the scores are multiplied by something that is not a constant";
    return failure();
  }
  if (auto div = dyn_cast<arith::DivFOp>(def)) {
    if (auto r = scaled(div.getLhs(), div.getRhs(), true); succeeded(r))
      return r;
    if (why.empty())
      why = "the scores are divided by something that is not a constant";
    return failure();
  }
  if (auto add = dyn_cast<arith::AddFOp>(def)) {
    for (auto [x, b] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())}) {
      OpOperand *biasOperand = operandOfArg(op, stripCasts(b));
      if (!biasOperand || biasOperand == scoreOperand ||
          op.isDpsInit(biasOperand))
        continue;
      FailureOr<BodyAffine> inner = evalBody(op, x, scoreOperand, why);
      if (failed(inner))
        return failure();
      if (inner->bias) {
        why = "more than one additive mask is applied to the scores";
        return failure();
      }
      inner->bias = biasOperand;
      return inner;
    }
    why = "something other than a mask operand is added to the scores";
    return failure();
  }
  why = llvm::formatv("the scores go through '{0}' before the softmax, which "
                      "is not a scale or an additive mask",
                      def->getName().getStringRef())
            .str();
  return failure();
}

/// Walks back from the softmax input through elementwise scale/mask ops.
/// Returns the Q·K^T result.
static FailureOr<Value> matchScoreTransforms(Value scores, ScoreTransform &st,
                                             std::string &why) {
  while (true) {
    auto op = scores.getDefiningOp<linalg::LinalgOp>();
    if (!op || linalg::isaContractionOpInterface(op))
      return scores;
    if (!hasSingleUse(scores)) {
      why = "the scores have other uses besides the softmax";
      return failure();
    }
    if (op.getNumDpsInits() != 1 || op.getNumParallelLoops() != op.getNumLoops()) {
      why = llvm::formatv("'{0}' between Q·K^T and the softmax is not an "
                          "elementwise op",
                          op->getName().getStringRef())
                .str();
      return failure();
    }
    OpOperand *init = op.getDpsInitOperand(0);
    if (!op.getMatchingIndexingMap(init).isIdentity() ||
        op.payloadUsesValueFromOperand(init)) {
      why = "an elementwise op before the softmax permutes its result or reads "
            "its destination";
      return failure();
    }
    // The input that continues the chain: the one produced by a linalg op
    // with an identity map (prefer a contraction or another elementwise op).
    OpOperand *scoreOperand = nullptr;
    for (OpOperand *in : op.getDpsInputOperands()) {
      if (!op.getMatchingIndexingMap(in).isIdentity() ||
          !in->get().getDefiningOp<linalg::LinalgOp>() ||
          getSplatFloat(in->get()))
        continue;
      if (scoreOperand) {
        // Two candidate chains (e.g. scores + a bias computed by linalg):
        // pick the one that reaches a contraction producing exactly this op's
        // operand shape; fall back to the first.
        if (linalg::isaContractionOpInterface(
                in->get().getDefiningOp<linalg::LinalgOp>()) &&
            !linalg::isaContractionOpInterface(
                scoreOperand->get().getDefiningOp<linalg::LinalgOp>()))
          scoreOperand = in;
        continue;
      }
      scoreOperand = in;
    }
    if (!scoreOperand) {
      why = "the softmax input is not computed from a Q·K^T contraction";
      return failure();
    }
    Value yielded = op.getBlock()->getTerminator()->getOperand(0);
    FailureOr<BodyAffine> body = evalBody(op, yielded, scoreOperand, why);
    if (failed(body))
      return failure();
    if (body->bias) {
      if (st.bias) {
        why = "more than one additive mask is applied to the scores";
        return failure();
      }
      if (st.scale != 1.0) {
        why = "the mask is added before the scale (scale * (Q·K^T + mask)); "
              "only scale * Q·K^T + mask is fused";
        return failure();
      }
      AffineMap m = op.getMatchingIndexingMap(body->bias);
      if (!m.isProjectedPermutation(/*allowZeroInResults=*/false)) {
        why = "the mask is indexed by a map that is not a projected "
              "permutation of the score dimensions";
        return failure();
      }
      st.bias = body->bias->get();
      st.biasMap = m;
    }
    st.scale *= body->scale;
    st.ops.push_back(op);
    scores = scoreOperand->get();
  }
}

//===----------------------------------------------------------------------===//
// The matcher
//===----------------------------------------------------------------------===//

std::string AttentionMatch::describe() const {
  std::string maskStr = "none";
  if (mask) {
    maskStr = "additive over (";
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
  return llvm::formatv("scale={0}, mask={1}, causal={2}, batch dims={3}, "
                       "dtype {4} -> {5}",
                       scaleStr, maskStr, causal ? "yes" : "no", numBatch,
                       elt(query), elt(root->getResult(0)))
      .str();
}

FailureOr<AttentionMatch> mlir::attn::matchAttention(Operation *root,
                                                     std::string &why) {
  auto fail = [&](const Twine &msg) -> FailureOr<AttentionMatch> {
    why = msg.str();
    return failure();
  };
  auto pv = dyn_cast<linalg::LinalgOp>(root);
  if (!pv || pv.getNumDpsInputs() != 2 || pv.getNumDpsInits() != 1 ||
      !pv.hasPureTensorSemantics() || !linalg::isaContractionOpInterface(pv))
    return fail("the softmax result is not consumed by a contraction (P·V) on "
                "tensors");
  FailureOr<linalg::ContractionDimensions> pvDims =
      linalg::inferContractionDims(pv);
  if (failed(pvDims))
    return fail("P·V is not a contraction");

  // Which operand is P?
  SoftmaxFacts sm;
  OpOperand *pOperand = nullptr, *vOperand = nullptr;
  for (OpOperand *in : pv.getDpsInputOperands()) {
    std::string smWhy;
    FailureOr<SoftmaxFacts> f = matchSoftmax(in->get(), smWhy);
    if (succeeded(f)) {
      sm = *f;
      pOperand = in;
      break;
    }
    if (!smWhy.empty())
      return fail(smWhy);
  }
  if (!pOperand)
    return fail("no operand of the contraction is a softmax");
  vOperand = pv.getDpsInputOperand(pOperand->getOperandNumber() == 0 ? 1 : 0);
  if (!hasSingleUse(pOperand->get()))
    return fail("the probabilities (softmax result) have other uses besides "
                "P·V");
  if (!isZeroTensor(pv.getDpsInitOperand(0)->get()))
    return fail("the P·V accumulator is not zero-initialized");
  if (pvDims->k.size() != 1)
    return fail("P·V must contract exactly one dimension (the keys)");

  AffineMap pMap = pv.getMatchingIndexingMap(pOperand);
  AffineMap vMapPV = pv.getMatchingIndexingMap(vOperand);
  AffineMap oMapPV = pv.getMatchingIndexingMap(pv.getDpsInitOperand(0));
  if (!pMap.isProjectedPermutation(false) || !vMapPV.isProjectedPermutation(false) ||
      !oMapPV.isProjectedPermutation(false))
    return fail("P·V indexing maps are not projected permutations");
  bool pIsLhs = pOperand->getOperandNumber() == 0;
  ArrayRef<unsigned> pvM = pIsLhs ? pvDims->m : pvDims->n;
  ArrayRef<unsigned> pvE = pIsLhs ? pvDims->n : pvDims->m;
  if (pvM.size() != 1 || pvE.size() != 1)
    return fail("P·V must have exactly one query and one value dimension");
  if (pvDims->batch.size() + 3 != pv.getNumLoops())
    return fail("P·V has dimensions that are neither batch, query, key nor "
                "value dimensions");

  unsigned rank = pMap.getNumResults();
  unsigned numBatch = rank - 2;
  unsigned kDim = pvDims->k.front();
  int64_t nPos = -1, mPos = -1;
  for (unsigned i = 0; i < rank; ++i) {
    unsigned d = pMap.getDimPosition(i);
    if (d == kDim)
      nPos = i;
    else if (d == pvM.front())
      mPos = i;
  }
  if (sm.dim != nPos)
    return fail(llvm::formatv("the softmax normalizes dimension {0} of the "
                              "scores but P·V contracts dimension {1}: the "
                              "softmax is not over the key axis",
                              sm.dim, nPos));

  // Score position -> attention dimension (b..., m, n).
  SmallVector<unsigned> posToAttn(rank);
  for (unsigned i = 0, b = 0; i < rank; ++i)
    posToAttn[i] = i == (unsigned)mPos   ? numBatch
                   : i == (unsigned)nPos ? numBatch + 1
                                         : b++;
  MLIRContext *ctx = root->getContext();
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

  // Scores: scale and mask, then Q·K^T.
  ScoreTransform st;
  if (!hasSingleUse(sm.input))
    return fail("the scores have other uses besides the softmax");
  FailureOr<Value> qkResult = matchScoreTransforms(sm.input, st, why);
  if (failed(qkResult))
    return failure();
  auto qk = qkResult->getDefiningOp<linalg::LinalgOp>();
  if (!qk || qk.getNumDpsInputs() != 2 || qk.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(qk))
    return fail("the softmax input is not computed from a Q·K^T contraction");
  if (!hasSingleUse(*qkResult))
    return fail("the scores (Q·K^T) have other uses besides the softmax");
  if (!isZeroTensor(qk.getDpsInitOperand(0)->get()))
    return fail("the Q·K^T accumulator is not zero-initialized");
  FailureOr<linalg::ContractionDimensions> qkDims =
      linalg::inferContractionDims(qk);
  if (failed(qkDims) || qkDims->k.size() != 1)
    return fail("Q·K^T must contract exactly one dimension (the head dim)");
  if (qkDims->m.size() != 1 || qkDims->n.size() != 1 ||
      qkDims->batch.size() + 3 != qk.getNumLoops())
    return fail("Q·K^T must have exactly one query and one key dimension "
                "besides batch dimensions");
  AffineMap sMap = qk.getMatchingIndexingMap(qk.getDpsInitOperand(0));
  if (!sMap.isProjectedPermutation(false) || sMap.getNumResults() != rank)
    return fail("Q·K^T writes its result through a non-permutation map");
  SmallVector<int64_t> qkToAttn(qk.getNumLoops(), -1);
  for (unsigned i = 0; i < rank; ++i)
    qkToAttn[sMap.getDimPosition(i)] = posToAttn[i];
  qkToAttn[qkDims->k.front()] = numBatch + 2;
  unsigned qkM = sMap.getDimPosition(mPos), qkN = sMap.getDimPosition(nPos);
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
  for (unsigned i = 0; i < rank; ++i)
    if (i != (unsigned)mPos && i != (unsigned)nPos &&
        !llvm::is_contained(qkDims->batch, sMap.getDimPosition(i)))
      return fail("a batch dimension of the scores is not a batch dimension "
                  "of Q·K^T");

  auto supported = [](Value v) {
    Type t = cast<ShapedType>(v.getType()).getElementType();
    return t.isF32() || t.isF16() || t.isBF16();
  };
  for (Value v : {qOperand->get(), kOperand->get(), vOperand->get(),
                  pv.getDpsInitOperand(0)->get()})
    if (!supported(v))
      return fail("an operand has an element type other than f32, f16 or "
                  "bf16");
  if (st.bias && !supported(st.bias))
    return fail("the mask has an element type other than f32, f16 or bf16");

  // All checks passed: collect the facts.
  AttentionMatch match;
  match.numBatch = numBatch;
  match.scale = st.scale;
  match.root = root;
  match.qkContraction = qk;
  match.softmax = sm.ops.front();
  match.init = pv.getDpsInitOperand(0)->get();
  llvm::append_range(match.deadChain, sm.ops);
  llvm::append_range(match.deadChain, st.ops);
  match.deadChain.push_back(qk);
  std::tie(match.query, match.queryMap) = foldTransposes(
      qOperand->get(), remap(qk.getMatchingIndexingMap(qOperand), qkToAttn),
      match.deadChain);
  std::tie(match.key, match.keyMap) = foldTransposes(
      kOperand->get(), remap(qk.getMatchingIndexingMap(kOperand), qkToAttn),
      match.deadChain);
  std::tie(match.value, match.valueMap) = foldTransposes(
      vOperand->get(), remap(vMapPV, pvToAttn), match.deadChain);
  match.outputMap = remap(oMapPV, pvToAttn);
  if (st.bias) {
    SmallVector<int64_t> posMap(posToAttn.begin(), posToAttn.end());
    match.mask = st.bias;
    match.maskMap = remap(st.biasMap, posMap);
  }

  // Everything must live in the block of the root so the fused op can be
  // built there.
  for (Operation *op : match.deadChain)
    if (op->getBlock() != root->getBlock())
      return fail("the attention chain spans several blocks");
  return match;
}
