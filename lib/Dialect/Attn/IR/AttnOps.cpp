//===- AttnOps.cpp - attn operations: verifiers ---------------------------===//
#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

/// Human name of iteration dimension `dim` for diagnostics.
static std::string dimName(unsigned dim, unsigned numBatch) {
  if (dim < numBatch)
    return "batch dimension " + std::to_string(dim);
  static const char *names[] = {"query dimension 'm'", "key dimension 'n'",
                                "head dimension 'd'", "value dimension 'e'"};
  return names[dim - numBatch];
}

LogicalResult AttentionOp::verify() {
  auto qType = getQuery().getType();
  if (qType.getRank() < 2)
    return emitOpError("expects the query to have rank >= 2 (batch..., m, d), "
                       "got rank ")
           << qType.getRank();
  unsigned rank = qType.getRank();
  unsigned numBatch = rank - 2;
  unsigned numLoops = numBatch + 4;
  unsigned mDim = numBatch, nDim = numBatch + 1, dDim = numBatch + 2,
           eDim = numBatch + 3;

  struct Operand {
    StringRef name;
    RankedTensorType type;
    SmallVector<unsigned> allowed; // iteration dims it may index
    SmallVector<unsigned> mustUse; // ... and those it must index
  };
  // FP8: Q, K and V share one 8-bit type (the kernels multiply f8 by f8).
  Type qElt = qType.getElementType();
  if (isFloat8(qElt) || isFloat8(getKey().getType()) ||
      isFloat8(getValue().getType())) {
    if (getKey().getType().getElementType() != qElt ||
        getValue().getType().getElementType() != qElt)
      return emitOpError("expects query, key and value of one 8-bit float "
                         "type when any is 8-bit, got ")
             << qElt << ", " << getKey().getType().getElementType() << ", "
             << getValue().getType().getElementType();
  }
  SmallVector<unsigned> batch = llvm::to_vector(llvm::seq<unsigned>(0, numBatch));
  auto with = [&](std::initializer_list<unsigned> extra) {
    SmallVector<unsigned> v = batch;
    v.append(extra.begin(), extra.end());
    return v;
  };
  // K and V may omit batch dims (grouped-query / multi-query attention: one
  // K/V head serves several query heads); the mask may omit any dim.
  SmallVector<Operand> operands = {
      {"query", qType, with({mDim, dDim}), with({mDim, dDim})},
      {"key", getKey().getType(), with({nDim, dDim}), {nDim, dDim}},
      {"value", getValue().getType(), with({nDim, eDim}), {nDim, eDim}},
      {"output", getInit().getType(), with({mDim, eDim}), with({mDim, eDim})}};
  if (getMask())
    operands.push_back({"mask", getMask().getType(), with({mDim, nDim}), {}});
  if (getSink())
    operands.push_back({"sink", getSink().getType(), with({mDim}), {}});
  for (Value x : getModOperands())
    operands.push_back({"score_mod operand", cast<RankedTensorType>(x.getType()),
                        with({mDim, nDim}), {}});

  SmallVector<AffineMap> maps = getIndexingMapsArray();
  if (maps.size() != operands.size())
    return emitOpError("expects ")
           << operands.size()
           << " indexing maps (query, key, value, output"
           << (getMask() ? ", mask" : "") << (getSink() ? ", sink" : "")
           << (getModOperands().empty() ? "" : ", score_mod operands")
           << "), got " << maps.size();

  // Static size of every iteration dimension, with the operand that fixed it.
  SmallVector<int64_t> sizes(numLoops, ShapedType::kDynamic);
  SmallVector<StringRef> sizeFrom(numLoops);
  for (auto [op, map] : llvm::zip(operands, maps)) {
    auto mapAttr = AffineMapAttr::get(map);
    if (map.getNumDims() != numLoops || map.getNumSymbols() != 0)
      return emitOpError("expects the ")
             << op.name << " indexing map to have " << numLoops
             << " dimensions (" << numBatch
             << " batch + m, n, d, e) and no symbols, got " << mapAttr;
    if (op.allowed.size() == op.mustUse.size() &&
        op.type.getRank() != static_cast<int64_t>(rank))
      return emitOpError("expects the ")
             << op.name << " to have rank " << rank << " like the query, got "
             << op.type.getRank();
    if (map.getNumResults() != op.type.getRank())
      return emitOpError("expects the ")
             << op.name << " indexing map to have " << op.type.getRank()
             << " results (the rank of the " << op.name << "), got " << mapAttr;
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return emitOpError("expects the ")
             << op.name
             << " indexing map to be a projected permutation, got " << mapAttr;
    for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
      unsigned dim = cast<AffineDimExpr>(expr).getPosition();
      if (!llvm::is_contained(op.allowed, dim))
        return emitOpError("the ")
               << op.name << " must not index the "
               << dimName(dim, numBatch) << " (indexing map " << mapAttr << ")";
      int64_t sz = op.type.getDimSize(pos);
      if (ShapedType::isDynamic(sz))
        continue;
      if (!ShapedType::isDynamic(sizes[dim]) && sizes[dim] != sz)
        return emitOpError("has inconsistent sizes for the ")
               << dimName(dim, numBatch) << ": " << sizes[dim] << " in the "
               << sizeFrom[dim] << " but " << sz << " in the " << op.name;
      sizes[dim] = sz;
      sizeFrom[dim] = op.name;
    }
    for (unsigned dim : op.mustUse)
      if (!map.isFunctionOfDim(dim))
        return emitOpError("the ")
               << op.name << " indexing map must use the "
               << dimName(dim, numBatch) << ", got " << mapAttr;
  }
  // An empty dimension leaves nothing to tile or launch; every backend
  // would have to special-case it, so it is rejected here, once.
  for (unsigned dim = 0; dim < numLoops; ++dim)
    if (sizes[dim] == 0)
      return emitOpError("expects non-empty dimensions, but the ")
             << dimName(dim, numBatch) << " has size 0 in the "
             << sizeFrom[dim];
  if (getQueryOffset() && !getCausal() && !getWindow())
    return emitOpError("query_offset only applies to causal or window");
  // +inf (or NaN) as the fill would turn every row with a masked key into
  // NaN; the kernels treat the fill as "minus infinity or a finite value".
  if (std::optional<APFloat> fill = getMaskValue())
    if (fill->isNaN() || (fill->isInfinity() && !fill->isNegative()))
      return emitOpError("expects mask_value to be -inf or finite, got ")
             << fill->convertToDouble();
  if (Value lse = getLse()) {
    // The output's dims without e, in the output's order.
    auto lseType = cast<RankedTensorType>(lse.getType());
    AffineMap om = getOutputMap();
    auto outType = getInit().getType();
    SmallVector<int64_t> want;
    for (auto [p, e] : llvm::enumerate(om.getResults()))
      if (cast<AffineDimExpr>(e).getPosition() != eDim)
        want.push_back(outType.getDimSize(p));
    if (lseType.getRank() != static_cast<int64_t>(want.size()))
      return emitOpError("expects the lse result to have rank ")
             << want.size() << " (the output's dims without e), got "
             << lseType.getRank();
    for (auto [i, w] : llvm::enumerate(want)) {
      int64_t got = lseType.getDimSize(i);
      if (!ShapedType::isDynamic(w) && !ShapedType::isDynamic(got) && w != got)
        return emitOpError("expects the lse result to have the output's "
                           "shape without e, got ")
               << lseType << " for output " << outType;
    }
  }
  return verifyScoreMod(numBatch);
}

//===----------------------------------------------------------------------===//
// MergeOp
//===----------------------------------------------------------------------===//

LogicalResult PageGatherOp::verify() {
  auto cache = getCache().getType();
  auto table = getTable().getType();
  auto result = getResult().getType();
  int64_t rank = cache.getRank();
  int64_t seq = getSeqDim(), tok = getTokenDim();
  if (seq >= rank || tok >= rank || seq == tok)
    return emitOpError("expects seq_dim and token_dim to be two different "
                       "dimensions of the cache (rank ")
           << rank << "), got " << seq << " and " << tok;
  if (table.getRank() != 2)
    return emitOpError("expects a block table of rank 2 (sequences x pages "
                       "per sequence), got ")
           << table;
  if (result.getRank() != rank ||
      result.getElementType() != cache.getElementType())
    return emitOpError("expects the result to have the cache's rank and "
                       "element type, got ")
           << result << " for " << cache;
  auto known = [](int64_t a, int64_t b) {
    return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
  };
  for (int64_t d = 0; d < rank; ++d) {
    int64_t want = cache.getDimSize(d);
    if (d == seq)
      want = table.getDimSize(0);
    else if (d == tok)
      want = ShapedType::isDynamic(want) ||
                     ShapedType::isDynamic(table.getDimSize(1))
                 ? ShapedType::kDynamic
                 : want * table.getDimSize(1);
    if (!known(want, result.getDimSize(d)))
      return emitOpError("expects result dimension ")
             << d << " to be " << want
             << (d == seq   ? " (the table's sequences)"
                 : d == tok ? " (pages per sequence x page size)"
                            : " (the cache's)")
             << ", got " << result.getDimSize(d);
  }
  for (int64_t d : {seq, tok})
    if (cache.getDimSize(d) == 0)
      return emitOpError("expects a non-empty cache, dimension ")
             << d << " has size 0";
  return success();
}

LogicalResult LengthMaskOp::verify() {
  auto lens = getLengths().getType();
  auto res = getResult().getType();
  if (lens.getRank() != 1 || res.getRank() != 2)
    return emitOpError("expects lengths [B] and a result [B, N], got ")
           << lens << " and " << res;
  if (!ShapedType::isDynamic(lens.getDimSize(0)) &&
      !ShapedType::isDynamic(res.getDimSize(0)) &&
      lens.getDimSize(0) != res.getDimSize(0))
    return emitOpError("expects one length per result row, got ")
           << lens.getDimSize(0) << " lengths for " << res.getDimSize(0)
           << " rows";
  if (ShapedType::isDynamic(res.getDimSize(1)))
    return emitOpError("expects a static key count (the result's dim 1)");
  return success();
}

LogicalResult VarlenMaskOp::verify() {
  auto cq = getCuSeqlensQ().getType();
  auto ck = getCuSeqlensK().getType();
  auto res = getResult().getType();
  if (cq.getRank() != 1 || ck.getRank() != 1 || res.getRank() != 2)
    return emitOpError("expects cumulative lengths [S + 1] for queries and "
                       "keys and a result [Tq, Tk], got ")
           << cq << ", " << ck << " and " << res;
  if (!cq.hasStaticShape() || !ck.hasStaticShape() ||
      cq.getDimSize(0) != ck.getDimSize(0))
    return emitOpError("expects query and key tables of one static size "
                       "(S + 1), got ")
           << cq << " and " << ck;
  if (cq.getDimSize(0) < 2)
    return emitOpError("expects at least one sequence (S + 1 >= 2 table "
                       "entries), got ")
           << cq.getDimSize(0);
  if (getSizes().size() != static_cast<size_t>(res.getNumDynamicDims()))
    return emitOpError("expects one size per dynamic token count (")
           << res.getNumDynamicDims() << " for " << res << "), got "
           << getSizes().size();
  if (getBottomRight() && !getCausal())
    return emitOpError("bottom_right aligns the causal rule; it needs causal");
  return success();
}

LogicalResult MergeOp::verify() {
  if (getOutputs().empty())
    return emitOpError("expects at least one partial result");
  if (getOutputs().size() != getLses().size())
    return emitOpError("expects one lse per partial output, got ")
           << getOutputs().size() << " outputs and " << getLses().size()
           << " lses";
  auto resType = cast<RankedTensorType>(getResult().getType());
  auto lseType = cast<RankedTensorType>(getLse().getType());
  if (resType.getRank() < 1 || lseType.getRank() + 1 != resType.getRank())
    return emitOpError("expects the lse to have the result's shape without "
                       "its last dim, got ")
           << lseType << " for " << resType;
  auto compatible = [](ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
    if (a.size() != b.size())
      return false;
    for (auto [x, y] : llvm::zip(a, b))
      if (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x != y)
        return false;
    return true;
  };
  if (!compatible(lseType.getShape(), resType.getShape().drop_back()))
    return emitOpError("expects the lse to have the result's shape without "
                       "its last dim, got ")
           << lseType << " for " << resType;
  for (auto [i, o] : llvm::enumerate(getOutputs()))
    if (!compatible(cast<ShapedType>(o.getType()).getShape(),
                    resType.getShape()))
      return emitOpError("expects partial output #")
             << i << " to have the result's shape, got " << o.getType();
  for (auto [i, l] : llvm::enumerate(getLses()))
    if (!compatible(cast<ShapedType>(l.getType()).getShape(),
                    lseType.getShape()))
      return emitOpError("expects lse #")
             << i << " to have the lse result's shape, got " << l.getType();
  return success();
}

LogicalResult AttentionOp::verifyScoreMod(unsigned numBatch) {
  Region &region = getScoreMod();
  if (region.empty()) {
    if (!getModOperands().empty())
      return emitOpError("has score_mod_operands but no score_mod region");
    return success();
  }
  if (!region.hasOneBlock())
    return emitOpError("expects the score_mod region to have one block");
  Block &block = region.front();
  unsigned numMod = getModOperands().size();
  unsigned expected = 1 + numBatch + 2 + numMod;
  if (block.getNumArguments() != expected)
    return emitOpError("expects the score_mod block to take ")
           << expected << " arguments (the f32 score, " << numBatch
           << " batch indices, m, n, " << numMod
           << " operand elements), got " << block.getNumArguments();
  Builder b(getContext());
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    Type want = i == 0 ? b.getF32Type()
                : i <= numBatch + 2
                    ? Type(b.getIndexType())
                    : cast<ShapedType>(getModOperands()[i - numBatch - 3]
                                           .getType())
                          .getElementType();
    if (arg.getType() != want)
      return emitOpError("expects score_mod argument #")
             << i << " to be " << want << ", got " << arg.getType();
  }
  if (!isa_and_nonnull<YieldOp>(block.getTerminator()))
    return emitOpError("expects the score_mod region to end in attn.yield");
  // Scalar arithmetic only: every backend clones the body per score element.
  for (Operation &op : block.without_terminator()) {
    StringRef dialect = op.getName().getDialectNamespace();
    if ((dialect != "arith" && dialect != "math") || op.getNumRegions() ||
        !isMemoryEffectFree(&op))
      return op.emitOpError("is not allowed in a score_mod region (scalar "
                            "arith and math ops only)");
    for (Type t : op.getResultTypes())
      if (!t.isIntOrIndexOrFloat())
        return op.emitOpError("has a non-scalar result in a score_mod region");
  }
  return success();
}

void AttentionOp::getAsmBlockArgumentNames(Region &region,
                                           OpAsmSetValueNameFn setNameFn) {
  if (region.empty())
    return;
  Block &block = region.front();
  unsigned numBatch = getNumBatchDims();
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    if (i == 0)
      setNameFn(arg, "score");
    else if (i <= numBatch)
      setNameFn(arg, "b" + std::to_string(i - 1));
    else if (i == numBatch + 1)
      setNameFn(arg, "m");
    else if (i == numBatch + 2)
      setNameFn(arg, "n");
    else
      setNameFn(arg, "x" + std::to_string(i - numBatch - 3));
  }
}

//===----------------------------------------------------------------------===//
// OnlineUpdateOp
//===----------------------------------------------------------------------===//

/// Checks that `a` dim `i` and `b` dim `j` agree when both are static.
static LogicalResult checkDim(Operation *op, RankedTensorType a, unsigned i,
                              StringRef aName, RankedTensorType b, unsigned j,
                              StringRef bName, StringRef what) {
  int64_t x = a.getDimSize(i), y = b.getDimSize(j);
  if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y) || x == y)
    return success();
  return op->emitOpError("expects ")
         << aName << " and " << bName << " to agree on the " << what
         << ", got " << x << " and " << y;
}

LogicalResult OnlineUpdateOp::verify() {
  auto s = getScores().getType(), v = getValue().getType(),
       m = getMax().getType(), acc = getAcc().getType();
  int64_t rank = s.getRank();
  if (rank < 2)
    return emitOpError("expects scores of rank >= 2 (batch..., m, n), got ")
           << rank;
  // Batch dims of S that V has: all of them unless stated.
  SmallVector<int64_t> vBatch =
      getValueBatchDims()
          ? llvm::to_vector(*getValueBatchDims())
          : llvm::to_vector(llvm::seq<int64_t>(0, rank - 2));
  for (auto [i, d] : llvm::enumerate(vBatch))
    if (d < 0 || d >= rank - 2 || (i > 0 && d <= vBatch[i - 1]))
      return emitOpError("expects value_batch_dims to be increasing batch "
                         "dimensions of the scores");
  int64_t vRank = vBatch.size() + 2;
  if (v.getRank() != vRank || acc.getRank() != rank || m.getRank() != rank - 1)
    return emitOpError("expects scores and acc of rank ")
           << rank << ", value of rank " << vRank << " and max/sum of rank "
           << rank - 1;
  Operation *op = getOperation();
  for (int64_t i = 0; i < rank - 2; ++i)
    if (failed(checkDim(op, s, i, "scores", acc, i, "acc", "batch dimensions")) ||
        failed(checkDim(op, s, i, "scores", m, i, "max", "batch dimensions")))
      return failure();
  for (auto [i, d] : llvm::enumerate(vBatch))
    if (failed(checkDim(op, s, d, "scores", v, i, "value", "batch dimensions")))
      return failure();
  if (failed(checkDim(op, s, rank - 1, "scores", v, vRank - 2, "value",
                      "key dimension")) ||
      failed(checkDim(op, s, rank - 2, "scores", m, rank - 2, "max",
                      "query dimension")) ||
      failed(checkDim(op, s, rank - 2, "scores", acc, rank - 2, "acc",
                      "query dimension")) ||
      failed(checkDim(op, v, vRank - 1, "value", acc, rank - 1, "acc",
                      "value dimension")))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// FinalizeOp
//===----------------------------------------------------------------------===//

LogicalResult FinalizeOp::verify() {
  auto acc = getAcc().getType(), sum = getSum().getType();
  auto res = cast<RankedTensorType>(getResult().getType());
  if (sum.getRank() + 1 != acc.getRank())
    return emitOpError("expects sum to have rank ")
           << acc.getRank() - 1 << " (acc without its value dimension), got "
           << sum.getRank();
  if (res.getRank() != acc.getRank())
    return emitOpError("expects the result to have the shape of acc, got rank ")
           << res.getRank() << " vs " << acc.getRank();
  for (int64_t i = 0; i < acc.getRank(); ++i) {
    if (failed(checkDim(*this, acc, i, "acc", res, i, "result", "shape")))
      return failure();
    if (i < sum.getRank() &&
        failed(checkDim(*this, acc, i, "acc", sum, i, "sum", "row shape")))
      return failure();
  }
  return success();
}
