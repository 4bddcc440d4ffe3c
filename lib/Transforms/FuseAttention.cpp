//===- FuseAttention.cpp - the --attn-fuse pass and its pattern -----------===//
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Support/KeptStatistic.h"
#include "attn/Transforms/Passes.h"
#include "attn/Transforms/Transforms.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/CommandLine.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

// `attn-opt --attn-fuse --attn-explain`: the same switch as the pass option
// `explain`, spelled as a tool flag.
static llvm::cl::opt<bool>
    clExplain("attn-explain",
              llvm::cl::desc("Remark on every attention candidate: what was "
                             "fused, or why not (same as attn-fuse{explain})"),
              llvm::cl::init(false));

bool mlir::attn::explainRequested() { return clExplain; }

/// Erases the ops of `worklist` (and then their producers) that are unused
/// and free of effects.
static void eraseDead(RewriterBase &rewriter,
                      llvm::SetVector<Operation *> worklist) {
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!op->use_empty() || !isMemoryEffectFree(op))
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        worklist.insert(def);
    rewriter.eraseOp(op);
  }
}

/// The mask as attn.attention wants it: unit dims the scores broadcast over
/// dropped (a rank-reducing slice, no copy), "true = masked" booleans
/// inverted.
static Value dropUnitDims(RewriterBase &rewriter, Location loc, Value mask,
                          ArrayRef<int64_t> unitDims) {
  auto type = cast<RankedTensorType>(mask.getType());
  if (unitDims.empty())
    return mask;
  {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, mask);
    SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(type.getRank(), rewriter.getIndexAttr(1));
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (!llvm::is_contained(unitDims, i))
        shape.push_back(type.getDimSize(i));
    auto reduced = RankedTensorType::get(shape, type.getElementType());
    return tensor::ExtractSliceOp::create(rewriter, loc, reduced, mask,
                                          offsets, sizes, strides);
  }
}

static Value prepareMask(RewriterBase &rewriter, Location loc,
                         const AttentionMatch &match) {
  Value mask = dropUnitDims(rewriter, loc, match.mask, match.maskUnitDims);
  if (match.invertBoolMask) {
    auto t = cast<RankedTensorType>(mask.getType());
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, mask),
        t.getElementType());
    AffineMap id =
        AffineMap::getMultiDimIdentityMap(t.getRank(), rewriter.getContext());
    SmallVector<utils::IteratorType> iters(t.getRank(),
                                           utils::IteratorType::parallel);
    mask = linalg::GenericOp::create(
               rewriter, loc, t, mask, empty, ArrayRef<AffineMap>{id, id},
               iters,
               [](OpBuilder &b, Location l, ValueRange args) {
                 Value one = arith::ConstantIntOp::create(b, l, 1, 1);
                 linalg::YieldOp::create(
                     b, l, arith::XOrIOp::create(b, l, args[0], one).getResult());
               })
               ->getResult(0);
  }
  return mask;
}

/// Views dim `dim` of `v` as (kvHeads, groups): a reshape, no copy.
static Value expandHeads(RewriterBase &rewriter, Location loc, Value v,
                         int64_t dim, int64_t kvHeads, int64_t groups) {
  if (dim < 0)
    return v;
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<ReassociationIndices> reassoc;
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> sizes;
  SmallVector<OpFoldResult> srcSizes = tensor::getMixedSizes(rewriter, loc, v);
  for (int64_t i = 0, o = 0; i < type.getRank(); ++i) {
    if (i == dim) {
      reassoc.push_back({o, o + 1});
      shape.append({kvHeads, groups});
      sizes.append({rewriter.getIndexAttr(kvHeads), rewriter.getIndexAttr(groups)});
      o += 2;
      continue;
    }
    reassoc.push_back({o++});
    shape.push_back(type.getDimSize(i));
    sizes.push_back(srcSizes[i]);
  }
  auto expanded = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExpandShapeOp::create(rewriter, loc, expanded, v, reassoc,
                                       sizes);
}

/// The score_mod region of `op` from the matched program.
static void buildScoreModRegion(RewriterBase &rewriter, AttentionOp op,
                                const AttentionMatch &match) {
  OpBuilder::InsertionGuard guard(rewriter);
  Location loc = op.getLoc();
  unsigned numBatch = op.getNumBatchDims();
  SmallVector<Type> argTypes = {rewriter.getF32Type()};
  argTypes.append(numBatch + 2, rewriter.getIndexType());
  for (Value v : op.getModOperands())
    argTypes.push_back(cast<ShapedType>(v.getType()).getElementType());
  Block *block = rewriter.createBlock(
      &op.getScoreMod(), {}, argTypes,
      SmallVector<Location>(argTypes.size(), loc));
  OpBuilder &b = rewriter;
  Type f32 = b.getF32Type(), i64 = b.getI64Type(), i1 = b.getI1Type();
  auto typeOf = [&](ScoreModNode::Type t) -> Type {
    switch (t) {
    case ScoreModNode::F32: return f32;
    case ScoreModNode::I64: return i64;
    case ScoreModNode::I1: return i1;
    case ScoreModNode::IndexT: return b.getIndexType();
    }
    return f32;
  };
  // A loop of the matched attention (before a GQA split) as a block index.
  int64_t h = match.splitHeadLoop;
  auto loopIndex = [&](unsigned d) -> Value {
    if (h < 0 || d < h)
      return block->getArgument(1 + d);
    if (d > h)
      return block->getArgument(2 + d);
    // head = kv head * group size + member of the group.
    Value kv = block->getArgument(1 + h), g = block->getArgument(2 + h);
    Value groups = arith::ConstantIndexOp::create(b, loc, match.groups);
    return arith::AddIOp::create(b, loc,
                                 arith::MulIOp::create(b, loc, kv, groups), g);
  };
  const ScoreModProgram &prog = match.scoreMod;
  SmallVector<Value> vals;
  for (const ScoreModNode &n : prog.nodes) {
    Type type = typeOf(n.type);
    Value v;
    switch (n.kind) {
    case ScoreModNode::Score:
      v = block->getArgument(0);
      break;
    case ScoreModNode::Index:
      v = loopIndex(n.dim);
      break;
    case ScoreModNode::Operand: {
      v = block->getArgument(numBatch + 3 + n.dim);
      Type t = v.getType();
      if (t == type)
        break;
      if (isa<FloatType>(t))
        v = arith::ExtFOp::create(b, loc, type, v);
      else if (t.isIndex())
        v = arith::IndexCastOp::create(b, loc, type, v);
      else
        v = arith::ExtSIOp::create(b, loc, type, v);
      break;
    }
    case ScoreModNode::Const:
      v = isa<FloatType>(type)
              ? arith::ConstantOp::create(b, loc, b.getFloatAttr(type, n.value))
                    .getResult()
              : arith::ConstantOp::create(
                    b, loc, b.getIntegerAttr(type, static_cast<int64_t>(n.value)))
                    .getResult();
      break;
    case ScoreModNode::Op: {
      SmallVector<Value> operands;
      for (int o : n.operands)
        operands.push_back(vals[o]);
      if (n.name == "arith.cmpf")
        v = arith::CmpFOp::create(
            b, loc, static_cast<arith::CmpFPredicate>(n.predicate), operands[0],
            operands[1]);
      else if (n.name == "arith.cmpi")
        v = arith::CmpIOp::create(
            b, loc, static_cast<arith::CmpIPredicate>(n.predicate), operands[0],
            operands[1]);
      else if (n.name == "arith.select")
        v = arith::SelectOp::create(b, loc, operands[0], operands[1],
                                    operands[2]);
      else {
        OperationState state(loc, n.name);
        state.addOperands(operands);
        state.addTypes(type);
        v = b.create(state)->getResult(0);
      }
      break;
    }
    }
    vals.push_back(v);
  }
  YieldOp::create(b, loc, vals[prog.result]);
}

FailureOr<AttentionOp> mlir::attn::fuseAttention(RewriterBase &rewriter,
                                                 const AttentionMatch &match) {
  Operation *root = match.root;
  OpBuilder::InsertionGuard guard(rewriter);
  // Shape queries of the chain first, while every op they walk is there.
  llvm::SetVector<Operation *> dead(match.deadChain.begin(),
                                    match.deadChain.end());
  for (Operation *user : match.dimUsers) {
    auto dim = cast<tensor::DimOp>(user);
    rewriter.setInsertionPoint(dim);
    FailureOr<Value> size =
        liveDimSize(dim.getSource(), *dim.getConstantIndex(), dead, &rewriter,
                    dim.getLoc());
    if (failed(size))
      return failure(); // the matcher checked this
    rewriter.replaceOp(dim, *size);
  }
  rewriter.setInsertionPoint(root);
  Location loc = root->getLoc();
  Value scale = arith::ConstantOp::create(
      rewriter, loc, rewriter.getF32FloatAttr(static_cast<float>(match.scale)));
  Value valueScale;
  if (match.valueScale != 1.0 || !match.valueScaleFactors.empty())
    valueScale = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getF32FloatAttr(static_cast<float>(match.valueScale)));
  // Runtime per-tensor scales (FP8): each scalar read, widened to f32 and
  // multiplied into (or divided out of) the constant part.
  auto applyFactors = [&](Value acc, ArrayRef<RuntimeScaleFactor> factors) {
    for (const RuntimeScaleFactor &f : factors) {
      Value x = f.source;
      if (isa<RankedTensorType>(x.getType())) {
        SmallVector<Value> idx;
        for (int64_t i : f.indices)
          idx.push_back(arith::ConstantIndexOp::create(rewriter, loc, i));
        x = tensor::ExtractOp::create(rewriter, loc, x, idx);
      }
      if (!x.getType().isF32())
        x = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), x);
      acc = f.divide ? Value(arith::DivFOp::create(rewriter, loc, acc, x))
                     : Value(arith::MulFOp::create(rewriter, loc, acc, x));
    }
    return acc;
  };
  scale = applyFactors(scale, match.scaleFactors);
  if (valueScale)
    valueScale = applyFactors(valueScale, match.valueScaleFactors);
  SmallVector<AffineMap> maps = {match.queryMap, match.keyMap, match.valueMap,
                                 match.outputMap};
  Value mask, sink;
  if (match.mask) {
    maps.push_back(match.maskMap);
    mask = prepareMask(rewriter, loc, match);
  }
  if (match.sink) {
    maps.push_back(match.sinkMap);
    sink = dropUnitDims(rewriter, loc, match.sink, match.sinkUnitDims);
  }
  auto heads = [&](Value v, int64_t dim) {
    return expandHeads(rewriter, loc, v, dim, match.kvHeads, match.groups);
  };
  Value query = heads(match.query, match.queryExpandDim);
  Value value = heads(match.value, match.valueExpandDim);
  Value init = heads(match.init, match.outputExpandDim);
  // The op rounds its f32 result once to the element type of its init, so a
  // cast of the f32 output to 16 bits (torch's f16 matmul accumulating in
  // f32) is the op itself writing 16 bits: the tensor-core kernels take it.
  linalg::GenericOp outputCast;
  if (match.outputExpandDim < 0 && root->getResult(0).hasOneUse())
    if (auto g = dyn_cast<linalg::GenericOp>(*root->getUsers().begin()))
      if (g.getNumDpsInputs() == 1 && g.getNumDpsInits() == 1 &&
          g.getNumReductionLoops() == 0 &&
          llvm::all_of(g.getIndexingMapsArray(),
                       [](AffineMap m) { return m.isIdentity(); })) {
        Block &body = g.getRegion().front();
        auto trunc = dyn_cast<arith::TruncFOp>(&body.front());
        auto type = cast<RankedTensorType>(g.getResult(0).getType());
        if (trunc && trunc.getIn() == body.getArgument(0) &&
            &body.back() == trunc->getNextNode() &&
            body.getTerminator()->getOperand(0) == trunc.getResult() &&
            (type.getElementType().isF16() || type.getElementType().isBF16()))
          outputCast = g;
      }
  if (outputCast)
    init = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, init),
        cast<RankedTensorType>(outputCast.getResult(0).getType())
            .getElementType());
  if (mask)
    mask = heads(mask, match.maskExpandDim);
  if (sink)
    sink = heads(sink, match.sinkExpandDim);
  SmallVector<Value> modOperands;
  for (auto [v, map, unitDims] :
       llvm::zip(match.scoreMod.operands, match.scoreMod.operandMaps,
                 match.scoreMod.operandUnitDims)) {
    modOperands.push_back(dropUnitDims(rewriter, loc, v, unitDims));
    maps.push_back(map);
  }
  // The lse result: the output's dims without e, in the output's order.
  Type lseType;
  SmallVector<int64_t> lseOpLoops;
  if (match.lse) {
    auto outType = cast<RankedTensorType>(init.getType());
    SmallVector<OpFoldResult> sizes;
    SmallVector<int64_t> shape;
    for (auto [p, e] : llvm::enumerate(match.outputMap.getResults())) {
      int64_t loop = cast<AffineDimExpr>(e).getPosition();
      if (loop == match.numBatch + 3)
        continue;
      lseOpLoops.push_back(loop);
      shape.push_back(outType.getDimSize(p));
    }
    lseType = RankedTensorType::get(shape, rewriter.getF32Type());
  }
  auto op = AttentionOp::create(
      rewriter, loc, init.getType(), lseType, query, match.key, value, scale,
      init, mask, sink, modOperands, valueScale,
      rewriter.getAffineMapArrayAttr(maps), match.causal,
      match.window ? rewriter.getI64IntegerAttr(*match.window) : IntegerAttr(),
      match.maskValue ? rewriter.getF32FloatAttr(*match.maskValue)
                      : FloatAttr(),
      match.queryOffset ? rewriter.getI64IntegerAttr(match.queryOffset)
                        : IntegerAttr());
  if (!match.scoreMod.empty())
    buildScoreModRegion(rewriter, op, match);
  if (match.lse) {
    // Into the program's layout: a transpose, then its kept unit key dim.
    Value lse = op.getLse();
    SmallVector<int64_t> perm;
    for (int64_t loop : match.lseLoops)
      perm.push_back(llvm::find(lseOpLoops, loop) - lseOpLoops.begin());
    if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()))) {
      SmallVector<OpFoldResult> sizes;
      for (int64_t p : perm)
        sizes.push_back(tensor::getMixedSize(rewriter, loc, lse, p));
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, sizes, rewriter.getF32Type());
      lse = linalg::TransposeOp::create(rewriter, loc, lse, empty, perm)
                ->getResult(0);
    }
    auto want = cast<RankedTensorType>(match.lse.getType());
    if (match.lseKeptDim >= 0) {
      // The unit dim joins its left neighbour's group (the first group
      // when it leads).
      SmallVector<ReassociationIndices> reassoc;
      int64_t k = match.lseKeptDim, rank = want.getRank();
      for (int64_t i = 0; i < rank; ++i)
        if (i != k)
          reassoc.push_back({i});
      if (k == 0)
        reassoc.front().insert(reassoc.front().begin(), 0);
      else
        for (ReassociationIndices &g : reassoc)
          if (g.back() == k - 1)
            g.push_back(k);
      lse = tensor::ExpandShapeOp::create(rewriter, loc, want, lse, reassoc);
    } else if (lse.getType() != want) {
      lse = tensor::CastOp::create(rewriter, loc, want, lse);
    }
    rewriter.replaceAllUsesWith(match.lse, lse);
  }
  Value result = op.getResult();
  if (match.outputExpandDim >= 0)
    result = tensor::CollapseShapeOp::create(
        rewriter, loc, root->getResult(0).getType(), result,
        cast<tensor::ExpandShapeOp>(init.getDefiningOp())
            .getReassociationIndices());
  if (outputCast) {
    rewriter.replaceOp(outputCast, result);
    rewriter.eraseOp(root);
  } else {
    rewriter.replaceOp(root, result);
  }
  // Consumers first: each op of the chain is dead when reached.
  llvm::SetVector<Operation *> producers;
  for (Operation *dead : match.deadChain) {
    for (Value v : dead->getOperands())
      if (Operation *def = v.getDefiningOp())
        producers.insert(def);
    producers.remove(dead);
    rewriter.eraseOp(dead);
  }
  eraseDead(rewriter, producers);
  return op;
}

namespace {
/// Fuses the attention whose P·V contraction is the matched op.
struct FuseAttentionPattern
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    FailureOr<AttentionMatch> match = matchAttention(op, why);
    if (failed(match))
      return rewriter.notifyMatchFailure(op, why);
    return fuseAttention(rewriter, *match);
  }
};
} // namespace

void mlir::attn::populateAttnFusionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseAttentionPattern>(patterns.getContext());
}

/// The contractions a softmax-like op's result reaches through elementwise
/// ops, reductions, casts and reshapes: the P·V candidates.
static SmallVector<Operation *> findPVCandidates(Operation *anchor) {
  SmallVector<Operation *> found;
  llvm::SetVector<Operation *> seen;
  SmallVector<std::pair<Operation *, int>> stack = {{anchor, 0}};
  while (!stack.empty()) {
    auto [op, depth] = stack.pop_back_val();
    if (!seen.insert(op) || depth > 16)
      continue;
    for (Operation *user : op->getUsers()) {
      auto lop = dyn_cast<linalg::LinalgOp>(user);
      if (lop && linalg::isaContractionOpInterface(lop)) {
        if (!llvm::is_contained(found, user))
          found.push_back(user);
        continue;
      }
      if (lop || isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                     tensor::CastOp, tensor::ExtractSliceOp>(user))
        stack.push_back({user, depth + 1});
    }
  }
  return found;
}

namespace {
/// Why candidates were refused, in the buckets the pass statistics report.
enum class Refusal { Softmax, Scores, Contractions, Uses, Shapes, TooLarge,
                     Tosa, Other, Count };
struct FuseCounts {
  unsigned fused = 0;
  unsigned refused[static_cast<int>(Refusal::Count)] = {};
  void refuse(Refusal r) { ++refused[static_cast<int>(r)]; }
};
} // namespace

/// The statistics bucket of a refusal reason (the matcher's `why`).
static Refusal classifyRefusal(StringRef why) {
  auto has = [&](StringRef s) { return why.contains(s); };
  if (has("too large to trace"))
    return Refusal::TooLarge;
  if (has("other uses"))
    return Refusal::Uses;
  if (has("element type") || has("empty dimension") || has("heads") ||
      has("K has a dimension") || has("batch dimension") ||
      has("query dimension left"))
    return Refusal::Shapes;
  if (has("softmax normalizes") || has("not over the key axis"))
    return Refusal::Softmax;
  if (has("P·V") || has("Q·K^T must") || has("Q·K^T reads") ||
      has("Q·K^T writes") || has("accumulator") || has("contraction (P·V)") ||
      has("spans several blocks"))
    return Refusal::Contractions;
  if (has("softmax") || has("exponentials") || has("normalized") ||
      has("probabilities") || has("reduction") || has("guards"))
    return Refusal::Softmax;
  if (has("scores") || has("mask") || has("scale") || has("sink") ||
      has("select") || has("not part of a softmax"))
    return Refusal::Scores;
  return Refusal::Other;
}

/// Fuses every recognized attention under `scope`; returns how many.
static unsigned fuseIn(Operation *scope, bool explain, FuseCounts &counts,
                       function_ref<bool(Operation *)> skip = nullptr) {
  // Candidates are softmax-like ops (linalg.softmax, or a linalg op whose
  // body exponentiates); the P·V contractions they reach anchor the match.
  // Walking candidates (rather than running a greedy driver) gives exactly
  // one remark per candidate.
  SmallVector<Operation *> candidates;
  scope->walk([&](Operation *op) {
    if (isSoftmaxCandidate(op) && !(skip && skip(op)))
      candidates.push_back(op);
  });
  IRRewriter rewriter(scope->getContext());
  llvm::DenseSet<Operation *> erased, tried;
  unsigned fused = 0;
  // exp inside a score modification makes its op a candidate too: judged
  // once the attentions are fused (it is gone if one took it in).
  SmallVector<Operation *> unreached;
  for (Operation *anchor : candidates) {
    if (erased.contains(anchor))
      continue;
    SmallVector<Operation *> roots = findPVCandidates(anchor);
    if (roots.empty()) {
      unreached.push_back(anchor);
      continue;
    }
    for (Operation *root : roots) {
      if (erased.contains(root) || !tried.insert(root).second)
        continue;
      std::string why;
      FailureOr<AttentionMatch> match = matchAttention(root, why);
      if (failed(match)) {
        counts.refuse(classifyRefusal(why));
        if (explain)
          emitRemark(anchor->getLoc(), "attention not fused: ") << why;
        continue;
      }
      if (explain) {
        std::string what = match->describe();
        emitRemark(anchor->getLoc(), "attention fused: ") << what;
        emitRemark(match->qkContraction->getLoc(),
                   "Q·K^T of a fused attention (")
            << what << ")";
      }
      erased.insert(root);
      erased.insert(match->deadChain.begin(), match->deadChain.end());
      erased.insert(match->dimUsers.begin(), match->dimUsers.end());
      (void)fuseAttention(rewriter, *match);
      ++fused;
      ++counts.fused;
      break;
    }
  }
  for (Operation *anchor : unreached) {
    if (erased.contains(anchor))
      continue;
    counts.refuse(Refusal::Contractions);
    if (explain)
      emitRemark(anchor->getLoc(),
                 "attention not fused: the softmax result does not reach "
                 "a contraction (P·V)");
  }
  return fused;
}

static bool hasTosa(Operation *op) {
  return op
      ->walk([](Operation *o) {
        return o->getDialect() &&
                       o->getDialect()->getNamespace() == "tosa"
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// TOSA is recognized through its standard lowering: a clone of the function
/// goes through tosa-to-linalg; only if attention is fused there does the
/// clone replace the body, so TOSA without attention stays TOSA.
static void fuseInTosaFunction(func::FuncOp func, bool explain,
                               FuseCounts &counts) {
  MLIRContext *ctx = func.getContext();
  OwningOpRef<ModuleOp> tmp = ModuleOp::create(func.getLoc());
  func::FuncOp clone = func.clone();
  tmp->push_back(clone);
  // The functions it may call, as declarations: the clone must verify
  // without the rest of its module.
  if (Operation *table = SymbolTable::getNearestSymbolTable(func->getParentOp()))
    for (Region &region : table->getRegions())
      for (Block &block : region)
        for (auto other : block.getOps<func::FuncOp>())
          if (other != func) {
            auto decl = func::FuncOp::create(other.getLoc(), other.getName(),
                                             other.getFunctionType());
            decl.setPrivate();
            tmp->push_back(decl);
          }
  PassManager pm(ctx, ModuleOp::getOperationName());
  tosa::addTosaToLinalgPasses(pm, TosaToLinalgOptions());
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  fpm.addPass(createTosaToArithPass());
  fpm.addPass(createTosaToTensorPass());
  // The function is left unchanged if the standard lowering fails (dynamic
  // or unranked shapes, tosa.custom, ...): its errors are not the user's.
  std::string firstError;
  LogicalResult lowered = success();
  {
    ScopedDiagnosticHandler quiet(ctx, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error && firstError.empty())
        firstError = diag.str();
      return success();
    });
    lowered = pm.run(*tmp);
  }
  if (failed(lowered)) {
    counts.refuse(Refusal::Tosa);
    if (explain)
      emitRemark(func.getLoc(), "attention not fused: this TOSA function does "
                                "not convert to linalg (")
          << firstError << ")";
    return;
  }
  // Refusals in the clone count; fusions count once the body is taken.
  FuseCounts inClone;
  unsigned fused = fuseIn(clone, explain, inClone);
  for (int i = 0; i < static_cast<int>(Refusal::Count); ++i)
    counts.refused[i] += inClone.refused[i];
  if (fused == 0)
    return;
  counts.fused += fused;
  func.getBody().takeBody(clone.getBody());
}

namespace {
/// Named contractions and transposes as linalg.generic, so reshapes can be
/// folded through them (fills and linalg.softmax stay as they are).
struct GeneralizeContraction
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (isa<linalg::GenericOp>(op) ||
        !(linalg::isaContractionOpInterface(op) ||
          isa<linalg::TransposeOp>(op)))
      return failure();
    return linalg::generalizeNamedOp(rewriter, op);
  }
};
} // namespace

namespace {
/// Operands read or written at index 0 of unit dims (`(b, h, m, n) -> (0, 0,
/// m, n)` on a [1, 1, M, N] mask, `(b, h, m, n) -> (b, h, m, 0)` on a
/// keep-dims row sum) are made rank-reduced (a collapse_shape, and for a
/// result an expand_shape back), which reshape propagation requires.
struct ReadUnitDimsRankReduced : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The unit dims `map` reads at constant 0, and the reassociation that
  /// drops them (each joins the next kept dim, trailing ones the last).
  static std::optional<std::pair<llvm::SmallBitVector,
                                 SmallVector<ReassociationIndices>>>
  unitDims(RankedTensorType type, AffineMap map) {
    if (type.getRank() == 0)
      return std::nullopt;
    llvm::SmallBitVector drop(type.getRank());
    for (auto [i, e] : llvm::enumerate(map.getResults()))
      if (auto c = dyn_cast<AffineConstantExpr>(e);
          c && c.getValue() == 0 && type.getDimSize(i) == 1)
        drop.set(i);
    if (drop.none())
      return std::nullopt;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (int64_t i = 0; i < type.getRank(); ++i) {
      pending.push_back(i);
      if (!drop.test(i)) {
        groups.push_back(pending);
        pending.clear();
      }
    }
    if (!groups.empty())
      llvm::append_range(groups.back(), pending);
    return std::make_pair(drop, groups);
  }

  static Value reduce(PatternRewriter &rewriter, Location loc, Value v,
                      const llvm::SmallBitVector &drop,
                      ArrayRef<ReassociationIndices> groups) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (!drop.test(i))
        shape.push_back(type.getDimSize(i));
    return tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, type.getElementType()), v,
        groups);
  }

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    for (OpOperand *in : op.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(in->get().getType());
      unsigned n = in->getOperandNumber();
      auto unit = type ? unitDims(type, maps[n]) : std::nullopt;
      if (!unit)
        continue;
      Value reduced =
          reduce(rewriter, op.getLoc(), in->get(), unit->first, unit->second);
      maps[n] = maps[n].dropResults(unit->first);
      rewriter.modifyOpInPlace(op, [&] {
        in->set(reduced);
        op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      return success();
    }
    // Results: rebuild the op with rank-reduced inits, expand back.
    SmallVector<Value> inits(op.getDpsInits());
    SmallVector<std::optional<SmallVector<ReassociationIndices>>> expandBack(
        inits.size());
    bool any = false;
    for (auto [i, init] : llvm::enumerate(inits)) {
      auto type = dyn_cast<RankedTensorType>(init.getType());
      unsigned n = op.getNumDpsInputs() + i;
      auto unit = type ? unitDims(type, maps[n]) : std::nullopt;
      if (!unit)
        continue;
      init = reduce(rewriter, op.getLoc(), init, unit->first, unit->second);
      maps[n] = maps[n].dropResults(unit->first);
      expandBack[i] = unit->second;
      any = true;
    }
    if (!any)
      return failure();
    auto reducedOp = linalg::GenericOp::create(
        rewriter, op.getLoc(), ValueRange(inits).getTypes(), op.getDpsInputs(),
        inits, maps, op.getIteratorTypesArray());
    rewriter.inlineRegionBefore(op.getRegion(), reducedOp.getRegion(),
                                reducedOp.getRegion().end());
    SmallVector<Value> results;
    for (auto [i, r] : llvm::enumerate(reducedOp.getResults())) {
      if (!expandBack[i]) {
        results.push_back(r);
        continue;
      }
      results.push_back(tensor::ExpandShapeOp::create(
          rewriter, op.getLoc(), op.getResult(i).getType(), r,
          *expandBack[i]));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};
} // namespace

/// Only the reshapes that merge or split real dims (batch x heads) are
/// propagated; unit-dim reshapes stay where they are.
static bool foldsHeadReshape(OpOperand *operand) {
  auto merges = [](ArrayRef<int64_t> shape,
                   ArrayRef<ReassociationIndices> groups) {
    return llvm::any_of(groups, [&](const ReassociationIndices &g) {
      return llvm::count_if(g, [&](int64_t d) { return shape[d] != 1; }) > 1;
    });
  };
  if (auto c = operand->get().getDefiningOp<tensor::CollapseShapeOp>())
    return merges(c.getSrcType().getShape(), c.getReassociationIndices());
  if (auto e = dyn_cast<tensor::ExpandShapeOp>(operand->getOwner()))
    return merges(e.getResultType().getShape(), e.getReassociationIndices());
  return false;
}

/// torch-mlir collapses batch and heads into one dim around every
/// batch_matmul (collapse_shape on Q, Kᵀ, P, V; expand_shape on the scores
/// and the output). A contraction whose operand is such a collapse_shape is
/// what the recognizer cannot see through.
static bool hasCollapsedContraction(func::FuncOp func) {
  return func
      ->walk([](linalg::LinalgOp op) {
        if (!linalg::isaContractionOpInterface(op))
          return WalkResult::advance();
        for (Value in : op.getDpsInputs())
          if (in.getDefiningOp<tensor::CollapseShapeOp>())
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

namespace {
/// Remarks of one fusion attempt, replayed only for the attempt kept.
struct RecordedRemarks {
  SmallVector<std::pair<Location, std::string>> remarks;
  void replay(StringRef refusalNote = "") const {
    for (auto &[loc, msg] : remarks) {
      if (!refusalNote.empty() && StringRef(msg).starts_with("attention not"))
        emitRemark(loc, msg + refusalNote);
      else
        emitRemark(loc, msg);
    }
  }
};
} // namespace

static unsigned fuseRecorded(func::FuncOp func, bool explain,
                             FuseCounts &counts, RecordedRemarks &rec) {
  ScopedDiagnosticHandler capture(func.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Remark) {
      rec.remarks.push_back({d.getLocation(), d.str()});
      return success();
    }
    return failure(); // anything else goes on to the user
  });
  return fuseIn(func, explain, counts);
}

/// Fuses in `func` either as written or after folding the batch/head
/// collapse_shapes into 4-d contractions (upstream reshape propagation by
/// expansion, on a clone), whichever fuses more; the function is replaced
/// only in the second case. Returns false if `func` is not such a function.
static bool fuseThroughCollapsedHeads(func::FuncOp func, bool explain,
                                      FuseCounts &counts) {
  if (!hasCollapsedContraction(func))
    return false;
  MLIRContext *ctx = func.getContext();
  OwningOpRef<func::FuncOp> asWritten = func.clone();
  OwningOpRef<func::FuncOp> expanded = func.clone();
  // Bounded: rewrites are capped by the size of the function, so no input
  // can make the patterns run away.
  int64_t numOps = 0;
  expanded->walk([&](Operation *) { ++numOps; });
  GreedyRewriteConfig config;
  config.setMaxIterations(4).setMaxNumRewrites(4 * numOps + 64);
  // Broadcast operands read at constant indices of unit dims (a [1, 1, M, N]
  // mask) block expansion: first read them rank-reduced.
  RewritePatternSet unitPatterns(ctx);
  unitPatterns.add<GeneralizeContraction, ReadUnitDimsRankReduced>(ctx);
  RewritePatternSet patterns(ctx);
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                    foldsHeadReshape);
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
  bool propagated =
      succeeded(applyPatternsGreedily(expanded->getOperation(),
                                      std::move(unitPatterns), config)) &&
      succeeded(applyPatternsGreedily(expanded->getOperation(),
                                      std::move(patterns), config));
  FuseCounts plainCounts, expandedCounts;
  RecordedRemarks plainRemarks, expandedRemarks;
  unsigned plain = fuseRecorded(*asWritten, explain, plainCounts, plainRemarks);
  unsigned viaExpansion =
      propagated ? fuseRecorded(*expanded, explain, expandedCounts,
                                expandedRemarks)
                 : 0;
  bool useExpanded = viaExpansion > plain;
  const FuseCounts &kept = useExpanded ? expandedCounts : plainCounts;
  counts.fused += kept.fused;
  for (int i = 0; i < static_cast<int>(Refusal::Count); ++i)
    counts.refused[i] += kept.refused[i];
  // Both refused: the reasons seen through torch-mlir's reshapes say more
  // than "no softmax feeds this contraction" at a collapsed batch_matmul.
  if (!useExpanded && plain == 0 && propagated)
    expandedRemarks.replay(" (seen through the batch·head collapse_shape / "
                           "expand_shape around batch_matmul that torch-mlir "
                           "writes)");
  else
    (useExpanded ? expandedRemarks : plainRemarks).replay();
  if (useExpanded || plain > 0)
    func.getBody().takeBody((useExpanded ? *expanded : *asWritten).getBody());
  return true;
}

namespace {
struct AttnFusePass : public attn::impl::AttnFuseBase<AttnFusePass> {
  using AttnFuseBase::AttnFuseBase;

  // --mlir-pass-statistics: what was fused and why candidates were refused.
  KeptStatistic numFused{this, "fused", "Attentions fused"};
  KeptStatistic numRefusedSoftmax{
      this, "refused-softmax",
      "Refused: no softmax over the keys (wrong axis, no normalization, "
      "probabilities changed or sliced)"};
  KeptStatistic numRefusedScores{
      this, "refused-scores",
      "Refused: the scores are not scale * Q·K^T + mask (mask, scale, shift "
      "or sink form)"};
  KeptStatistic numRefusedContractions{
      this, "refused-contractions",
      "Refused: Q·K^T or P·V is not the contraction attention needs (axes, "
      "maps, accumulators, no P·V reached)"};
  KeptStatistic numRefusedUses{
      this, "refused-other-uses",
      "Refused: scores, probabilities or an intermediate have other uses"};
  KeptStatistic numRefusedShapes{
      this, "refused-shapes",
      "Refused: dims, heads or element types attn.attention cannot express"};
  KeptStatistic numRefusedTooLarge{
      this, "refused-too-large",
      "Refused: score expression too large to trace"};
  KeptStatistic numRefusedTosa{
      this, "refused-tosa",
      "Refused: a TOSA function the standard lowering rejects"};
  KeptStatistic numRefusedOther{this, "refused-other",
                                "Refused: other reasons"};

  void runOnOperation() override {
    bool explain = this->explain || clExplain;
    SmallVector<func::FuncOp> tosaFuncs;
    getOperation()->walk([&](func::FuncOp f) {
      if (hasTosa(f))
        tosaFuncs.push_back(f);
    });
    FuseCounts counts;
    for (func::FuncOp f : tosaFuncs)
      fuseInTosaFunction(f, explain, counts);
    llvm::DenseSet<Operation *> done(tosaFuncs.begin(), tosaFuncs.end());
    SmallVector<func::FuncOp> funcs;
    getOperation()->walk([&](func::FuncOp f) {
      if (!done.contains(f))
        funcs.push_back(f);
    });
    for (func::FuncOp f : funcs)
      if (fuseThroughCollapsedHeads(f, explain, counts))
        done.insert(f);
    for (func::FuncOp f : tosaFuncs)
      done.erase(f); // their remaining candidates are fused below as usual
    fuseIn(getOperation(), explain, counts, [&](Operation *op) {
      auto f = op->getParentOfType<func::FuncOp>();
      return f && done.contains(f);
    });
    numFused += counts.fused;
    auto refused = [&](Refusal r) {
      return counts.refused[static_cast<int>(r)];
    };
    numRefusedSoftmax += refused(Refusal::Softmax);
    numRefusedScores += refused(Refusal::Scores);
    numRefusedContractions += refused(Refusal::Contractions);
    numRefusedUses += refused(Refusal::Uses);
    numRefusedShapes += refused(Refusal::Shapes);
    numRefusedTooLarge += refused(Refusal::TooLarge);
    numRefusedTosa += refused(Refusal::Tosa);
    numRefusedOther += refused(Refusal::Other);
  }
};
} // namespace
